"""The maintainers' reference monitor bundles: the only unsigned monitor bundles ranked.

The reference monitors (:mod:`effectbench.monitors.reference`) are run by the maintainers
on the shipped corpus (``effectbench monitor run NAME --corpus monitors/corpus``) and shipped
in ``monitors/bundles/`` unsigned. As for the reference submissions
(:mod:`verifier.references`), their bytes are vouched for by a list that lives with the
verifier's code, :data:`REFERENCE_MONITORS_FILE`, outside the data folder: a pull request
that changes a reference monitor bundle must change the list too, which is code. An unsigned
monitor bundle is ranked only when its content hash (:func:`monitor_content_hash`) is listed
there, under its own folder name and the reference monitor its manifest declares; every other
monitor bundle needs a signature.

``python -m verifier.monitor_references`` re-lists the bundles of ``monitors/bundles/`` that
declare a reference monitor; ``--check`` only compares (a test runs it).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

from effectbench.filenames import SIGNATURE_FILE
from effectbench.hashing import content_hash, hash_file
from effectbench.monitors.bundle import MONITOR_FILE, MONITOR_FILES

__all__ = [
    "REFERENCE_MONITORS_FILE",
    "ListedMonitor",
    "listed_monitor",
    "listing_text",
    "load_reference_monitors",
    "main",
    "monitor_content_hash",
    "reference_monitor_listing",
]

REFERENCE_MONITORS_FILE = Path(__file__).resolve().with_name("reference_monitors.json")
"""The list of reference monitor bundles by content hash (part of the verifier's code)."""
ABOUT = (
    "Unsigned monitor bundles the monitors board ranks: the maintainers' runs of the reference "
    "monitors on the shipped corpus; regenerate with python -m verifier.monitor_references"
)


@dataclass(frozen=True)
class ListedMonitor:
    """One listed reference monitor bundle."""

    content_hash: str
    folder: str
    """Its folder's name under ``monitors/bundles/``."""
    reference: str
    """The reference monitor it is a run of (``claim-text``...)."""
    corpus: str
    """The digest of the corpus it scored (informative: the verifier checks the manifest's)."""


def monitor_content_hash(folder: Path) -> str:
    """Return the content hash of a monitor bundle: every file it may hold but the
    signature, by name (:func:`effectbench.hashing.content_hash`)."""
    files = {
        name: hash_file(folder / name)
        for name in MONITOR_FILES
        if name != SIGNATURE_FILE and (folder / name).is_file()
    }
    return content_hash(files)


def _parse(data: object, where: str) -> dict[str, ListedMonitor]:
    if not isinstance(data, dict) or not isinstance(data.get("bundles"), list):
        raise ValueError(f"{where}: expected an object with a 'bundles' list")
    out: dict[str, ListedMonitor] = {}
    for i, item in enumerate(data["bundles"]):
        try:
            listed = ListedMonitor(
                content_hash=str(item["content_hash"]),
                folder=str(item["folder"]),
                reference=str(item["reference"]),
                corpus=str(item["corpus"]),
            )
        except (KeyError, TypeError):
            raise ValueError(f"{where}: bundles.{i} is not a listed monitor bundle") from None
        out[listed.content_hash] = listed
    return out


def load_reference_monitors(path: Path = REFERENCE_MONITORS_FILE) -> Mapping[str, ListedMonitor]:
    """Return the listed reference monitor bundles by content hash (none without the file)."""
    if not path.is_file():
        return {}
    stat = path.stat()
    return _load(path, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=8)
def _load(path: Path, mtime_ns: int, size: int) -> Mapping[str, ListedMonitor]:
    return _parse(json.loads(path.read_text(encoding="utf-8")), str(path))


def listed_monitor(
    folder: Path, reference: str | None, listed: Mapping[str, ListedMonitor]
) -> ListedMonitor | None:
    """Return the listing of the monitor bundle ``folder`` when its content hash is listed under
    its folder's name as a run of ``reference`` (its manifest's), else None."""
    if reference is None or not listed:
        return None
    entry = listed.get(monitor_content_hash(folder))
    if entry is None or entry.folder != folder.name or entry.reference != reference:
        return None
    return entry


def reference_monitor_listing(bundles: Path) -> list[ListedMonitor]:
    """Return the listing of every bundle of ``bundles`` that declares a reference monitor."""
    out = []
    for folder in sorted(p for p in bundles.iterdir() if p.is_dir()) if bundles.is_dir() else []:
        manifest = json.loads((folder / MONITOR_FILE).read_text(encoding="utf-8"))
        reference = manifest["monitor"].get("reference")
        if reference is None:
            continue
        out.append(
            ListedMonitor(
                content_hash=monitor_content_hash(folder),
                folder=folder.name,
                reference=str(reference),
                corpus=str(manifest["corpus"]["digest"]),
            )
        )
    return out


def listing_text(bundles: Path) -> str:
    """Return the list file's text for the bundles of ``bundles`` (``make generate`` writes
    it; ``--check`` compares)."""
    listing = reference_monitor_listing(bundles)
    return json.dumps({"about": ABOUT, "bundles": [asdict(x) for x in listing]}, indent=2) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Re-list the reference monitor bundles (``--check``: only compare; exit 1 if stale)."""
    parser = argparse.ArgumentParser(prog="python -m verifier.monitor_references")
    parser.add_argument("--bundles", type=Path, default=Path("monitors/bundles"))
    parser.add_argument("--list", type=Path, default=REFERENCE_MONITORS_FILE)
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 if stale")
    args = parser.parse_args(argv)
    text = listing_text(args.bundles)
    current = args.list.read_text(encoding="utf-8") if args.list.is_file() else ""
    if args.check:
        if text != current:
            print(f"{args.list} does not list the bundles of {args.bundles} as they are")
            return 1
        print(f"{args.list} lists the bundles of {args.bundles}")
        return 0
    args.list.write_text(text, encoding="utf-8")
    print(f"wrote {args.list}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
