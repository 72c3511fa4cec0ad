"""Attempts, not overwrites: every run of a (task, trial) is kept and the first completed counts."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest
from support.bundles import read_submission, write_submission
from support.handles import is_task

from effectbench.attempts import EarlierAttempt, Ending, attempt_problems
from effectbench.bundle import SystemInfo
from effectbench.packs.mockmed import MockMedProvider
from effectbench.produce import make_submission
from effectbench.produce import write_submission as write_bundle
from effectbench.run.executors import execute
from effectbench.run.executors.local import LocalExecutor
from effectbench.run.journal import Journal
from effectbench.run.runner import RunPlan
from effectbench.schema import AgentReport, Split
from effectbench.seam import AgentError, AgentTask
from verifier.api import VerifyOptions, verify_bundle
from verifier.report import Status

FLAKY_TASK = "mockmed::ok"


class OutageOnce:
    """Claims success everywhere; its model API is down the first time it meets FLAKY_TASK."""

    name = "outage_once"
    seen: ClassVar[set[str]] = set()

    def run(self, task: AgentTask, env: Any, params: Mapping[str, Any]) -> AgentReport:
        if is_task(task, FLAKY_TASK) and FLAKY_TASK not in self.seen:
            self.seen.add(FLAKY_TASK)
            raise AgentError("model API unreachable (connection refused)")
        return AgentReport(reported_success=True, halted=False, message="done")


def test_the_rule_numbers_attempts_and_never_lets_a_completed_one_be_replaced() -> None:
    a = EarlierAttempt("t", 0, 1, Ending.AGENT_ERROR, "outage")
    assert attempt_problems([a], {("t", 0): None, ("t", 1): None}, 3) == []
    assert attempt_problems([a], {("t", 0): 2}, 2) == []  # its second attempt was dropped too
    replaced = EarlierAttempt("t", 0, 1, Ending.REPORTED)
    assert [p.rule for p in attempt_problems([replaced], {("t", 0): None}, 2)] == ["replaced"]
    final = EarlierAttempt("t", 0, 1, Ending.ORACLE_UNREADABLE)
    assert [p.rule for p in attempt_problems([final], {("t", 0): None}, 2)] == ["replaced"]
    gap = EarlierAttempt("t", 0, 2, Ending.INFRASTRUCTURE)
    assert "numbering" in {p.rule for p in attempt_problems([gap], {("t", 0): None}, 2)}
    assert [p.rule for p in attempt_problems([], {("t", 0): 3}, 1)] == ["numbering"]
    assert [p.rule for p in attempt_problems([a], {("t", 0): None}, 5)] == ["count"]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run whose first attempt at one cell met an outage, resumed to completion."""
    base = tmp_path_factory.mktemp("attempts")
    pack = MockMedProvider()
    OutageOnce.seen.clear()
    plan = RunPlan.build(OutageOnce(), pack, trials=3)
    path = base / "run.journal"
    with Journal.create(path, plan) as journal:
        first = execute(plan, LocalExecutor(), journal=journal)
    assert [(d.task_id, d.reason.value) for d in first.dropped] == [(FLAKY_TASK, "agent_error")]
    with Journal.resume(path, plan) as journal:
        run = execute(plan, LocalExecutor(), journal=journal)
    assert not run.dropped and len(run.rows) == 27 and run.n_attempts == 28
    sub = make_submission(
        run,
        pack,
        SystemInfo(name="outage once"),
        trials=3,
        split=Split.DEV,
        started_at="2026-12-01T00:00:00Z",
        finished_at="2026-12-01T00:01:00Z",
    )
    return write_bundle(base / "2026-12-01_outage-once", sub, run.rows)


def _verify(bundle: Path) -> set[str]:
    report = verify_bundle(bundle, VerifyOptions(allow_unsigned=True))
    ids = report.finding_ids()
    assert (report.status is Status.PREVIEW) == (not ids), ids
    return ids


def test_the_bundle_keeps_the_attempt_that_did_not_count_and_verifies(bundle: Path) -> None:
    run = read_submission(bundle)["run"]
    assert run["n_attempts"] == 28
    assert run["attempts"] == [
        {
            "task_id": FLAKY_TASK,
            "trial": 0,
            "attempt": 1,
            "ending": "agent_error",
            "detail": "system under test raised AgentError: model API unreachable "
            "(connection refused)",
        }
    ]
    assert _verify(bundle) == set()


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (lambda run: run.update(attempts=[]), "pruned: the earlier attempt removed"),
        (lambda run: run["attempts"][0].update(ending="reported"), "a completed attempt replaced"),
        (lambda run: run["attempts"][0].update(attempt=2), "renumbered"),
        (lambda run: run.update(n_attempts=27), "the total edited"),
    ],
)
def test_edited_or_pruned_attempts_are_refused(
    bundle: Path, tmp_path: Path, edit: Any, why: str
) -> None:
    copy = tmp_path / bundle.name
    copy.mkdir()
    for file in bundle.iterdir():
        (copy / file.name).write_bytes(file.read_bytes())
    data = read_submission(copy)
    edit(data["run"])
    write_submission(copy, data)
    assert _verify(copy) == {"pack.attempts"}, why
    assert json.loads((bundle / "submission.json").read_text())["run"]["n_attempts"] == 28
