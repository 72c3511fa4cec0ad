"""Command ``packs``: the packs installed in this environment (entry points, nothing imported)."""

from __future__ import annotations

import argparse
from typing import Any

from effectbench.cli._args import print_json


def _cmd_packs(args: argparse.Namespace) -> int:
    from effectbench.packs import installed

    by_target: dict[str, list[str]] = {}
    for name, entry in installed().items():
        by_target.setdefault(entry.target, []).append(name)
    rows = []
    for names in by_target.values():
        entry = installed()[names[0]]
        rows.append(
            {
                "names": names,
                "distribution": entry.distribution,
                "version": entry.version,
                "provider": entry.target,
            }
        )
    if args.json:
        print_json(rows)
        return 0
    for row in rows:
        source = (
            f"{row['distribution']} {row['version']}" if row["distribution"] else "this process"
        )
        print(f"{' / '.join(row['names'])}\t{source}\t{row['provider']}")
    return 0


def register(sub: Any) -> None:
    """Add ``packs``."""
    p = sub.add_parser(
        "packs",
        help="list the installed packs (entry-point group effectbench.packs), with versions",
    )
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.set_defaults(func=_cmd_packs)
