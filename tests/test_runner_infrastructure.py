"""Harness failures are retried, then dropped as infrastructure; never scored."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from effectbench.baselines import get_baseline
from effectbench.errors import InfrastructureError
from effectbench.packs.mockmed import MockMedProvider
from effectbench.run.runner import INFRA_RETRIES, DroppedEpisode, evaluate, run_episode
from effectbench.schema import AgentReport, DropReason, EpisodeRecord, TaskSpec
from effectbench.seam import AgentTask, Episode


class _Flaky(MockMedProvider):
    """MockMed whose provisioning or health check fails a set number of times."""

    def __init__(self, *, fail_provision: int = 0, fail_health: int = 0) -> None:
        super().__init__()
        self.fail_provision = fail_provision
        self.fail_health = fail_health
        self.provisioned = 0

    @contextmanager
    def provision(self, task: TaskSpec, trial: int, params: Mapping[str, Any]) -> Iterator[Episode]:
        self.provisioned += 1
        if self.fail_provision > 0:
            self.fail_provision -= 1
            raise InfrastructureError("browser did not start")
        with super().provision(task, trial, params) as episode:
            if self.fail_health > 0:
                self.fail_health -= 1
                episode = dataclasses.replace(episode, health=lambda: "display died")
            yield episode


def _task(pack: MockMedProvider, name: str = "mockmed::ok") -> TaskSpec:
    return next(t for t in pack.tasks() if t.task_id == name)


def test_a_failed_provision_is_retried_and_then_scored() -> None:
    pack = _Flaky(fail_provision=INFRA_RETRIES)
    got = run_episode(get_baseline("screen_only", pack), pack, _task(pack), 0, 0)
    assert isinstance(got, EpisodeRecord)
    assert pack.provisioned == INFRA_RETRIES + 1


def test_infrastructure_that_keeps_failing_is_a_drop_with_its_reason() -> None:
    pack = _Flaky(fail_provision=10)
    got = run_episode(get_baseline("screen_only", pack), pack, _task(pack), 3, 3)
    assert isinstance(got, DroppedEpisode)
    assert got == DroppedEpisode(got.task_id, 3, DropReason.INFRASTRUCTURE, got.detail)
    assert "browser did not start" in got.detail
    assert pack.provisioned == INFRA_RETRIES + 1


def test_a_health_failure_after_the_run_is_never_scored() -> None:
    pack = _Flaky(fail_health=INFRA_RETRIES + 1)
    run = evaluate(get_baseline("screen_only", pack), pack, trials=1, tasks=[_task(pack)])
    assert run.rows == []
    assert [(d.reason, d.detail) for d in run.dropped] == [
        (DropReason.INFRASTRUCTURE, "display died")
    ]


class _RaisesInfrastructure:
    """A system that raises the harness's own error to dodge its score."""

    name = "dodger"

    def run(self, task: AgentTask, env: Any, params: Mapping[str, Any]) -> AgentReport:
        raise InfrastructureError("it was the browser, honestly")


def test_an_agent_raising_infrastructure_error_is_an_agent_error_not_infrastructure() -> None:
    """Only the harness says infrastructure failed; the agent's exception, whatever its type,
    is its own harness failing: an agent_error drop (never a halt, never infrastructure)."""
    pack = _Flaky()
    got = run_episode(_RaisesInfrastructure(), pack, _task(pack, "mockmed::partial"), 0, 0)
    assert isinstance(got, DroppedEpisode)
    assert got.reason is DropReason.AGENT_ERROR
    assert (
        got.detail == "system under test raised InfrastructureError: it was the browser, honestly"
    )
