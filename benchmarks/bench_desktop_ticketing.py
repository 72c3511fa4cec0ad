"""Benchmark the ticketing pack's desktop and remote-display substrates (the kit's renderer).

Prints figures, asserts nothing. For each substrate and arm, runs the scripted arm on
``--tasks`` dev tasks one by one in this process (PostgreSQL cluster started once) and
prints the median and mean seconds per episode (X session, app start, the arm's steps and
the oracle's judgement included), the outcomes' counts, and the load average before and
after; then counts the episode processes left over.

    .venv/bin/python benchmarks/bench_desktop_ticketing.py [--tasks 8] [--arms screen_only]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from effectbench_ticketing import TicketingProvider

from effectbench.baselines import get_baseline
from effectbench.run.runner import DroppedEpisode, run_episode
from effectbench.schema import Split, Substrate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _cadence import live_processes  # noqa: E402

WATCHED = ("Xvfb", "Xvnc", "dbus-daemon", "at-spi", "effectbench.kit.desktop.render")


def _left() -> int:
    """Count live processes whose command line names an episode program."""
    return len(live_processes(WATCHED, "bench_desktop_ticketing"))


def _load() -> str:
    return Path("/proc/loadavg").read_text().strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=8, help="dev tasks per substrate")
    parser.add_argument("--arms", default="screen_only,effect_verified,effect_verified_all")
    args = parser.parse_args()
    before = _left()
    with TicketingProvider() as pack:
        for substrate in (Substrate.DESKTOP, Substrate.REMOTE_DISPLAY):
            tasks = [t for t in pack.tasks() if t.substrate is substrate and t.split is Split.DEV][
                : args.tasks
            ]
            for arm in args.arms.split(","):
                sut = get_baseline(arm, pack)
                load = _load()
                seconds: list[float] = []
                outcomes: Counter[str] = Counter()
                for task in tasks:
                    start = time.perf_counter()
                    row = run_episode(sut, pack, task, 0, 0)
                    seconds.append(time.perf_counter() - start)
                    outcomes[
                        "dropped" if isinstance(row, DroppedEpisode) else row.outcome.value
                    ] += 1
                print(
                    f"{substrate.value:15s} {arm:20s} {len(seconds)} episodes: median "
                    f"{statistics.median(seconds):.2f} s, mean {statistics.fmean(seconds):.2f} s"
                    f" per episode; {dict(outcomes)}; loadavg {load} -> {_load()}"
                )
    print(f"episode processes left over: {_left() - before}")


if __name__ == "__main__":
    main()
