"""The harness's side of an episode handle, for test systems whose behaviour keys on a task.

A system under test is told an opaque handle, never the task (SPEC 5.2.1). A test system
that must misbehave on one task (raise, end its worker, run a pack's script) asks here,
as only the harness can: the handle is made under this user's key.
"""

from __future__ import annotations

from collections.abc import Sequence

from effectbench.run.view import handle_for
from effectbench.schema import TaskSpec
from effectbench.seam import AgentTask

TRIALS = 64
"""Trials looked through: more than any test runs."""


def is_task(task: AgentTask, task_id: str) -> bool:
    """Whether ``task`` is a trial of ``task_id``."""
    return any(task.handle == handle_for(task_id, trial) for trial in range(TRIALS))


def spec_of(task: AgentTask, specs: Sequence[TaskSpec]) -> TaskSpec:
    """Return the spec among ``specs`` whose trial ``task`` is."""
    for spec in specs:
        if is_task(task, spec.task_id):
            return spec
    raise LookupError(f"no task of the {len(specs)} given has an episode {task.handle}")
