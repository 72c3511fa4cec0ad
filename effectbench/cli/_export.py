"""Command ``export``: accepted bundles as Every Eval Ever records, ATIF trajectories or an
Inspect log (:mod:`effectbench.exports`).

Bundles are verified first, exactly as ``rank`` verifies them (:func:`~effectbench.cli._rank.
reports_of`: a folder of bundles through the site build's verification and its report cache);
a refused bundle is one line naming its first finding, and nothing is written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from effectbench.cli._progress import bar, wanted

if TYPE_CHECKING:
    from verifier.report import BundleReport


def refusal(report: BundleReport) -> str:
    """Return the one line that says why ``report``'s bundle cannot be exported."""
    from verifier.report import _where

    for check in report.checks:
        for finding in check.findings:
            where = _where(finding)
            return (
                f"{report.path}: refused, not exported: {finding.check}: "
                f"{where + ': ' if where else ''}{finding.message}"
            )
    return f"{report.path}: refused, not exported ({report.status.value})"


def _cmd_export(args: argparse.Namespace) -> int:
    from effectbench.cli._rank import reports_of
    from effectbench.errors import UsageError
    from effectbench.exports import write_export
    from effectbench.exports.files import check_out
    from effectbench.exports.source import Verified, read_source

    check_out(args.out)  # before verifying anything: a refusal costs nothing
    if args.format == "atif":
        from effectbench.extras import require

        require("export", "atif", what="effectbench export --format atif")
    elif args.format == "inspect":
        from effectbench.extras import require

        require("inspect", "inspect_ai", what="effectbench export --format inspect")
    with bar("verifying bundles", wanted(False)) as progress:
        reports = reports_of([args.bundle], args.allow_unsigned, True, True, progress)
    refused = [r for r in reports if not r.accepted]
    for r in refused:
        print(f"effectbench: {refusal(r)}", file=sys.stderr)
    if refused:
        return 1
    documents = [r.path for r in reports if r.kind != "bundle"]
    if documents:
        raise UsageError(
            f"{documents[0]}: an upstream document, not a bundle folder; convert it with "
            "effectbench import first"
        )
    sources = []
    for r in reports:
        assert r.results is not None and r.tasks is not None  # accepted: its rows were read
        signer = f"{r.signer.identity} ({r.signer.issuer})" if r.signer is not None else None
        verified = Verified(r.status.value, signer, r.reproduced, r.content_hash)
        sources.append(read_source(Path(r.path), r.results, r.tasks, verified))
    with bar(f"writing {args.format}", wanted(False)) as progress:
        written = write_export(sources, args.format, args.out, progress)
    previews = sum(s.verified.unsigned_preview for s in sources)
    note = (
        f" ({previews} unsigned preview{'s' if previews != 1 else ''}, said so)" if previews else ""
    )
    print(
        f"exported {len(sources)} bundle{'s' if len(sources) != 1 else ''} as {args.format}"
        f"{note}: {len(written)} files in {args.out}"
    )
    return 0


def register(sub: Any) -> None:
    """Add ``export``."""
    from effectbench.exports import FORMATS

    p = sub.add_parser(
        "export",
        help="write accepted bundles as Every Eval Ever records, ATIF trajectories or an "
        "Inspect log (docs/exports.md)",
    )
    p.add_argument(
        "bundle",
        type=Path,
        metavar="BUNDLE",
        help="a bundle folder, or a folder of bundles (the whole board)",
    )
    p.add_argument(
        "--format",
        required=True,
        choices=FORMATS,
        help="the format to write: " + ", ".join(FORMATS),
    )
    p.add_argument(
        "--out",
        required=True,
        type=Path,
        metavar="DIR",
        help="the folder to write into: absent or empty (nothing is overwritten)",
    )
    p.add_argument(
        "--allow-unsigned",
        action="store_true",
        help="export unsigned bundles as previews (every file says so)",
    )
    p.set_defaults(func=_cmd_export)
