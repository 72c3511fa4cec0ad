"""Newcombe's paired difference of two rates over independent pairs, and square-and-add.

:func:`square_and_add` (MOVER) is also what the task-clustered comparisons
(:mod:`effectbench.metrics.comparisons`) combine two intervals with.
"""

from __future__ import annotations

import math

from effectbench.metrics.rates import Z95, Interval, _Model, wilson


class PairedDifference(_Model):
    """The difference of two proportions measured on the same paired episodes.

    Each pair is one (task, trial, seed) that both systems ran; ``both`` pairs had
    the event (say, a silent wrong effect) in both systems, ``first_only`` and
    ``second_only`` in one of them, ``neither`` in none. ``difference`` is the
    first system's rate minus the second's over the pairs.
    """

    n: int
    both: int
    first_only: int
    second_only: int
    neither: int
    first_rate: float
    second_rate: float
    difference: float
    ci: Interval


PAIRED_METHOD = "newcombe-paired"
"""Newcombe (1998), method 10: the hybrid score interval for a paired difference."""


def square_and_add(
    p1: float, ci1: tuple[float, float], p2: float, ci2: tuple[float, float], r: float
) -> tuple[float, float]:
    """Return Newcombe's square-and-add (MOVER) interval of ``p1 - p2``, clamped to [-1, 1].

    ``ci1`` and ``ci2`` are the two rates' intervals; ``r`` the correlation of the two
    estimates (0 for independent samples).
    """
    (l1, u1), (l2, u2) = ci1, ci2
    d = p1 - p2
    below = (p1 - l1) ** 2 + (u2 - p2) ** 2 - 2 * r * (p1 - l1) * (u2 - p2)
    above = (u1 - p1) ** 2 + (p2 - l2) ** 2 - 2 * r * (u1 - p1) * (p2 - l2)
    return max(-1.0, d - math.sqrt(max(below, 0.0))), min(1.0, d + math.sqrt(max(above, 0.0)))


def paired_difference(
    both: int, first_only: int, second_only: int, neither: int, z: float = Z95
) -> PairedDifference:
    """Return the paired difference of two rates with Newcombe's hybrid score interval.

    Newcombe, R. G. (1998), "Improved confidence intervals for the difference
    between binomial proportions based on paired data", Statistics in Medicine
    17, 2635-2650, method 10: the Wilson intervals of the two marginal rates
    are combined by "square and add", corrected for the correlation between
    them (the phi coefficient of the 2x2 table, its numerator ``ad - bc``
    shrunk by ``n/2`` towards zero when positive, and taken as 0 when a margin
    is empty). With no pairs the difference is 0 and the interval [-1, 1].

    It treats every pair as independent; two systems measured on repeated trials of the
    same tasks are compared with :func:`rate_difference` instead (paired and clustered by
    task), which the site's board and compare view use.
    """
    a, b, c, d = int(both), int(first_only), int(second_only), int(neither)
    n = a + b + c + d
    if n == 0:
        return PairedDifference(
            n=0,
            both=0,
            first_only=0,
            second_only=0,
            neither=0,
            first_rate=0.0,
            second_rate=0.0,
            difference=0.0,
            ci=Interval(lo=-1.0, hi=1.0, method=PAIRED_METHOD),
        )
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = (float(x) for x in wilson(a + b, n, z))
    l2, u2 = (float(x) for x in wilson(a + c, n, z))
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    phi = 0.0
    if margins > 0:
        cross = a * d - b * c
        if cross > n / 2:
            phi = (cross - n / 2) / math.sqrt(margins)
        elif cross < 0:
            phi = cross / math.sqrt(margins)
    diff = p1 - p2
    lo, hi = square_and_add(p1, (l1, u1), p2, (l2, u2), phi)
    return PairedDifference(
        n=n,
        both=a,
        first_only=b,
        second_only=c,
        neither=d,
        first_rate=p1,
        second_rate=p2,
        difference=diff,
        ci=Interval(lo=lo, hi=hi, method=PAIRED_METHOD),
    )
