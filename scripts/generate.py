"""Rewrite every committed file that is generated from code (``make generate``).

The library modules produce the text; this script alone knows where each file lives in
the repository. ``--check`` writes nothing and exits 1 naming every stale file (a test
runs it the same way):

* ``docs/verifier-report.md``: its table of check ids (the registry in ``effectbench.findings``);
* ``docs/pack-authors.md``: its table of ``pack check`` finding ids (``conformance.ids``);
* ``docs/submission.schema.json``: the JSON Schema of ``submission.json``;
* ``docs/packs/``: each pack's public manifest and reachable-state table (the core's packs and
  every accepted pack's; ``--core``: the core's only, for a machine without the accepted packs'
  servers);
* ``verifier/blindness/``: each pack's blindness record (the audit of ``pack check``, bound to
  the digest of what it reads: ``verifier/blindness.py``); ``--check`` compares the digests and
  runs no audit, and a write runs the audit only for a pack whose record is stale;
* ``verifier/accepted_packs.json``: the accepted packs (``packs/*``) with their code's digest;
* ``verifier/reference_bundles.json``: the reference bundles in ``submissions/`` by content and
  measured hash (``python -m verifier.references --remake`` re-runs them first), each keeping
  its record digest while its bytes are unchanged (``make reproduce`` writes those);
* ``verifier/reference_monitors.json``: the reference monitor bundles in ``monitors/bundles/``
  by content hash (the only unsigned monitor bundles the monitors board ranks);
* ``effectbench/_showable_table.py``: the characters a shown text may hold, from the pinned
  Unicode database (``unicodedata2``, in the test extra).

usage: python scripts/generate.py [--check] [--core]
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from json import loads
from pathlib import Path

from effectbench.bundle import schema_text
from effectbench.conformance.ids import with_audit_table
from effectbench.findings import with_check_table
from effectbench.packs import each_pack
from effectbench.reachability import reachability_table
from effectbench.showable import generated_table
from verifier.accepted import ACCEPTED_FILE, accepted_listing
from verifier.blindness import record_path, records
from verifier.monitor_references import REFERENCE_MONITORS_FILE, listing_text
from verifier.references import REFERENCE_FILE, reference_listing

ROOT = Path(__file__).resolve().parents[1]


def _text(data: object) -> str:
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def pack_documents(distribution: str = "effectbench") -> dict[str, str]:
    """Return the published documents of every pack ``distribution`` installs, by file name:
    each pack's manifest and its reachability table (aliases of one pack are written once)."""
    out: dict[str, str] = {}
    for pack in each_pack(distribution):
        out[f"{pack.name}.manifest.json"] = _text(pack.manifest())
        out[f"{pack.name}.reachable.json"] = _text(reachability_table(pack))
    return out


def generated_files(
    root: Path = ROOT, *, core: bool = False, audit: bool = False
) -> dict[Path, str]:
    """Return every generated file of the repository at ``root`` with the text it must hold
    (``core``: no document of a pack of another distribution; a stale blindness record is
    audited afresh with ``audit``, else given as ``""``)."""
    docs = root / "docs"
    report = docs / "verifier-report.md"
    guide = docs / "pack-authors.md"
    files = {
        report: with_check_table(report.read_text(encoding="utf-8")),
        guide: with_audit_table(guide.read_text(encoding="utf-8")),
        docs / "submission.schema.json": schema_text(),
    }
    files.update({docs / "packs" / name: text for name, text in pack_documents().items()})
    files.update({record_path(name): text for name, text in records(audit=audit).items()})
    listing = files[ACCEPTED_FILE] = accepted_listing(root)
    for distribution in (
        [] if core else sorted({p["distribution"] for p in loads(listing)["packs"]})
    ):
        documents = pack_documents(distribution)
        files.update({docs / "packs" / name: text for name, text in documents.items()})
        audited = records(distribution, audit=audit)
        files.update({record_path(name): text for name, text in audited.items()})
    files[REFERENCE_FILE] = reference_listing(root / "submissions")
    files[REFERENCE_MONITORS_FILE] = listing_text(root / "monitors" / "bundles")
    files[root / "effectbench" / "_showable_table.py"] = generated_table()
    return files


def stale_files(root: Path = ROOT, *, core: bool = False) -> list[Path]:
    """Return the generated files whose committed text differs from what the code makes."""
    out = []
    for path, text in generated_files(root, core=core).items():
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current != text:
            out.append(path)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Write every generated file (``--check``: compare only; 1 when any is stale)."""
    args = list(sys.argv[1:] if argv is None else argv)
    core = "--core" in args
    if "--check" in args:
        stale = stale_files(core=core)
        for path in stale:
            print(f"{path.relative_to(ROOT)} is stale: run make generate", file=sys.stderr)
        return 1 if stale else 0
    for path, text in generated_files(core=core, audit=True).items():
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
