"""Where a run's episodes execute, behind one small seam.

An :class:`Executor` takes a :class:`~effectbench.run.runner.RunPlan` and the cells
still to run, and yields each cell with its outcome (row or drop) as it
finishes, in any order. The driver, :func:`execute`, is the same for every
executor: it re-judges each row from its readings with the one truth table
(:func:`effectbench.run.runner.rejudge`; a row that does not follow refuses the
run), writes each outcome to the run journal the moment it arrives, reports
progress and puts the rows back in serial order, so a run gives the same rows
(timings aside) on any executor.

Executors: ``local`` (this process, or a pool of worker processes with
``--workers N``) and ``dask`` (a Dask ``distributed`` cluster started by the
user's own tooling). Another engine is one more class with a ``run`` method.

An executor that cannot go on (its scheduler went away, a worker process
died) raises :class:`RunStopped`: the journal keeps every finished row and
the run continues with ``--resume``.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import TYPE_CHECKING, Protocol

from effectbench.attempts import EarlierAttempt, ending_of_drop, may_retry
from effectbench.errors import RunStopped as RunStopped
from effectbench.errors import UsageError
from effectbench.run.executors.worker import ForgedRow, Outcome
from effectbench.run.runner import Cell, DroppedEpisode, RunPlan, RunResult, rejudge

if TYPE_CHECKING:
    from effectbench.run.executors.progress import Progress
    from effectbench.run.journal import Journal

EXECUTORS = ("local", "dask")
"""The executors ``--executor`` names, the default first."""


class Executor(Protocol):
    """Runs cells of a plan somewhere and yields each one's outcome as it finishes."""

    name: str

    def run(self, plan: RunPlan, cells: Sequence[Cell]) -> Generator[tuple[Cell, Outcome]]:
        """Run ``cells`` of ``plan``; yield ``(cell, outcome)`` per cell, in any order.

        Raise :class:`RunStopped` when the run cannot go on; stop early (and
        release what was started) when the caller closes the iterator.
        """
        ...


def get_executor(name: str, *, workers: int = 1, scheduler: str | None = None) -> Executor:
    """Return the executor ``name`` (``local`` with ``workers``, or ``dask`` at ``scheduler``)."""
    if name == "local":
        if scheduler is not None:
            raise UsageError("--scheduler is for --executor dask")
        from effectbench.run.executors.local import LocalExecutor

        return LocalExecutor(workers)
    if name == "dask":
        if scheduler is None:
            raise UsageError("--executor dask needs --scheduler tcp://HOST:PORT")
        if workers != 1:
            raise UsageError("--workers is for --executor local; Dask runs on its own workers")
        from effectbench.run.executors.dask_cluster import DaskExecutor

        return DaskExecutor(scheduler)
    raise UsageError(f"unknown executor {name!r}; known: {', '.join(EXECUTORS)}")


def execute(
    plan: RunPlan,
    executor: Executor,
    *,
    journal: Journal | None = None,
    progress: Progress | None = None,
) -> RunResult:
    """Run every cell of ``plan`` the journal does not already hold; return the whole run.

    A cell the journal holds as a re-runnable drop (``agent_error``, ``infrastructure``)
    runs again, and its drop becomes an earlier attempt. Each finished cell is re-judged,
    then journalled before the next is taken. When the executor stops, the error says how
    many episodes the journal keeps; a row that does not follow from its readings refuses
    the run (:class:`~effectbench.run.executors.worker.ForgedRow`) before it is journalled.
    """
    outcomes: dict[tuple[str, int], Outcome] = journal.outcomes() if journal is not None else {}
    earlier = journal.earlier_attempts() if journal is not None else []
    tried: dict[tuple[str, int], int] = {}
    for entry in earlier:
        tried[(entry.task_id, entry.trial)] = tried.get((entry.task_id, entry.trial), 0) + 1
    cells = plan.cells()
    todo = [cell for cell in cells if cell.key not in outcomes or _again(outcomes[cell.key])]
    specs = {task.task_id: task for task in plan.tasks}
    if progress is not None:
        progress.start(len(cells), list(outcomes.values()))
    stream = executor.run(plan, todo)
    try:
        for cell, outcome in stream:
            departure = rejudge(plan.sut.name, specs[cell.task_id], cell, outcome)
            if departure:
                raise ForgedRow(
                    f"the {executor.name} executor returned a row of {cell.task_id} trial "
                    f"{cell.trial} that its readings contradict: {departure}; the run is refused "
                    "(a worker is trusted with the episodes it runs: see docs/long-runs.md)"
                )
            if journal is not None:
                journal.append(cell, outcome)
            previous = outcomes.get(cell.key)
            if isinstance(previous, DroppedEpisode):  # re-run: the drop did not count
                tried[cell.key] = tried.get(cell.key, 0) + 1
                earlier.append(
                    EarlierAttempt(
                        cell.task_id, cell.trial, tried[cell.key],
                        ending_of_drop(previous.reason), previous.detail,
                    )
                )  # fmt: skip
            outcomes[cell.key] = outcome
            if progress is not None:
                progress.update(outcome)
    except RunStopped as exc:
        if journal is None:
            kept = "no journal was kept (--journal FILE keeps finished episodes)"
        else:
            kept = (
                f"{len(outcomes)} of {len(cells)} episodes are in {journal.path}; "
                f"continue with --resume {journal.path}"
            )
        raise RunStopped(f"{exc}; {kept}") from None
    finally:
        stream.close()
        if progress is not None:
            progress.close()
    result = plan.result(outcomes)
    result.attempts = earlier
    if journal is not None:
        result.started_at = journal.started_at
    return result


def _again(outcome: Outcome) -> bool:
    """Whether a cell whose outcome so far is ``outcome`` is attempted again."""
    return isinstance(outcome, DroppedEpisode) and may_retry(outcome.reason)
