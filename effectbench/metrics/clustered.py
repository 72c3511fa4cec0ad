"""Task-clustered intervals of a rate: Wilson on the Rao-Scott effective counts (SPEC 1.3).

Beside SPEC's Wilson interval on the raw k/n, each rate carries an interval that counts
tasks, not repeats, with its design effect; a rate seen 0 times states its one-sided bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from effectbench.metrics.rates import Z95, Interval, _Model, rate, wilson
from effectbench.metrics.tasks import TaskTable

ONE_SIDED_ALPHA = 0.05
"""A 0/n cell states its one-sided 95% upper bound."""
CLUSTERED_METHOD = "wilson-rao-scott"
"""Wilson's score interval on the Rao-Scott effective counts (k and n divided by the design
effect)."""


class ClusteredInterval(_Model):
    """A rate's 95% interval that counts tasks, not repeats, with its design effect."""

    lo: float
    """Lower bound."""
    hi: float
    """Upper bound."""
    design_effect: float
    """How much the task clustering inflates the binomial variance (at least 1)."""
    n_effective: float
    """The effective number of independent episodes: n divided by the design effect."""
    tasks: int
    """Tasks (clusters) the episodes fall into."""
    method: str = CLUSTERED_METHOD
    """How it was computed."""
    confidence: float = 0.95
    """Nominal coverage."""


def _per_task(k: Any, m: Any) -> tuple[np.ndarray, np.ndarray]:
    k_a = np.asarray(k, dtype=float)
    m_a = np.asarray(m, dtype=float)
    keep = m_a > 0
    return k_a[keep], m_a[keep]


def design_effect(k: Any, m: Any) -> float:
    """Return the Rao-Scott design effect of a rate counted as ``k[i]`` of ``m[i]`` per task.

    The ratio of the task-clustered variance of the pooled rate p = sum(k) / sum(m) to the
    binomial variance ``p (1 - p) / n``. The clustered variance is Rao and Scott's (1992),
    ``g / (g - 1) * sum((k_i - p m_i)^2) / n^2`` over ``g`` tasks: the sum of squared
    residuals with their small-sample factor ``g / (g - 1)`` (the CR1 correction). At least 1,
    so the clustered interval is never narrower than the raw one (the binomial floor where
    tasks agree with one another). With one trial per task it is 1. A rate of exactly 0 or 1
    shows no spread to measure the clustering by, and one task shows none between tasks, so
    either takes the design effect of trials that always agree within a task,
    ``sum(m_i^2) / n`` (with equal trials per task the effective n is then the number of
    tasks: one for one task).
    """
    k_a, m_a = _per_task(k, m)
    return _design_effect(k_a, m_a, float(k_a.sum()), float(m_a.sum()))


def _design_effect(k_a: np.ndarray, m_a: np.ndarray, k_sum: float, n: float) -> float:
    """:func:`design_effect` of tasks with episodes, given their sums (computed once)."""
    if n == 0 or float(m_a.max()) <= 1:
        return 1.0
    p = k_sum / n
    binomial = n * p * (1.0 - p)
    g = len(m_a)
    if binomial <= 1e-12 * n or g < 2:
        return max(1.0, float((m_a * m_a).sum()) / n)
    clustered = g / (g - 1) * float(((k_a - p * m_a) ** 2).sum())
    return max(1.0, clustered / binomial)


def clustered_wilson(k: Any, m: Any, z: float = Z95) -> ClusteredInterval:
    """Return the task-clustered 95% interval of a rate counted per task (Rao-Scott Wilson).

    Wilson's score interval on the effective counts ``k / deff`` of ``n / deff``, where
    ``deff`` is :func:`design_effect`. No episode gives [0, 1].
    """
    k_a, m_a = _per_task(k, m)
    return _clustered_wilson(k_a, m_a, float(k_a.sum()), float(m_a.sum()), z)


def _clustered_wilson(
    k_a: np.ndarray, m_a: np.ndarray, k_sum: float, n: float, z: float = Z95
) -> ClusteredInterval:
    """:func:`clustered_wilson` of tasks with episodes, given their sums (computed once)."""
    deff = _design_effect(k_a, m_a, k_sum, n)
    if n == 0:
        return ClusteredInterval(lo=0.0, hi=1.0, design_effect=1.0, n_effective=0.0, tasks=0)
    lo, hi = wilson(k_sum / deff, n / deff, z)
    return ClusteredInterval(
        lo=float(lo), hi=float(hi), design_effect=deff, n_effective=n / deff, tasks=len(m_a)
    )


def zero_upper_bound(n: float, alpha: float = ONE_SIDED_ALPHA) -> float:
    """Return the one-sided 95% upper bound of a rate observed 0 times in ``n``: 1 - 0.05^(1/n).

    The exact (Clopper-Pearson) bound, about 3/n (the rule of three); ``n`` may be an
    effective sample size. No episode gives 1.
    """
    return 1.0 - alpha ** (1.0 / n) if n > 0 else 1.0


class TaskRate(_Model):
    """A rate with its raw counts, SPEC's Wilson interval on them and the task-clustered one."""

    numerator: int
    """Episodes counted."""
    denominator: int
    """Episodes scored."""
    rate: float
    """``numerator / denominator`` (0 when there is no episode)."""
    ci: Interval
    """SPEC 1.2's Wilson 95% interval on the raw k/n."""
    clustered: ClusteredInterval
    """The interval that counts tasks (:func:`clustered_wilson`), with its design effect."""
    upper: float | None = None
    """For 0/n: the one-sided 95% upper bound on the raw n (:func:`zero_upper_bound`)."""
    clustered_upper: float | None = None
    """For 0/n: the one-sided 95% upper bound on the effective n."""

    @property
    def repeated(self) -> bool:
        """Whether some task has more than one trial (the clustered interval then differs)."""
        return self.clustered.n_effective < self.denominator or self.clustered.tasks < (
            self.denominator
        )


def rate_over_tasks(k: Any, m: Any) -> TaskRate:
    """Return the rate of per-task counts ``k`` of ``m`` with both of its intervals."""
    k_a, m_a = _per_task(k, m)
    k_sum, n = float(k_a.sum()), float(m_a.sum())
    num, den = int(round(k_sum)), int(round(n))
    raw = rate(num, den)
    clustered = _clustered_wilson(k_a, m_a, k_sum, n)
    zero = num == 0 and den > 0
    return TaskRate(
        numerator=num,
        denominator=den,
        rate=raw.rate,
        ci=raw.ci,
        clustered=clustered,
        upper=zero_upper_bound(den) if zero else None,
        clustered_upper=zero_upper_bound(clustered.n_effective) if zero else None,
    )


def task_rate(table: TaskTable, event: str) -> TaskRate:
    """Return the rate of ``event`` over the episodes of ``table``, both intervals included."""
    return rate_over_tasks(table.k(event), table.m())


def worst_case_rate(k: int, n: int, dropped: int) -> float:
    """Return a rate's bound when every dropped trial is counted as having the event.

    ``(k + dropped) / (n + dropped)``: what the rate would be had each trial that left no
    scored row been the worst outcome (0 when there is nothing at all).
    """
    total = n + dropped
    return (k + dropped) / total if total else 0.0


SPREAD_TOLERANCE = 1e-24
"""A rate whose per-task residuals square to at most this much of ``sum(m_i^2)`` shows no
spread across tasks (its residuals are rounding noise): it is correlated with nothing."""


@dataclass(frozen=True)
class Components:
    """Several rates of one set of tasks, each with its task-clustered interval, and what
    their correlations across tasks are read from."""

    points: tuple[float, ...]
    """Each rate over every episode of the tasks."""
    intervals: tuple[tuple[float, float], ...]
    """Each rate's :func:`clustered_wilson` interval (at the level asked for)."""
    residuals: np.ndarray
    """One row per rate: each task's ``k_i - p m_i`` (zeros for a rate without spread)."""


def components(table: TaskTable, events: Sequence[str], z: float = Z95) -> Components:
    """Return the rates of ``events`` over ``table`` with their clustered intervals at ``z``
    and their per-task residuals (what :func:`correlation` reads)."""
    m = table.m()
    keep = m > 0
    m_a = m[keep]
    n = float(m_a.sum())
    floor = SPREAD_TOLERANCE * float((m_a * m_a).sum())
    points, intervals, rows = [], [], []
    for event in events:
        k_a = table.k(event)[keep]
        k_sum = float(k_a.sum())
        c = _clustered_wilson(k_a, m_a, k_sum, n, z)
        p = k_sum / n if n else 0.0
        resid = k_a - p * m_a
        rows.append(resid if float((resid * resid).sum()) > floor else np.zeros_like(resid))
        points.append(p)
        intervals.append((c.lo, c.hi))
    residuals = np.array(rows, dtype=float).reshape(len(events), len(m_a))
    return Components(tuple(points), tuple(intervals), residuals)


def correlation(residuals: np.ndarray) -> np.ndarray:
    """Return the correlation across tasks of the rates whose residuals are the rows of
    ``residuals`` (tasks in the same order in every row): the cosine of every two rows, 1 on
    the diagonal, 0 beside a row without spread."""
    norms = np.sqrt((residuals * residuals).sum(axis=1))
    safe = np.where(norms > 0, norms, 1.0)
    unit = residuals / safe[:, None]
    corr: np.ndarray = unit @ unit.T
    np.fill_diagonal(corr, 1.0)
    return corr
