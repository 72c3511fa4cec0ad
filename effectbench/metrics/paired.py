"""Paired, cluster-robust differences: two systems (or a system and doing nothing) on the same
units, and Student's t with one degree of freedom fewer than the units.

A board's unit is its cluster (a task, or a generated pack's template). Two systems measured
on the same units differ, unit by unit, by what each earned there; the variance of the
difference of their two pooled means is the cluster-robust (sandwich) one of those per-unit
differences with the small-sample factor ``G / (G - 1)`` (CR1), and the interval takes
Student's t with ``G - 1`` degrees of freedom. So two systems identical on every unit differ
by exactly 0 with an interval of width 0, and a system whose difference with doing nothing is
the same on every unit has no spread either.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np

from effectbench.metrics.rates import _Model

CLUSTER_METHOD = "paired-cr1-t"
"""The difference of two pooled means over the same units, its cluster-robust variance with
the small-sample factor G/(G-1), and Student's t with G - 1 degrees of freedom."""


def _two_sided_mass(t: float, df: int) -> float:
    """Return P(|T| <= t) for Student's T with ``df`` (a whole number, at least 1) degrees of
    freedom: the closed form in the angle ``atan(t / sqrt(df))`` (a finite series)."""
    theta = math.atan(t / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    total, term = 1.0, 1.0
    if df % 2:
        for k in range(1, (df - 3) // 2 + 1):
            term *= (2 * k) / (2 * k + 1) * c2
            total += term
        tail = math.sin(theta) * math.cos(theta) * total if df > 1 else 0.0
        return 2.0 / math.pi * (theta + tail)
    for k in range(1, (df - 2) // 2 + 1):
        term *= (2 * k - 1) / (2 * k) * c2
        total += term
    return math.sin(theta) * total


@lru_cache(maxsize=4096)
def t_quantile(probability: float, df: int) -> float:
    """Return the ``probability`` quantile (at least 0.5, below 1) of Student's t with ``df``
    degrees of freedom (a whole number, at least 1), by bisection on its distribution."""
    if df < 1 or int(df) != df:
        raise ValueError(f"degrees of freedom are a whole number of at least 1, got {df}")
    if not 0.5 <= probability < 1.0:
        raise ValueError(f"a quantile of t here is at 0.5 or more and below 1, got {probability}")
    mass = 2.0 * probability - 1.0
    lo, hi = 0.0, 1.0
    while _two_sided_mass(hi, int(df)) < mass:
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if _two_sided_mass(mid, int(df)) < mass else (lo, mid)
    return (lo + hi) / 2.0


def t_two_sided(confidence: float, df: int) -> float:
    """Return the quantile of Student's t with ``df`` degrees of freedom of a two-sided interval
    at ``confidence``."""
    return t_quantile(1.0 - (1.0 - confidence) / 2.0, df)


SPREAD_FLOOR = 1e-24
"""Per-unit deviations whose squares sum to at most this much of the squared scale of what was
summed are rounding noise: the difference has no spread."""


class ClusterDifference(_Model):
    """The first mean minus the second over the same units, with its paired interval."""

    first: float
    second: float
    difference: float
    lo: float
    """Lower limit (``-inf`` with fewer than 2 units: nothing to estimate the spread by)."""
    hi: float
    se: float
    """Standard error of the difference (CR1); NaN with fewer than 2 units."""
    half: float
    """Half the interval's width: t times ``se`` (infinite with fewer than 2 units)."""
    units: int
    """The units (clusters) both were measured on: G; the interval's t has G - 1 degrees."""
    method: str = CLUSTER_METHOD
    confidence: float = 0.95


def cluster_difference(
    x_first: Any,
    m_first: Any,
    x_second: Any = None,
    m_second: Any = None,
    confidence: float = 0.95,
) -> ClusterDifference:
    """Return ``sum(x_first) / sum(m_first) - sum(x_second) / sum(m_second)`` with its paired,
    cluster-robust interval: the one estimator of every difference a board states.

    ``x_*[u]`` is what a system summed on unit ``u`` (events, or the value of its episodes)
    and ``m_*[u]`` its episodes there; both systems' arrays list the same units in the same
    order. Without a second system the second mean is 0 (``x_first`` is then already a
    per-unit difference, as a system's value over doing nothing on its own episodes is). The
    difference's influence on unit ``u`` is ``(x_a[u] - mean_a m_a[u]) / n_a - (x_b[u] -
    mean_b m_b[u]) / n_b``; its variance is ``G / (G - 1)`` times their sum of squares, and the
    interval is the difference plus or minus Student's t at ``confidence`` with ``G - 1``
    degrees of freedom times its root. Deviations that are rounding noise (:data:`SPREAD_FLOOR`)
    count as none; two systems with the same sums on every unit differ by 0 in [0, 0], even on
    one unit (which otherwise leaves nothing to measure the spread by: an unbounded interval).
    """
    xa = np.asarray(x_first, dtype=float)
    ma = np.asarray(m_first, dtype=float)
    na = float(ma.sum())
    mean_a = float(xa.sum()) / na if na else 0.0
    influence = (xa - mean_a * ma) / na if na else np.zeros_like(xa)
    scale = (np.abs(xa) + abs(mean_a) * ma) / na if na else np.zeros_like(xa)
    mean_b = 0.0
    xb = mb = np.zeros(0)
    if x_second is not None:
        xb = np.asarray(x_second, dtype=float)
        mb = np.asarray(m_second, dtype=float)
        if len(xb) != len(xa):
            raise ValueError("both systems' per-unit sums must list the same units")
        nb = float(mb.sum())
        mean_b = float(xb.sum()) / nb if nb else 0.0
        if nb:
            influence = influence - (xb - mean_b * mb) / nb
            scale = scale + (np.abs(xb) + abs(mean_b) * mb) / nb
    g = len(xa)
    d = mean_a - mean_b
    same = x_second is not None and np.array_equal(xa, xb) and np.array_equal(ma, mb)
    if g < 2 and not same:
        nan = math.nan
        return ClusterDifference(
            first=mean_a, second=mean_b, difference=d, lo=-math.inf, hi=math.inf, se=nan,
            half=math.inf, units=g, confidence=confidence,
        )  # fmt: skip
    squares = float((influence * influence).sum())
    if squares <= SPREAD_FLOOR * float((scale * scale).sum()):
        squares = 0.0
    if same:
        squares = 0.0
    se = math.sqrt(g / (g - 1) * squares) if g > 1 else 0.0
    half = t_two_sided(confidence, g - 1) * se if se else 0.0
    return ClusterDifference(
        first=mean_a,
        second=mean_b,
        difference=d,
        lo=d - half,
        hi=d + half,
        se=se,
        half=half,
        units=g,
        confidence=confidence,
    )


def t_table(confidence: float, most: int) -> list[float | None]:
    """Return Student's t of a two-sided interval at ``confidence`` for every degrees of
    freedom up to ``most`` (index: the degrees; index 0 is None): what the board script reads
    instead of a statistics library."""
    return [None, *(t_two_sided(confidence, df) for df in range(1, most + 1))]
