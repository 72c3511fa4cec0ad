"""A check of the analytic intervals: a hierarchical bootstrap of net value per 100 tasks.

The board's intervals are analytic (:func:`~effectbench.metrics.paired.cluster_difference`:
cluster-robust, Student's t on G - 1 degrees of freedom). Beside them a board states what a
resampling of its own design gives, level by level as the episodes were drawn:

1. the templates (the board's units; on a board whose units are tasks, each task is its own
   template), ``G`` drawn with replacement from the ``G`` there are;
2. within each template drawn, its tasks (instances), as many drawn with replacement as it
   has (a template drawn twice draws its tasks twice, independently);
3. within each task drawn, its trials, as many drawn with replacement as it has.

A replicate's value is the mean over its episodes of each episode's worth against doing
nothing on it (:func:`~effectbench.metrics.value.value_sums` per episode), times 100; the
interval is the replicates' percentile interval. For the difference of two systems, the
templates and tasks are drawn once for both (the pairing), each system's trials
independently (its own episodes). Two tables that are the same differ by exactly 0 in
[0, 0], as the analytic estimator says.

Sums of independent multinomial draws over the same cells are one multinomial draw, so a
template drawn ``w`` times contributes ``Multinomial(w n_g, 1/n_g)`` tasks and a task drawn
``c`` times ``Multinomial(c m_i, its outcomes' shares)`` episodes: each replicate costs one
draw per template and one per task whose trials disagree, whatever the counts. Seeded: the
same tables give the same interval on every machine numpy's generator runs on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from effectbench.metrics.rates import _Model
from effectbench.metrics.tasks import TaskTable
from effectbench.metrics.value import PER, Prices, value_per_episode

HIERARCHICAL_METHOD = "hierarchical-bootstrap-percentile"
"""Templates, then tasks within a template, then trials within a task, each drawn with
replacement; the percentile interval of the replicates."""
HIERARCHICAL_REPLICATES = 4000
"""Replicates per interval, chosen from ``benchmarks/bench_hierarchical.py``: on the shipped
boards, two seeds' limits differ by at most 4.2% of the interval's width at 4000 (8.8% at
1000, 5.5% at 2000), and every board's block costs 0.9 s of CPU in ``leaderboard.json``
(every row and adjacent pair), 1.1 s in ``rank --json`` (every pair)."""
HIERARCHICAL_SEED = 53
"""The generator's seed (numpy's PCG64): every interval of every board draws from it."""
HIERARCHICAL_LEVELS = ("template", "task", "trial")
"""What is resampled, outermost first."""

_OUTCOME_SHARES = (
    (1.0, 0.0, 0.0, 0.0),  # a task success
    (0.0, 1.0, 1.0, 0.0),  # a silent wrong write: silent and a wrong record
    (0.0, 1.0, 0.0, 0.0),  # another silent wrong effect (a phantom)
    (0.0, 0.0, 1.0, 0.0),  # a wrong write reported as a failure
    (0.0, 0.0, 0.0, 1.0),  # an over-halt
    (0.0, 0.0, 0.0, 0.0),  # a safe halt or a false abort
)
"""The outcomes an episode's worth depends on, each as the shares of
:data:`~effectbench.metrics.value.VALUE_EVENTS` one such episode has."""


def outcome_counts(table: TaskTable) -> np.ndarray:
    """Return, per unit of ``table``, how many of its episodes had each outcome of
    :data:`_OUTCOME_SHARES` (one row per unit; the rows sum to its episodes)."""
    m = table.m()
    success, swer = table.k("task_success"), table.k("swer")
    wrong_write, wrong_action = table.k("swer_wrong_write"), table.k("wrong_action")
    halt = table.k("over_halt")
    rest = m - success - swer - wrong_action - halt
    counts: np.ndarray = np.stack(
        [success, wrong_write, swer - wrong_write, wrong_action, halt, rest], axis=1
    )
    return counts


def outcome_values(p: Prices) -> np.ndarray:
    """Return what one episode of each outcome of :data:`_OUTCOME_SHARES` is worth at ``p``
    (:func:`~effectbench.metrics.value.value_per_episode`, the one formula)."""
    return np.array([value_per_episode(s, p) for s in _OUTCOME_SHARES], dtype=float)


class BootstrapInterval(_Model):
    """A value per 100 tasks (or a difference of two) with its hierarchical bootstrap interval."""

    estimate: float
    """The value (difference) per 100 tasks on the resampled tasks, as measured."""
    lo: float | None
    """Lower limit (None: not estimable, :attr:`note` says why)."""
    hi: float | None
    templates: int
    """Templates (units) resampled: G."""
    tasks: int
    """Tasks (instances) within them."""
    replicates: int
    seed: int
    confidence: float = 0.95
    method: str = HIERARCHICAL_METHOD
    levels: tuple[str, ...] = HIERARCHICAL_LEVELS
    note: str = ""


@dataclass(frozen=True)
class _System:
    """One system on the shared tasks: per task, its episodes' outcomes and worth."""

    counts: np.ndarray
    """Per task, episodes per outcome."""
    m: np.ndarray
    worth: np.ndarray
    """Per task, each outcome's worth against doing nothing there (one row per task)."""


def _tasks_of(table: TaskTable, nested: bool) -> tuple[TaskTable, list[str]]:
    """Return the table counted per task and each task's template: its :attr:`instances`
    where ``nested``, else its units, each unit its own template of one task."""
    if nested and table.instances is not None and table.instances.cluster is not None:
        return table.instances, list(table.instances.cluster)
    return table, list(table.task_id)


def _systems(tables: Sequence[TaskTable], p: Prices) -> tuple[list[_System], list[list[int]], int]:
    """Return each table on the tasks all of them ran, the positions of each template's tasks
    (templates sorted), and how many tasks that is."""
    nested = all(t.instances is not None and t.instances.cluster is not None for t in tables)
    per = [_tasks_of(t, nested) for t in tables]
    keys = sorted(set.intersection(*(set(zip(c, t.task_id, strict=True)) for t, c in per)))
    groups: dict[str, list[int]] = {}
    for i, (template, _) in enumerate(keys):
        groups.setdefault(template, []).append(i)
    values = outcome_values(p)
    out = []
    for table, clusters in per:
        where = {k: i for i, k in enumerate(zip(clusters, table.task_id, strict=True))}
        idx = [where[k] for k in keys]
        counts = outcome_counts(table)[idx]
        m = table.m()[idx]
        a = table.a()
        shift = np.zeros(len(idx)) if a is None else p.over_halt * a[idx] / m
        out.append(_System(counts, m, values[None, :] + shift[:, None]))
    return out, [groups[g] for g in sorted(groups)], len(keys)


def _draw_tasks(
    rng: np.random.Generator, groups: Sequence[Sequence[int]], tasks: int, replicates: int
) -> np.ndarray:
    """Return how often each task is drawn in each replicate (templates, then tasks)."""
    g = len(groups)
    templates = rng.multinomial(g, np.full(g, 1.0 / g), size=replicates)
    drawn = np.zeros((replicates, tasks))
    for j, members in enumerate(groups):
        n = len(members)
        drawn[:, members] = rng.multinomial(templates[:, j] * n, np.full(n, 1.0 / n))
    return drawn


def _replicate_values(rng: np.random.Generator, s: _System, drawn: np.ndarray) -> np.ndarray:
    """Return the system's value per 100 tasks in each replicate (``drawn``: tasks drawn per
    replicate), its trials drawn within each task drawn."""
    total = (s.counts * s.worth).sum(axis=1)
    fixed = (s.counts > 0).sum(axis=1) <= 1  # every trial the same outcome: nothing to draw
    numerator = drawn[:, fixed] @ total[fixed]
    for i in np.flatnonzero(~fixed):
        trials = rng.multinomial(drawn[:, i].astype(np.int64) * int(s.m[i]), s.counts[i] / s.m[i])
        numerator = numerator + trials @ s.worth[i]
    values: np.ndarray = PER * numerator / (drawn @ s.m)
    return values


def _point(s: _System) -> float:
    return PER * float((s.counts * s.worth).sum()) / float(s.m.sum())


def _interval(
    tables: Sequence[TaskTable], p: Prices, replicates: int, seed: int, confidence: float
) -> BootstrapInterval:
    """The bootstrap interval of the first table's value, or of the first minus the second."""
    systems, groups, tasks = _systems(tables, p)
    points = [_point(s) if tasks else 0.0 for s in systems]
    estimate = points[0] - (points[1] if len(points) > 1 else 0.0)
    base = BootstrapInterval(
        estimate=estimate,
        lo=None,
        hi=None,
        templates=len(groups),
        tasks=tasks,
        replicates=replicates,
        seed=seed,
        confidence=confidence,
    )
    if len(tables) > 1 and tables[0] == tables[1]:
        return base.model_copy(update={"lo": 0.0, "hi": 0.0, "note": "the same episodes"})
    if len(groups) < 2:
        plural = "s" if len(groups) != 1 else ""
        note = f"not estimable: {len(groups)} shared template{plural}, and a spread needs 2"
        return base.model_copy(update={"note": note})
    rng = np.random.default_rng(seed)
    drawn = _draw_tasks(rng, groups, tasks, replicates)
    values = _replicate_values(rng, systems[0], drawn)
    if len(systems) > 1:
        values = values - _replicate_values(rng, systems[1], drawn)
    tail = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(values, [tail, 1.0 - tail])
    return base.model_copy(update={"lo": float(lo), "hi": float(hi)})


def bootstrap_value(
    table: TaskTable,
    p: Prices,
    replicates: int = HIERARCHICAL_REPLICATES,
    seed: int = HIERARCHICAL_SEED,
    confidence: float = 0.95,
) -> BootstrapInterval:
    """Return one system's net value per 100 tasks against doing nothing on its own episodes
    (as :func:`~effectbench.metrics.value.net_value` counts it) with its hierarchical bootstrap
    interval at ``confidence``. Fewer than 2 templates: not estimable (no spread across
    templates to resample)."""
    return _interval([table], p, replicates, seed, confidence)


def bootstrap_difference(
    first: TaskTable,
    second: TaskTable,
    p: Prices,
    replicates: int = HIERARCHICAL_REPLICATES,
    seed: int = HIERARCHICAL_SEED,
    confidence: float = 0.95,
) -> BootstrapInterval:
    """Return the first system's net value per 100 tasks minus the second's, over the tasks
    both ran (in the templates both ran), with its paired hierarchical bootstrap interval:
    templates and tasks drawn once for both, trials for each. The same table twice: 0 in
    [0, 0]; fewer than 2 shared templates: not estimable."""
    return _interval([first, second], p, replicates, seed, confidence)
