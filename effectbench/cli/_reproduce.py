"""Command ``reproduce``: re-run the shipped-baseline bundles that have no valid record, and
record each re-run: a listed reference's as the maintainers' record (its digest written into
the reference list), any other bundle's signed with Sigstore or sealed for this machine."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from effectbench.cli._args import add_record_options, record_policy
from effectbench.cli._progress import bar, wanted

if TYPE_CHECKING:
    from verifier.api import VerifyOptions
    from verifier.records import RecordKey, RecordPolicy, Reproduction
    from verifier.references import Reference


def _folders(paths: list[Path]) -> list[Path]:
    from effectbench.errors import DataError
    from verifier.api import bundle_folders, is_bundle

    out: list[Path] = []
    for path in paths:
        if not path.is_dir():
            raise DataError("not a bundle folder nor a folder of bundles", file=str(path))
        out.extend([path] if is_bundle(path) else [p for p in bundle_folders(path) if is_bundle(p)])
    return out


def _reference_list(args: argparse.Namespace) -> Path:
    from effectbench.errors import UsageError
    from verifier.references import REFERENCE_FILE, load_references

    path: Path = args.references or REFERENCE_FILE
    try:
        load_references(path)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"--references {path}: not a reference list ({exc})") from None
    return path


def _prune(records: Path, listing: Path) -> list[Path]:
    """Remove the maintainers' records in ``records`` that no entry of ``listing`` gives (a
    re-made reference's old ones); return them."""
    from verifier.records import MAINTAINER_SUFFIX
    from verifier.references import load_references

    listed = {
        ref.content_hash.removeprefix("sha256:")
        for ref in load_references(listing).values()
        if ref.record
    }
    gone = []
    for path in sorted(records.glob(f"*{MAINTAINER_SUFFIX}")):
        if path.name.removesuffix(MAINTAINER_SUFFIX) not in listed and not path.is_symlink():
            path.unlink()
            gone.append(path)
    return gone


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from verifier.api import VerifyOptions

    policy = record_policy(args)
    listing = _reference_list(args)
    trust = Path(args.trust_config) if args.trust_config else None
    options = VerifyOptions(
        allow_unsigned=True,
        trust_config=trust,
        force_reproduce=True,
        records=policy,
        references=listing,
    )
    writer = _RecordWriter(args, Path(args.records), trust, policy)
    counts = {"recorded": 0, "kept": 0, "failed": 0, "skipped": 0}
    folders = _folders(args.paths)
    with bar("re-running bundles", wanted()) as tell:
        for done, folder in enumerate(folders):
            if tell is not None:
                tell(done, len(folders))
            counts[_reproduce_one(folder, args.all, options, listing, writer)] += 1
    if writer.digests:
        _list_maintainer_records(writer.digests, listing, writer.records)
    failed = counts["failed"]
    print(f"recorded {counts['recorded']}, kept {counts['kept']}, could not re-run {failed}")
    return 1 if failed else 0


def _reproduce_one(
    folder: Path, rerun_all: bool, options: VerifyOptions, listing: Path, writer: _RecordWriter
) -> str:
    """Re-run one bundle and record it, saying so; return what became of it: ``kept`` (a
    valid record, without ``rerun_all``), ``failed`` (could not re-run), ``skipped``
    (nothing to re-run) or ``recorded``."""
    from effectbench.findings import CheckId, Family
    from verifier.api import verify_bundle
    from verifier.records import Reproduction, record_key
    from verifier.references import bundle_content_hash, listed_reference

    name = folder.name
    content = bundle_content_hash(folder)
    reference, _ = listed_reference(content, name, listing)
    if not rerun_all and _has_valid_record(folder, content, reference, writer.policy):
        return "kept"
    report = verify_bundle(folder, options)
    step = report.check(Family.REPRODUCE)
    if CheckId.REPRODUCE_UNAVAILABLE in report.finding_ids():
        reason = next(f.message for f in step.findings if f.check == "reproduce.unavailable")
        print(f"{name}: NOT re-run: {reason}")
        return "failed"
    if report.reproduced is None or report.reproduced_rows is None or report.submission is None:
        print(f"{name}: nothing to re-run ({step.note or 'refused before the re-run'})")
        return "skipped"
    result = Reproduction(
        reproduced=bool(report.reproduced),
        rows_rerun=report.reproduced_rows,
        n_rows=report.n_rows,
        findings=tuple(step.findings),
        n_findings=step.n_findings,
    )
    key = record_key(report.submission, report.content_hash or "", name)
    path = writer.write(key, result, listed=reference is not None)
    verdict = "reproduced" if result.reproduced else f"did NOT reproduce ({step.n_findings})"
    print(f"{name}: {verdict}, {result.rows_rerun}/{result.n_rows} rows re-run; {path}")
    return "recorded"


def _has_valid_record(
    folder: Path, content: str, reference: Reference | None, policy: RecordPolicy
) -> bool:
    """Whether a shipped-baseline bundle already has a valid record (said, and kept); a
    record found wrong is said too (and the bundle re-run)."""
    from effectbench.bundle import Submission
    from verifier.records import read_record, record_key

    try:
        header = Submission.model_validate_json((folder / "submission.json").read_bytes())
    except (OSError, ValueError):
        return False
    if header.system.baseline is None:
        return False
    listed = reference.record or None if reference is not None else None
    found = read_record(record_key(header, content, folder.name), policy, listed)
    if found.reproduction is not None:
        print(f"{folder.name}: has a valid record ({found.source}); kept (--all re-runs it)")
        return True
    if found.problem is not None:
        print(f"{folder.name}: {found.problem.check}: {found.problem.message}; re-running")
    return False


class _RecordWriter:
    """Where a re-run is recorded: signed (``--sign``), as the maintainers' record of a listed
    reference (its digest kept in :attr:`digests` for the list), or for this machine."""

    def __init__(
        self, args: argparse.Namespace, records: Path, trust: Path | None, policy: RecordPolicy
    ) -> None:
        self.args, self.records, self.trust, self.policy = args, records, trust, policy
        self.digests: dict[str, str] = {}

    def write(self, key: RecordKey, result: Reproduction, *, listed: bool) -> Path:
        from effectbench.errors import DataError
        from verifier.records import (
            write_local_record,
            write_maintainer_record,
            write_signed_record,
        )

        if self.args.sign:
            return write_signed_record(
                self.records,
                key,
                result,
                identity_token=self.args.identity_token,
                trust_config=self.trust,
                signers=self.policy.signers,
            )
        if not listed:
            return write_local_record(key, result)
        try:
            path, self.digests[key.content_hash] = write_maintainer_record(
                self.records, key, result
            )
        except OSError as exc:
            raise DataError(
                f"cannot write: {exc.strerror or exc}", file=str(self.records)
            ) from None
        return path


def _list_maintainer_records(digests: dict[str, str], listing: Path, records: Path) -> None:
    """List the maintainers' records written in the reference list, and prune the others."""
    from effectbench.errors import DataError
    from verifier.references import list_records

    try:
        changed = list_records(digests, listing)
    except OSError as exc:
        raise DataError(f"cannot write: {exc.strerror or exc}", file=str(listing)) from None
    print(
        f"listed {len(changed)} maintainers' record(s) in {listing}: commit it with "
        f"{records}/ (a reviewed change; the pull-request check refuses it from a submitter)"
    )
    for path in _prune(records, listing):
        print(f"removed {path}: no listed reference's record any more")


def register(sub: Any) -> None:
    """Add ``reproduce``."""
    p = sub.add_parser(
        "reproduce",
        help="re-run the shipped-baseline bundles without a valid reproduction record and "
        "record each re-run (make reproduce)",
    )
    p.add_argument(
        "paths",
        nargs="*",
        type=Path,
        default=[Path("submissions")],
        metavar="PATH",
        help="bundle folders or folders of bundles (default: submissions)",
    )
    p.add_argument("--all", action="store_true", help="re-run even bundles with a valid record")
    p.add_argument(
        "--sign",
        action="store_true",
        help="sign each record with Sigstore into --records (the identity: --identity-token, "
        "ambient CI credentials, or the browser flow); without it a listed reference's record "
        "is the maintainers' (written into --records, its digest into the reference list) and "
        "any other bundle's is sealed for this machine only (its cache home)",
    )
    p.add_argument("--identity-token", metavar="TOKEN", help="an OIDC identity token to sign with")
    p.add_argument(
        "--trust-config",
        metavar="FILE",
        help="a private Sigstore instance's trust configuration (tests); default: production",
    )
    p.add_argument(
        "--references",
        type=Path,
        metavar="FILE",
        help="the maintainers' reference list whose records are written (default: the "
        "verifier's own, verifier/reference_bundles.json)",
    )
    add_record_options(p, force=False)
    p.set_defaults(func=_cmd_reproduce)
