"""Square-and-add (MOVER), and Newcombe's paired difference of two rates over independent pairs.

:func:`combine` is how every interval of a combination is built: a difference of two rates
(:mod:`effectbench.metrics.comparisons`), the net value of a system and the difference of two
systems' net values (:mod:`effectbench.metrics.value`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

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


def combine(
    points: Sequence[float],
    intervals: Sequence[tuple[float, float]],
    weights: Sequence[float],
    correlation: np.ndarray | Sequence[Sequence[float]],
) -> tuple[float, float]:
    """Return the square-and-add (MOVER) interval of ``sum(weights[e] * points[e])``.

    Zou and Donner's method of variance estimates recovery for a linear combination of
    estimates, each with its own interval: the combination's lower limit goes down from the
    point estimate by the root of the quadratic form, over every pair of components, of the
    distances each component's own interval allows in the direction that lowers the sum (the
    distance to its lower limit for a positive weight, to its upper limit for a negative one),
    signed by the weights and weighted by ``correlation`` (the correlation of the estimates;
    its diagonal is 1); the upper limit likewise. A component of weight 0 takes no part. With
    two components of weights 1 and -1 this is Newcombe's square-and-add of a difference.
    Not clamped (the caller knows the combination's range).
    """
    theta = 0.0
    down: list[float] = []
    up: list[float] = []
    sign: list[float] = []
    for p, (lo, hi), w in zip(points, intervals, weights, strict=True):
        theta += w * p
        if w >= 0:
            down.append(w * (p - lo))
            up.append(w * (hi - p))
        else:
            down.append(-w * (hi - p))
            up.append(-w * (p - lo))
        sign.append(1.0 if w > 0 else -1.0 if w < 0 else 0.0)
    below = above = 0.0
    for e in range(len(sign)):
        for f in range(len(sign)):
            c = sign[e] * sign[f] * float(correlation[e][f])
            below += c * down[e] * down[f]
            above += c * up[e] * up[f]
    return theta - math.sqrt(max(below, 0.0)), theta + math.sqrt(max(above, 0.0))


def square_and_add(
    p1: float, ci1: tuple[float, float], p2: float, ci2: tuple[float, float], r: float
) -> tuple[float, float]:
    """Return Newcombe's square-and-add (MOVER) interval of ``p1 - p2``, clamped to [-1, 1].

    ``ci1`` and ``ci2`` are the two rates' intervals; ``r`` the correlation of the two
    estimates (0 for independent samples): :func:`combine` of two components.
    """
    lo, hi = combine((p1, p2), (ci1, ci2), (1.0, -1.0), ((1.0, r), (r, 1.0)))
    return max(-1.0, lo), min(1.0, hi)


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
