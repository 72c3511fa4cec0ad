"""The minimum detectable difference of a board: which gaps in a rate it can resolve at all."""

from __future__ import annotations

import math
from statistics import NormalDist

POWER = 0.8
"""The power a board's minimum detectable difference is stated at."""


def minimum_detectable_difference(
    n_effective: float, power: float = POWER, alpha: float = 0.05
) -> float:
    """Return the smallest difference in a rate a board can detect with ``power``.

    For two rates each measured on ``n_effective`` independent units (the effective
    number of tasks), a two-sided z-test at ``alpha`` and the worst-case spread of a rate
    (p = 0.5): about (z_{1-alpha/2} + z_{power}) x sqrt(2 x 0.25 / n), solved exactly with
    both tails of the test counted. Pairing on tasks can
    only help when two systems agree more often than chance, so this is a bound on
    what the board resolves, not a promise. Capped at 1; no unit gives 1.
    """
    if n_effective <= 0:
        return 1.0
    normal = NormalDist()
    z = normal.inv_cdf(1 - alpha / 2)
    scale = math.sqrt(n_effective / 2.0) / 0.5  # a difference d is d * scale standard errors

    def power_at(d: float) -> float:  # both tails of the two-sided test
        return normal.cdf(d * scale - z) + normal.cdf(-d * scale - z)

    lo, hi = 0.0, 1.0
    if power_at(hi) < power:
        return 1.0
    for _ in range(100):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if power_at(mid) < power else (lo, mid)
    return (lo + hi) / 2.0
