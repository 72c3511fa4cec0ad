"""How much of a corpus's dev labels its metadata alone gives away (issue 32's leak probe).

Usage: ``python scripts/monitor_probe.py CORPUS_DIR [--drop PREFIX ...] [--pack NAME]``

A monitor should have to watch the run (actions, frames, claim) to tell a silent wrong effect
from a success. This script trains a naive Bayes model on the metadata of each episode alone
(substrate, the goal's words, each parameter as ``key=value``, the declared effect), never on
its actions, frames or claim, with five folds grouped by task (a task's episodes are never in
both), and prints its AUROC on the dev split: over all pairs, and over the pairs within one
(category x substrate) cell, the board's cells. Near 0.5 is what the corpus should give. The
load average is printed beside the figures.
"""

from __future__ import annotations

import argparse
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from effectbench.metrics.detection import auroc
from effectbench.monitors.corpus import LabelEntry, read_corpus
from effectbench.schema import Split

FOLDS = 5


def tokens(view: Mapping[str, Any], drop: Sequence[str]) -> list[str]:
    """The metadata of one view as tokens (``drop``: token prefixes left out)."""
    task = view["task"]
    out = [f"substrate={view['substrate']}"]
    out += [f"goal:{w}" for w in str(task["goal"]).lower().split()]
    for key, value in sorted(task["params"].items()):
        out += [f"param:{key}", f"param:{key}={value}"]
    effect = task.get("declared_effect")
    out.append("effect:" + orjson.dumps(effect, option=orjson.OPT_SORT_KEYS).decode())
    return [t for t in out if not any(t.startswith(p) for p in drop)]


def _fit(rows: Sequence[tuple[list[str], bool]]) -> dict[str, float]:
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


def probe(
    folder: Path, drop: Sequence[str], pack: str | None = None
) -> tuple[float | None, float | None, int, int]:
    """Return (AUROC over all pairs, AUROC within cells, tasks, scored episodes), over the
    episodes of one pack's tasks when ``pack`` is given."""
    corpus = read_corpus(folder, check_frames=False)
    dev = corpus.labels(Split.DEV)
    if dev is None:
        raise SystemExit(f"{folder}: no dev labels")
    views = {v["id"]: v for v in corpus.raw}
    scored: list[LabelEntry] = [
        e
        for e in dev.episodes
        if e.scored is not None and (pack is None or e.task.startswith(f"{pack}::"))
    ]
    tasks = sorted({e.task for e in scored})
    score: dict[str, float] = {}
    for fold in range(FOLDS):
        held = {t for i, t in enumerate(tasks) if i % FOLDS == fold}
        weights = _fit(
            [(tokens(views[e.id], drop), bool(e.scored)) for e in scored if e.task not in held]
        )
        for e in scored:
            if e.task in held:
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
    return auroc(pos, neg), (area / pairs if pairs else None), len(tasks), len(scored)


def main() -> None:
    """Print the probe's figures for one corpus."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--drop", action="append", default=[], metavar="PREFIX")
    parser.add_argument("--pack", help="only the episodes of this pack's tasks")
    args = parser.parse_args()
    overall, within, tasks, n = probe(args.corpus, args.drop, args.pack)
    load = Path("/proc/loadavg").read_text().split()[:3]
    dropped = f" without {', '.join(args.drop)}" if args.drop else ""
    of = f" of pack {args.pack}" if args.pack else ""
    print(f"metadata-only classifier{dropped}, {n} scored dev episodes of {tasks} tasks{of}:")
    print(f"  AUROC over all pairs {overall}; within (category x substrate) cells {within}")
    print(f"  load average {' '.join(load)}")


if __name__ == "__main__":
    main()
