"""Running a system on a pack: :func:`run`, the one call the command line makes.

``effectbench run`` and ``effectbench submit`` turn their options into plain arguments of
:func:`run`, which a script or a notebook calls the same way::

    from effectbench.run import run

    done = run("clinic", baseline="effect_verified", trials=3, substrates="web", workers=2)
    print(len(done.result.rows), len(done.result.dropped))

The run loop, in the order an episode meets it:

* :mod:`.runner`: the plan of a run (:class:`~.runner.RunPlan`: system, pack, tasks, trials,
  seeds; its cells), one episode provisioned, attempted, read and judged into a row
  (:func:`~.runner.run_episode`), and :func:`~.runner.evaluate`, a whole run in this process;
* :mod:`.executors`: where the cells run (``local``: this process or a pool of ``--workers``
  processes; ``dask``: a Dask cluster) and the one driver, :func:`~.executors.execute`, that
  re-judges each row, journals it and puts the rows back in order; :mod:`.executors.progress`
  shows it going;
* :mod:`.journal`: every finished episode made durable before the next is taken, and a run
  continued from it (``--resume``);
* :mod:`.parallel`: :func:`~.parallel.evaluate_parallel`, the local pool as one call.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from effectbench.errors import UsageError

if TYPE_CHECKING:
    from effectbench.run.runner import RunResult
    from effectbench.seam import BenchmarkProvider, SystemUnderTest

__all__ = ["Run", "load_sut", "resolve_sut", "run"]


def load_sut(spec: str) -> SystemUnderTest:
    """Import ``module:attr``; an attribute that is a class or factory is called once.

    The module is looked up on ``sys.path`` with the current folder first, as
    ``python -m`` does: a module beside you imports.
    """
    from effectbench.seam import SystemUnderTest

    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise UsageError(f"--sut takes module:attr, got {spec!r}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj: Any = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise UsageError(f"cannot load system under test {spec!r}: {exc}") from None
    if isinstance(obj, type) or (callable(obj) and not hasattr(obj, "run")):
        obj = obj()
    if not isinstance(obj, SystemUnderTest):
        raise UsageError(f"{spec!r} is not a system under test (needs .name and .run())")
    return obj


def resolve_sut(
    baseline: str | None, sut: str | SystemUnderTest | None, pack: BenchmarkProvider
) -> SystemUnderTest:
    """Return the system ``baseline`` (a shipped baseline's name) or ``sut`` (a system, or its
    ``module:attr``) names; exactly one is given."""
    from effectbench.baselines import get_baseline

    if (baseline is None) == (sut is None):
        raise UsageError("give exactly one of --baseline NAME or --sut module:attr")
    if baseline is not None:
        return get_baseline(baseline, pack)
    return load_sut(sut) if isinstance(sut, str) else sut  # type: ignore[return-value]


@dataclass(frozen=True)
class Run:
    """A finished run: the pack it ran on, the system, and its rows and drops."""

    pack: BenchmarkProvider
    system: SystemUnderTest
    result: RunResult


def run(
    pack: str | BenchmarkProvider,
    *,
    baseline: str | None = None,
    sut: str | SystemUnderTest | None = None,
    trials: int = 10,
    split: str = "dev",
    substrates: str | None = None,
    task: str | None = None,
    executor: str = "local",
    workers: int = 1,
    scheduler: str | None = None,
    journal: Path | None = None,
    resume: Path | None = None,
    progress: str = "off",
    notice: Callable[[str], None] | None = None,
) -> Run:
    """Run a system on a pack and return its rows; refuse a run with nothing to score.

    ``pack`` is a pack's name (a fresh provider is built) or a provider; the system is a
    shipped ``baseline`` or ``sut`` (a system, or ``module:attr``). ``substrates``
    (``web,desktop``, ``all``; None: the pack's default), ``split`` and ``task`` (one task's
    id or name) choose the tasks. Episodes run on ``executor`` (``local`` with ``workers``
    processes, or ``dask`` at ``scheduler``); each finished one goes to ``journal`` (a new
    file) before the next is taken, and ``resume`` continues the run a journal records.
    ``progress`` is ``auto``, ``bar``, ``lines`` or ``off`` (on stderr); ``notice`` is told
    what the user should know before the run starts (a journal's last line cut off).
    """
    from effectbench.packs import get_pack
    from effectbench.run.executors import execute, get_executor
    from effectbench.run.executors.progress import progress_for
    from effectbench.run.journal import open_journal
    from effectbench.run.runner import RunPlan
    from effectbench.seam import ChecksFrontEnds, ExplainsAbsentSplit
    from effectbench.variants import choose, named_tasks, tasks_on

    provider = get_pack(pack) if isinstance(pack, str) else pack
    system = resolve_sut(baseline, sut, provider)
    chosen = choose(provider, substrates)
    if isinstance(provider, ChecksFrontEnds):
        for substrate in chosen:
            provider.front_end(substrate)  # a missing system package says so now, in one line
    if task is not None:
        tasks = named_tasks(provider, task, chosen, split)
        if not tasks:
            on = ", ".join(s.value for s in chosen)
            raise UsageError(
                f"--task {task}: pack {provider.name!r} has no such task in split {split!r} "
                f"on {on} (effectbench manifest --pack {provider.name} lists them)"
            )
    else:
        tasks = tasks_on(provider, chosen, split)
    if not tasks:
        why = provider.split_absent(split) if isinstance(provider, ExplainsAbsentSplit) else None
        raise UsageError(
            f"pack {provider.name!r} has no task in split {split!r}" + (f": {why}" if why else "")
        )
    plan = RunPlan.build(system, provider, trials=trials, tasks=tasks)
    engine = get_executor(executor, workers=workers, scheduler=scheduler)
    opened = open_journal(plan, journal=journal, resume=resume)
    if opened is not None and opened.torn_line is not None and notice is not None:
        notice(
            f"{opened.path}:{opened.torn_line}: last line was cut off mid-write; its episode "
            "runs again"
        )
    if opened is None:
        result = execute(plan, engine, progress=progress_for(progress))
    else:
        with opened:
            result = execute(plan, engine, journal=opened, progress=progress_for(progress))
    if not result.rows:
        raise UsageError(f"no episode of {system.name} on {provider.name} could be scored")
    return Run(provider, system, result)
