"""Run a system under test over a pack in worker processes (``--workers N``).

Each worker process builds its own provider from the pack's name, so it has
its own state: on the clinic pack its own record service and its own database
files. Work is handed out one task (all its trials) at a time and the rows are
put back in serial order, so a parallel run yields the same rows as
:func:`effectbench.runner.evaluate` apart from timings (``latency_s``,
``started_at``, ``finished_at``).

Workers are started with ``forkserver`` (``spawn`` where that is unavailable),
never plain ``fork``: a worker must not inherit the parent's service threads
or open sockets. A shipped baseline is rebuilt in the worker by name; any other
system under test must be picklable.

A provider may hand start-up work it has already done to its workers: when it
has a ``worker_handoff()`` method, its result (picklable, or ``None``) is sent
to every worker, whose ``install()`` runs before the worker builds its pack.
The clinic pack hands over its live adversarial audit this way, so workers
do not repeat it.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.util
import pickle
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Protocol

from effectbench.baselines import BASELINES, get_baseline
from effectbench.errors import UsageError
from effectbench.packs import get_pack
from effectbench.runner import DroppedEpisode, RunResult, run_episode
from effectbench.schema import EpisodeRecord, TaskSpec
from effectbench.seam import BenchmarkProvider, SystemUnderTest

Outcome = EpisodeRecord | DroppedEpisode

_worker: dict[str, Any] = {}


class WorkerHandoff(Protocol):
    """Start-up work a provider has done, for its worker processes to adopt."""

    def install(self) -> bool:
        """Adopt the work in this process; say whether it was adopted."""
        ...


def _handoff(provider: BenchmarkProvider) -> WorkerHandoff | None:
    offer = getattr(provider, "worker_handoff", None)
    handoff: WorkerHandoff | None = offer() if callable(offer) else None
    return handoff


def _recipe(sut: SystemUnderTest, provider: BenchmarkProvider) -> tuple[str, Any]:
    shipped = {*BASELINES.values(), *getattr(provider, "extra_baselines", {}).values()}
    if type(sut) in shipped:
        return ("baseline", sut.name)
    try:
        return ("pickled", pickle.dumps(sut))
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        raise UsageError(
            f"--workers needs a picklable system under test; {sut.name!r} is not ({exc})"
        ) from None


def _init_worker(pack_name: str, recipe: tuple[str, Any], handoff: WorkerHandoff | None) -> None:
    if handoff is not None:
        handoff.install()
    pack = get_pack(pack_name)
    close = getattr(pack, "close", None)
    if close is not None:
        # Pool workers leave through os._exit: atexit does not run, multiprocessing's finalizers do.
        multiprocessing.util.Finalize(pack, close, exitpriority=10)
    kind, value = recipe
    sut = get_baseline(value, pack) if kind == "baseline" else pickle.loads(value)
    _worker["pack"] = pack
    _worker["sut"] = sut
    _worker["tasks"] = {t.task_id: t for t in pack.tasks()}


def _run_task(task_id: str, seeds: Sequence[int]) -> list[Outcome]:
    pack: BenchmarkProvider = _worker["pack"]
    task: TaskSpec = _worker["tasks"][task_id]
    return [
        run_episode(_worker["sut"], pack, task, trial, seed) for trial, seed in enumerate(seeds)
    ]


def _context() -> Any:
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    # Workers fork from a server that has already imported the packs (no per-worker import).
    ctx.set_forkserver_preload(["effectbench.packs", "effectbench.parallel"])
    return ctx


def evaluate_parallel(
    sut: SystemUnderTest,
    provider: BenchmarkProvider,
    *,
    trials: int = 10,
    seeds: Sequence[int] | None = None,
    tasks: Sequence[TaskSpec] | None = None,
    workers: int = 2,
) -> RunResult:
    """Run ``sut`` over ``provider`` in ``workers`` processes; rows come back in serial order."""
    if trials < 1:
        raise ValueError("trials must be at least 1")
    if workers < 1:
        raise ValueError("workers must be at least 1")
    seeds = list(range(trials)) if seeds is None else list(seeds)
    if len(seeds) != trials:
        raise ValueError(f"{trials} trials need {trials} seeds, got {len(seeds)}")
    chosen = list(tasks if tasks is not None else provider.tasks())
    recipe = _recipe(sut, provider)
    result = RunResult(arm=sut.name, pack=provider.name)
    with ProcessPoolExecutor(
        max_workers=min(workers, max(1, len(chosen))),
        mp_context=_context(),
        initializer=_init_worker,
        initargs=(provider.name, recipe, _handoff(provider)),
    ) as pool:
        futures = [pool.submit(_run_task, task.task_id, seeds) for task in chosen]
        for future in futures:
            for outcome in future.result():
                if isinstance(outcome, DroppedEpisode):
                    result.dropped.append(outcome)
                else:
                    result.rows.append(outcome)
    return result
