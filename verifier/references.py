"""The maintainers' reference bundles: the only unsigned bundles a re-run may rank.

A bundle that re-runs row for row proves its numbers, not who made it. So an
unsigned bundle is ranked by reproduction only when (1) its system identity is
fixed by the baseline it declares (:func:`identity_problem`: the baseline's
name, no URL, no README, no description or the baseline's own) and (2) its
content hash (:func:`effectbench.hashing.content_hash`) is listed in
:data:`REFERENCE_FILE`, which lives with the verifier's code, outside
``submissions/``: a pull request that touches it changes code, which the
pull-request workflow flags. Every other bundle needs a signature.

``python -m verifier.references --remake`` re-runs every reference baseline
into ``submissions/`` (:data:`effectbench.produce.REFERENCE_SET`) and rewrites the
list; without ``--remake`` it re-lists the folders as they are; ``--check`` only
compares (a test runs it).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path

from effectbench.baselines import reference_description
from effectbench.bundle import BUNDLE_FILES, README_FILE, SIGNATURE_FILE, SystemInfo
from effectbench.hashing import content_hash, hash_file
from effectbench.produce import REFERENCE_SET, reference_bundle

__all__ = [
    "REFERENCE_FILE",
    "Reference",
    "bundle_content_hash",
    "identity_problem",
    "load_references",
    "main",
    "reference_listing",
]

REFERENCE_FILE = Path(__file__).resolve().with_name("reference_bundles.json")
"""The list of reference bundles by content hash (part of the verifier's code)."""


@dataclass(frozen=True)
class Reference:
    """One listed reference bundle."""

    content_hash: str
    folder: str
    """Its folder under ``submissions/`` when it was listed (informative)."""
    baseline: str
    pack: str
    date: str
    """The date the maintainers made it (shown on the board; never a folder name's)."""


def _parse(data: object, where: str) -> dict[str, Reference]:
    if not isinstance(data, dict) or not isinstance(data.get("bundles"), list):
        raise ValueError(f"{where}: expected an object with a 'bundles' list")
    out: dict[str, Reference] = {}
    for item in data["bundles"]:
        ref = Reference(
            content_hash=str(item["content_hash"]),
            folder=str(item["folder"]),
            baseline=str(item["baseline"]),
            pack=str(item["pack"]),
            date=str(item["date"]),
        )
        out[ref.content_hash] = ref
    return out


@lru_cache(maxsize=4)
def load_references(path: Path = REFERENCE_FILE) -> Mapping[str, Reference]:
    """Return the listed reference bundles by content hash (none when the file is absent)."""
    if not path.is_file():
        return {}
    return _parse(json.loads(path.read_text(encoding="utf-8")), str(path))


def identity_problem(system: SystemInfo, has_readme: bool) -> str | None:
    """Return why ``system`` is not exactly the baseline it declares, or None when it is."""
    baseline = system.baseline
    if baseline is None:
        return "system.baseline is null"
    if system.name != baseline:
        return f"system.name {system.name!r} is not the baseline's name {baseline!r}"
    if system.url:
        return "system.url is set; a baseline has none"
    if system.description not in ("", reference_description(baseline)):
        return "system.description is not empty nor the baseline's own"
    if has_readme:
        return f"it holds a {README_FILE}; a baseline has none"
    return None


def bundle_content_hash(folder: Path) -> str:
    """Return the content hash of the bundle files in ``folder`` (as the verifier computes it)."""
    files = {
        name: hash_file(folder / name)
        for name in BUNDLE_FILES
        if name != SIGNATURE_FILE and (folder / name).is_file()
    }
    return content_hash(files)


def _listing(submissions: Path, date: str) -> str:
    bundles = []
    for spec in REFERENCE_SET:
        folder = submissions / f"{date}_{spec.folder_slug}"
        if not folder.is_dir():
            raise SystemExit(f"{folder} is missing; run python -m verifier.references --remake")
        bundles.append(
            {
                "folder": folder.name,
                "content_hash": bundle_content_hash(folder),
                "baseline": spec.baseline,
                "pack": spec.pack,
                "date": date,
            }
        )
    doc = {
        "about": "Unsigned bundles the leaderboard ranks by reproduction; regenerate with "
        "python -m verifier.references (--remake re-runs them)",
        "bundles": bundles,
    }
    return json.dumps(doc, indent=2) + "\n"


def reference_listing(submissions: Path, path: Path = REFERENCE_FILE) -> str:
    """Return the reference list of the bundles in ``submissions``, dated as ``path`` has them."""
    return _listing(submissions, _current_date(path) or datetime.now(UTC).date().isoformat())


def _current_date(path: Path) -> str | None:
    refs = load_references(path)
    dates = sorted({r.date for r in refs.values()})
    return dates[-1] if dates else None


def _remake(submissions: Path, old_date: str | None, date: str) -> None:
    for spec in REFERENCE_SET:
        for day in {old_date, date} - {None}:
            stale = submissions / f"{day}_{spec.folder_slug}"
            if stale.is_dir():
                shutil.rmtree(stale)
        folder = submissions / f"{date}_{spec.folder_slug}"
        reference_bundle(spec, folder)
        print(f"made {folder}")


def main(argv: Sequence[str] | None = None) -> int:
    """Re-list (or with ``--remake`` re-make) the reference bundles; ``--check`` compares."""
    parser = argparse.ArgumentParser(prog="python -m verifier.references", description=__doc__)
    parser.add_argument(
        "--submissions", type=Path, default=Path("submissions"), help="the bundles' folder"
    )
    parser.add_argument("--list", type=Path, default=REFERENCE_FILE, help="the list to write")
    parser.add_argument("--remake", action="store_true", help="re-run every reference bundle")
    parser.add_argument("--date", help="the date of re-made bundles (default: today)")
    parser.add_argument("--check", action="store_true", help="only compare; 1 when stale")
    args = parser.parse_args(argv)
    old = _current_date(args.list)
    if args.remake:
        date = args.date or datetime.now(UTC).date().isoformat()
        _remake(args.submissions, old, date)
    else:
        date = args.date or old or datetime.now(UTC).date().isoformat()
    text = _listing(args.submissions, date)
    if args.check:
        current = args.list.read_text(encoding="utf-8") if args.list.is_file() else ""
        if current != text:
            print(f"{args.list} is stale; run python -m verifier.references", file=sys.stderr)
            return 1
        return 0
    args.list.write_text(text, encoding="utf-8")
    load_references.cache_clear()
    print(f"wrote {args.list}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
