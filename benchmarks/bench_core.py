"""Benchmark the core engine: the reference run end to end, and summarising 1,000,000 rows.

Run: ``.venv/bin/python benchmarks/bench_core.py [--rows N]``. Prints wall time and
peak resident memory; nothing is asserted.
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from effectbench.baselines import REFERENCE_BASELINES, get_baseline
from effectbench.classify import classify
from effectbench.metrics import FRAME_COLUMNS, episode_frame, frame_from_columns, summarize
from effectbench.packs.mockmed import MockMedProvider
from effectbench.run.runner import evaluate
from effectbench.schema import Category, TrueState


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far, in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_reference(trials: int) -> float:
    """Run both reference baselines on MockMed and summarise them; return seconds."""
    start = time.perf_counter()
    pack = MockMedProvider()
    for name in REFERENCE_BASELINES:
        run = evaluate(get_baseline(name, pack), pack, trials=trials)
        summarize(episode_frame(run.rows))
    return time.perf_counter() - start


def synthetic_columns(n: int, seed: int = 7) -> dict[str, object]:
    """Column arrays for ``n`` labelled episodes (labels from the real truth table)."""
    rng = np.random.default_rng(seed)
    reported = rng.random(n) < 0.6
    states = rng.choice(
        np.array([TrueState.CORRECT, TrueState.WRONG_PERSISTED, TrueState.ABSENT], dtype=object),
        n,
    )
    available = rng.random(n) < 0.5
    combos = {
        (r, s, a): classify(r, s, a)
        for r in (True, False)
        for s in set(states)
        for a in (True, False)
    }
    labels = [combos[(r, s, a)] for r, s, a in zip(reported, states, available, strict=True)]
    assert all(lab is not None for lab in labels)  # the oracle read every record here
    outcomes = [lab.outcome.value for lab in labels if lab is not None]
    variants = [lab.swer_variant.value for lab in labels if lab is not None]
    cats = np.array([c.value for c in Category], dtype=object)
    return {
        "arm": np.full(n, "synthetic", dtype=object),
        "task_id": np.array([f"task-{i % 500}" for i in range(n)], dtype=object),
        "category": cats[rng.integers(0, len(cats), n)],
        "substrate": rng.choice(np.array(["web", "desktop", "remote_display"], dtype=object), n),
        "outcome": np.array(outcomes, dtype=object),
        "swer_variant": np.array(variants, dtype=object),
        "reported_success": reported,
        "cost_usd": rng.random(n) * 0.01,
        "latency_s": rng.random(n) * 5,
    }


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    bench_reference(2)  # warm imports
    ref = min(bench_reference(10) for _ in range(3))
    print(f"reference run, both baselines, 10 trials (180 episodes): {ref * 1000:.1f} ms")

    cols = synthetic_columns(args.rows)
    assert set(cols) == set(FRAME_COLUMNS)
    start = time.perf_counter()
    frame = frame_from_columns(cols)
    built = time.perf_counter() - start
    start = time.perf_counter()
    res = summarize(frame)
    summed = time.perf_counter() - start
    print(
        f"summarize {args.rows:,} rows: frame {built:.2f} s + summary {summed:.2f} s "
        f"({len(res.cells)} cells, gap bootstrap 10,000 resamples); "
        f"peak RSS {peak_rss_mib():.0f} MiB"
    )


if __name__ == "__main__":
    main()
