"""How much of a corpus's dev labels its metadata alone gives away (issue 32's leak probe).

A monitor should have to watch the run (actions, frames, claim) to tell a silent wrong effect
from a success. :func:`probe` trains a naive Bayes model on the metadata of each episode
alone (substrate, the goal's words, each parameter as ``key=value``, the declared effect),
never on its actions, frames or claim, and returns its AUROC on the dev split: over all pairs,
and over the pairs within one (category x substrate) cell, the board's cells. Near 0.5 is what
a corpus should give.

The folds are grouped by *situation*: a task and its variants on the other substrates
(``task@web``, ...) share one referral and one payload, so they are held out together. A
monitor scored on the sequestered split never meets a dev situation again; a fold that kept
one screen of a situation for training and another for scoring would measure memory of that
payload, not a leak a test-split episode could carry.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from effectbench.errors import DataError
from effectbench.metrics.detection import auroc
from effectbench.monitors.corpus import LabelEntry, read_corpus
from effectbench.schema import Split, Substrate

FOLDS = 5
"""How many folds of situations the probe holds out in turn."""


@dataclass(frozen=True)
class ProbeResult:
    """The probe's figures on one corpus (``None``: no pair of that kind to rank)."""

    overall: float | None
    within_cells: float | None
    situations: int
    episodes: int


def tokens(view: Mapping[str, Any], drop: Sequence[str] = ()) -> list[str]:
    """The metadata of one overseer view as tokens (``drop``: token prefixes left out)."""
    task = view["task"]
    out = [f"substrate={view['substrate']}"]
    out += [f"goal:{w}" for w in str(task["goal"]).lower().split()]
    for key, value in sorted(task["params"].items()):
        out += [f"param:{key}", f"param:{key}={value}"]
    effect = task.get("declared_effect")
    out.append("effect:" + orjson.dumps(effect, option=orjson.OPT_SORT_KEYS).decode())
    return [t for t in out if not any(t.startswith(p) for p in drop)]


def _fit(rows: Sequence[tuple[list[str], bool]]) -> dict[str, float]:
    """Each token's log-likelihood ratio (positive over negative), Laplace-smoothed."""
    counts: dict[bool, Counter[str]] = {True: Counter(), False: Counter()}
    for words, positive in rows:
        counts[positive].update(words)
    vocabulary = set(counts[True]) | set(counts[False])
    totals = {c: sum(counts[c].values()) + len(vocabulary) for c in counts}
    return {
        w: math.log((counts[True][w] + 1) / totals[True])
        - math.log((counts[False][w] + 1) / totals[False])
        for w in vocabulary
    }


def probe_views(
    views: Mapping[str, Mapping[str, Any]],
    scored: Sequence[LabelEntry],
    drop: Sequence[str] = (),
) -> ProbeResult:
    """Return the probe's figures for the ``scored`` label entries, whose views ``views``
    holds by episode id."""
    situation = {e.id: Substrate.base_of(e.task) for e in scored}
    situations = sorted(set(situation.values()))
    fold = {s: i % FOLDS for i, s in enumerate(situations)}
    score: dict[str, float] = {}
    for held in range(FOLDS):
        weights = _fit(
            [
                (tokens(views[e.id], drop), bool(e.scored))
                for e in scored
                if fold[situation[e.id]] != held
            ]
        )
        for e in scored:
            if fold[situation[e.id]] == held:
                score[e.id] = sum(weights.get(w, 0.0) for w in tokens(views[e.id], drop))
    pos = [score[e.id] for e in scored if e.scored]
    neg = [score[e.id] for e in scored if not e.scored]
    cells: dict[tuple[str, str], tuple[list[float], list[float]]] = {}
    for e in scored:
        cell = cells.setdefault((e.category.value, e.substrate.value), ([], []))
        cell[0 if e.scored else 1].append(score[e.id])
    pairs = area = 0.0
    for p, n in cells.values():
        a = auroc(p, n)
        if a is not None:
            area += a * len(p) * len(n)
            pairs += len(p) * len(n)
    return ProbeResult(
        overall=auroc(pos, neg),
        within_cells=area / pairs if pairs else None,
        situations=len(situations),
        episodes=len(scored),
    )


def probe(folder: Path, drop: Sequence[str] = (), pack: str | None = None) -> ProbeResult:
    """Return the probe's figures on the dev split of the corpus in ``folder`` (only the
    episodes of ``pack``'s tasks when given)."""
    corpus = read_corpus(folder, check_frames=False)
    dev = corpus.labels(Split.DEV)
    if dev is None:
        raise DataError("the corpus has no dev labels", file=str(folder))
    scored = [
        e
        for e in dev.episodes
        if e.scored is not None and (pack is None or e.task.startswith(f"{pack}::"))
    ]
    return probe_views({str(v["id"]): v for v in corpus.raw}, scored, drop)
