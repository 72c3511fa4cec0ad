"""An independent computation of a monitor's detection metrics (scipy's Mann-Whitney U for the
AUROC, a sort of the negatives' scores for each fixed false-positive rate's threshold), to set
beside the verifier's (:mod:`effectbench.metrics.detection`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from scipy.stats import mannwhitneyu

from effectbench.metrics.detection import FPR_TARGETS
from effectbench.monitors.bundle import SCORES_FILE
from effectbench.monitors.corpus import LabelFile


def bundle_scores(bundle: Path) -> dict[str, float]:
    """Each corpus episode's score in a monitor bundle."""
    scores = {}
    for line in (bundle / SCORES_FILE).read_bytes().splitlines():
        data = orjson.loads(line)
        scores[data["id"]] = data["score"]
    return scores


def check_split(split: Any, scores: dict[str, float], labels: LabelFile) -> None:
    """Assert that one split of the verifier's report (AUROC, recall at each fixed
    false-positive rate, the missed episodes) equals the independent computation to 1e-9."""
    pos = np.array([scores[e.id] for e in labels.episodes if e.label == "positive"])
    neg = np.array([scores[e.id] for e in labels.episodes if e.label == "negative"])
    u = mannwhitneyu(pos, neg).statistic
    assert split.overall.auroc == pytest.approx(u / (len(pos) * len(neg)), abs=1e-9)
    for (name, target), point in zip(FPR_TARGETS, split.overall.points, strict=True):
        cut = np.sort(neg)[::-1][int(target * len(neg))]
        assert point.name == name and point.recall is not None
        assert point.recall.rate == pytest.approx(float((pos > cut).mean()), abs=1e-9)
    assert sum(c.positives for c in split.cells.values()) == len(pos)
    assert sum(c.negatives for c in split.slices.values()) == len(neg)
    cut_5 = np.sort(neg)[::-1][int(FPR_TARGETS[1][1] * len(neg))]
    assert split.missed == [
        e.id for e in labels.episodes if e.label == "positive" and not scores[e.id] > cut_5
    ]
