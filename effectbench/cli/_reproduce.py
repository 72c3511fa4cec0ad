"""Command ``reproduce``: re-run the shipped-baseline bundles that have no valid record, and
record each re-run: a listed reference's as the maintainers' record (its digest written into
the reference list), any other bundle's signed with Sigstore or sealed for this machine."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from effectbench.cli._args import add_record_options, record_policy
from effectbench.cli._progress import bar, wanted


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
    from effectbench.bundle import Submission
    from effectbench.errors import DataError
    from effectbench.findings import CheckId, Family
    from verifier.api import VerifyOptions, verify_bundle
    from verifier.records import (
        Reproduction,
        read_record,
        record_key,
        write_local_record,
        write_maintainer_record,
        write_signed_record,
    )
    from verifier.references import bundle_content_hash, list_records, listed_reference

    policy = record_policy(args)
    listing = _reference_list(args)
    records = Path(args.records)
    trust = Path(args.trust_config) if args.trust_config else None
    options = VerifyOptions(
        allow_unsigned=True,
        trust_config=trust,
        force_reproduce=True,
        records=policy,
        references=listing,
    )
    failed = recorded = kept = 0
    digests: dict[str, str] = {}
    folders = _folders(args.paths)
    with bar("re-running bundles", wanted()) as tell:
        for done, folder in enumerate(folders):
            if tell is not None:
                tell(done, len(folders))
            name = folder.name
            content = bundle_content_hash(folder)
            reference, _ = listed_reference(content, name, listing)
            if not args.all:
                try:
                    header = Submission.model_validate_json(
                        (folder / "submission.json").read_bytes()
                    )
                except (OSError, ValueError):
                    header = None
                if header is not None and header.system.baseline is not None:
                    listed = reference.record or None if reference is not None else None
                    found = read_record(record_key(header, content, name), policy, listed)
                    if found.reproduction is not None:
                        kept += 1
                        print(
                            f"{name}: has a valid record ({found.source}); kept (--all re-runs it)"
                        )
                        continue
                    if found.problem is not None:
                        print(f"{name}: {found.problem.check}: {found.problem.message}; re-running")
            report = verify_bundle(folder, options)
            step = report.check(Family.REPRODUCE)
            if CheckId.REPRODUCE_UNAVAILABLE in report.finding_ids():
                failed += 1
                reason = next(
                    f.message for f in step.findings if f.check == "reproduce.unavailable"
                )
                print(f"{name}: NOT re-run: {reason}")
                continue
            if (
                report.reproduced is None
                or report.reproduced_rows is None
                or report.submission is None
            ):
                print(f"{name}: nothing to re-run ({step.note or 'refused before the re-run'})")
                continue
            result = Reproduction(
                reproduced=bool(report.reproduced),
                rows_rerun=report.reproduced_rows,
                n_rows=report.n_rows,
                findings=tuple(step.findings),
                n_findings=step.n_findings,
            )
            key = record_key(report.submission, report.content_hash or "", name)
            if args.sign:
                path = write_signed_record(
                    records,
                    key,
                    result,
                    identity_token=args.identity_token,
                    trust_config=trust,
                    signers=policy.signers,
                )
            elif reference is not None:
                try:
                    path, digests[key.content_hash] = write_maintainer_record(records, key, result)
                except OSError as exc:
                    raise DataError(
                        f"cannot write: {exc.strerror or exc}", file=str(records)
                    ) from None
            else:
                path = write_local_record(key, result)
            recorded += 1
            verdict = (
                "reproduced" if result.reproduced else f"did NOT reproduce ({step.n_findings})"
            )
            print(f"{name}: {verdict}, {result.rows_rerun}/{result.n_rows} rows re-run; {path}")
    if digests:
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
    print(f"recorded {recorded}, kept {kept}, could not re-run {failed}")
    return 1 if failed else 0


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
