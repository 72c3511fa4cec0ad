"""Rates and Wilson's score interval: every rate with its raw k/n and its 95% interval."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

Z95 = 1.959963984540054
"""The standard normal quantile for a two-sided 95% interval."""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class Interval(_Model):
    """A confidence interval."""

    lo: float
    """Lower bound."""
    hi: float
    """Upper bound."""
    method: str = "wilson"
    """How it was computed: ``wilson`` (score interval) or ``bootstrap`` (percentile)."""
    confidence: float = 0.95
    """Nominal coverage."""


class Rate(_Model):
    """A proportion with its raw counts and interval."""

    numerator: int
    """Episodes counted (for example the silent wrong effects)."""
    denominator: int
    """Episodes scored (N)."""
    rate: float
    """``numerator / denominator`` (0 when there is no episode)."""
    ci: Interval
    """The Wilson 95% interval of the rate."""


def wilson(k: Any, n: Any, z: float = Z95) -> tuple[Any, Any]:
    """Return the Wilson score interval ``(lo, hi)`` for ``k`` of ``n`` (arrays work)."""
    if np.ndim(k) == 0 and np.ndim(n) == 0:
        return _wilson_one(float(k), float(n), z)
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    safe_n = np.where(n > 0, n, 1.0)
    p = k / safe_n
    z2 = z * z
    denom = 1.0 + z2 / safe_n
    centre = (p + z2 / (2.0 * safe_n)) / denom
    half = z * np.sqrt(p * (1.0 - p) / safe_n + z2 / (4.0 * safe_n * safe_n)) / denom
    # Clamped: rounding alone gives -1.4e-17 or 1.0000000000000002 at k = 0 or k = n.
    lo = np.clip(np.where(n > 0, centre - half, 0.0), 0.0, 1.0)
    hi = np.clip(np.where(n > 0, centre + half, 1.0), 0.0, 1.0)
    return lo, hi


def _wilson_one(k: float, n: float, z: float) -> tuple[float, float]:
    """:func:`wilson` of one count, in plain floats: the same operations in the same order
    (so the same bits), without an array's overhead (a site build computes tens of
    thousands)."""
    if not n > 0:
        return 0.0, 1.0
    p = k / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2.0 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denom
    return min(max(centre - half, 0.0), 1.0), min(max(centre + half, 0.0), 1.0)


def rate(k: int, n: int) -> Rate:
    """Return ``k / n`` as a :class:`Rate` with its Wilson 95% interval."""
    lo, hi = wilson(k, n)
    return Rate(
        numerator=int(k),
        denominator=int(n),
        rate=k / n if n else 0.0,
        ci=Interval(lo=float(lo), hi=float(hi)),
    )
