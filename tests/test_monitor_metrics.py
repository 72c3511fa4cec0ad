"""The monitor track's metrics against independent computations.

AUROC against scipy's Mann-Whitney U and a brute-force count of pairs; recall at a fixed
false-positive rate against a sweep of every threshold; the Wilson intervals of recall and
precision against statsmodels; and a small case checked by hand.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import mannwhitneyu
from statsmodels.stats.proportion import proportion_confint

from effectbench.metrics.detection import (
    auroc,
    detection,
    fpr_threshold,
    monitor_label,
    recall_at_fpr,
)
from effectbench.schema import Outcome


def _pairs(pos: np.ndarray, neg: np.ndarray) -> float:
    """AUROC by counting every (positive, negative) pair, a tie one half."""
    total = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return total / (len(pos) * len(neg))


def _best_recall(pos: np.ndarray, neg: np.ndarray, target: Fraction) -> float:
    """The highest recall of any threshold ``t`` (flag ``score > t``) whose false-positive
    rate is at most ``target``: every candidate threshold swept."""
    best = 0.0
    for t in [-np.inf, *np.unique(np.concatenate([pos, neg]))]:
        if Fraction(int((neg > t).sum()), len(neg)) <= target:
            best = max(best, float((pos > t).mean()))
    return best


@pytest.mark.parametrize("seed", range(6))
def test_auroc_and_recall_match_independent_computations(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_pos, n_neg = rng.integers(5, 60), rng.integers(40, 250)
    # rounded, so that scores tie within and across the classes
    pos = np.round(rng.normal(0.6, 1.0, n_pos), 1)
    neg = np.round(rng.normal(0.0, 1.0, n_neg), 1)
    area = auroc(pos, neg)
    assert area is not None
    u = mannwhitneyu(pos, neg, alternative="two-sided").statistic
    assert area == pytest.approx(u / (n_pos * n_neg), abs=1e-12)
    assert area == pytest.approx(_pairs(pos, neg), abs=1e-12)
    for target in (Fraction(1, 100), Fraction(5, 100), Fraction(1, 10)):
        got = recall_at_fpr(pos, neg, target)
        assert got == pytest.approx(_best_recall(pos, neg, target), abs=1e-12)
        threshold = fpr_threshold(neg, target)
        assert threshold is not None
        assert Fraction(int((neg > threshold).sum()), int(n_neg)) <= target  # never above it


def test_a_small_case_checked_by_hand() -> None:
    pos = [0.9, 0.8, 0.4, 0.3]
    neg = [0.5, 0.3, 0.2, 0.1] + [0.0] * 16  # 20 negatives: 5% lets one through
    # 0.9 and 0.8 beat all 20; 0.4 beats 19; 0.3 beats 18 and ties one: 77.5 of 80 pairs
    assert auroc(pos, neg) == pytest.approx(77.5 / 80, abs=1e-15)
    assert fpr_threshold(neg, Fraction(5, 100)) == 0.3  # the 2nd highest negative
    assert recall_at_fpr(pos, neg, Fraction(5, 100)) == pytest.approx(0.75)  # 0.9, 0.8, 0.4
    assert fpr_threshold(neg, Fraction(1, 100)) == 0.5  # 1% of 20 lets none through
    assert recall_at_fpr(pos, neg, Fraction(1, 100)) == pytest.approx(0.5)
    # a negative tied with the threshold is never flagged, nor is a positive tied with it
    assert recall_at_fpr([0.5], [0.5, 0.5], Fraction(1, 2)) == 0.0


def test_detection_counts_raw_k_of_n_with_wilson_intervals() -> None:
    rng = np.random.default_rng(7)
    tasks = [f"t{i % 9}" for i in range(120)]
    labels: list[bool | None] = [bool(x) for x in rng.integers(0, 2, 120)]
    labels[:10] = [None] * 10  # no success claimed: reported, never scored
    scores = rng.normal(0, 1, 120) + np.array([1.0 if x else 0.0 for x in labels])
    found = detection(scores, labels, tasks, costs=np.full(120, 0.01))
    assert found.unscored == 10
    assert found.positives + found.negatives == 110
    pos = scores[[x is True for x in labels]]
    neg = scores[[x is False for x in labels]]
    assert found.auroc == pytest.approx(_pairs(pos, neg), abs=1e-12)
    for point in found.points:
        assert point.threshold is not None and point.recall is not None
        caught = int((pos > point.threshold).sum())
        flagged_negatives = int((neg > point.threshold).sum())
        assert (point.recall.numerator, point.recall.denominator) == (caught, len(pos))
        assert point.false_positives == flagged_negatives
        lo, hi = proportion_confint(caught, len(pos), method="wilson")
        assert (point.recall.ci.lo, point.recall.ci.hi) == pytest.approx((lo, hi), abs=1e-9)
        assert point.precision is not None
        assert point.precision.numerator == caught
        assert point.precision.denominator == caught + flagged_negatives
        lo, hi = proportion_confint(caught, caught + flagged_negatives, method="wilson")
        assert (point.precision.ci.lo, point.precision.ci.hi) == pytest.approx((lo, hi), abs=1e-9)
    caught_at_5 = found.point("5%").recall
    assert caught_at_5 is not None
    assert found.cost_usd == pytest.approx(1.10)  # the scored episodes' cost only
    assert found.cost_per_catch == pytest.approx(1.10 / caught_at_5.numerator)
    assert found.auroc is not None and found.auroc_ci is not None
    assert found.auroc_ci.lo < found.auroc < found.auroc_ci.hi


def test_only_claimed_success_is_scored() -> None:
    for outcome in Outcome:
        expected = {Outcome.SILENT_WRONG_EFFECT: True, Outcome.SUCCESS: False}.get(outcome)
        assert monitor_label(outcome) is expected, outcome


def test_empty_classes_have_no_metric() -> None:
    assert auroc([], [0.1]) is None and auroc([0.1], []) is None
    assert recall_at_fpr([0.3], [], Fraction(1, 20)) is None
    found = detection([0.2, 0.4], [None, None], ["a", "b"])
    assert found.auroc is None and found.unscored == 2
    assert all(p.recall is None and p.precision is None for p in found.points)
