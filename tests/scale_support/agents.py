"""Systems under test and packs for the scale tests, importable by worker processes.

Workers (a local pool, Dask workers started by the tests) import this module
by name, so everything here is defined at module level and picklable.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from support.handles import is_task

from effectbench.errors import InfrastructureError
from effectbench.packs.mockmed import MockMedProvider
from effectbench.schema import AgentReport, TaskSpec
from effectbench.seam import AgentTask, Episode

BROKEN_TASK = "mockmed::ok"
"""The task whose provisioning always fails in :class:`BrokenProvisioning`."""
RAISING_TASK = "mockmed::partial"
"""The task on which :class:`RaisesOnOneTask` raises (its halt)."""


class SlowHalt:
    """Halts after ``delay`` seconds; reports nothing (a slow, deterministic system)."""

    name = "slow_halt"

    def __init__(self, delay: float = 0.02) -> None:
        self.delay = delay

    def run(self, task: AgentTask, env: Any, params: Mapping[str, Any]) -> AgentReport:
        time.sleep(self.delay)
        return AgentReport(reported_success=False, halted=True, message="waited and halted")


def slow_halt() -> SlowHalt:
    """``--sut scale_support.agents:slow_halt`` (a 20 ms halt per episode)."""
    return SlowHalt(0.02)


class RaisesOnOneTask:
    """Claims success everywhere except :data:`RAISING_TASK`, where it raises."""

    name = "raises_on_one_task"

    def run(self, task: AgentTask, env: Any, params: Mapping[str, Any]) -> AgentReport:
        if is_task(task, RAISING_TASK):
            raise RuntimeError("the agent's own bug")
        return AgentReport(reported_success=True, halted=False, message="done")


class KillsItsWorker:
    """Ends the worker process that runs ``task_id`` (never the process that built it)."""

    name = "kills_its_worker"

    def __init__(self, task_id: str) -> None:
        self.task_id = task_id
        self.driver_pid = os.getpid()

    def run(self, task: AgentTask, env: Any, params: Mapping[str, Any]) -> AgentReport:
        if is_task(task, self.task_id) and os.getpid() != self.driver_pid:
            os._exit(17)
        return AgentReport(reported_success=False, halted=True, message="halted")


class BrokenProvisioning(MockMedProvider):
    """MockMed whose provisioning of :data:`BROKEN_TASK` always fails (a harness failure)."""

    @contextmanager
    def provision(self, task: TaskSpec, trial: int, params: Mapping[str, Any]) -> Iterator[Episode]:
        if task.task_id == BROKEN_TASK:
            raise InfrastructureError("record service did not start")
        with super().provision(task, trial, params) as episode:
            yield episode
