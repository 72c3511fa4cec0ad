"""One arm's scored episodes counted per task: what every task-clustered number reads.

SPEC 1.3 (added in 1.2.0, revised in 1.3.0): trials of one task share its context, so the task
is the unit the intervals, net values and comparisons count.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from effectbench.metrics.events import CodedFrame, _codes, episode_events
from effectbench.metrics.rates import _Model

if TYPE_CHECKING:
    import pandas as pd


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
        avail, counts, members = self.correct_action_available, self.available, self.unit_tasks
        return TaskTable(
            task_id=[self.task_id[i] for i in idx] if ids is None else list(ids),
            category=[self.category[i] for i in idx],
            substrate=[self.substrate[i] for i in idx],
            trials=[self.trials[i] for i in idx],
            events={e: [v[i] for i in idx] for e, v in self.events.items()},
            correct_action_available=None if avail is None else [avail[i] for i in idx],
            available=None if counts is None else [counts[i] for i in idx],
            unit_tasks=None if members is None else [members[i] for i in idx],
            unit=self.unit,
            cluster=None if self.cluster is None else [self.cluster[i] for i in idx],
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
    unit = "task"
    members: np.ndarray | None = None
    inner: TaskTable | None = None
    if clusters is not None and all(t in clusters for t in labels):
        per_task = task_table(frame, available)
        inner = per_task.model_copy(update={"cluster": [clusters[t] for t in per_task.task_id]})
        unit = "template"
        units = sorted({clusters[t] for t in labels})
        index = {u: i for i, u in enumerate(units)}
        remap = np.array([index[clusters[t]] for t in labels] + [-1], dtype=np.int64)
        present = np.unique(codes[codes >= 0])
        members = np.bincount(remap[present], minlength=len(units))
        codes = remap[codes]
        if available is not None and all(t in available for t in labels):
            per_unit: dict[str, set[bool]] = {}
            for t in labels:
                per_unit.setdefault(clusters[t], set()).add(bool(available[t]))
            agreed = {u: next(iter(v)) for u, v in per_unit.items() if len(v) == 1}
            available = agreed if len(agreed) == len(units) else None
        labels = units
    size = len(labels)
    trials = np.bincount(codes[codes >= 0], minlength=size)

    avail_episodes = None
    if by_task is not None and all(t in by_task for t in task_labels):
        flags = np.array([bool(by_task[t]) for t in task_labels] + [False], dtype=float)
        per_row = flags[task_codes]
        avail_episodes = np.bincount(codes[codes >= 0], weights=per_row[codes >= 0], minlength=size)
    events = episode_events(frame)
    counts = {
        e: np.bincount(codes[codes >= 0], weights=v[codes >= 0], minlength=size)
        for e, v in events.items()
    }
    cat_codes, cat_labels = _codes(frame["category"])
    sub_codes, sub_labels = _codes(frame["substrate"])
    first: dict[int, int] = {}
    for row, code in enumerate(codes.tolist()):
        if code >= 0 and code not in first:
            first[code] = row
    order = sorted((i for i in range(size) if trials[i] > 0), key=lambda i: labels[i])
    ids = [labels[i] for i in order]
    avail = None
    if available is not None and all(t in available for t in ids):
        avail = [bool(available[t]) for t in ids]
    return TaskTable(
        task_id=ids,
        category=[cat_labels[cat_codes[first[i]]] for i in order],
        substrate=[sub_labels[sub_codes[first[i]]] for i in order],
        trials=[int(trials[i]) for i in order],
        events={e: [int(round(c[i])) for i in order] for e, c in counts.items()},
        correct_action_available=avail,
        available=None
        if avail_episodes is None
        else [int(round(avail_episodes[i])) for i in order],
        unit_tasks=None if members is None else [int(members[i]) for i in order],
        unit=unit,
        instances=inner,
    )


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
    events = [e for e in tables[0].events if all(e in t.events for t in tables)]
    avail = [t.a() for t in tables]
    ids = [
        tid if tid.startswith(f"{name}::") else f"{name}::{tid}"
        for name, t in parts
        for tid in t.task_id
    ]
    if len(set(ids)) != len(ids):
        raise ValueError("the parts of a joined table share a unit id after prefixing")
    kinds = {t.unit for t in tables}
    table = TaskTable(
        task_id=ids,
        category=[c for t in tables for c in t.category],
        substrate=[s for t in tables for s in t.substrate],
        trials=[n for t in tables for n in t.trials],
        events={e: [k for t in tables for k in t.events[e]] for e in events},
        available=None
        if any(a is None for a in avail)
        else [int(round(float(x))) for a in avail if a is not None for x in a],
        unit_tasks=None
        if all(t.unit_tasks is None for t in tables)
        else [int(n) for t in tables for n in t.tasks_in()],
        unit=unit or (next(iter(kinds)) if len(kinds) == 1 else "cluster"),
    )
    return table.reordered(sorted(range(len(ids)), key=ids.__getitem__))
