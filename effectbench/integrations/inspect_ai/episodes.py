"""Live episodes of an inspect run: provisioned in ``setup``, judged by the scorer, torn down.

inspect runs samples concurrently in one event loop. Episode work blocks (HTTP
calls, a browser, a display) and screen substrates hold objects bound to the
thread that made them (a sync Playwright browser per thread), so every call of
one episode, from provisioning to teardown, runs on one of a few episode
threads (:data:`EPISODE_THREADS`), never on the event loop. A pack's provider
serves one episode at a time, so each live episode borrows a provider of its
own from a per-pack pool and returns it at teardown. The episode (the env for
the agent, the oracle for the harness) is held here, keyed by the sample run's
id; the model only ever sees tools built on the env, never this registry.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, TypeVar

import anyio.to_thread
from inspect_ai.hooks import Hooks, RunEnd, hooks
from inspect_ai.tool import ToolError
from inspect_ai.util import store

from effectbench.computer import ActionError, Display
from effectbench.errors import InfrastructureError
from effectbench.packs import get_pack
from effectbench.receipts.collect import Recording
from effectbench.run.runner import INFRA_RETRIES
from effectbench.run.view import agent_view, handle_for
from effectbench.schema import AgentReport, TaskSpec
from effectbench.seam import (
    AgentDisplay,
    AgentTask,
    BenchmarkProvider,
    Closable,
    Episode,
    ProductVerifier,
)

INFRASTRUCTURE_KEY = "effectbench:infrastructure"
"""Sample store key: what failed in the harness when a sample has no score because of it."""
EPISODE_THREADS = 2
"""Threads that run episode work (the machine's cores; a browser each on screen substrates)."""

T = TypeVar("T")

_POOLS: dict[str, list[BenchmarkProvider]] = {}
_LIVE: dict[str, LiveEpisode] = {}
_THREADS: list[ThreadPoolExecutor] = []
_LOAD: list[int] = []


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


def _thread() -> int:
    """Return the episode thread with the fewest live episodes (made on first use)."""
    if not _THREADS:
        for i in range(EPISODE_THREADS):
            _THREADS.append(ThreadPoolExecutor(1, thread_name_prefix=f"effectbench-episode-{i}"))
            _LOAD.append(0)
    return min(range(len(_THREADS)), key=_LOAD.__getitem__)


async def _on(thread: int, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run ``fn`` on episode thread ``thread`` and wait for it without blocking the loop."""
    future = _THREADS[thread].submit(functools.partial(fn, *args, **kwargs))
    return await anyio.to_thread.run_sync(future.result)


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
    recording: Recording
    """The episode's receipt in the making; the agent's tools act through its ``env``."""
    thread: int = 0
    display: str = "inspect"
    """On a screen substrate, the display the agent is told: ``inspect`` or ``native``."""
    clock: float = field(default_factory=time.perf_counter)
    report: AgentReport | None = None
    """The agent's last report through the ``report_outcome`` tool, if any."""

    @property
    def env(self) -> Any:
        """The env the agent's tools act through (every action logged for the receipt)."""
        return self.recording.env

    @property
    def agent_task(self) -> AgentTask:
        """Return what the agent is told (SPEC 5.3: the closed view, never the oracle)."""
        return agent_view(self.task, self.params, self.trial, self.env)

    def view(self, display: Display | None, actions: Sequence[str]) -> AgentTask:
        """Return the view as the inspect agent is told it: the display it works in (the
        scaled one on a screen) and its tools' names as the vocabulary."""
        told = agent_view(self.task, self.params, self.trial, self.env, vocabulary=actions)
        if display is None:
            return told
        surface = told.display.surface
        return replace(told, display=AgentDisplay(surface, display.width, display.height))

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run ``fn`` on this episode's thread (every env, oracle and teardown call goes here)."""
        return await _on(self.thread, fn, *args, **kwargs)

    async def act(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a tool's work on this episode's thread.

        A refused action is a tool error to the model; any other failure is the
        harness's (a dead service, browser or display): the sample's store says so
        (:data:`INFRASTRUCTURE_KEY`), so the errored sample is an ``infrastructure``
        drop rather than the agent's ``agent_error``.
        """
        try:
            return await self.run(fn, *args, **kwargs)
        except ActionError as exc:
            raise ToolError(str(exc)) from None
        except Exception as exc:
            store().set(INFRASTRUCTURE_KEY, f"the episode failed under a tool: {exc!r}"[:2000])
            raise

    def elapsed(self) -> float:
        """Return the seconds since the agent got the episode (the system's own time)."""
        return time.perf_counter() - self.clock

    def close(self) -> None:
        """Tear the episode down and return the provider to its pool (unless teardown failed)."""
        try:
            self.stack.close()
        except BaseException:
            if isinstance(self.provider, Closable):
                self.provider.close()
            raise
        _give_back(self.pack, self.provider)


def _provision_once(pack: str, handle: str, trial: int, seed: int, thread: int) -> LiveEpisode:
    provider = _borrow(pack)
    stack = ExitStack()
    try:
        # the sample names its task only by its opaque handle (made under this user's key)
        task = next((t for t in provider.tasks() if handle_for(t.task_id, None) == handle), None)
        if task is None:
            raise KeyError(f"pack {pack!r} has no task whose sample is {handle!r}")
        params = provider.trial_params(task, seed)
        episode = stack.enter_context(provider.provision(task, seed, params))
        started = now()
        before = episode.oracle.snapshot()
        recording = Recording.start(provider, task, params, episode)
        offer: Callable[[], ProductVerifier | None] | None = getattr(
            recording.env, "product_effect_verifier", None
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
        recording=recording,
        thread=thread,
    )


def _provision(pack: str, handle: str, trial: int, seed: int, thread: int) -> LiveEpisode:
    failure: InfrastructureError | None = None
    for _ in range(1 + max(0, INFRA_RETRIES)):
        try:
            return _provision_once(pack, handle, trial, seed, thread)
        except InfrastructureError as exc:
            failure = exc
    assert failure is not None
    raise failure


async def open_episode(key: str, pack: str, handle: str, trial: int, seed: int) -> LiveEpisode:
    """Provision a fresh episode for one sample run (the sample's ``handle``), retrying a
    failed provisioning.

    Like the runner, a provisioning that raises
    :class:`~effectbench.errors.InfrastructureError` is tried again up to
    :data:`~effectbench.run.runner.INFRA_RETRIES` more times; then the error
    propagates (the sample errors and is dropped as ``infrastructure``).
    """
    thread = _thread()
    _LOAD[thread] += 1
    try:
        live = await _on(thread, _provision, pack, handle, trial, seed, thread)
    except BaseException:
        _LOAD[thread] -= 1
        raise
    live.clock = time.perf_counter()
    _LIVE[key] = live
    return live


def live_episode(key: str) -> LiveEpisode | None:
    """Return the live episode of a sample run, or ``None`` when none was provisioned."""
    return _LIVE.get(key)


async def close_episode(key: str) -> None:
    """Tear down the sample run's episode, if it has one (called on every exit path)."""
    live = _LIVE.pop(key, None)
    if live is not None:
        try:
            await live.run(live.close)
        finally:
            _LOAD[live.thread] -= 1


def live_count() -> int:
    """Return how many episodes are provisioned now (0 after every run)."""
    return len(_LIVE)


def release_thread() -> None:
    """Close what the calling thread holds for the episodes it ran (its browser, if any).

    A screen substrate keeps one browser per thread (:mod:`effectbench.screens.browser`);
    only the main thread's is closed at exit, so an episode thread closes its own
    before it stops, and no browser process outlives the run.
    """
    module = sys.modules.get("effectbench.screens.browser")  # only if a browser was ever used
    if module is not None:
        module.close_shared_browser()


def close_pools() -> None:
    """Close every idle provider and stop the episode threads (made again when next needed)."""
    if _LIVE:
        return  # a run is still going on; its episodes close their own
    while _POOLS:
        _, idle = _POOLS.popitem()
        for provider in idle:
            if isinstance(provider, Closable):
                provider.close()
    while _THREADS:
        thread = _THREADS.pop()
        thread.submit(release_thread).result()
        thread.shutdown(wait=True)
    _LOAD.clear()


@hooks(name="effectbench_episodes", description="Stop EffectBench's episode threads at run end")
class _StopAtRunEnd(Hooks):
    """Close the pools, the episode threads and their browsers when an inspect run ends."""

    async def on_run_end(self, data: RunEnd) -> None:
        """Close everything the run's episodes left idle."""
        await anyio.to_thread.run_sync(close_pools)
