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
into ``submissions/`` (:data:`effectbench.packs.references.REFERENCE_SET`) and rewrites the
list; without ``--remake`` it re-lists the folders as they are; ``--check`` only
compares (a test runs it). Each entry keeps the date its folder slug was first
listed across remakes (the date ranks it: a copy signed between two remakes is never
"earlier" than the reference), and holds the reference's measured hash
(:func:`verifier.rows.measured_hash_of`), by which :mod:`verifier.ranking` refuses a
copy of it however re-worded, re-seeded or re-fingerprinted.

Each entry also holds the digest of the reference's **maintainers' reproduction record**
(``reproductions/<hex>.reproduction.json``, :mod:`verifier.records`): the list is the
maintainers' attestation of the record byte for byte, as it is of the bundle, so the site
builds from it with no browser, X server or signing identity. Only ``effectbench reproduce``
(``make reproduce``), right after it re-ran the reference, writes a digest
(:func:`list_records`); re-listing keeps it while the bundle's bytes are unchanged and drops
it when they change (a re-made bundle has no record until it is re-run).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from fnmatch import fnmatch
from functools import lru_cache
from pathlib import Path

from effectbench.baselines import reference_description
from effectbench.bundle import (
    BUNDLE_FILES,
    EPISODES_FILE,
    FRAMES_DIR,
    README_FILE,
    RECEIPTS_FILE,
    SIGNATURE_FILE,
    SUBMISSION_FILE,
    SystemInfo,
    read_episodes,
)
from effectbench.hashing import content_hash, hash_file
from effectbench.produce import ReferenceSpec, reference_bundle
from verifier.rows import measured_hash_of

__all__ = [
    "REFERENCE_FILE",
    "Reference",
    "bundle_content_hash",
    "bundle_measured_hash",
    "identity_problem",
    "list_records",
    "listed_reference",
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
    """The date its (baseline, pack) was first listed (shown on the board and ranking it;
    kept across remakes; never a folder name's)."""
    measured_hash: str = ""
    """What its rows measured (:func:`verifier.rows.measured_hash_of`); empty in an old list."""
    record: str = ""
    """The digest of its maintainers' reproduction record (:func:`verifier.records.record_digest`;
    the record is read only when its bytes have this digest); empty until ``effectbench
    reproduce`` has re-run this very bundle and listed its record."""


def _reference_set() -> tuple[ReferenceSpec, ...]:
    """The maintainers' reference set, imported only where it is read (listing and re-making
    the references), so importing the verifier loads no pack module."""
    from effectbench.packs.references import REFERENCE_SET

    return REFERENCE_SET


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
            measured_hash=str(item.get("measured_hash") or ""),
            record=str(item.get("record") or ""),
        )
        out[ref.content_hash] = ref
    return out


def load_references(path: Path = REFERENCE_FILE) -> Mapping[str, Reference]:
    """Return the listed reference bundles by content hash (none when the file is absent).

    Read once per version of the file (its path, modification time and size).
    """
    if not path.is_file():
        return {}
    stat = path.stat()
    return _load(path, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=8)
def _load(path: Path, mtime_ns: int, size: int) -> Mapping[str, Reference]:
    return _parse(json.loads(path.read_text(encoding="utf-8")), str(path))


def listed_reference(
    content_hash: str | None, folder: str, path: Path | None = None
) -> tuple[Reference | None, str]:
    """Return the reference ``content_hash`` is listed as (None when it is not one), and why
    not when it is listed under another folder than ``folder`` (else an empty reason).

    ``path`` is the list (default: :data:`REFERENCE_FILE`). A listed reference's bytes are
    the maintainers': the one bundle whose screen re-run may be a sample
    (:func:`verifier.reproduce.rerun_pairs`) and that a re-run may rank unsigned.
    """
    listed = load_references(path) if path else load_references()
    entry = listed.get(content_hash) if content_hash is not None else None
    if entry is not None and entry.folder != folder:
        return None, f" (it is listed as {entry.folder!r}, not here)"
    return entry, ""


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
    """Return the content hash of the bundle files in ``folder`` (as the verifier computes it:
    every file but the signature, receipts and frames included)."""
    files = {
        name: hash_file(folder / name)
        for name in (*BUNDLE_FILES, RECEIPTS_FILE)
        if name != SIGNATURE_FILE and (folder / name).is_file()
    }
    frames = folder / FRAMES_DIR
    if frames.is_dir():
        files.update({f"{FRAMES_DIR}/{p.name}": hash_file(p) for p in frames.iterdir()})
    return content_hash(files)


def bundle_measured_hash(folder: Path) -> str:
    """Return the measured hash of the bundle in ``folder`` (a maintainers' own bundle)."""
    trials = json.loads((folder / SUBMISSION_FILE).read_text(encoding="utf-8"))["trials_per_task"]
    return measured_hash_of(read_episodes(folder / EPISODES_FILE), int(trials))


ABOUT = (
    "Unsigned bundles the leaderboard ranks by reproduction, each with the digest of its "
    "maintainers' reproduction record in reproductions/; regenerate with python -m "
    "verifier.references (--remake re-runs them), list the records with make reproduce"
)


def _text_of(bundles: Sequence[Mapping[str, str]]) -> str:
    """The list file's text (one place, for the listing and the records written into it)."""
    return json.dumps({"about": ABOUT, "bundles": list(bundles)}, indent=2) + "\n"


def _listing(
    submissions: Path,
    folders: Mapping[str, str],
    dates: Mapping[str, str],
    records: Mapping[str, str],
    listed: Collection[str] = (),
) -> str:
    """The list's text: each reference's folder (by its slug), first listing date and, while
    its bytes are the ones it was recorded for, its record's digest (``records``, by content
    hash: a re-made bundle has no record until it is re-run).

    A reference that was ``listed`` must still be there; one the set names but nobody has
    made yet (a new pack's) is left out until ``--remake`` makes it.
    """
    bundles = []
    for spec in _reference_set():
        folder = submissions / folders[spec.folder_slug]
        if not folder.is_dir() and spec.folder_slug not in listed:
            continue
        if not folder.is_dir():
            raise SystemExit(f"{folder} is missing; run python -m verifier.references --remake")
        content = bundle_content_hash(folder)
        entry = {
            "folder": folder.name,
            "content_hash": content,
            "measured_hash": bundle_measured_hash(folder),
            "baseline": spec.baseline,
            "pack": spec.pack,
            "date": dates[spec.folder_slug],
        }
        if records.get(content):
            entry["record"] = records[content]
        bundles.append(entry)
    return _text_of(bundles)


def _listed_by_slug(path: Path) -> dict[str, Reference]:
    """The current list's entries by the reference set's folder slug (``<date>_<slug>``)."""
    by_slug = {r.folder.split("_", 1)[-1]: r for r in load_references(path).values()}
    return {
        spec.folder_slug: by_slug[spec.folder_slug]
        for spec in _reference_set()
        if spec.folder_slug in by_slug
    }


def _text(submissions: Path, old: Mapping[str, Reference], folders: Mapping[str, str]) -> str:
    dates = {
        slug: old[slug].date if slug in old else folder.split("_", 1)[0]
        for slug, folder in folders.items()
    }
    records = {r.content_hash: r.record for r in old.values()}
    return _listing(submissions, folders, dates, records, set(old))


def list_records(records: Mapping[str, str], path: Path = REFERENCE_FILE) -> list[str]:
    """Give each listed reference in ``records`` (content hash to record digest) that digest
    in the list at ``path``; return the folders whose entry changed. Only
    ``effectbench reproduce`` calls this, right after it re-ran the reference and wrote the
    record: the list never takes a digest from a file it did not see made."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    _parse(doc, str(path))  # a damaged list is an error here, not rewritten
    changed = []
    for entry in doc["bundles"]:
        digest = records.get(entry["content_hash"])
        if digest is not None and entry.get("record") != digest:
            entry["record"] = digest
            changed.append(str(entry["folder"]))
    if changed:
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(_text_of(doc["bundles"]), encoding="utf-8")
        tmp.replace(path)
    return changed


def reference_listing(submissions: Path, path: Path = REFERENCE_FILE) -> str:
    """Return the reference list of the bundles in ``submissions`` as ``path`` lists them
    (each reference's folder and first listing date kept; a new one dated today)."""
    old = _listed_by_slug(path)
    today = datetime.now(UTC).date().isoformat()
    folders = {
        spec.folder_slug: old[spec.folder_slug].folder
        if spec.folder_slug in old
        else f"{today}_{spec.folder_slug}"
        for spec in _reference_set()
    }
    return _text(submissions, old, folders)


def _remake(
    submissions: Path, old: Mapping[str, Reference], date: str, only: Sequence[str] = ()
) -> None:
    for spec in _reference_set():
        if only and not any(fnmatch(spec.folder_slug, pattern) for pattern in only):
            continue
        stale = [f"{date}_{spec.folder_slug}"]
        if spec.folder_slug in old:
            stale.append(old[spec.folder_slug].folder)
        for name in stale:
            if (submissions / name).is_dir():
                shutil.rmtree(submissions / name)
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
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="PATTERN",
        help="with --remake: re-make only the references whose folder slug matches this shell "
        "pattern (repeatable; e.g. '*-desktop'); the others are listed as they are",
    )
    parser.add_argument("--check", action="store_true", help="only compare; 1 when stale")
    args = parser.parse_args(argv)
    if args.remake:
        old = _listed_by_slug(args.list)
        made = args.date or datetime.now(UTC).date().isoformat()
        _remake(args.submissions, old, made, args.only)
        remade = [
            s.folder_slug
            for s in _reference_set()
            if not args.only or any(fnmatch(s.folder_slug, pattern) for pattern in args.only)
        ]
        folders = {
            spec.folder_slug: f"{made}_{spec.folder_slug}"
            if spec.folder_slug in remade or spec.folder_slug not in old
            else old[spec.folder_slug].folder
            for spec in _reference_set()
        }
        text = _text(args.submissions, old, folders)
    else:
        text = reference_listing(args.submissions, args.list)
    if args.check:
        current = args.list.read_text(encoding="utf-8") if args.list.is_file() else ""
        if current != text:
            print(f"{args.list} is stale; run python -m verifier.references", file=sys.stderr)
            return 1
        return 0
    args.list.write_text(text, encoding="utf-8")
    print(f"wrote {args.list}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
