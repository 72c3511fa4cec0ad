"""Net value per 100 tasks at the reader's prices, and doing nothing as its zero line (SPEC 1.3).

Four prices, in any unit (only their ratios change an order): the value of a correct effect
(a task success: the effect is in the record and the system said so), and the costs of a
silent wrong effect, a wrong record and an over-halt. An episode is worth its outcome's
price: ``value`` for a success, ``-silent`` for a phantom, ``-(silent + wrong_record)`` for a
silent wrong write, ``-wrong_record`` for a wrong write reported as a failure, ``-over_halt``
for an over-halt, 0 for a safe halt or a false abort. :func:`value_per_episode` is that
formula over a system's rates; a board orders its systems by it.

Doing nothing (halting on every task) earns no value and pays an over-halt on every task whose
correct action was available; the board draws every system's net value against it, so doing
nothing is the zero line, and :func:`break_even` is the value of a correct effect at which a
system draws level with it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from effectbench.metrics.paired import CLUSTER_METHOD, cluster_difference
from effectbench.metrics.rates import Rate, _Model, rate
from effectbench.metrics.tasks import TaskTable

MAX_PRICE = 1_000_000.0
"""The largest price a reader may give one outcome (a bigger one is refused as a typo)."""
PER = 100
"""Values are stated per this many tasks attempted (episodes)."""


class PriceError(ValueError):
    """A price that is not one: negative, too large, not a number; a value of a correct effect
    that is not above 0."""


class Prices(_Model):
    """The value of a correct effect and the costs of the three harms, per episode.

    A silent wrong write is both silent and a wrong record, so it costs both prices; a
    phantom success costs ``silent``; a wrong write reported as a failure costs
    ``wrong_record``.
    """

    value: float
    """Value of a correct effect: a task success (the declared effect is in the record and the
    system reported success)."""
    silent: float
    """Price of a silent wrong effect (reported success over a wrong or absent record)."""
    wrong_record: float
    """Price of a wrong record (a wrong write, reported as failure or not)."""
    over_halt: float
    """Price of an over-halt (a person finishes the task the system gave up on)."""

    def harms(self) -> tuple[float, float, float]:
        """Return ``(silent, wrong_record, over_halt)``."""
        return (self.silent, self.wrong_record, self.over_halt)

    def weights(self) -> tuple[float, float, float, float]:
        """Return each of :data:`VALUE_EVENTS`' worth per episode (a harm is negative)."""
        return (self.value, -self.silent, -self.wrong_record, -self.over_halt)

    @property
    def worst(self) -> float:
        """The costliest single episode: a silent wrong write (or an over-halt, if dearer)."""
        return max(self.silent + self.wrong_record, self.over_halt)

    def costs_text(self) -> str:
        """Return the harms' prices as ``silent,wrong_record,over_halt`` (``costs=`` in a URL,
        ``--costs`` on the command line)."""
        return ",".join(f"{w:g}" for w in self.harms())

    def text(self) -> str:
        """Return the four prices in words."""
        return (
            f"correct effect {self.value:g}, silent wrong effect {self.silent:g}, "
            f"wrong record {self.wrong_record:g}, over-halt {self.over_halt:g}"
        )


VALUE_EVENTS = ("task_success", "swer", "record_wrong", "over_halt")
"""The rates net value weighs, in the order of :meth:`Prices.weights`."""
HARM_NAMES = ("silent wrong effect", "wrong record", "over-halt")
"""What each harm's price prices, in the order of :meth:`Prices.harms`."""


NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
"""A price as typed: a decimal number, optionally with an exponent (what a browser's number
reading and this one agree on; the board script holds the same pattern)."""
INFINITE = re.compile(r"[+-]?inf(inity)?", re.IGNORECASE)


def _number(raw: Any, what: str) -> float:
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        value = float(raw)
    else:
        text = str(raw).strip()
        if NUMBER.fullmatch(text):
            value = float(text)
        elif INFINITE.fullmatch(text):
            value = -math.inf if text.startswith("-") else math.inf
        elif text.lower() == "nan":
            value = math.nan
        else:
            raise PriceError(f"{what} must be a number, got '{raw}'")
    if math.isnan(value):
        raise PriceError(f"{what} must be a number, got NaN")
    return value


def prices(value: Any, silent: Any, wrong_record: Any, over_halt: Any) -> Prices:
    """Return validated prices, or raise :class:`PriceError` with a one-line reason.

    The value of a correct effect must be above 0 (at 0 nothing a system does is worth doing,
    and doing nothing wins every board) and each harm's price at least 0; every price is at
    most :data:`MAX_PRICE`.
    """
    v = _number(value, "the value of a correct effect")
    if v <= 0:
        raise PriceError(
            f"the value of a correct effect must be above 0, got {value} (at 0 no work is worth "
            "doing and doing nothing tops every board)"
        )
    if v > MAX_PRICE or math.isinf(v):
        raise PriceError(
            f"the value of a correct effect must be at most {MAX_PRICE:.0f}, got {value}"
        )
    harms = []
    for name, raw in zip(HARM_NAMES, (silent, wrong_record, over_halt), strict=True):
        h = _number(raw, f"the price of a {name}")
        if h < 0:
            raise PriceError(f"the price of a {name} cannot be negative, got {raw}")
        if h > MAX_PRICE or math.isinf(h):
            raise PriceError(f"the price of a {name} must be at most {MAX_PRICE:.0f}, got {raw}")
        harms.append(h)
    return Prices(value=v, silent=harms[0], wrong_record=harms[1], over_halt=harms[2])


DEFAULT_PRICES = Prices(value=10.0, silent=10.0, wrong_record=3.0, over_halt=1.0)
"""The default prices (justified on the methodology page). Harms: an over-halt costs 1 (a
person finishes the task), a wrong record 3 (find it, undo it, then finish the task), a silent
wrong effect 10 (found late, downstream, if ever). A correct effect is worth what a silent
wrong effect costs: the same task done right or done wrong without a word moves the record by
as much either way."""

PRICE_PRESETS: dict[str, tuple[str, Prices]] = {
    "default": ("the documented default", DEFAULT_PRICES),
    "clinical-billing": (
        "clinical billing: a silent error becomes a denied or false claim",
        Prices(value=50.0, silent=50.0, wrong_record=10.0, over_halt=1.0),
    ),
    "back-office": (
        "back office: errors are caught at month end; manual work is the main cost",
        Prices(value=4.0, silent=4.0, wrong_record=2.0, over_halt=1.0),
    ),
}
"""Named prices a reader can pick (the site's presets, the CLI's ``--costs NAME``); each prices
a correct effect as its silent wrong effect, as the default does."""


def parse_prices(costs: str | None = None, value: str | None = None) -> Prices:
    """Return the prices ``costs`` (a preset name or ``silent,wrong_record,over_halt``; default:
    the default prices) and ``value`` (the value of a correct effect; default: the preset's, or
    the default value) name.

    Raises :class:`PriceError` with a one-line reason for anything else.
    """
    base = DEFAULT_PRICES
    text = (costs or "").strip()
    if text in PRICE_PRESETS:
        base = PRICE_PRESETS[text][1]
    elif text:
        parts = [p.strip() for p in text.split(",")]
        if len(parts) != 3:
            raise PriceError(
                f"expected three prices 'silent,wrong_record,over_halt' (e.g. "
                f"{DEFAULT_PRICES.costs_text()}) or a preset ({', '.join(PRICE_PRESETS)}), "
                f"got '{text}'"
            )
        base = prices(base.value, *parts)
    if value is None:
        return base
    return prices(value.strip() if isinstance(value, str) else value, *base.harms())


def value_per_episode(shares: Sequence[float], p: Prices) -> float:
    """Return the net value of one episode on average, from the rates of :data:`VALUE_EVENTS`.

    The one formula of net value: ``value * success - silent * SWER - wrong_record *
    record-wrong - over_halt * over-halt``, evaluated in this order (the board script evaluates
    the same operations in the same order, so both get the same bits; and each operation is
    monotone in each rate, so a system at least as good on every rate is never worth less).
    """
    success, swer, wrong, halt = shares
    return p.value * success - p.silent * swer - p.wrong_record * wrong - p.over_halt * halt


def shares(table: TaskTable) -> tuple[float, float, float, float]:
    """Return the rates of :data:`VALUE_EVENTS` over every episode of ``table`` (0 without
    any)."""
    n = float(table.m().sum())
    if n == 0:
        return (0.0, 0.0, 0.0, 0.0)
    s, w, r, o = (float(table.k(e).sum()) / n for e in VALUE_EVENTS)
    return (s, w, r, o)


VALUE_METHOD = CLUSTER_METHOD
"""A system's net value is the mean of its episodes' values; its interval is the
cluster-robust one of :func:`~effectbench.metrics.paired.cluster_difference` (per-unit sums,
CR1, Student's t with one degree of freedom fewer than the units)."""


class ValueEstimate(_Model):
    """Net value per 100 tasks with its paired, cluster-robust interval."""

    per_100: float
    """``100 * value_per_episode`` (against doing nothing: minus doing nothing's on the same
    episodes)."""
    lo: float
    hi: float
    tasks: int
    """Units (tasks, or templates) the estimate rests on."""
    confidence: float = 0.95
    method: str = VALUE_METHOD
    against_doing_nothing: bool = False
    """Whether it is the paired difference with doing nothing on the same episodes."""


def value_bounds(p: Prices) -> tuple[float, float]:
    """Return the least and the most one episode can be worth at prices ``p``."""
    return -p.worst, p.value


def value_sums(table: TaskTable, p: Prices, against_idle: bool = True) -> np.ndarray:
    """Return what each unit's episodes are worth at prices ``p``, summed per unit; with
    ``against_idle`` (and the table knowing where the correct action was available), minus
    what doing nothing is worth on the same episodes (an over-halt on each whose correct action
    was available): the per-unit paired difference with doing nothing. In the order of
    :func:`value_per_episode` (the board script adds the same terms in the same order)."""
    y, s, r, o = (table.k(e) for e in VALUE_EVENTS)
    x = p.value * y - p.silent * s - p.wrong_record * r - p.over_halt * o
    a = table.a() if against_idle else None
    result: np.ndarray = x if a is None else x + p.over_halt * a
    return result


def idle_of(table: TaskTable) -> float | None:
    """Return doing nothing's over-halt rate on the episodes of ``table``: its episodes whose
    task had the correct action available, over all of them (None when not known or no
    episode)."""
    return idle_share([table])


def net_per_episode(table: TaskTable, p: Prices) -> float:
    """Return one system's net value per episode at prices ``p``: :func:`value_per_episode` of
    its rates, minus doing nothing's on the same episodes when the table says where the
    correct action was available (the one definition a board orders and shows by)."""
    point = value_per_episode(shares(table), p)
    idle = idle_of(table)
    if idle is not None:
        point = point - value_per_episode((0.0, 0.0, 0.0, idle), p)
    return point


def net_value(table: TaskTable, p: Prices, confidence: float = 0.95) -> ValueEstimate:
    """Return the net value per 100 tasks of one system at prices ``p``, with its interval,
    drawn against doing nothing on its own episodes when the table says where the correct
    action was available (so a system that never acts is at exactly 0, with no spread).

    The value is :func:`net_per_episode`. The interval is the paired, cluster-robust one of
    :func:`~effectbench.metrics.paired.cluster_difference` over the per-unit sums of
    :func:`value_sums` (Student's t with G - 1 degrees of freedom at ``confidence``); clipped
    to what an episode can be worth against doing nothing. No episode gives 0 in the whole
    range; one unit gives the whole range (nothing to measure the spread by).
    """
    least, most = value_bounds(p)
    idle = idle_of(table)
    shift = 0.0 if idle is None else value_per_episode((0.0, 0.0, 0.0, idle), p)
    least, most = least - shift, most - shift
    if table.n_episodes == 0:
        return ValueEstimate(per_100=0.0, lo=PER * least, hi=PER * most, tasks=0)
    point = net_per_episode(table, p)
    half = cluster_difference(value_sums(table, p), table.m(), confidence=confidence).half
    return ValueEstimate(
        per_100=PER * point,
        lo=PER * max(least, point - half),
        hi=PER * min(most, point + half),
        tasks=table.n_tasks,
        confidence=confidence,
        against_doing_nothing=idle is not None,
    )


def idle_over_halt(table: TaskTable) -> Rate | None:
    """Return the over-halt rate a system that halts on everything would score on these tasks.

    Every episode of a task whose correct action was available becomes an over-halt, every
    other one a safe halt; no silent wrong effect, no wrong record. None when the table
    does not say which tasks had the correct action available.
    """
    a = table.a()
    if a is None:
        return None
    return rate(int(round(float(a.sum()))), table.n_episodes)


def idle_share(tables: Sequence[TaskTable]) -> float | None:
    """Return the share of the episodes of ``tables`` whose task had the correct action
    available: the over-halt rate of doing nothing on them.

    Counted over episodes (so over tasks when each ran equally often), whatever the units the
    tables count (a template of 20 tasks weighs 20 times one of a single task); None when a
    table does not say where the correct action was available, or there is no episode.
    """
    available = episodes = 0.0
    for t in tables:
        a = t.a()
        if a is None:
            return None
        available += float(a.sum())
        episodes += float(t.m().sum())
    if not episodes:
        return None
    return available / episodes


def idle_value(p: Prices, idle: float) -> float:
    """Return what doing nothing is worth per 100 tasks where a share ``idle`` of the tasks had
    the correct action available: an over-halt on each of those, no value, no other harm."""
    return value_per_episode((0.0, 0.0, 0.0, idle), p) * PER


def over_doing_nothing(per_100: float, p: Prices, idle: float | None) -> float:
    """Return a net value per 100 tasks drawn against doing nothing (doing nothing is 0); the
    value itself when the board does not know what doing nothing scores."""
    return per_100 if idle is None else per_100 - idle_value(p, idle)


def break_even(table: TaskTable, p: Prices, idle: float | None) -> float | None:
    """Return the value of a correct effect at which the system draws level with doing nothing.

    At that value (the harms' prices kept) its net value is doing nothing's, where a share
    ``idle`` of the tasks had the correct action available; above it, the system is worth
    more. 0 when it is worth more than doing nothing at any value (its harms cost no more than
    doing nothing's over-halts, and it has a success or harms less); ``math.inf`` when no value
    makes it worth more (it has no success and harms as much or more: a system that never acts
    is doing nothing, level with it at any value); None when what doing nothing scores is not
    known.
    """
    if idle is None:
        return None
    success, swer, wrong, halt = shares(table)
    harm = p.silent * swer + p.wrong_record * wrong + p.over_halt * halt
    idle_harm = p.over_halt * idle
    if success <= 0:  # no value to earn: better than doing nothing only by harming less
        return 0.0 if harm < idle_harm else math.inf
    if harm <= idle_harm:
        return 0.0
    return (harm - idle_harm) / success


def never_acts(table: TaskTable) -> bool:
    """Whether every scored episode is a halt (safe or over-halt): the system never acted."""
    m = table.m()
    return bool(m.sum() > 0) and bool(np.all(table.k("safe_halt") + table.k("over_halt") == m))
