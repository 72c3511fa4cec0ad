"""One arm's scored episodes counted per task: what every task-clustered number reads.

SPEC 1.3 (added in 1.2.0, revised in 1.3.0): trials of one task share its context, so the task
is the unit the intervals, net values and comparisons count.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, Any, TypeVar, overload

import numpy as np

from effectbench.metrics.events import CodedFrame, _codes, episode_events
from effectbench.metrics.rates import _Model

if TYPE_CHECKING:
    import pandas as pd

_T = TypeVar("_T")


class TaskTable(_Model):
    """One arm's scored episodes counted per task: what every task-clustered number reads.

    Trials of one task share its context (in a deterministic pack their outcomes are
    identical), so they are not independent observations; the task is the unit the
    intervals and comparisons below count. Tasks are sorted by id; each belongs to one
    (category x substrate) cell.
    """

    task_id: list[str]
    """The tasks, sorted."""
    category: list[str]
    """Each task's divergence category."""
    substrate: list[str]
    """Each task's substrate."""
    trials: list[int]
    """Scored episodes of each task."""
    events: dict[str, list[int]]
    """Per event of :data:`EVENTS`: how many of each task's episodes had it."""
    correct_action_available: list[bool] | None = None
    """Whether the correct action was available in each task (None when not known; a unit of
    several tasks that disagree is not known: :attr:`available` counts it)."""
    available: list[int] | None = None
    """Per unit: its scored episodes whose task had the correct action available (what doing
    nothing turns into over-halts there). None: read from :attr:`correct_action_available`."""
    unit_tasks: list[int] | None = None
    """Per unit: its distinct tasks (None: one each, every unit a task)."""
    unit: str = "task"
    """What one unit (cluster) of the table is: ``task``, or ``template`` where a pack counts
    its generated tasks by the template they were drawn from."""
    cluster: list[str] | None = None
    """Per task of a table of :attr:`instances`: the unit (template) it belongs to."""
    instances: TaskTable | None = None
    """Where the units are templates: the same episodes counted per task (each task's
    template in its :attr:`cluster`), what a resampling of tasks within templates reads (None
    where every unit is a task)."""

    @property
    def n_tasks(self) -> int:
        """Tasks with at least one scored episode."""
        return len(self.task_id)

    @property
    def n_episodes(self) -> int:
        """Scored episodes over every task."""
        return int(sum(self.trials))

    def tasks_in(self) -> np.ndarray:
        """Return each unit's distinct tasks as an array (1 where every unit is a task)."""
        if self.unit_tasks is None:
            return np.ones(len(self.task_id))
        return np.asarray(self.unit_tasks, dtype=float)

    def m(self) -> np.ndarray:
        """Return the scored episodes of each task as an array."""
        return np.asarray(self.trials, dtype=float)

    def k(self, event: str) -> np.ndarray:
        """Return the episodes of each task that had ``event``, as an array."""
        return np.asarray(self.events[event], dtype=float)

    def a(self) -> np.ndarray | None:
        """Return each unit's episodes whose task had the correct action available, as an
        array (None when not known)."""
        if self.available is not None:
            return np.asarray(self.available, dtype=float)
        if self.correct_action_available is None:
            return None
        return np.where(np.asarray(self.correct_action_available, dtype=bool), self.m(), 0.0)

    def select(self, keep: Iterable[bool]) -> TaskTable:
        """Return the table of the tasks where ``keep`` is true."""
        return self.reordered([i for i, k in enumerate(keep) if k])

    def reordered(self, idx: Sequence[int], ids: Sequence[str] | None = None) -> TaskTable:
        """Return the table of the units at ``idx``, in that order (``ids``: their new ids);
        its :attr:`instances` are the tasks of those units (their clusters renamed alike)."""
        return TaskTable(
            task_id=_picked(self.task_id, idx) if ids is None else list(ids),
            category=_picked(self.category, idx),
            substrate=_picked(self.substrate, idx),
            trials=_picked(self.trials, idx),
            events={e: _picked(v, idx) for e, v in self.events.items()},
            correct_action_available=_picked(self.correct_action_available, idx),
            available=_picked(self.available, idx),
            unit_tasks=_picked(self.unit_tasks, idx),
            unit=self.unit,
            cluster=_picked(self.cluster, idx),
            instances=self._instances_of(idx, ids),
        )

    def _instances_of(self, idx: Sequence[int], ids: Sequence[str] | None) -> TaskTable | None:
        """The :attr:`instances` of the units at ``idx`` (renamed ``ids``), in task order."""
        inner = self.instances
        if inner is None or inner.cluster is None:
            return None
        new = [self.task_id[i] for i in idx] if ids is None else list(ids)
        names = {self.task_id[i]: name for i, name in zip(idx, new, strict=True)}
        keep = [j for j, c in enumerate(inner.cluster) if c in names]
        kept = inner.reordered(keep)
        return kept.model_copy(update={"cluster": [names[c] for c in inner.cluster if c in names]})

    def of_substrate(self, substrate: str) -> TaskTable:
        """Return the tasks of one substrate."""
        return self.select(s == substrate for s in self.substrate)

    def of_cell(self, category: str, substrate: str) -> TaskTable:
        """Return the tasks of one (category x substrate) cell."""
        return self.select(
            c == category and s == substrate
            for c, s in zip(self.category, self.substrate, strict=True)
        )


@overload
def _picked(values: Sequence[_T], idx: Sequence[int]) -> list[_T]: ...
@overload
def _picked(values: Sequence[_T] | None, idx: Sequence[int]) -> list[_T] | None: ...
def _picked(values: Sequence[_T] | None, idx: Sequence[int]) -> list[_T] | None:
    """The items of ``values`` at ``idx``, in that order (None stays None)."""
    return None if values is None else [values[i] for i in idx]


def task_table(
    frame: pd.DataFrame | CodedFrame,
    available: Mapping[str, bool] | None = None,
    clusters: Mapping[str, str] | None = None,
) -> TaskTable:
    """Return the per-task counts of ``frame`` (one arm), every event of :data:`EVENTS`.

    ``available`` maps task ids to ``correct_action_available`` (from the pack); when
    it covers every task the table carries it (what doing nothing would score needs it).
    ``clusters`` maps task ids to the group their outcomes correlate within
    (:class:`~effectbench.seam.ClustersTasks`); when it covers every task, the table counts
    those groups as its units instead of tasks (a group's ``correct_action_available`` is
    known when all its tasks agree; :attr:`TaskTable.available` counts each unit's episodes
    whose task had the correct action available either way).
    """
    codes, labels = _codes(frame["task_id"])
    task_codes, task_labels, by_task = codes, labels, available
    grouped: _Grouped | None = None
    if clusters is not None and all(t in clusters for t in labels):
        grouped = _grouped(frame, codes, labels, available, clusters)
        codes, labels, available = grouped.codes, grouped.labels, grouped.available
    size = len(labels)
    present = codes >= 0
    trials = np.bincount(codes[present], minlength=size)
    avail_episodes = _available_episodes(by_task, task_labels, task_codes, codes, size)
    counts = {
        e: np.bincount(codes[present], weights=v[present], minlength=size)
        for e, v in episode_events(frame).items()
    }
    first = _first_rows(codes)
    order = sorted((i for i in range(size) if trials[i] > 0), key=lambda i: labels[i])
    ids = [labels[i] for i in order]
    return TaskTable(
        task_id=ids,
        category=_first_values(frame["category"], first, order),
        substrate=_first_values(frame["substrate"], first, order),
        trials=[int(trials[i]) for i in order],
        events={e: _rounded_at(c, order) for e, c in counts.items()},
        correct_action_available=_flags(available, ids),
        available=_rounded_at(avail_episodes, order),
        unit_tasks=None if grouped is None else _rounded_at(grouped.members, order),
        unit="task" if grouped is None else "template",
        instances=None if grouped is None else grouped.inner,
    )


def _available_episodes(
    by_task: Mapping[str, bool] | None,
    task_labels: Sequence[str],
    task_codes: np.ndarray,
    codes: np.ndarray,
    size: int,
) -> np.ndarray | None:
    """How many episodes of each of the ``size`` units (rows coded ``codes``) had the correct
    action available, when ``by_task`` says it for every task (rows coded ``task_codes`` into
    ``task_labels``); else None."""
    if by_task is None or not _covers(by_task, task_labels):
        return None
    flags = np.array([bool(by_task[t]) for t in task_labels] + [False], dtype=float)
    per_row = flags[task_codes]
    present = codes >= 0
    return np.bincount(codes[present], weights=per_row[present], minlength=size)


def _covers(mapping: Mapping[str, Any] | None, keys: Iterable[str]) -> bool:
    """Whether ``mapping`` is given and holds every one of ``keys``."""
    return mapping is not None and all(k in mapping for k in keys)


def _flags(available: Mapping[str, bool] | None, ids: Sequence[str]) -> list[bool] | None:
    """``available`` of each of ``ids``, when it holds them all (else None)."""
    if available is None or not _covers(available, ids):
        return None
    return [bool(available[t]) for t in ids]


@overload
def _rounded_at(values: np.ndarray, order: Sequence[int]) -> list[int]: ...
@overload
def _rounded_at(values: None, order: Sequence[int]) -> None: ...
@overload
def _rounded_at(values: np.ndarray | None, order: Sequence[int]) -> list[int] | None: ...
def _rounded_at(values: np.ndarray | None, order: Sequence[int]) -> list[int] | None:
    """``values`` at ``order``, rounded to integers (None stays None)."""
    return None if values is None else [int(round(values[i])) for i in order]


def _first_values(column: Any, first: Mapping[int, int], order: Sequence[int]) -> list[str]:
    """The value of ``column`` at the first row of each unit of ``order``."""
    value_codes, value_labels = _codes(column)
    return [value_labels[value_codes[first[i]]] for i in order]


def _first_rows(codes: np.ndarray) -> dict[int, int]:
    """The first row of each unit code (negative codes: no unit)."""
    first: dict[int, int] = {}
    for row, code in enumerate(codes.tolist()):
        if code >= 0 and code not in first:
            first[code] = row
    return first


@dataclass(frozen=True)
class _Grouped:
    """A frame's rows counted by the groups of their tasks: each row's group code, the
    groups (sorted), their ``correct_action_available`` when every group's tasks agree, how
    many tasks of each group ran, and the per-task table the groups gather."""

    codes: np.ndarray
    labels: list[str]
    available: Mapping[str, bool] | None
    members: np.ndarray
    inner: TaskTable


def _grouped(
    frame: pd.DataFrame | CodedFrame,
    codes: np.ndarray,
    labels: list[str],
    available: Mapping[str, bool] | None,
    clusters: Mapping[str, str],
) -> _Grouped:
    """Regroup the rows coded by task (``codes`` into ``labels``) by ``clusters``."""
    per_task = task_table(frame, available)
    inner = per_task.model_copy(update={"cluster": [clusters[t] for t in per_task.task_id]})
    units = sorted({clusters[t] for t in labels})
    index = {u: i for i, u in enumerate(units)}
    remap = np.array([index[clusters[t]] for t in labels] + [-1], dtype=np.int64)
    present = np.unique(codes[codes >= 0])
    members = np.bincount(remap[present], minlength=len(units))
    agreed = available  # a mapping that does not hold every task is kept as it was given
    if available is not None and _covers(available, labels):
        agreed = _agreed_availability(labels, available, clusters, len(units))
    return _Grouped(remap[codes], units, agreed, members, inner)


def _agreed_availability(
    labels: Sequence[str], available: Mapping[str, bool], clusters: Mapping[str, str], units: int
) -> dict[str, bool] | None:
    """Each group's ``correct_action_available`` when all its tasks agree, for every one of
    the ``units`` groups (else None)."""
    per_unit: dict[str, set[bool]] = {}
    for t in labels:
        per_unit.setdefault(clusters[t], set()).add(bool(available[t]))
    agreed = {u: next(iter(v)) for u, v in per_unit.items() if len(v) == 1}
    return agreed if len(agreed) == units else None


def joined(parts: Sequence[tuple[str, TaskTable]], unit: str | None = None) -> TaskTable:
    """Return the units of several tables side by side: one table whose units are every
    part's, each id prefixed with its part's name (``clinic-generated/T03``), so units of two
    parts never merge, sorted by the new ids.

    ``parts`` are (name, table) of one system on units that do not overlap (a pack each). The
    events are those every part counts; where the correct action was available is kept per
    unit when every part says so (else None). ``unit`` names the joined units (default: the
    parts' own when they agree, else ``cluster``)."""
    if not parts:
        raise ValueError("joining tables needs at least one")
    names = [name for name, _ in parts]
    if len(set(names)) != len(names):
        raise ValueError(f"the parts of a joined table need distinct names, got {names}")
    tables = [t for _, t in parts]
    events = _shared_events(tables)
    ids = _prefixed_ids(parts)
    if len(set(ids)) != len(ids):
        raise ValueError("the parts of a joined table share a unit id after prefixing")
    kinds = {t.unit for t in tables}
    table = TaskTable(
        task_id=ids,
        category=_chained(t.category for t in tables),
        substrate=_chained(t.substrate for t in tables),
        trials=_chained(t.trials for t in tables),
        events={e: _chained(t.events[e] for t in tables) for e in events},
        available=_joined_available(tables),
        unit_tasks=_joined_unit_tasks(tables),
        unit=unit or (next(iter(kinds)) if len(kinds) == 1 else "cluster"),
    )
    return table.reordered(sorted(range(len(ids)), key=ids.__getitem__))


def _shared_events(tables: Sequence[TaskTable]) -> list[str]:
    """The events every table counts, in the first table's order."""
    return [e for e in tables[0].events if all(e in t.events for t in tables)]


def _chained(lists: Iterable[Sequence[_T]]) -> list[_T]:
    """The items of ``lists``, one after the other."""
    return list(chain.from_iterable(lists))


def _prefixed_ids(parts: Sequence[tuple[str, TaskTable]]) -> list[str]:
    """Every part's unit ids, each prefixed with its part's name (once)."""
    return [
        tid if tid.startswith(f"{name}::") else f"{name}::{tid}"
        for name, t in parts
        for tid in t.task_id
    ]


def _joined_available(tables: Sequence[TaskTable]) -> list[int] | None:
    """Each unit's episodes with the correct action available, when every table says it."""
    avail = [t.a() for t in tables]
    if any(a is None for a in avail):
        return None
    return [int(round(float(x))) for a in avail if a is not None for x in a]


def _joined_unit_tasks(tables: Sequence[TaskTable]) -> list[int] | None:
    """How many tasks each unit gathers, when some table groups its tasks."""
    if all(t.unit_tasks is None for t in tables):
        return None
    return [int(n) for t in tables for n in t.tasks_in()]
