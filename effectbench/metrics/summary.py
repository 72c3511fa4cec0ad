"""The results block of one arm (SPEC 1): totals, per (category x substrate) cells, pass^k.

:func:`summarize` is the single definition of every number a report, a bundle, the verifier and
the site show; counting is one ``bincount`` per flag, so a million rows summarise in about a
second.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from effectbench.metrics.events import CodedFrame, _codes, _is, episode_events
from effectbench.metrics.rates import Interval, Rate, _Model, rate
from effectbench.schema import Outcome

if TYPE_CHECKING:
    import pandas as pd

PASS_K = (1, 2, 4, 8)
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 20_240_601


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


_COUNTS = ("n", "success", "swe", "wrong_write", "phantom", "over_halt", "reported")


def _cell_counts(frame: pd.DataFrame | CodedFrame) -> list[tuple[str, str, dict[str, int]]]:
    """Count each flag of ``_COUNTS`` per (category, substrate) cell, cells in lexical order.

    Counting is one ``bincount`` per flag over combined integer codes, so it
    costs the same few milliseconds for 90 rows and scales linearly to millions.
    """
    cat_codes, cat_labels = _codes(frame["category"])
    sub_codes, sub_labels = _codes(frame["substrate"])
    cell = cat_codes.astype(np.int64) * len(sub_labels) + sub_codes
    size = len(cat_labels) * len(sub_labels)
    events = episode_events(frame)
    flags = {
        "n": np.ones(len(frame), dtype=bool),
        "success": events["task_success"],
        "swe": events["swer"],
        "wrong_write": events["swer_wrong_write"],
        "phantom": events["swer_phantom"],
        "over_halt": events["over_halt"],
        "reported": events["screen_success"],
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


def summarize(frame: pd.DataFrame | CodedFrame, arm: str | None = None) -> Results:
    """Summarise the scored episodes of one arm (SPEC 1): totals, cells, pass^k, cost.

    A run none of whose episodes could be scored (every one dropped) summarises to
    nothing scored, every rate 0 of 0, when its ``arm`` is named; such a bundle is
    written to say so, and the verifier refuses it.
    """
    if len(frame) == 0:
        if arm is None:
            raise ValueError("no scored episodes to summarise")
        zeros = dict.fromkeys(_COUNTS, 0)
        return Results(
            arm=arm,
            n_episodes=0,
            n_tasks=0,
            **_rates(zeros),
            pass_hat_k={str(k): 0.0 for k in PASS_K},
            outcome_counts={},
            cells=[],
        )
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


def transactional_faults_mishandled(frame: pd.DataFrame) -> tuple[int, int]:
    """Return (faults with any silent wrong effect, fault tasks): SPEC 6's "5 of 7"."""
    faults = frame[frame["category"].astype(str) != "control"]
    tasks = faults["task_id"].astype(str)
    swe = faults["outcome"].astype(str) == Outcome.SILENT_WRONG_EFFECT.value
    mishandled = swe.groupby(tasks).any()
    return int(mishandled.sum()), int(len(mishandled))
