"""Command ``verify``: the verifier's verdict on bundles, documents or a folder of bundles."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from effectbench.cli._args import (
    add_accepted,
    add_bundle_paths,
    add_record_options,
    positive_int,
    record_policy,
    use_accepted,
)
from effectbench.cli._progress import bar, wanted
from effectbench.errors import UsageError
from effectbench.filenames import EPISODES_FILE, RECEIPTS_FILE, SUBMISSION_FILE
from verifier.limits import Limits

LIMIT_OPTIONS = (
    ("--max-rows", "max_rows", "episode rows per bundle"),
    ("--max-line-bytes", "max_line_bytes", f"bytes per {EPISODES_FILE} line"),
    ("--max-episodes-bytes", "max_episodes_bytes", f"bytes of {EPISODES_FILE}"),
    ("--max-submission-bytes", "max_submission_bytes", f"bytes of {SUBMISSION_FILE}"),
    ("--max-document-bytes", "max_document_bytes", "bytes of an upstream document"),
    ("--max-receipt-line-bytes", "max_receipt_line_bytes", f"bytes per {RECEIPTS_FILE} line"),
    ("--max-frame-bytes", "max_frame_bytes", "bytes of one key frame"),
    ("--max-frame-pixels", "max_frame_pixels", "decoded pixels of one key frame"),
    (
        "--max-frame-metadata-bytes",
        "max_frame_metadata_bytes",
        "bytes of one key frame's ancillary chunks (text, ICC profile, EXIF, XMP)",
    ),
    (
        "--max-reproduce-rows",
        "max_reproduce_rows",
        "episodes a baseline re-run may run (checked before it starts)",
    ),
)
"""Option, :class:`~verifier.limits.Limits` field and meaning of each size limit."""


def _cmd_verify(args: argparse.Namespace) -> int:
    from verifier.api import VerifyOptions, verify_path
    from verifier.commitment import PINNED_CHAIN
    from verifier.report import format_report

    if args.trust_config is not None and not args.trust_config.is_file():
        raise UsageError(f"--trust-config {args.trust_config} is not a file")
    if args.beacon_chain is not None and not args.beacon_chain.is_file():
        raise UsageError(f"--beacon-chain {args.beacon_chain} is not a file")
    if args.references is not None:
        from verifier.references import load_references

        try:
            load_references(args.references)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UsageError(
                f"--references {args.references}: not a reference list ({exc})"
            ) from None
    use_accepted(args.accepted)
    limits = Limits(**{field: getattr(args, field) for _, field, _ in LIMIT_OPTIONS})
    options = VerifyOptions(
        allow_unsigned=args.allow_unsigned,
        trust_config=args.trust_config,
        reproduce=not args.no_reproduce,
        limits=limits,
        references=args.references,
        records=record_policy(args),
        force_reproduce=args.reproduce,
        beacon_chain=args.beacon_chain or PINNED_CHAIN,
    )
    reports = []
    with bar("verifying bundles", wanted(args.json)) as progress:
        for path in args.paths:
            reports.extend(verify_path(path, options, progress))
    if args.json:
        print(json.dumps([r.to_json() for r in reports], indent=2))
    else:
        for r in reports:
            print(format_report(r, max_rows=args.show))
            print()
        n_ok = sum(r.accepted for r in reports)
        print(f"{n_ok} of {len(reports)} accepted")
    return 0 if all(r.accepted for r in reports) else 1


def register(sub: Any) -> None:
    """Add ``verify``."""
    p = sub.add_parser(
        "verify",
        help="verify bundles, upstream documents or a folder of bundles (exit 0 accepted, "
        "1 refused, 2 unreadable)",
    )
    add_bundle_paths(p)
    p.add_argument("--json", action="store_true", help="print the reports as a JSON array")
    p.add_argument(
        "--allow-unsigned", action="store_true", help="accept unsigned bundles as previews"
    )
    p.add_argument(
        "--trust-config",
        type=Path,
        metavar="FILE",
        help="a private Sigstore trust root (default: the pinned production root)",
    )
    p.add_argument(
        "--beacon-chain",
        type=Path,
        metavar="FILE",
        help="the beacon chain a fresh instance's round is verified under (drand's /info JSON: "
        "public_key, genesis_time, period, scheme, hash; default: the pinned quicknet chain; "
        "docs/generated-tasks.md)",
    )
    p.add_argument("--no-reproduce", action="store_true", help="do not re-run shipped baselines")
    add_record_options(p)
    p.add_argument(
        "--references",
        type=Path,
        metavar="FILE",
        help="the maintainers' reference list (unsigned bundles ranked by reproduction); "
        "default: the verifier's own",
    )
    add_accepted(p)
    p.add_argument("--show", type=positive_int, default=5, help="findings shown per check")
    defaults = Limits()
    for flag, field, meaning in LIMIT_OPTIONS:
        p.add_argument(
            flag,
            type=positive_int,
            default=getattr(defaults, field),
            metavar="N",
            help=f"limit: {meaning}",
        )
    p.set_defaults(func=_cmd_verify)
