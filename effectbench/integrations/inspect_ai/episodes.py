"""Live episodes of an inspect run: provisioned in ``setup``, judged by the scorer, torn down.

inspect runs samples concurrently in one event loop, and a pack's provider
serves one episode at a time, so each live episode borrows a provider of its
own from a per-pack pool and returns it when the episode is torn down. The
episode (its env for the agent and its oracle for the harness) is held here,
keyed by the sample run's id; the model only ever sees the tools built on the
env, never this registry or the oracle.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from effectbench.errors import InfrastructureError
from effectbench.packs import get_pack
from effectbench.runner import INFRA_RETRIES
from effectbench.schema import AgentReport, TaskSpec
from effectbench.seam import AgentTask, BenchmarkProvider, Episode, ProductVerifier

INFRASTRUCTURE_KEY = "effectbench:infrastructure"
"""Sample store key: what failed in the harness when a sample has no score because of it."""

_POOLS: dict[str, list[BenchmarkProvider]] = {}
_LIVE: dict[str, LiveEpisode] = {}


def now() -> str:
    """Return the time now as ISO 8601 (UTC), as the runner stamps episodes."""
    return datetime.now(UTC).isoformat()


def _borrow(pack: str) -> BenchmarkProvider:
    idle = _POOLS.setdefault(pack, [])
    return idle.pop() if idle else get_pack(pack)


def _give_back(pack: str, provider: BenchmarkProvider) -> None:
    _POOLS.setdefault(pack, []).append(provider)


@contextmanager
def borrowed(pack: str) -> Iterator[BenchmarkProvider]:
    """Lend an idle provider of ``pack`` (one is made when none is idle) and take it back."""
    provider = _borrow(pack)
    try:
        yield provider
    finally:
        _give_back(pack, provider)


@dataclass
class LiveEpisode:
    """One provisioned (task x trial) while its sample runs."""

    pack: str
    provider: BenchmarkProvider
    task: TaskSpec
    trial: int
    seed: int
    params: dict[str, Any]
    episode: Episode
    before: Any
    started_at: str
    stack: ExitStack
    verifier: ProductVerifier | None
    clock: float = field(default_factory=time.perf_counter)
    report: AgentReport | None = None
    """The agent's last report through the ``report_outcome`` tool, if any."""

    @property
    def agent_task(self) -> AgentTask:
        """Return what the agent is told (goal and declared effect, never the oracle)."""
        return AgentTask.from_spec(self.task, self.params)

    def elapsed(self) -> float:
        """Return the seconds since the agent got the episode (the system's own time)."""
        return time.perf_counter() - self.clock

    def close(self) -> None:
        """Tear the episode down and return the provider to its pool (unless teardown failed)."""
        try:
            self.stack.close()
        except BaseException:
            close = getattr(self.provider, "close", None)
            if callable(close):
                close()
            raise
        _give_back(self.pack, self.provider)


def _provision_once(pack: str, task_id: str, trial: int, seed: int) -> LiveEpisode:
    provider = _borrow(pack)
    stack = ExitStack()
    try:
        task = next((t for t in provider.tasks() if t.task_id == task_id), None)
        if task is None:
            raise KeyError(f"pack {pack!r} has no task {task_id!r}")
        params = provider.trial_params(task, seed)
        episode = stack.enter_context(provider.provision(task, seed, params))
        started = now()
        before = episode.oracle.snapshot()
        env = episode.env
        offer: Callable[[], ProductVerifier | None] | None = getattr(
            env, "product_effect_verifier", None
        )
        # Taken before the agent acts (as the effect_verified arm does): it reads its baseline now.
        verifier = offer() if offer is not None and task.effect_declared else None
    except BaseException:
        try:
            stack.close()
        finally:
            _give_back(pack, provider)
        raise
    return LiveEpisode(
        pack=pack,
        provider=provider,
        task=task,
        trial=trial,
        seed=seed,
        params=params,
        episode=episode,
        before=before,
        started_at=started,
        stack=stack,
        verifier=verifier,
    )


def open_episode(key: str, pack: str, task_id: str, trial: int, seed: int) -> LiveEpisode:
    """Provision a fresh episode for one sample run, retrying a failed provisioning.

    Like the runner, a provisioning that raises
    :class:`~effectbench.errors.InfrastructureError` is tried again up to
    :data:`~effectbench.runner.INFRA_RETRIES` more times; then the error
    propagates (the sample errors and is dropped as ``infrastructure``).
    """
    failure: InfrastructureError | None = None
    for _ in range(1 + max(0, INFRA_RETRIES)):
        try:
            live = _provision_once(pack, task_id, trial, seed)
        except InfrastructureError as exc:
            failure = exc
            continue
        _LIVE[key] = live
        return live
    assert failure is not None
    raise failure


def live_episode(key: str) -> LiveEpisode | None:
    """Return the live episode of a sample run, or ``None`` when none was provisioned."""
    return _LIVE.get(key)


def close_episode(key: str) -> None:
    """Tear down the sample run's episode, if it has one (called on every exit path)."""
    live = _LIVE.pop(key, None)
    if live is not None:
        live.close()


def live_count() -> int:
    """Return how many episodes are provisioned now (0 after every run)."""
    return len(_LIVE)


def close_pools() -> None:
    """Close every idle provider (their services stop); the next episode makes a fresh one."""
    while _POOLS:
        _, idle = _POOLS.popitem()
        for provider in idle:
            close = getattr(provider, "close", None)
            if callable(close):
                close()
