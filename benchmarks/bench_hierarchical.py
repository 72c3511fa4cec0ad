"""Benchmark the hierarchical bootstrap on the shipped boards, and choose its replicate count.

Reads every board ``effectbench rank submissions`` shows (the verifier's reports through the
site build's report cache, unsigned bundles allowed, nothing re-run), then for each replicate
count asked for prints, per board, the CPU seconds of the bootstrap block
``leaderboard.json`` carries (every row and each adjacent pair) and of the one ``rank --json``
carries (every pair), and the Monte Carlo drift of the limits: the largest difference between
the limits of two seeds, as a share of the interval's width. A count is affordable when the
whole site's block costs a few seconds and the drift is a few percent. The load average is
printed before and after (the machine is shared; CPU seconds do not depend on it).

    .venv/bin/python benchmarks/bench_hierarchical.py [--replicates 250 500 1000 2000]
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

from effectbench.metrics.bootstrap import bootstrap_difference, bootstrap_value

ROOT = Path(__file__).resolve().parents[1]


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _boards(submissions: Path) -> list:  # type: ignore[type-arg]
    from effectbench.cli._rank import reports_of
    from effectbench.metrics import DEFAULT_PRICES
    from effectbench.site._entries import entry_from_report, unique_slugs
    from effectbench.site._tables import boards
    from verifier.ranking import rank_across

    reports = rank_across(reports_of([submissions], True, False, True))
    entries = [entry_from_report(r, s) for r, s in zip(reports, unique_slugs(reports), strict=True)]
    return boards(entries, DEFAULT_PRICES)


def _drift(board, pairs, replicates: int) -> float:  # type: ignore[no-untyped-def]
    """The largest change of a limit between seeds 53 and 54, over the interval's width."""
    worst = 0.0
    for first, second in pairs:
        a = board.tables[first]
        b = board.tables[second] if second else None
        runs = [
            bootstrap_value(a, board.prices, replicates, seed)
            if b is None
            else bootstrap_difference(a, b, board.prices, replicates, seed)
            for seed in (53, 54)
        ]
        x, y = runs
        if x.lo is None or x.hi is None or y.lo is None or y.hi is None or x.hi <= x.lo:
            continue
        worst = max(worst, abs(x.lo - y.lo) / (x.hi - x.lo), abs(x.hi - y.hi) / (x.hi - x.lo))
    return worst


def _limits(lo: float | None, hi: float | None) -> str:
    return "not estimable" if lo is None or hi is None else f"[{lo:+.1f}, {hi:+.1f}]"


def _pair(item: dict) -> str:  # type: ignore[type-arg]
    analytic = _limits(item["analytic_lo"], item["analytic_hi"])
    boot = _limits(item["bootstrap_lo"], item["bootstrap_hi"])
    return f"analytic {analytic}  bootstrap {boot}"


def main() -> None:
    """Print the bootstrap's cost and drift on every shipped board at each replicate count."""
    from effectbench.site._bootstrap import adjacent_pairs, all_pairs, bootstrap_block

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicates", type=int, nargs="+", default=[250, 500, 1000, 2000])
    parser.add_argument("--submissions", type=Path, default=ROOT / "submissions")
    args = parser.parse_args()
    print(f"load average before: {_load()}")
    start = time.perf_counter()
    every = _boards(args.submissions)
    print(f"{len(every)} boards read in {time.perf_counter() - start:.1f} s")
    for reps in args.replicates:
        site_cpu = rank_cpu = 0.0
        worst = 0.0
        for b in every:
            t = _cpu()
            bootstrap_block(b, adjacent_pairs(b), reps)
            site = _cpu() - t
            t = _cpu()
            bootstrap_block(b, all_pairs(b), reps)
            rank = _cpu() - t
            site_cpu, rank_cpu = site_cpu + site, rank_cpu + rank
            slugs = [str(s) for s in b.frame["slug"]]
            drift = _drift(b, [(s, "") for s in slugs] + adjacent_pairs(b), reps)
            worst = max(worst, drift)
            print(
                f"  {reps:5d} replicates  {b.key:40s} {len(slugs):2d} rows: "
                f"leaderboard.json {site:6.3f} s CPU, rank --json {rank:6.3f} s CPU, "
                f"seed drift {100 * drift:4.1f}% of the width"
            )
        print(
            f"{reps} replicates, every board: leaderboard.json {site_cpu:.2f} s CPU, "
            f"rank --json {rank_cpu:.2f} s CPU; largest seed drift {100 * worst:.1f}% of the width"
        )
    reps = args.replicates[-1]
    print(f"analytic [lo, hi] beside bootstrap [lo, hi] at {reps} replicates:")
    for b in every:
        block = bootstrap_block(b, adjacent_pairs(b), reps)
        for item in block["rows"] + block["pairs"]:
            name = item.get("slug") or f"{item['first']} - {item['second']}"
            print(f"  {b.key:32s} {name:60s} {_pair(item)}")
    print(f"load average after: {_load()}")


if __name__ == "__main__":
    main()
