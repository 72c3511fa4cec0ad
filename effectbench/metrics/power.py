"""The minimum detectable difference of a board: which gaps it can resolve at all.

:func:`minimum_detectable_difference` is the single-rate figure (every unit one observation,
the worst-case spread; the methodology page states it); :func:`resolution` the figure a board
states for a pair of its systems: paired, clustered by unit, from the spread across units of
their per-unit difference, with the figure for the units held fixed beside it.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from effectbench.metrics.paired import t_quantile
from effectbench.metrics.rates import _Model
from effectbench.metrics.tasks import TaskTable
from effectbench.metrics.value import PER, Prices, value_sums

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


PAIRED_MDD_METHOD = "paired-clustered-t"
"""(t(1 - alpha/2, G - 1) + t(power, G - 1)) x s_d / sqrt(G): G shared units, s_d the standard
deviation across them of the per-unit difference between the two systems."""
FIXED_MDD_METHOD = "fixed-units-normal"
"""(z(1 - alpha/2) + z(power)) x SE, SE^2 the mean over the G shared units of each system's
variance within the unit (over its episodes, divided by its tasks: the trials of a task taken
to agree), divided by G: the units held fixed, each system's draw within them independent."""
RESOLUTION_MEASURES = ("swer", "value")
"""What a pair's resolution is stated for: SWER (points) and net value per 100 tasks."""
MIN_SHARED_UNITS = 3
"""The fewest shared units a paired figure rests on: fewer leave t on G - 1 degrees of
freedom with at most one, and a spread too rough to state a floor by."""


class Resolution(_Model):
    """The smallest difference between two systems on one measure a board detects with 80%
    power at 5% two-sided: the paired, unit-clustered figure and, beside it, the figure with
    the units held fixed (which holds for these units only)."""

    measure: str
    """``swer`` (in points: 100 x a rate) or ``value`` (net value per 100 tasks)."""
    paired_mdd: float | None
    """The paired, unit-clustered minimum detectable difference; None when not estimable or
    when the per-unit differences have no spread (:attr:`paired_note` says which)."""
    paired_units: int
    """G: the units (tasks, or templates) both systems ran."""
    paired_sd: float | None
    """s_d: the standard deviation across those units of the per-unit difference (None with
    fewer than 2)."""
    paired_method: str = PAIRED_MDD_METHOD
    paired_note: str = ""
    """Why there is no paired figure, in words ("" when there is one)."""
    fixed_mdd: float | None = None
    """The figure with the units held fixed (None when not estimable: :attr:`fixed_note`)."""
    fixed_method: str = FIXED_MDD_METHOD
    fixed_note: str = ""
    unit: str = "task"
    power: float = POWER
    alpha: float = 0.05

    @property
    def headline(self) -> float | None:
        """The figure a board states: the paired one, or the fixed one where the per-unit
        differences have no spread."""
        return self.paired_mdd if self.paired_mdd is not None else self.fixed_mdd


def per_unit_measure(table: TaskTable, measure: str, prices: Prices) -> np.ndarray:
    """Return ``measure`` on each unit of ``table`` alone: its SWER in points, or its net value
    per 100 tasks against doing nothing on its episodes (:func:`value_sums` per episode)."""
    m = table.m()
    x = table.k("swer") if measure == "swer" else value_sums(table, prices)
    out: np.ndarray = PER * x / m
    return out


def _within(table: TaskTable, measure: str, prices: Prices) -> np.ndarray | None:
    """Each unit's variance of ``measure`` over its episodes (in the measure's units), or None
    where the counts cannot give it (a unit mixing tasks with and without the correct action
    available, for net value)."""
    m = table.m()
    if measure == "swer":
        p = table.k("swer") / m
        rate_var: np.ndarray = PER * PER * p * (1.0 - p)
        return rate_var
    y, phantom = table.k("task_success"), table.k("swer_phantom")
    wrong_write, wrong_action = table.k("swer_wrong_write"), table.k("wrong_action")
    halt = table.k("over_halt")
    v, s, w, h = prices.value, prices.silent, prices.wrong_record, prices.over_halt
    total = v * y - s * phantom - (s + w) * wrong_write - w * wrong_action - h * halt
    squares = v * v * y + s * s * phantom + (s + w) ** 2 * wrong_write + w * w * wrong_action
    squares = squares + h * h * halt
    a = table.a()
    if a is not None:
        if not bool(np.all((a == 0) | (a == m))):
            return None
        shift = h * a / m  # doing nothing's over-halt on every episode of a unit that agrees
        squares = squares + 2.0 * shift * total + shift * shift * m
        total = total + shift * m
    mean = total / m
    value_var: np.ndarray = PER * PER * np.clip(squares / m - mean * mean, 0.0, None)
    return value_var


def resolution(
    first: TaskTable,
    second: TaskTable,
    measure: str,
    prices: Prices,
    power: float = POWER,
    alpha: float = 0.05,
) -> Resolution:
    """Return the minimum detectable difference of ``measure`` between two systems of a board.

    The paired, unit-clustered figure (:data:`PAIRED_MDD_METHOD`): over the G units both ran,
    ``(t(1 - alpha/2, G - 1) + t(power, G - 1)) s_d / sqrt(G)``, ``s_d`` the standard deviation
    (G - 1 in its denominator) of the per-unit difference of :func:`per_unit_measure`. Fewer
    than :data:`MIN_SHARED_UNITS` shared units: not estimable, with the reason; no spread (the
    same difference on every unit): said, and the fixed figure stands in. Beside it, the figure
    with the units held fixed (:data:`FIXED_MDD_METHOD`), which holds for these units only (not
    estimable, never 0, where no unit varies within).
    """
    if measure not in RESOLUTION_MEASURES:
        raise ValueError(f"a resolution is of {' or '.join(RESOLUTION_MEASURES)}, not {measure}")
    shared = set(first.task_id) & set(second.task_id)
    a = first.select(t in shared for t in first.task_id)
    b = second.select(t in shared for t in second.task_id)
    g, unit = a.n_tasks, first.unit
    d = per_unit_measure(a, measure, prices) - per_unit_measure(b, measure, prices)
    sd = float(np.std(d, ddof=1)) if g >= 2 else None
    paired: float | None = None
    note = ""
    if g < MIN_SHARED_UNITS:
        note = (
            f"not estimable: {g} shared {unit}{'s' if g != 1 else ''}, and a spread across "
            f"{unit}s needs at least {MIN_SHARED_UNITS}"
        )
    elif sd is not None and sd <= 1e-12 * (1.0 + float(np.abs(d).max())):
        sd = 0.0
        note = (
            f"no spread: every shared {unit} differs by the same amount, so the paired figure "
            f"has no noise to set a floor by; the figure with the {unit}s held fixed stands in"
        )
    elif sd is not None:
        factor = t_quantile(1.0 - alpha / 2.0, g - 1) + t_quantile(power, g - 1)
        paired = factor * sd / math.sqrt(g)
    fixed: float | None = None
    fixed_note = f"holds for these {g} {unit}s only"
    wa, wb = _within(a, measure, prices), _within(b, measure, prices)
    if g == 0:
        fixed_note = f"not estimable: no shared {unit}"
    elif wa is None or wb is None:
        fixed_note = (
            f"not estimable: a {unit} mixes tasks with and without the correct action available"
        )
    else:
        se = math.sqrt(float((wa / a.tasks_in() + wb / b.tasks_in()).sum())) / g
        if se > 0:
            normal = NormalDist()
            fixed = (normal.inv_cdf(1.0 - alpha / 2.0) + normal.inv_cdf(power)) * se
        else:
            fixed_note = f"not estimable: no variation within any shared {unit}"
    return Resolution(
        measure=measure,
        paired_mdd=paired,
        paired_units=g,
        paired_sd=sd,
        paired_note=note,
        fixed_mdd=fixed,
        fixed_note=fixed_note,
        unit=unit,
        power=power,
        alpha=alpha,
    )
