"""Pack manifests and their fingerprints (the interop layout of SPEC v1.0.0)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from effectbench.effects import contract_hash
from effectbench.hashing import canonical_hash
from effectbench.schema import Split, TaskSpec

SEQUESTERED = "[sequestered]"
"""What the public manifest shows in place of a test-split task's goal."""


def manifest_of(suite: str, tasks: Sequence[TaskSpec]) -> dict[str, Any]:
    """Return a pack manifest in the interop layout (test-split goals are redacted)."""
    entries = []
    for t in tasks:
        entries.append(
            {
                "task_id": t.task_id,
                "title": t.title,
                "category": t.category.value,
                "substrate": t.substrate.value,
                "split": t.split.value,
                "reversible": t.reversible,
                "effect_declared": t.effect_declared,
                "correct_action_available": t.correct_action_available,
                "oracle": t.oracle.model_dump(mode="json"),
                "goal": t.goal if t.split is not Split.TEST else SEQUESTERED,
                "expected_effect_hash": contract_hash(t.expected_effect[0]),
            }
        )
    return {"schema_version": 1, "suite": suite, "n_tasks": len(entries), "tasks": entries}


def fingerprint(manifest: dict[str, Any]) -> str:
    """Return the pack fingerprint: the canonical hash of its manifest."""
    return canonical_hash(manifest)
