"""Which true states an honest episode of a task can reach: the pack's published table.

A deterministic pack knows, from its task definitions, readings that no
episode can produce: MockMed's partial-save fault drops every note, so its
task never reads ``correct``; its duplicate fault writes two rows per save, so
the count it reads is always even. A pack states this per task through an
optional ``reachable(task) -> Reachable`` method (the
:class:`~effectbench.seam.ClaimsReachable` capability; MockMed derives it from the
task's fault kind, so a new task or variant with a known fault gets its row
automatically); a pack without one claims nothing (every state reachable).
The verifier refuses a row whose reading is outside the table
(``pack.unreachable_state``), which catches a reading copied from another
task's success.

The table is published beside each pack's manifest in ``docs/packs/``
(``make generate``, ``scripts/generate.py``, writes both; a test compares), and
``effectbench manifest --reachable`` prints it. It is not part of the
manifest, so no pack fingerprint changes.
"""

from __future__ import annotations

from typing import Any

from effectbench.manifest import SEQUESTERED, fingerprint
from effectbench.schema import Split, TaskSpec
from effectbench.seam import ANY_STATE, BenchmarkProvider, ClaimsReachable, Reachable

__all__ = [
    "ANY_STATE",
    "Reachable",
    "reachability_table",
    "reachable",
]

TABLE_VERSION = 1


def reachable(pack: BenchmarkProvider, task: TaskSpec) -> Reachable:
    """Return what ``task`` of ``pack`` can read (everything when the pack claims nothing)."""
    return pack.reachable(task) if isinstance(pack, ClaimsReachable) else Reachable()


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
