"""Commands ``verify``, ``submit`` and ``import`` (registered by ``effectbench.cli``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from effectbench._cmd_run import add_system_arguments, run_system
from effectbench.bundle import (
    EPISODES_FILE,
    README_FILE,
    SUBMISSION_FILE,
    SignerDecl,
    SystemInfo,
)
from effectbench.cli import positive_int
from effectbench.errors import UsageError
from effectbench.journal import retire_journal
from effectbench.packs import get_pack
from effectbench.produce import (
    bundle_folder,
    import_document,
    make_submission,
    now,
    read_readme,
    write_submission,
)
from effectbench.schema import Split
from verifier.api import VerifyOptions, verify_path
from verifier.limits import Limits
from verifier.report import format_report


def _cmd_verify(args: argparse.Namespace) -> int:
    if args.trust_config is not None and not args.trust_config.is_file():
        raise UsageError(f"--trust-config {args.trust_config} is not a file")
    defaults = Limits()
    limits = Limits(
        max_rows=args.max_rows or defaults.max_rows,
        max_line_bytes=args.max_line_bytes or defaults.max_line_bytes,
        max_episodes_bytes=args.max_episodes_bytes or defaults.max_episodes_bytes,
        max_submission_bytes=args.max_submission_bytes or defaults.max_submission_bytes,
        max_document_bytes=args.max_document_bytes or defaults.max_document_bytes,
        max_reproduce_rows=args.max_reproduce_rows or defaults.max_reproduce_rows,
    )
    options = VerifyOptions(
        allow_unsigned=args.allow_unsigned,
        trust_config=args.trust_config,
        reproduce=not args.no_reproduce,
        limits=limits,
    )
    reports = []
    for path in args.paths:
        reports.extend(verify_path(path, options))
    if args.json:
        print(json.dumps([r.to_json() for r in reports], indent=2))
    else:
        for r in reports:
            print(format_report(r, max_rows=args.show))
            print()
        n_ok = sum(r.accepted for r in reports)
        print(f"{n_ok} of {len(reports)} accepted")
    return 0 if all(r.accepted for r in reports) else 1


def _cmd_submit(args: argparse.Namespace) -> int:
    if (args.signer_identity is None) != (args.signer_issuer is None):
        raise UsageError("give both --signer-identity and --signer-issuer, or neither")
    readme = read_readme(args.readme) if args.readme is not None else None
    folder = bundle_folder(args.out, args.name)  # checked before the run
    started = now()
    journal = folder.with_name(folder.name + ".journal")  # by default, beside the bundle
    trials, split = args.trials, Split(args.split)
    if args.from_records is not None:
        if args.baseline is not None or args.sut is not None:
            raise UsageError(
                "--from-records takes no --baseline or --sut: the records hold the run"
            )
        from effectbench.mcp.records import read_records

        pack = get_pack(args.pack)
        records = read_records(args.from_records, pack)
        run, trials, split = records.run, records.trials, records.split
    else:
        pack, _, run = run_system(args, default_journal=journal)
    submission = make_submission(
        run,
        pack,
        SystemInfo(
            name=args.name, description=args.description, url=args.url, baseline=args.baseline
        ),
        trials=trials,
        split=split,
        started_at=run.started_at or started,
        finished_at=now(),
        signer=(
            SignerDecl(identity=args.signer_identity, issuer=args.signer_issuer)
            if args.signer_identity
            else None
        ),
    )
    write_submission(folder, submission, run.rows, readme=readme)
    journalled = args.from_records is None and args.journal is None
    if journalled and (args.resume is None or args.resume.resolve() == journal.resolve()):
        retire_journal(journal, folder)  # the bundle now holds every row the journal kept
    results = submission.results
    print(folder)
    print(
        f"  {len(run.rows)} rows ({len(run.dropped)} dropped); SWER "
        f"{results.swer.numerator}/{results.swer.denominator}, over-halt "
        f"{results.over_halt.numerator}/{results.over_halt.denominator}"
    )
    print(f"  next: effectbench verify {folder}")
    return 0


def _cmd_import(args: argparse.Namespace) -> int:
    imported = import_document(args.document, args.out)
    print(imported.folder)
    print(
        f"  {imported.n_rows} rows imported unchanged; next: effectbench verify {imported.folder}"
    )
    return 0


def register(sub: Any) -> None:
    """Add ``verify``, ``submit`` and ``import``."""
    p = sub.add_parser(
        "verify",
        help="verify bundles, upstream documents or a folder of bundles (exit 0 accepted, "
        "1 refused, 2 unreadable)",
    )
    p.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    p.add_argument("--json", action="store_true", help="print the reports as a JSON array")
    p.add_argument(
        "--allow-unsigned", action="store_true", help="accept unsigned bundles as previews"
    )
    p.add_argument("--trust-config", type=Path, metavar="FILE", help="private Sigstore trust root")
    p.add_argument("--no-reproduce", action="store_true", help="do not re-run shipped baselines")
    p.add_argument("--show", type=positive_int, default=5, help="findings shown per check")
    for flag, help_ in (
        ("--max-rows", "episode rows per bundle"),
        ("--max-line-bytes", f"bytes per {EPISODES_FILE} line"),
        ("--max-episodes-bytes", f"bytes of {EPISODES_FILE}"),
        ("--max-submission-bytes", f"bytes of {SUBMISSION_FILE}"),
        ("--max-document-bytes", "bytes of an upstream document"),
        ("--max-reproduce-rows", "rows a baseline re-run may cover"),
    ):
        p.add_argument(flag, type=positive_int, metavar="N", help=f"limit: {help_}")
    p.set_defaults(func=_cmd_verify)

    p = sub.add_parser("submit", help="run a system and write a submission bundle")
    add_system_arguments(p)
    p.add_argument("--name", required=True, help="the system's display name")
    p.add_argument("--description", default="")
    p.add_argument("--url", default="")
    p.add_argument("--signer-identity", metavar="ID", help="the Sigstore identity that will sign")
    p.add_argument("--signer-issuer", metavar="URL", help="its OIDC issuer")
    p.add_argument("--readme", type=Path, metavar="FILE", help=f"a {README_FILE} to include")
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="parent folder")
    p.add_argument(
        "--from-records",
        type=Path,
        metavar="DIR",
        help="build the bundle from a record dir of MCP episodes (effectbench mcp) instead",
    )
    p.set_defaults(func=_cmd_submit)

    p = sub.add_parser("import", help="convert an upstream submission document into a bundle")
    p.add_argument("document", type=Path, metavar="DOC.json")
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="parent folder")
    p.set_defaults(func=_cmd_import)
