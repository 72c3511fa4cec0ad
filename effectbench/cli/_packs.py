"""Command ``packs``: the packs installed in this environment, and any that cannot be used.

Each pack's module is imported (its provider is not built): a pack that fails to import, or a
name two distributions claim, is one line saying why, and the command exits 1; the others are
listed as usual. ``--entry NAME`` prints the accepted-packs list entry of an installed pack
(:mod:`verifier.accepted`).
"""

from __future__ import annotations

import argparse
from typing import Any

from effectbench.cli._args import print_json


def _cmd_entry(name: str) -> int:
    from dataclasses import asdict

    from effectbench.errors import UsageError
    from effectbench.packs import installed, pack_class
    from verifier.accepted import entry_of

    pack_class(name)  # a name unknown, claimed twice or broken: one line
    try:
        entry = entry_of(installed()[name])
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    print_json({"packs": [asdict(entry)]})
    return 0


def _cmd_packs(args: argparse.Namespace) -> int:
    if args.entry is not None:
        return _cmd_entry(args.entry)
    rows = _pack_rows()
    if args.counts:
        for row in rows:
            if "error" not in row:
                row["tasks_per_split_and_category"] = _counts(row["names"][0])
    if args.json:
        print_json(rows)
    else:
        for row in rows:
            _print_pack(row)
    return 1 if any("error" in row for row in rows) else 0


def _pack_rows() -> list[dict[str, Any]]:
    """One row per installed pack (its names, where it comes from, or why it cannot be used)."""
    from effectbench.packs import installed, problem

    by_target: dict[str, list[str]] = {}
    for name, entry in installed().items():
        by_target.setdefault(entry.target, []).append(name)
    rows: list[dict[str, Any]] = []
    for names in by_target.values():
        entry = installed()[names[0]]
        row: dict[str, Any] = {
            "names": names,
            "distribution": entry.distribution,
            "version": entry.version,
            "provider": entry.target,
        }
        error = problem(names[0])
        if error is not None:
            row["error"] = error
        rows.append(row)
    return rows


def _print_pack(row: dict[str, Any]) -> None:
    """A pack's line, then its counts (with ``--counts``), one a line."""
    from effectbench.conformance.check import count_lines

    source = f"{row['distribution']} {row['version']}" if row["distribution"] else "this process"
    error = f"\tcannot be used: {row['error']}" if "error" in row else ""
    print(f"{' / '.join(row['names'])}\t{source}\t{row['provider']}{error}")
    counts = row.get("tasks_per_split_and_category")
    if isinstance(counts, dict):
        drawn = {k: v for k, v in counts.items() if isinstance(v, dict)}
        lines = count_lines(drawn)
        lines += [f"{k}: {v}" for k, v in counts.items() if not isinstance(v, dict)]
        for line in lines:
            print(f"\t{line}")
    elif counts is not None:
        print(f"\t{counts}")


def _counts(name: str) -> dict[str, Any] | str:
    """The tasks per split and category of a generated catalogue, drawn without building its
    pack (its test split only when the secret is set: else why it is absent); a written
    catalogue's are counted by ``pack check``, which builds the pack."""
    from effectbench.conformance.check import split_category_counts
    from effectbench.kit.catalogue import Catalogue
    from effectbench.kit.generate import SECRET_ENV
    from effectbench.packs import pack_class

    catalogue = getattr(pack_class(name), "catalogue", None)
    if not isinstance(catalogue, Catalogue):
        return f"written catalogue: effectbench pack check {name} prints its counts"
    secret = catalogue.sequestered_split()
    counts: dict[str, Any] = split_category_counts(catalogue.dev_split() + (secret or ()))
    if secret is None:
        counts["test"] = f"absent: {SECRET_ENV} is not set"
    return counts


def register(sub: Any) -> None:
    """Add ``packs``."""
    p = sub.add_parser(
        "packs",
        help="list the installed packs (entry-point group effectbench.packs), with versions",
    )
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.add_argument(
        "--counts",
        action="store_true",
        help="also print each generated catalogue's tasks per split and category (drawn, "
        "without building the pack)",
    )
    p.add_argument(
        "--entry",
        metavar="NAME",
        help="print an accepted-packs list holding the installed pack NAME as it is (its "
        "distribution, version and code digest): the entry a pull request adds",
    )
    p.set_defaults(func=_cmd_packs)
