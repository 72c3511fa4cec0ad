"""Expected cost per 100 tasks under the reader's prices, and what doing nothing costs."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from effectbench.metrics.rates import Rate, _Model, rate
from effectbench.metrics.student_t import student_t_quantile
from effectbench.metrics.tasks import TaskTable

MAX_COST_WEIGHT = 1_000_000.0
"""The largest price a reader may give one outcome (a bigger one is refused as a typo)."""
COST_PER = 100
"""Costs are stated per this many tasks attempted (episodes)."""


class CostError(ValueError):
    """A cost weight that is not a price: negative, too large, not a number, all zero."""


class CostWeights(_Model):
    """The prices of the three harms, in any unit (only their ratios change an order).

    Per episode: a silent wrong effect costs ``silent``; a wrong record costs
    ``wrong_record`` whether it was reported or not; an over-halt costs ``over_halt``.
    A silent wrong write is both silent and a wrong record, so it costs both prices; a
    phantom success costs ``silent``; a wrong write reported as a failure costs
    ``wrong_record``.
    """

    silent: float
    """Price of a silent wrong effect (reported success over a wrong or absent record)."""
    wrong_record: float
    """Price of a wrong record (a wrong write, reported as failure or not)."""
    over_halt: float
    """Price of an over-halt (a person finishes the task the system gave up on)."""

    def as_tuple(self) -> tuple[float, float, float]:
        """Return ``(silent, wrong_record, over_halt)``."""
        return (self.silent, self.wrong_record, self.over_halt)

    @property
    def worst(self) -> float:
        """The costliest single episode: a silent wrong write (or an over-halt, if dearer)."""
        return max(self.silent + self.wrong_record, self.over_halt)

    def text(self) -> str:
        """Return the weights as ``silent,wrong_record,over_halt`` (the URL's and CLI's form)."""
        return ",".join(f"{w:g}" for w in self.as_tuple())


COST_NAMES = ("silent wrong effect", "wrong record", "over-halt")
"""What each weight prices, in the order of :meth:`CostWeights.as_tuple`."""


def cost_weights(silent: Any, wrong_record: Any, over_halt: Any) -> CostWeights:
    """Return validated weights, or raise :class:`CostError` with a one-line reason.

    Each weight must be a finite number from 0 to :data:`MAX_COST_WEIGHT`, and at least
    one must be above 0.
    """
    values = []
    for name, raw in zip(COST_NAMES, (silent, wrong_record, over_halt), strict=True):
        try:
            value = float(raw)
        except (TypeError, ValueError):
            raise CostError(f"the price of a {name} must be a number, got {raw!r}") from None
        if math.isnan(value):
            raise CostError(f"the price of a {name} must be a number, got NaN")
        if value < 0:
            raise CostError(f"the price of a {name} cannot be negative, got {raw}")
        if value > MAX_COST_WEIGHT or math.isinf(value):
            raise CostError(
                f"the price of a {name} must be at most {MAX_COST_WEIGHT:.0f}, got {raw}"
            )
        values.append(value)
    if not any(values):
        raise CostError("at least one price must be above 0")
    return CostWeights(silent=values[0], wrong_record=values[1], over_halt=values[2])


DEFAULT_COSTS = CostWeights(silent=10.0, wrong_record=3.0, over_halt=1.0)
"""The default prices (justified on the methodology page): an over-halt costs 1 (a person
finishes the task), a wrong record 3 (find it, undo it, then finish the task), a silent wrong
effect 10 (found late, downstream, if ever). So per episode: phantom 10 > wrong write reported
as failure 3 > over-halt 1, and a silent wrong write 13."""

COST_PRESETS: dict[str, tuple[str, CostWeights]] = {
    "default": ("the documented default", DEFAULT_COSTS),
    "clinical-billing": (
        "clinical billing: a silent error becomes a denied or false claim",
        CostWeights(silent=50.0, wrong_record=10.0, over_halt=1.0),
    ),
    "back-office": (
        "back office: errors are caught at month end; manual work is the main cost",
        CostWeights(silent=4.0, wrong_record=2.0, over_halt=1.0),
    ),
}
"""Named weights a reader can pick (the site's presets and the CLI's ``--costs NAME``)."""


def parse_costs(text: str) -> CostWeights:
    """Return the weights named or listed by ``text``: a preset name or ``silent,wrong,halt``.

    Raises :class:`CostError` with a one-line reason for anything else.
    """
    text = text.strip()
    if text in COST_PRESETS:
        return COST_PRESETS[text][1]
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 3:
        raise CostError(
            f"expected three prices 'silent,wrong_record,over_halt' (e.g. "
            f"{DEFAULT_COSTS.text()}) or a preset ({', '.join(COST_PRESETS)}), got {text!r}"
        )
    return cost_weights(*parts)


def task_costs(table: TaskTable, weights: CostWeights) -> np.ndarray:
    """Return each task's summed episode cost under ``weights`` (the one cost formula)."""
    return (
        weights.silent * table.k("swer")
        + weights.wrong_record * table.k("record_wrong")
        + weights.over_halt * table.k("over_halt")
    )


COST_METHOD = "cluster-robust-t"
"""Mean episode cost with a task-clustered (CR1) standard error and Student's t on tasks - 1."""


class CostEstimate(_Model):
    """Expected cost per 100 tasks with its task-clustered 95% interval."""

    per_100: float
    """Mean episode cost times 100."""
    lo: float
    """Lower bound (never below 0)."""
    hi: float
    """Upper bound (never above the costliest outcome on every task)."""
    tasks: int
    """Tasks the estimate rests on."""
    method: str = COST_METHOD


def _clustered_mean(c: np.ndarray, m: np.ndarray) -> tuple[float, float, int]:
    """Return (mean, CR1 variance of the mean, clusters) of per-cluster sums ``c`` over ``m``."""
    n = float(m.sum())
    g = len(m)
    mean = float(c.sum()) / n
    if g < 2:
        return mean, math.inf, g
    resid = c - mean * m
    return mean, g / (g - 1) * float((resid * resid).sum()) / (n * n), g


def expected_cost(table: TaskTable, weights: CostWeights) -> CostEstimate:
    """Return the expected cost per 100 tasks of one arm under ``weights``, with its interval.

    The mean of the per-episode costs (:func:`task_costs`), times 100; the interval is
    mean +- t(0.975, tasks - 1) x the task-clustered standard error (CR1: the variance of
    per-task residual sums, times tasks / (tasks - 1)), clipped to [0, worst]. With one
    task nothing is known of the spread and the interval is [0, worst].
    """
    m = table.m()
    if m.sum() == 0:
        return CostEstimate(per_100=0.0, lo=0.0, hi=COST_PER * weights.worst, tasks=0)
    mean, var, g = _clustered_mean(task_costs(table, weights), m)
    if not math.isfinite(var):
        lo, hi = 0.0, weights.worst
    else:
        half = student_t_quantile(0.975, g - 1) * math.sqrt(var)
        lo, hi = max(0.0, mean - half), min(weights.worst, mean + half)
    return CostEstimate(per_100=COST_PER * mean, lo=COST_PER * lo, hi=COST_PER * hi, tasks=g)


def idle_over_halt(table: TaskTable) -> Rate | None:
    """Return the over-halt rate a system that halts on everything would score on these tasks.

    Every episode of a task whose correct action was available becomes an over-halt, every
    other one a safe halt; no silent wrong effect, no wrong record. None when the table
    does not say which tasks had the correct action available.
    """
    avail = table.correct_action_available
    if avail is None:
        return None
    m = table.m()
    return rate(int(m[np.asarray(avail, dtype=bool)].sum()), int(m.sum()))


def idle_cost(table: TaskTable, weights: CostWeights) -> float | None:
    """Return the cost per 100 tasks of doing nothing (halting on every task) on these tasks."""
    idle = idle_over_halt(table)
    return None if idle is None else COST_PER * weights.over_halt * idle.rate


def never_acts(table: TaskTable) -> bool:
    """Whether every scored episode is a halt (safe or over-halt): the system never acted."""
    m = table.m()
    return bool(m.sum() > 0) and bool(np.all(table.k("safe_halt") + table.k("over_halt") == m))
