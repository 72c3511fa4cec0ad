"""The default order of a board and its rank ranges: harm and halting judged together.

A board orders its systems by expected cost per 100 tasks
(:func:`effectbench.metrics.expected_cost`) under the reader's weights (by default
:data:`effectbench.metrics.DEFAULT_COSTS`), subject to two rules that hold whatever the
weights:

* **dominance**: a system at least as bad on SWER, record-wrong and over-halt, and worse
  on one, never ranks above the other (with every weight above 0 the cost already
  ensures it; the tie-breakers SWER, record-wrong, over-halt keep it with a zero weight);
* **no reward for inaction**: a system that never acts (every episode a halt) ranks below
  every system that acts, with more correct effects at no higher SWER, even where its
  over-halts cost less than the other's wrong records at those prices. Doing nothing is
  the board's reference line, never its winner.

The order is a topological sort of those two relations, the cheapest available system
first. On a board whose systems ran different task sets the two rules can conflict (a
system that never acts on tasks without a correct action scores 0 everywhere); the
inaction rule then wins.

Rank ranges count only differences beyond noise: a system's best rank is 1 plus the
systems above it that are *separated* from it, its worst rank the number of systems minus
those below it that are separated from it. Two systems are separated when the paired,
task-clustered interval of their cost difference
(:func:`effectbench.metrics.cost_difference`) excludes 0, or when the inaction rule put
one above the other. Systems that are not separated share ranks ("1–2"): a tie group.

The site's board script (``site/assets/leaderboard.js``) applies the same rules in the
browser when a reader changes the weights; a test holds the two equal.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from effectbench.metrics import (
    CostWeights,
    TaskTable,
    cost_difference,
    expected_cost,
    never_acts,
    student_t_quantile,
    task_costs,
)

__all__ = [
    "Standing",
    "board_order",
    "dominates",
    "inaction_below",
    "rank_ranges",
    "separation",
    "standing",
]


@dataclass(frozen=True)
class Standing:
    """What the order reads of one system: its three harms, correct effects and cost."""

    key: str
    """A unique key (the submission's slug)."""
    name: str
    swer: float
    record_wrong: float
    over_halt: float
    correct_effect: float
    """Share of episodes whose record holds the declared effect (reported or not)."""
    idle: bool
    """The system never acted: every episode is a halt."""
    cost: float
    """Expected cost per 100 tasks under the weights."""


def standing(key: str, name: str, table: TaskTable, weights: CostWeights) -> Standing:
    """Return the standing of one system from its per-task counts."""
    n = max(table.n_episodes, 1)
    share = {e: float(table.k(e).sum()) / n for e in ("swer", "record_wrong", "over_halt")}
    return Standing(
        key=key,
        name=name,
        swer=share["swer"],
        record_wrong=share["record_wrong"],
        over_halt=share["over_halt"],
        correct_effect=float(table.k("correct_effect").sum()) / n,
        idle=never_acts(table),
        cost=expected_cost(table, weights).per_100,
    )


def dominates(a: Standing, b: Standing) -> bool:
    """Whether ``a`` is at least as good as ``b`` on SWER, record-wrong and over-halt, and
    better on one."""
    pa = (a.swer, a.record_wrong, a.over_halt)
    pb = (b.swer, b.record_wrong, b.over_halt)
    return all(x <= y for x, y in zip(pa, pb, strict=True)) and pa != pb


def inaction_below(idle: Standing, actor: Standing) -> bool:
    """Whether the inaction rule puts ``idle`` below ``actor``.

    ``idle`` never acts; ``actor`` acts, has more correct effects and no higher SWER.
    """
    return (
        idle.idle
        and not actor.idle
        and actor.swer <= idle.swer
        and actor.correct_effect > idle.correct_effect
    )


def _priority(s: Standing) -> tuple[float, float, float, float, str, str]:
    # Rounded so that two costs equal up to floating-point noise tie, in Python and in JS.
    return (round(s.cost, 9), s.swer, s.record_wrong, s.over_halt, s.name, s.key)


def board_order(standings: Sequence[Standing]) -> list[int]:
    """Return the indexes of ``standings`` in the board's default order.

    Cheapest first among the systems no rule holds back: a system waits until every
    system that dominates it, or that the inaction rule puts above it, is placed. When
    every remaining system waits (a conflict of the two rules, possible only on a
    board whose systems ran different tasks), the cheapest one that no inaction rule
    holds back goes next.
    """
    n = len(standings)
    harms = np.array([(s.swer, s.record_wrong, s.over_halt) for s in standings], dtype=float)
    harms = harms.reshape(n, 3)
    idle = np.array([s.idle for s in standings], dtype=bool)
    swer = harms[:, 0]
    correct = np.array([s.correct_effect for s in standings], dtype=float)
    # ruled[i, j]: the inaction rule puts j below i; dom[i, j]: i dominates j (both as the
    # functions above define them, for every pair at once)
    ruled = (
        idle[None, :]
        & ~idle[:, None]
        & (swer[:, None] <= swer[None, :])
        & (correct[:, None] > correct[None, :])
    )
    dom = np.all(harms[:, None, :] <= harms[None, :, :], axis=2) & np.any(
        harms[:, None, :] != harms[None, :, :], axis=2
    )
    edges = ruled | (dom & ~ruled.T)
    np.fill_diagonal(edges, False)
    after: list[list[int]] = [np.flatnonzero(row).tolist() for row in edges]
    waiting: list[int] = edges.sum(axis=0).tolist()  # unplaced systems that must precede j
    held: list[int] = ruled.sum(axis=0).tolist()  # the inaction part of waiting[j]
    placed: list[int] = []
    done = [False] * n
    heap = [(_priority(standings[i]), i) for i in range(n) if not waiting[i]]
    heapq.heapify(heap)
    while len(placed) < n:
        if not heap:  # every remaining system waits: a conflict of the rules
            free = [i for i in range(n) if not done[i] and not held[i]]
            pick = min(free, key=lambda i: _priority(standings[i]))
            heap.append((_priority(standings[pick]), pick))
        _, i = heapq.heappop(heap)
        if done[i]:
            continue
        done[i] = True
        placed.append(i)
        for j in after[i]:
            waiting[j] -= 1
            if ruled[i, j]:
                held[j] -= 1
            if not waiting[j] and not done[j]:
                heapq.heappush(heap, (_priority(standings[j]), j))
    return placed


def separation(tables: Sequence[TaskTable], weights: CostWeights) -> np.ndarray:
    """Return ``beyond[i, j]``: whether the cost difference of systems i and j is beyond noise.

    The paired, task-clustered interval of :func:`effectbench.metrics.cost_difference`
    excludes 0. When every system ran the same tasks the whole matrix is computed at once
    from per-task residuals (the same formula); otherwise pair by pair.
    """
    n = len(tables)
    beyond = np.zeros((n, n), dtype=bool)
    if n < 2:
        return beyond
    same = all(t.task_id == tables[0].task_id for t in tables)
    if not same:
        for i in range(n):
            for j in range(i + 1, n):
                hit = cost_difference(tables[i], tables[j], weights).beyond_noise
                beyond[i, j] = beyond[j, i] = hit
        return beyond
    g = tables[0].n_tasks
    if g < 2:
        return beyond
    costs = np.array([task_costs(t, weights) for t in tables])
    m = np.array([t.m() for t in tables])
    totals = m.sum(axis=1)
    means = costs.sum(axis=1) / totals
    resid = (costs - means[:, None] * m) / totals[:, None]
    gram = resid @ resid.T
    sq = np.diag(gram)
    var = g / (g - 1) * np.clip(sq[:, None] + sq[None, :] - 2 * gram, 0.0, None)
    half = student_t_quantile(0.975, g - 1) * np.sqrt(var)
    diff = means[:, None] - means[None, :]
    worst = weights.worst
    lo = np.maximum(-worst, diff - half)
    hi = np.minimum(worst, diff + half)
    apart: np.ndarray = (lo > 0) | (hi < 0)
    np.fill_diagonal(apart, False)
    return apart


def rank_ranges(
    standings: Sequence[Standing], order: Sequence[int], beyond: np.ndarray
) -> tuple[list[int], list[int]]:
    """Return (best, worst) rank of each position of ``order`` (1-based).

    Position p's best rank is 1 plus the systems above it separated from it; its worst
    rank is the number of systems minus those below it separated from it. Separated:
    the cost difference is beyond noise (``beyond``), or the inaction rule orders them.
    """
    n = len(order)

    def apart(i: int, j: int) -> bool:  # i above j
        a, b = standings[i], standings[j]
        return bool(beyond[i, j]) or inaction_below(b, a)

    best = [1 + sum(apart(order[q], order[p]) for q in range(p)) for p in range(n)]
    worst = [n - sum(apart(order[p], order[q]) for q in range(p + 1, n)) for p in range(n)]
    return best, worst
