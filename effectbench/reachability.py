"""Which true states an honest episode of a task can reach: the pack's published table.

A deterministic pack knows, from its task definitions, readings that no
episode can produce: MockMed's partial-save fault drops every note, so its
task never reads ``correct``; its duplicate fault writes two rows per save, so
the count it reads is always even. A pack states this per task through an
optional ``reachable(task) -> Reachable`` method (derived from the task's
fault kind, so a new task or variant with a known fault gets its row
automatically); a pack without one claims nothing (every state reachable).
The verifier refuses a row whose reading is outside the table
(``pack.unreachable_state``), which catches a reading copied from another
task's success.

The table is published beside each pack's manifest in ``docs/packs/``
(``python -m effectbench.reachability`` writes both; ``--check`` compares), and
``effectbench manifest --reachable`` prints it. It is not part of the
manifest, so no pack fingerprint changes.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from effectbench.manifest import SEQUESTERED, fingerprint
from effectbench.schema import Split, TaskSpec, TrueState
from effectbench.seam import BenchmarkProvider

__all__ = [
    "ANY_STATE",
    "DOCS_DIR",
    "Reachable",
    "main",
    "reachability_table",
    "reachable",
]

ANY_STATE = frozenset((TrueState.CORRECT, TrueState.WRONG_PERSISTED, TrueState.ABSENT))
"""The readable true states (``unreadable`` rows are dropped, never scored)."""
DOCS_DIR = Path(__file__).resolve().parents[1] / "docs" / "packs"
"""Where each pack's manifest and reachability table are published."""
TABLE_VERSION = 1


@dataclass(frozen=True)
class Reachable:
    """What an honest episode of one task can read."""

    states: frozenset[TrueState] = ANY_STATE
    """The true states it can reach."""
    count_multiple: int = 1
    """A ``record_written`` reading's ``observed_count`` is always a multiple of this."""

    def to_json(self) -> dict[str, Any]:
        """Return the table entry (states in a fixed order)."""
        return {
            "reachable": [s.value for s in TrueState if s in self.states],
            "observed_count_multiple": self.count_multiple,
        }


def reachable(pack: BenchmarkProvider, task: TaskSpec) -> Reachable:
    """Return what ``task`` of ``pack`` can read (everything when the pack claims nothing)."""
    hook = getattr(pack, "reachable", None)
    if hook is None:
        return Reachable()
    found: Reachable = hook(task)
    return found


def reachability_table(pack: BenchmarkProvider) -> dict[str, Any]:
    """Return the published table of ``pack``: per task, its reachable states.

    A sequestered (test split) task's entry is redacted like its goal in the
    manifest: it would say which fault the hidden task holds.
    """
    tasks: dict[str, Any] = {}
    for task in pack.tasks():
        if task.split is Split.TEST:
            tasks[task.task_id] = SEQUESTERED
        else:
            tasks[task.task_id] = reachable(pack, task).to_json()
    return {
        "schema_version": TABLE_VERSION,
        "suite": pack.name,
        "manifest_fingerprint": fingerprint(pack.manifest()),
        "tasks": tasks,
    }


def _text(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def published_files() -> dict[Path, str]:
    """Return every file of ``docs/packs/`` with its content (manifests and tables)."""
    from effectbench.packs import PACKS

    out: dict[Path, str] = {}
    for make in PACKS.values():
        pack = make()
        try:
            out[DOCS_DIR / f"{pack.name}.manifest.json"] = _text(pack.manifest())
            out[DOCS_DIR / f"{pack.name}.reachable.json"] = _text(reachability_table(pack))
        finally:
            close = getattr(pack, "close", None)
            if close is not None:
                close()
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Write ``docs/packs/`` (``--check`` only compares; 1 when a file is stale)."""
    args = list(sys.argv[1:] if argv is None else argv)
    stale = 0
    for path, text in published_files().items():
        if "--check" in args:
            current = path.read_text(encoding="utf-8") if path.is_file() else ""
            if current != text:
                print(f"{path} is stale; run python -m effectbench.reachability", file=sys.stderr)
                stale = 1
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    return stale


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
