"""Command ``reproduce``: re-run the shipped-baseline bundles that have no valid record, and
record each re-run (signed with Sigstore, or sealed for this machine)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from effectbench.cli._args import add_record_options, record_policy


def _folders(paths: list[Path]) -> list[Path]:
    from effectbench.errors import DataError
    from verifier.api import bundle_folders, is_bundle

    out: list[Path] = []
    for path in paths:
        if not path.is_dir():
            raise DataError("not a bundle folder nor a folder of bundles", file=str(path))
        out.extend([path] if is_bundle(path) else [p for p in bundle_folders(path) if is_bundle(p)])
    return out


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from effectbench.findings import CheckId, Family
    from verifier.api import VerifyOptions, verify_bundle
    from verifier.records import (
        Reproduction,
        read_record,
        record_key,
        write_local_record,
        write_signed_record,
    )
    from verifier.references import bundle_content_hash

    policy = record_policy(args)
    trust = Path(args.trust_config) if args.trust_config else None
    options = VerifyOptions(
        allow_unsigned=True, trust_config=trust, force_reproduce=True, records=policy
    )
    failed = recorded = kept = 0
    for folder in _folders(args.paths):
        name = folder.name
        if not args.all:
            from effectbench.bundle import Submission

            try:
                header = Submission.model_validate_json((folder / "submission.json").read_bytes())
            except (OSError, ValueError):
                header = None
            if header is not None and header.system.baseline is not None:
                key = record_key(header, bundle_content_hash(folder), name)
                found = read_record(key, policy)
                if found.reproduction is not None:
                    kept += 1
                    print(f"{name}: has a valid record ({found.source}); kept (--all re-runs it)")
                    continue
                if found.problem is not None:
                    print(f"{name}: {found.problem.check}: {found.problem.message}; re-running")
        report = verify_bundle(folder, options)
        step = report.check(Family.REPRODUCE)
        if CheckId.REPRODUCE_UNAVAILABLE in report.finding_ids():
            failed += 1
            reason = next(f.message for f in step.findings if f.check == "reproduce.unavailable")
            print(f"{name}: NOT re-run: {reason}")
            continue
        if report.reproduced is None or report.reproduced_rows is None or report.submission is None:
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
                Path(args.records),
                key,
                result,
                identity_token=args.identity_token,
                trust_config=trust,
                signers=policy.signers,
            )
        else:
            path = write_local_record(key, result)
        recorded += 1
        verdict = "reproduced" if result.reproduced else f"did NOT reproduce ({step.n_findings})"
        print(f"{name}: {verdict}, {result.rows_rerun}/{result.n_rows} rows re-run; {path}")
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
        "ambient CI credentials, or the browser flow); without it the record is sealed for "
        "this machine only (its cache home)",
    )
    p.add_argument("--identity-token", metavar="TOKEN", help="an OIDC identity token to sign with")
    p.add_argument(
        "--trust-config",
        metavar="FILE",
        help="a private Sigstore instance's trust configuration (tests); default: production",
    )
    add_record_options(p, force=False)
    p.set_defaults(func=_cmd_reproduce)
