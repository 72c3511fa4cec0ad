"""The runner: drive any system under test over any provider and score each trial.

Per (task x trial) it resolves the trial payload, provisions a fresh state,
snapshots the record through the independent oracle, runs the SUT (which sees
only the env handle), reads the record again, reduces the reading to a true
state and labels the episode with the one truth-table function. An unreadable
reading, or an episode whose infrastructure failed after its retries, is dropped
with its reason, never scored.
"""

from __future__ import annotations

import math
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from effectbench.attempts import EarlierAttempt
from effectbench.baselines import following
from effectbench.classify import InconsistentReading, classify, true_state
from effectbench.effects import contract_hash
from effectbench.errors import InfrastructureError
from effectbench.judge import read_verdict
from effectbench.receipts.collect import Recording
from effectbench.run.view import agent_view
from effectbench.schema import (
    AgentReport,
    DropReason,
    EpisodeRecord,
    ModelCall,
    OracleVerdict,
    TaskSpec,
)
from effectbench.seam import Attempt, BenchmarkProvider, SystemUnderTest


@dataclass(frozen=True)
class DroppedEpisode:
    """A trial that has no scored row, and why (listed in the bundle, never hidden)."""

    task_id: str
    trial: int
    reason: DropReason
    detail: str = ""
    """What the oracle or the harness said (for the drop list and logs)."""


@dataclass
class RunResult:
    """The scored rows of one run, and the trials that could not be scored."""

    arm: str
    pack: str
    rows: list[EpisodeRecord] = field(default_factory=list)
    dropped: list[DroppedEpisode] = field(default_factory=list)
    started_at: str = ""
    """When a journalled run began (its first start, for a resumed run); else empty."""
    attempts: list[EarlierAttempt] = field(default_factory=list)
    """Every attempt that did not count (a re-runnable drop whose cell ran again), in order."""

    def attempt_of(self) -> dict[tuple[str, int], int]:
        """Return the number of each cell's counted attempt, for the cells that ran again."""
        out: dict[tuple[str, int], int] = {}
        for entry in self.attempts:
            key = (entry.task_id, entry.trial)
            out[key] = out.get(key, 1) + 1
        return out

    @property
    def n_attempts(self) -> int:
        """Every attempt of the run: its rows, its drops and the attempts that did not count."""
        return len(self.rows) + len(self.dropped) + len(self.attempts)


COST_DIGITS = 10
"""Decimal places of a row's cost: its model calls' costs added up, float noise dropped."""


def episode_cost(calls: Sequence[ModelCall]) -> float:
    """Return what an episode's model calls cost in all (0.261, never 0.2609999999999999)."""
    return round(math.fsum(call.cost_usd for call in calls), COST_DIGITS)


INFRA_RETRIES = 1
"""How many more times an episode whose infrastructure failed is run before it is dropped."""


def _now() -> str:
    return datetime.now(UTC).isoformat()


class _InfrastructureFailed(Exception):
    """One attempt's infrastructure failed; carries what the harness said."""


def _attempt_episode(
    sut: SystemUnderTest,
    provider: BenchmarkProvider,
    task: TaskSpec,
    trial: int,
    seed: int,
    params: dict[str, Any],
) -> EpisodeRecord | DroppedEpisode:
    try:
        with provider.provision(task, seed, params) as episode:
            started = _now()
            before = episode.oracle.snapshot()
            receipt = Recording.start(provider, task, params, episode)  # the agent's env, logged
            agent_task = agent_view(task, params, trial, receipt.env)  # all the agent is told
            clock = time.perf_counter()  # latency is the system's own time, not the oracle's
            agent_error = ""
            try:
                with following(task):
                    attempt: AgentReport | Attempt = sut.run(agent_task, receipt.env, params)
            except Exception as exc:  # the harness around the agent failed: not a halt
                agent_error = f"system under test raised {type(exc).__name__}: {exc}"
            latency = time.perf_counter() - clock
            failure = episode.health()  # the harness, never the agent, says what failed
            if failure is not None:
                raise _InfrastructureFailed(failure)
            if agent_error:
                return DroppedEpisode(task.task_id, trial, DropReason.AGENT_ERROR, agent_error)
            receipt.reported()
            verdict = read_verdict(episode.oracle, before)
            receipt.ended(episode.oracle, before)
            finished = _now()
    except InfrastructureError as exc:
        raise _InfrastructureFailed(exc.diagnostics()) from exc
    return receipt.attach(
        episode_row(
            sut.name,
            task,
            trial,
            seed,
            attempt,
            verdict,
            latency_s=latency,
            env_fingerprint=episode.env_fingerprint,
            started_at=started,
            finished_at=finished,
        )
    )


def episode_row(
    arm: str,
    task: TaskSpec,
    trial: int,
    seed: int,
    attempt: AgentReport | Attempt,
    verdict: OracleVerdict,
    *,
    latency_s: float,
    env_fingerprint: dict[str, Any],
    started_at: str,
    finished_at: str,
) -> EpisodeRecord | DroppedEpisode:
    """Label one judged trial with the truth table and return its row (or its drop).

    The one place an episode row is built: the runner and every importer of
    another harness's runs (inspect logs) call it, so rows agree field for field.
    """
    if isinstance(attempt, AgentReport):
        attempt = Attempt(report=attempt)
    report = attempt.report
    label = classify(report.reported_success, true_state(verdict), task.correct_action_available)
    if label is None:
        return DroppedEpisode(task.task_id, trial, DropReason.ORACLE_UNREADABLE, verdict.reason)
    return EpisodeRecord(
        episode_id=f"{arm}::{task.task_id}::t{trial}",
        task_id=task.task_id,
        arm=arm,
        trial=trial,
        substrate=task.substrate,
        category=task.category,
        seed=seed,
        expected_effect_hash=contract_hash(task.expected_effect[0]),
        correct_action_available=task.correct_action_available,
        agent=report,
        oracle=verdict,
        outcome=label.outcome,
        swer_variant=label.swer_variant,
        reason=label.reason,
        model_calls=list(attempt.model_calls),
        cost_usd=episode_cost(attempt.model_calls),
        latency_s=round(latency_s, 6),
        env_fingerprint=env_fingerprint,
        started_at=started_at,
        finished_at=finished_at,
    )


def rejudge(arm: str, task: TaskSpec, cell: Cell, outcome: EpisodeRecord | DroppedEpisode) -> str:
    """Say how ``outcome`` of ``cell`` departs from what its own readings give (``""``: it agrees).

    A row is built again by :func:`episode_row` from this process's task, cell and
    arm and the row's readings (the agent's report and model calls, the oracle's
    reading, timings, fingerprint), with the one truth table: every field must come
    out as received, so a label, an identity or a derived number changed after the
    episode shows. A drop must be the cell's. What this cannot see is a reading
    itself made up: whoever ran the episode is trusted for that.
    """
    if isinstance(outcome, DroppedEpisode):
        if (outcome.task_id, outcome.trial) != cell.key:
            return f"it is a drop of {outcome.task_id} trial {outcome.trial}"
        return ""
    attempt = Attempt(report=outcome.agent, model_calls=tuple(outcome.model_calls))
    try:
        again = episode_row(
            arm,
            task,
            cell.trial,
            cell.seed,
            attempt,
            outcome.oracle,
            latency_s=outcome.latency_s,
            env_fingerprint=outcome.env_fingerprint,
            started_at=outcome.started_at,
            finished_at=outcome.finished_at,
        )
    except InconsistentReading as exc:
        return f"its oracle reading names no one true state ({exc})"
    if isinstance(again, DroppedEpisode):
        return "its oracle reading is unreadable: that is a drop, not a row"
    got, want = outcome.to_row(), again.to_row()
    wrong = [key for key in want if got.get(key) != want[key]]
    if not wrong:
        return ""
    first = wrong[0]
    more = f" (and {len(wrong) - 1} more fields)" if len(wrong) > 1 else ""
    return f"{first} is {got.get(first)!r} where its readings give {want[first]!r}{more}"


def run_episode(
    sut: SystemUnderTest,
    provider: BenchmarkProvider,
    task: TaskSpec,
    trial: int,
    seed: int,
    *,
    infra_retries: int = INFRA_RETRIES,
) -> EpisodeRecord | DroppedEpisode:
    """Run and score one trial of ``task``; return its row or why it was dropped.

    An :class:`~effectbench.errors.InfrastructureError` raised by the provider
    (provisioning, oracle) or a failure its episode's ``health`` reports after
    the system ran makes the harness run the trial again, up to
    ``infra_retries`` more times, on a fresh state; then it is dropped with
    reason ``infrastructure``. Nothing of a failed attempt is scored.
    """
    params = provider.trial_params(task, seed)
    failure = ""
    for _ in range(1 + max(0, infra_retries)):
        try:
            return _attempt_episode(sut, provider, task, trial, seed, params)
        except _InfrastructureFailed as exc:
            failure = str(exc)
    return DroppedEpisode(task.task_id, trial, DropReason.INFRASTRUCTURE, failure)


@dataclass(frozen=True)
class Cell:
    """One (task, trial) of a run and its seed: the unit a journal records and an executor runs."""

    task_id: str
    trial: int
    seed: int

    @property
    def key(self) -> tuple[str, int]:
        """``(task_id, trial)``: what identifies the cell's row or drop."""
        return (self.task_id, self.trial)


@dataclass(frozen=True)
class RunPlan:
    """What a run covers: the system, the pack, its tasks in order and one seed per trial."""

    sut: SystemUnderTest
    provider: BenchmarkProvider
    tasks: tuple[TaskSpec, ...]
    seeds: tuple[int, ...]

    @classmethod
    def build(
        cls,
        sut: SystemUnderTest,
        provider: BenchmarkProvider,
        *,
        trials: int = 10,
        seeds: Sequence[int] | None = None,
        tasks: Sequence[TaskSpec] | None = None,
    ) -> RunPlan:
        """Return the plan of ``trials`` trials (seeds ``0..trials-1`` unless given) per task."""
        if trials < 1:
            raise ValueError("trials must be at least 1")
        seeds = list(range(trials)) if seeds is None else list(seeds)
        if len(seeds) != trials:
            raise ValueError(f"{trials} trials need {trials} seeds, got {len(seeds)}")
        chosen = tuple(tasks if tasks is not None else provider.tasks())
        return cls(sut, provider, chosen, tuple(seeds))

    def cells(self) -> list[Cell]:
        """Return every cell in serial order (task by task, trial by trial)."""
        return [
            Cell(task.task_id, trial, seed)
            for task in self.tasks
            for trial, seed in enumerate(self.seeds)
        ]

    def result(
        self,
        outcomes: Mapping[tuple[str, int], EpisodeRecord | DroppedEpisode],
        *,
        partial: bool = False,
    ) -> RunResult:
        """Return the run's result with ``outcomes`` (keyed by cell) put in serial order.

        With ``partial`` the cells without an outcome (a sample's others) are left out.
        """
        result = RunResult(arm=self.sut.name, pack=self.provider.name)
        for cell in self.cells():
            if partial and cell.key not in outcomes:
                continue
            outcome = outcomes[cell.key]
            if isinstance(outcome, DroppedEpisode):
                result.dropped.append(outcome)
            else:
                result.rows.append(outcome)
        return result


def evaluate(
    sut: SystemUnderTest,
    provider: BenchmarkProvider,
    *,
    trials: int = 10,
    seeds: Sequence[int] | None = None,
    tasks: Sequence[TaskSpec] | None = None,
    only: Collection[tuple[str, int]] | None = None,
) -> RunResult:
    """Run ``sut`` over every task of ``provider`` for ``trials`` trials each, in this process.

    ``only`` restricts the run to those (task id, trial) pairs (a sample).
    """
    plan = RunPlan.build(sut, provider, trials=trials, seeds=seeds, tasks=tasks)
    specs = {task.task_id: task for task in plan.tasks}
    cells = [c for c in plan.cells() if only is None or (c.task_id, c.trial) in only]
    outcomes = {
        cell.key: run_episode(sut, provider, specs[cell.task_id], cell.trial, cell.seed)
        for cell in cells
    }
    return plan.result(outcomes, partial=only is not None)
