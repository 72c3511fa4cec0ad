"""Benchmark re-ranking a board at other prices in the browser: the rank ranges of n systems.

A reader who changes the prices re-ranks every board in the page (site/assets/leaderboard.js):
every system's standing, the order, and the rank ranges, which test every pair of ranked systems
for a value difference beyond noise. This script gives the board script ``n`` synthetic ranked
systems that ran the same tasks (81 tasks, 3 trials each, like the clinic's shipped references;
each trial a success at the system's own rate, else a silent wrong effect, another wrong record
or an over-halt, drawn from a fixed seed), in headless Chromium (Debian's ``/usr/bin/chromium``),
and times ``EB_STATS.rankRanges`` two ways:

* **at once**: what a board whose systems share their tasks uses: each system's part of the
  difference is computed once, and a pair costs one dot product;
* **pair by pair**: every pair's paired value difference on the common tasks, as a board
  whose systems ran different tasks needs (up to ``--pairwise-max`` systems: it is quadratic
  with a large constant).

Both must give the same ranges (checked on every size timed both ways). It prints the median
of ``--repeats`` runs per size and way, their ratio, and the load average before and after.

Run: ``.venv/bin/python benchmarks/bench_reprice.py [--sizes 100,300,1000] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, sync_playwright

from effectbench.metrics import t_table
from effectbench.screens.chromium import chromium_executable

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "site" / "assets" / "leaderboard.js"
TASKS = 81
TRIALS = 3
PRICES = {"value": 10.0, "silent": 10.0, "wrong": 3.0, "halt": 1.0}
"""The documented default prices, as the board script names them."""
VIEW = {"z": 2.8, "min_tasks": 8, "t": t_table(0.9949, TASKS)}
"""A board's family-wise level, fewest common tasks and Student's t by degrees of freedom at
that level (about what 100 systems get), as the build writes a board's view."""


def _load() -> str:
    return Path("/proc/loadavg").read_text().strip()


def systems(n: int, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` ranked systems on the same tasks, as a board script lists them."""
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        skill = rnd.random()
        counts: dict[str, list[int]] = {k: [] for k in "ysro"}
        for _ in range(TASKS):
            drawn = [
                "success" if rnd.random() < skill else rnd.choice(("silent", "wrong", "halt"))
                for _ in range(TRIALS)
            ]
            counts["y"].append(drawn.count("success"))
            counts["s"].append(drawn.count("silent"))
            counts["r"].append(drawn.count("silent") + drawn.count("wrong"))  # a wrong record
            counts["o"].append(drawn.count("halt"))
        sys_ = {"slug": f"s{i:05d}", "status": "ranked", "t": list(range(TASKS))}
        out.append(sys_ | {"m": [TRIALS] * TASKS} | counts)
    return out


TIMED = """([systems, w, view, pairwise]) => {
    const S = window.EB_STATS;
    const st = systems.map(sys => S.standing(sys, w, 0.75));
    const order = st.map((_, i) => i).sort((a, b) => st[b].value - st[a].value);
    const t0 = performance.now();
    const ranges = S.rankRanges(st, order, w, view, pairwise);
    return [performance.now() - t0, ranges];
}"""


def timed(
    page: Page, board: list[dict[str, Any]], pairwise: bool, repeats: int
) -> tuple[float, Any]:
    """Return the median milliseconds of ``repeats`` rank-range runs and the ranges."""
    runs = [page.evaluate(TIMED, [board, PRICES, VIEW, pairwise]) for _ in range(repeats)]
    return statistics.median(ms for ms, _ in runs), runs[0][1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,300,1000", help="board sizes, comma-separated")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pairwise-max", type=int, default=1000)
    args = parser.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    print(f"load average before: {_load()}")
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(chromium_executable()),
            args=["--headless", "--no-sandbox", "--disable-gpu"],
        )
        try:
            page = browser.new_page()
            page.set_content("<!doctype html><title>reprice</title>")
            page.add_script_tag(path=str(SCRIPT))
            for n in sizes:
                board = systems(n)
                at_once, ranges = timed(page, board, False, args.repeats)
                line = f"{n:6d} systems: at once {at_once:9.1f} ms"
                if n <= args.pairwise_max:
                    pairwise, expected = timed(page, board, True, args.repeats)
                    if ranges != expected:
                        sys.exit(f"{n} systems: the two ways give different rank ranges")
                    ratio = pairwise / at_once if at_once else float("inf")
                    line += f", pair by pair {pairwise:9.1f} ms ({ratio:.1f}x), same ranges"
                widest = max(w - b for b, w in zip(*ranges, strict=True)) + 1 if n else 0
                print(line + f"; widest range {widest} places", flush=True)
        finally:
            browser.close()
    print(f"load average after: {_load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
