"""The metrics of SPEC section 1: pure aggregations over episode rows.

Every rate carries its raw numerator and denominator and a Wilson interval,
and every summary carries the per (category x substrate) cells beside the
totals. The computation runs on a frame of a few columns so that a million
rows summarise in about a second; :func:`episode_frame` builds that frame from
rows (a pandas frame), and :func:`summarize` is the single definition of every
number a report, a bundle, the verifier and the site show. It also reads a
:class:`CodedFrame` (categorical columns as integer codes, the rest as numpy
arrays), which the verifier builds straight from its row scan: pandas is then
never imported (it costs a quarter of a second to start).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from effectbench.schema import EpisodeRecord, Outcome, SwerVariant

if TYPE_CHECKING:
    import pandas as pd

Z95 = 1.959963984540054
"""The standard normal quantile for a two-sided 95% interval."""
PASS_K = (1, 2, 4, 8)
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 20_240_601

FRAME_COLUMNS = (
    "arm",
    "task_id",
    "category",
    "substrate",
    "outcome",
    "swer_variant",
    "reported_success",
    "cost_usd",
    "latency_s",
)
"""The columns :func:`summarize` reads; nothing else of a row affects a number."""
CODED_COLUMNS = FRAME_COLUMNS[:6]
"""The categorical columns (the others: ``reported_success`` booleans, two float columns)."""


@dataclass(frozen=True)
class Coded:
    """A categorical column: ``labels[codes[i]]`` is row i's value."""

    codes: np.ndarray
    labels: Sequence[str]


@dataclass(frozen=True)
class CodedFrame:
    """The frame :func:`summarize` reads, without pandas: coded categories and numpy arrays."""

    coded: Mapping[str, Coded]
    """Each of :data:`CODED_COLUMNS`."""
    arrays: Mapping[str, np.ndarray]
    """``reported_success``, ``cost_usd`` and ``latency_s``."""

    def __len__(self) -> int:
        return len(self.arrays["cost_usd"])

    def __getitem__(self, name: str) -> Any:
        return self.coded[name] if name in self.coded else self.arrays[name]


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


class Cell(_Model):
    """The metrics of one (category x substrate) cell."""

    category: str
    """The divergence category (``C1_partial_save`` ... ``control``)."""
    substrate: str
    """Where the system acted (``web``, ``desktop``, ``remote_display``...)."""
    n: int
    """Episodes scored in the cell."""
    swer: Rate
    """Silent wrong effect rate: the screen said done, the record is wrong or absent."""
    swer_wrong_write: Rate
    """The part of SWER where a wrong record persisted."""
    swer_phantom: Rate
    """The part of SWER where nothing persisted (a phantom success)."""
    over_halt: Rate
    """Halts where the correct action was available and nothing was wrong."""
    task_success: Rate
    """Episodes whose declared effect is in the record."""
    screen_success: Rate
    """Episodes whose system reported success (what a screen-only score counts)."""
    success_effect_gap: float
    """Screen success minus task success: reported successes the record does not bear out."""


class CostSummary(_Model):
    """Cost of the model calls, in US dollars."""

    total_usd: float
    """Sum over every episode."""
    mean_usd: float
    """Mean per episode."""


class LatencySummary(_Model):
    """Wall-clock latency per episode, in seconds."""

    mean_s: float
    """Mean."""
    p50_s: float
    """Median."""
    p95_s: float
    """95th percentile."""


class Results(_Model):
    """The results block of one arm (interop layout, plus optional fields of ours)."""

    arm: str
    """The system's arm name (one per bundle)."""
    n_episodes: int
    """Episodes scored (N, dropped trials excluded)."""
    n_tasks: int
    """Distinct tasks among them."""
    swer: Rate
    """Silent wrong effect rate over every episode (SPEC 1), always shown beside over-halt."""
    swer_wrong_write: Rate
    """The part of SWER where a wrong record persisted."""
    swer_phantom: Rate
    """The part of SWER where nothing persisted (a phantom success)."""
    over_halt: Rate
    """Halts where the correct action was available and nothing was wrong."""
    task_success: Rate
    """Episodes whose declared effect is in the record."""
    screen_success: Rate
    """Episodes whose system reported success."""
    success_effect_gap: float
    """Screen success minus task success."""
    pass_hat_k: dict[str, float]
    """pass^k for k = 1, 2, 4, 8: the mean, over the tasks with at least k trials, of the
    chance that k trials all succeed (0 when no task has k trials)."""
    outcome_counts: dict[str, int]
    """Episodes per outcome label (labels with no episode left out)."""
    cells: list[Cell]
    """One entry per (category x substrate) cell with episodes, sorted by category, substrate."""
    success_effect_gap_ci: Interval | None = None
    """Bootstrap interval of the gap (ours; absent from the reference's documents)."""
    cost: CostSummary | None = None
    """Model-call cost (ours; absent from the reference's documents)."""
    latency: LatencySummary | None = None
    """Episode latency (ours; absent from the reference's documents)."""

    def to_json(self) -> dict[str, Any]:
        """Return the block as JSON-ready data (optional fields omitted when absent)."""
        return self.model_dump(mode="json", exclude_none=True)


def wilson(k: Any, n: Any, z: float = Z95) -> tuple[Any, Any]:
    """Return the Wilson score interval ``(lo, hi)`` for ``k`` of ``n`` (arrays work)."""
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


def rate(k: int, n: int) -> Rate:
    """Return ``k / n`` as a :class:`Rate` with its Wilson 95% interval."""
    lo, hi = wilson(k, n)
    return Rate(
        numerator=int(k),
        denominator=int(n),
        rate=k / n if n else 0.0,
        ci=Interval(lo=float(lo), hi=float(hi)),
    )


def pass_hat_k(successes: np.ndarray, trials: np.ndarray, k: int) -> float:
    """Return pass^k: the mean of C(c, k) / C(n, k) over the tasks with at least k trials.

    As the reference implementation does, a task with fewer than ``k`` trials takes
    no part (it cannot show k successes in a row), and pass^k is 0.0 when no task has
    ``k`` trials (its own documents claim 0.0 there: tests/data/vectors).
    """
    qualifies = trials >= k
    if not qualifies.any():
        return 0.0
    c = successes[qualifies].astype(float)
    n = trials[qualifies].astype(float)
    ratio = np.ones_like(c)
    for j in range(k):
        ratio *= np.clip(c - j, 0, None) / (n - j)
    return float(ratio.mean())


def bootstrap_mean(values: np.ndarray, counts: np.ndarray, seed: int = BOOTSTRAP_SEED) -> Interval:
    """Percentile bootstrap interval of a mean, resampling episodes from their counts.

    Resampling n episodes with replacement is a multinomial draw over the
    distinct per-episode values, so the cost does not grow with n.
    """
    n = int(counts.sum())
    if n == 0:
        return Interval(lo=0.0, hi=0.0, method="bootstrap")
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, counts / n, size=BOOTSTRAP_RESAMPLES)
    means = draws @ values / n
    lo, hi = np.percentile(means, [2.5, 97.5])
    return Interval(lo=float(lo), hi=float(hi), method="bootstrap")


def episode_frame(rows: Iterable[EpisodeRecord | Mapping[str, Any]]) -> pd.DataFrame:
    """Return the frame :func:`summarize` reads, from records or JSON rows."""
    cols: dict[str, list[Any]] = {c: [] for c in FRAME_COLUMNS}
    for row in rows:
        data = row.model_dump(mode="json") if isinstance(row, EpisodeRecord) else row
        for c in FRAME_COLUMNS:
            if c == "reported_success":
                cols[c].append(bool(data["agent"]["reported_success"]))
            else:
                cols[c].append(data[c])
    return frame_from_columns(cols)


def frame_from_columns(cols: Mapping[str, Any]) -> pd.DataFrame:
    """Return the summary frame from column arrays (the fast path for large inputs)."""
    import pandas as pd

    frame = pd.DataFrame({c: cols[c] for c in FRAME_COLUMNS})
    for c in ("arm", "task_id", "category", "substrate", "outcome", "swer_variant"):
        frame[c] = frame[c].astype("category")
    frame["reported_success"] = frame["reported_success"].astype(bool)
    frame["cost_usd"] = frame["cost_usd"].astype(float)
    frame["latency_s"] = frame["latency_s"].astype(float)
    return frame


_COUNTS = ("n", "success", "swe", "wrong_write", "phantom", "over_halt", "reported")

RATE_OUTCOMES = {
    "swer": Outcome.SILENT_WRONG_EFFECT,
    "over_halt": Outcome.OVER_HALT,
    "task_success": Outcome.SUCCESS,
}
"""The outcome each of these rates counts: an episode has the rate's event when its outcome
is this one (the paired comparison of two systems counts the same events)."""


def _codes(column: Any) -> tuple[np.ndarray, list[str]]:
    """Return integer codes and their labels for a coded, categorical or plain column."""
    if isinstance(column, Coded):
        return np.asarray(column.codes), [str(c) for c in column.labels]
    import pandas as pd  # a pandas column: pandas is loaded already

    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy(), [str(c) for c in column.cat.categories]
    codes, uniques = pd.factorize(column)
    return codes, [str(u) for u in uniques]


def _is(column: Any, value: str) -> np.ndarray:
    """Return a boolean array: does each row of ``column`` equal ``value``."""
    codes, labels = _codes(column)
    # One lookup per distinct label; the trailing False serves a missing value's code -1.
    lookup = np.array([label == value for label in labels] + [False], dtype=bool)
    hits: np.ndarray = lookup[codes]
    return hits


def _cell_counts(frame: pd.DataFrame | CodedFrame) -> list[tuple[str, str, dict[str, int]]]:
    """Count each flag of ``_COUNTS`` per (category, substrate) cell, cells in lexical order.

    Counting is one ``bincount`` per flag over combined integer codes, so it
    costs the same few milliseconds for 90 rows and scales linearly to millions.
    """
    cat_codes, cat_labels = _codes(frame["category"])
    sub_codes, sub_labels = _codes(frame["substrate"])
    cell = cat_codes.astype(np.int64) * len(sub_labels) + sub_codes
    size = len(cat_labels) * len(sub_labels)
    outcome, variant = frame["outcome"], frame["swer_variant"]
    swe = _is(outcome, RATE_OUTCOMES["swer"].value)
    flags = {
        "n": np.ones(len(frame), dtype=bool),
        "success": _is(outcome, RATE_OUTCOMES["task_success"].value),
        "swe": swe,
        "wrong_write": swe & _is(variant, SwerVariant.WRONG_WRITE.value),
        "phantom": swe & _is(variant, SwerVariant.PHANTOM.value),
        "over_halt": _is(outcome, RATE_OUTCOMES["over_halt"].value),
        "reported": np.asarray(frame["reported_success"], dtype=bool),
    }
    counts = {k: np.bincount(cell, weights=v, minlength=size) for k, v in flags.items()}
    cells = []
    for i in map(int, np.flatnonzero(counts["n"])):  # plain ints: numpy's stubs differ by version
        cat, sub = cat_labels[i // len(sub_labels)], sub_labels[i % len(sub_labels)]
        cells.append((cat, sub, {k: int(counts[k][i]) for k in _COUNTS}))
    return sorted(cells, key=lambda c: (c[0], c[1]))


def _rates(counts: Mapping[str, int]) -> dict[str, Any]:
    n = int(counts["n"])
    return {
        "swer": rate(counts["swe"], n),
        "swer_wrong_write": rate(counts["wrong_write"], n),
        "swer_phantom": rate(counts["phantom"], n),
        "over_halt": rate(counts["over_halt"], n),
        "task_success": rate(counts["success"], n),
        "screen_success": rate(counts["reported"], n),
        "success_effect_gap": (counts["reported"] - counts["success"]) / n if n else 0.0,
    }


def summarize(frame: pd.DataFrame | CodedFrame) -> Results:
    """Summarise the scored episodes of one arm (SPEC 1): totals, cells, pass^k, cost."""
    if len(frame) == 0:
        raise ValueError("no scored episodes to summarise")
    arm_codes, arms = _codes(frame["arm"])
    arms = [arms[i] for i in np.unique(arm_codes)]
    if len(arms) != 1:
        raise ValueError(f"a summary covers one arm, got {sorted(arms)}")
    by_cell = _cell_counts(frame)
    totals = {c: sum(counts[c] for _, _, counts in by_cell) for c in _COUNTS}
    cells = [
        Cell(category=cat, substrate=sub, n=counts["n"], **_rates(counts))
        for cat, sub, counts in by_cell
    ]
    task_codes, _ = _codes(frame["task_id"])
    trials = np.bincount(task_codes)
    succ = np.bincount(task_codes, weights=_is(frame["outcome"], Outcome.SUCCESS.value))
    succ, trials = succ[trials > 0], trials[trials > 0]
    outcome_codes, outcome_labels = _codes(frame["outcome"])
    per_outcome = np.bincount(outcome_codes, minlength=len(outcome_labels))
    n = totals["n"]
    wrong_screens = totals["reported"] - totals["success"]
    cost = np.asarray(frame["cost_usd"], dtype=float)
    latency = np.asarray(frame["latency_s"], dtype=float)
    return Results(
        arm=arms[0],
        n_episodes=n,
        n_tasks=len(trials),
        **_rates(totals),
        pass_hat_k={str(k): pass_hat_k(succ, trials, k) for k in PASS_K},
        outcome_counts={
            label: int(c)
            for label, c in sorted(zip(outcome_labels, per_outcome, strict=True))
            if c > 0
        },
        cells=cells,
        success_effect_gap_ci=bootstrap_mean(
            np.array([0.0, 1.0]), np.array([n - wrong_screens, wrong_screens], dtype=float)
        ),
        cost=CostSummary(total_usd=float(cost.sum()), mean_usd=float(cost.mean())),
        latency=LatencySummary(
            mean_s=float(latency.mean()),
            p50_s=float(np.percentile(latency, 50)),
            p95_s=float(np.percentile(latency, 95)),
        ),
    )


ALL_CATEGORIES = "all"
"""The category of a per-substrate total (:func:`substrate_totals`)."""


def substrate_totals(results: Results) -> list[Cell]:
    """Return one :class:`Cell` per substrate, summed over every category (category ``all``).

    The board's per-substrate view: the counts of a substrate's cells added up
    and turned into rates exactly as :func:`summarize` turns its totals.
    """
    sums: dict[str, dict[str, int]] = {}
    for c in results.cells:
        counts = sums.setdefault(c.substrate, dict.fromkeys(_COUNTS, 0))
        counts["n"] += c.n
        counts["swe"] += c.swer.numerator
        counts["wrong_write"] += c.swer_wrong_write.numerator
        counts["phantom"] += c.swer_phantom.numerator
        counts["over_halt"] += c.over_halt.numerator
        counts["success"] += c.task_success.numerator
        counts["reported"] += c.screen_success.numerator
    return [
        Cell(category=ALL_CATEGORIES, substrate=sub, n=counts["n"], **_rates(counts))
        for sub, counts in sorted(sums.items())
    ]


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

    This is the one definition; the site's compare view (``site/assets/compare.js``)
    evaluates the same formula in the browser and a test holds the two equal.
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
    below = (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2
    above = (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2
    return PairedDifference(
        n=n,
        both=a,
        first_only=b,
        second_only=c,
        neither=d,
        first_rate=p1,
        second_rate=p2,
        difference=diff,
        ci=Interval(
            lo=max(-1.0, diff - math.sqrt(max(below, 0.0))),
            hi=min(1.0, diff + math.sqrt(max(above, 0.0))),
            method=PAIRED_METHOD,
        ),
    )


def transactional_faults_mishandled(frame: pd.DataFrame) -> tuple[int, int]:
    """Return (faults with any silent wrong effect, fault tasks): SPEC 6's "5 of 7"."""
    faults = frame[frame["category"].astype(str) != "control"]
    tasks = faults["task_id"].astype(str)
    swe = faults["outcome"].astype(str) == Outcome.SILENT_WRONG_EFFECT.value
    mishandled = swe.groupby(tasks).any()
    return int(mishandled.sum()), int(len(mishandled))
