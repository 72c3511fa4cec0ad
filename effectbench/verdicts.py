"""The default order of a board and its rank ranges: value for work done, doing nothing at zero.

A board orders its systems by net value per 100 tasks
(:func:`effectbench.metrics.value_per_episode`) at the reader's prices (by default
:data:`effectbench.metrics.DEFAULT_PRICES`): the value of its correct effects minus the costs
of its silent wrong effects, wrong records and over-halts. Each system's place comes from a
score computed from that system alone; ties go to more task success, then less SWER,
record-wrong and over-halt, then the key. So, whatever the prices:

* **dominance**: a system at least as good on task success, SWER, record-wrong and over-halt,
  and better on one, ranks above the other (the value is monotone in every rate, evaluated the
  same way for every system; a tie falls to the rates in turn);
* **independence of irrelevant systems**: adding or removing a system never changes the order
  of two others (their scores do not read it);
* **doing nothing is a line, not a rule**: a system that never acts earns no value and pays an
  over-halt wherever the correct action was available, which is exactly doing nothing; the
  board draws every system against that line (:func:`effectbench.metrics.over_doing_nothing`)
  and no special rule holds anyone down.

Rank ranges count only differences beyond noise, at a family-wise level: every difference
between two ranked systems of the board is judged at once
(:func:`effectbench.metrics.family_confidence`, Bonferroni over the pairs), on the tasks both
ran (:func:`effectbench.metrics.value_difference`), and only when they share at least
:func:`effectbench.metrics.min_shared_tasks` tasks. A system's best rank is 1 plus the systems
above it that are worth more beyond noise, its worst rank the number of systems minus those
below it that it is worth more than beyond noise. The rank ranges depend on the other systems
(how many pairs share the error); the order does not.

The site's board script (``site/assets/leaderboard.js``) applies the same rules in the
browser when a reader changes the prices; a test holds the two equal.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from effectbench.metrics import (
    CONFIDENCE,
    PER,
    Prices,
    TaskTable,
    family_confidence,
    min_shared_tasks,
    net_per_episode,
    shares,
    value_difference,
    value_sums,
)
from effectbench.metrics.paired import SPREAD_FLOOR, t_two_sided

__all__ = [
    "Separation",
    "Standing",
    "board_order",
    "dominates",
    "grain",
    "order_key",
    "rank_ranges",
    "separation",
    "standing",
]


@dataclass(frozen=True)
class Standing:
    """What the order reads of one system: its net value and the four rates it weighs."""

    key: str
    """A unique key (the submission's slug)."""
    name: str
    value: float
    """Net value per 100 tasks at the prices, against doing nothing on the same episodes where
    the table says which had the correct action available
    (:func:`effectbench.metrics.net_per_episode`)."""
    task_success: float
    swer: float
    record_wrong: float
    over_halt: float


def standing(key: str, name: str, table: TaskTable, prices: Prices) -> Standing:
    """Return the standing of one system from its per-task counts (and nothing else)."""
    s, w, r, o = shares(table)
    return Standing(
        key=key,
        name=name,
        value=PER * net_per_episode(table, prices),
        task_success=s,
        swer=w,
        record_wrong=r,
        over_halt=o,
    )


VALUE_GRAIN = 1e6
"""Net values per 100 tasks are compared in millionths: two that differ by rounding alone (the
same value reached by other rates, 29.6296... and 29.6296...) tie, and the rates decide."""


def grain(value: float) -> float:
    """Return ``value`` in whole millionths (the board script rounds with the same operations).

    Monotone, so a system worth at least as much never falls below the other."""
    return math.floor(value * VALUE_GRAIN + 0.5)


def order_key(s: Standing) -> tuple[float, float, float, float, float, str]:
    """Return what a system is ordered by: more value first (to a millionth, :func:`grain`),
    then more task success, then less SWER, record-wrong and over-halt, then its key."""
    return (-grain(s.value), -s.task_success, s.swer, s.record_wrong, s.over_halt, s.key)


def dominates(a: Standing, b: Standing) -> bool:
    """Whether ``a`` is at least as good as ``b`` on task success, SWER, record-wrong and
    over-halt, and better on one."""
    pa = (-a.task_success, a.swer, a.record_wrong, a.over_halt)
    pb = (-b.task_success, b.swer, b.record_wrong, b.over_halt)
    return all(x <= y for x, y in zip(pa, pb, strict=True)) and pa != pb


def board_order(standings: Sequence[Standing]) -> list[int]:
    """Return the indexes of ``standings`` in the board's default order (:func:`order_key`)."""
    return sorted(range(len(standings)), key=lambda i: order_key(standings[i]))


@dataclass(frozen=True)
class Separation:
    """Which systems of a board are worth more than which, beyond noise, all at once."""

    beyond: np.ndarray
    """``beyond[i, j]``: system i is worth more than system j beyond noise."""
    confidence: float
    """The level of each difference (the family's level shared among the pairs)."""
    min_tasks: int
    """The fewest common tasks a difference at that level must rest on."""


def separation(
    tables: Sequence[TaskTable], prices: Prices, confidence: float = CONFIDENCE
) -> Separation:
    """Return which of the systems counted in ``tables`` are worth more than which beyond noise.

    Every pair's :func:`effectbench.metrics.value_difference` on the tasks both ran, at the
    level that makes all of them hold at once with probability ``confidence``; a pair that
    shares fewer than :func:`effectbench.metrics.min_shared_tasks` tasks at that level is never
    separated. When every system ran the same tasks the whole matrix is computed at once from
    each system's clustered intervals and residuals (the same formula); otherwise pair by pair.
    """
    n = len(tables)
    level = family_confidence(n, confidence)
    least = min_shared_tasks(level)
    beyond = np.zeros((n, n), dtype=bool)
    if n < 2:
        return Separation(beyond, level, least)
    if all(t.task_id == tables[0].task_id for t in tables):
        if tables[0].n_tasks >= least:
            beyond = _shared_separation(tables, prices, level)
        return Separation(beyond, level, least)
    for i in range(n):
        for j in range(n):
            if i != j:
                d = value_difference(tables[i], tables[j], prices, level)
                beyond[i, j] = d.tasks >= least and d.lo > 0
    return Separation(beyond, level, least)


def _shared_separation(tables: Sequence[TaskTable], prices: Prices, level: float) -> np.ndarray:
    """:func:`separation` of systems that ran the same units, every pair at once.

    The lower limit of ``value_i - value_j`` is ``(v_i - v_j) - t sqrt(G / (G - 1)) |e_i -
    e_j|``, ``e_i`` system i's per-unit influences of :func:`~effectbench.metrics.paired.
    cluster_difference` (``(x_i[u] - mean_i m_i[u]) / n_i`` over :func:`value_sums`), with
    its rounding floor on the same scale; so it equals :func:`value_difference` pair by pair.
    """
    g = tables[0].n_tasks
    if g < 2:
        return np.zeros((len(tables), len(tables)), dtype=bool)
    values, infl, scales = [], [], []
    for t in tables:
        x, m = value_sums(t, prices), t.m()
        n = float(m.sum())
        mean = float(x.sum()) / n
        infl.append((x - mean * m) / n)
        scales.append((np.abs(x) + abs(mean) * m) / n)
        values.append(net_per_episode(t, prices))
    e, sc = np.array(infl), np.array(scales)
    ee = (e * e).sum(axis=1)
    ss = (sc * sc).sum(axis=1)
    squares = ee[:, None] + ee[None, :] - 2.0 * e @ e.T
    floor = SPREAD_FLOOR * (ss[:, None] + ss[None, :] + 2.0 * sc @ sc.T)
    squares = np.where(squares <= floor, 0.0, np.clip(squares, 0.0, None))
    half = t_two_sided(level, g - 1) * np.sqrt(g / (g - 1) * squares)
    v = np.asarray(values)
    lower = (v[:, None] - v[None, :]) - half
    beyond: np.ndarray = lower > 0
    np.fill_diagonal(beyond, False)
    return beyond


def rank_ranges(order: Sequence[int], beyond: np.ndarray) -> tuple[list[int], list[int]]:
    """Return (best, worst) rank of each position of ``order`` (1-based).

    ``order`` lists the ranked systems (indexes into ``beyond``) in the default order.
    Position p's best rank is 1 plus the systems above it worth more than it beyond noise; its
    worst rank is the number of systems minus those below it it is worth more than beyond
    noise. A difference on the common tasks that points against the order (possible only when
    the two ran different tasks) separates nothing.
    """
    n = len(order)
    at = np.asarray(order, dtype=np.intp)
    # above[p, q] for p < q: the system at position p is worth more than the one at q.
    above = np.triu(np.asarray(beyond, dtype=bool)[np.ix_(at, at)], 1)
    best = (1 + above.sum(axis=0)).tolist()
    worst = (n - above.sum(axis=1)).tolist()
    return best, worst
