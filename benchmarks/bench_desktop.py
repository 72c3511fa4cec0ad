"""Benchmark the desktop and remote-display substrates of the clinic pack.

Prints figures, asserts nothing. Targets from the issue: median episode at most
1.5 s on desktop and 2 s on remote display (start-up included); the three arms
on the web, desktop and remote-display substrates at 3 trials (729 episodes)
in at most 15 minutes with 2 workers; no process or display left after the run.

    .venv/bin/python benchmarks/bench_desktop.py [--episodes 27] [--trials 3] [--workers 2]
        [--skip-full] [--skip-episodes] [--quick]

Part 1 times each substrate's episodes as a user meets them: the
start-to-start interval of consecutive episodes of an ``effectbench run`` of
screen_only over the dev split, with the CPU seconds per episode of every
process of the run and the load average (``_cadence.py``); then it runs
episodes one by one in this process and times their phases (X session, app
start, accessibility reader or RFB connect, the arm's actions). Part 2 runs
``effectbench run`` for each arm over the three screen substrates with
``--workers`` processes, then counts what outlived it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from effectbench.baselines import get_baseline
from effectbench.packs.clinic import ClinicProvider
from effectbench.run.runner import DroppedEpisode, run_episode
from effectbench.schema import Split, Substrate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _cadence import cadence, live_processes  # noqa: E402

ARMS = ("screen_only", "effect_verified", "effect_verified_all")
SCREENS = (Substrate.WEB, Substrate.DESKTOP, Substrate.REMOTE_DISPLAY)
WATCHED = ("Xvfb", "Xvnc", "dbus-daemon", "at-spi", "app.py", "_supervisor", "_a11y_helper")


def _watched() -> list[str]:
    """Every live process whose command line names an episode program."""
    return live_processes(WATCHED, "bench_desktop")


def _s(values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return f"median {statistics.median(ordered):5.2f} s  p90 {p90:5.2f} s  (n={len(ordered)})"


def episodes(pack: ClinicProvider, substrate: Substrate, count: int) -> None:
    """Time whole episodes (the runner's, start-up included) and their phases."""
    from effectbench.screens.xsession import XSession

    phases: dict[str, list[float]] = defaultdict(list)
    original = XSession.spawn

    def timed_start(self: XSession, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("name") == "app":  # the episode's app: the session is up by now
            phases["session"].append(time.perf_counter() - marks["start"])
            marks["app"] = time.perf_counter()
        return original(self, *args, **kwargs)

    XSession.spawn = timed_start  # type: ignore[method-assign]
    marks: dict[str, float] = {}
    sut = get_baseline("screen_only", pack)
    inner = sut.run

    def timed_run(*args: object, **kwargs: object) -> object:
        phases["start: app, reader/RFB"].append(time.perf_counter() - marks["app"])
        began = time.perf_counter()
        try:
            return inner(*args, **kwargs)  # type: ignore[arg-type]
        finally:
            phases["arm's actions"].append(time.perf_counter() - began)

    sut.run = timed_run  # type: ignore[assignment]
    tasks = [t for t in pack.tasks() if t.substrate is substrate and t.split is Split.DEV]
    totals: list[float] = []
    try:
        for task in (tasks * (1 + count // len(tasks)))[:count]:
            marks["start"] = time.perf_counter()
            outcome = run_episode(sut, pack, task, 0, 0)
            totals.append(time.perf_counter() - marks["start"])
            if isinstance(outcome, DroppedEpisode):
                print(f"    dropped {outcome.task_id}: {outcome.detail}")
    finally:
        XSession.spawn = original  # type: ignore[method-assign]
    load = f"[load average {os.getloadavg()[0]:.1f}]"
    print(f"  {substrate.value}: one run_episode after another {_s(totals)}  {load}")
    for name, values in phases.items():
        print(f"    {name:24s} {_s(values)}")


def ladder(summary: dict[str, object]) -> None:
    """Print one arm's SWER and over-halt per substrate (summed over its cells)."""
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for cell in summary["cells"]:  # type: ignore[attr-defined]
        tally = totals[cell["substrate"]]
        tally[0] += cell["swer"]["numerator"]
        tally[1] += cell["over_halt"]["numerator"]
        tally[2] += cell["swer"]["denominator"]
    for substrate, (swer, halt, n) in sorted(totals.items()):
        print(f"    {substrate:15s} SWER {swer:3d}/{n}  over-halt {halt:3d}/{n}")


def full_run(trials: int, workers: int) -> None:
    """Run the three arms on the three screen substrates with the CLI; time and count."""
    substrates = ",".join(s.value for s in SCREENS)
    total, cells = 0.0, 0
    for arm in ARMS:
        began = time.perf_counter()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "effectbench.cli",
                "run",
                "--pack",
                "clinic",
                "--substrate",
                substrates,
                "--baseline",
                arm,
                "--trials",
                str(trials),
                "--workers",
                str(workers),
                "--json",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        seconds = time.perf_counter() - began
        total += seconds
        if done.returncode != 0:
            print(f"  {arm}: exit {done.returncode}: {done.stderr.strip()[-300:]}")
            continue
        summary = json.loads(done.stdout)
        cells += len(summary["cells"])
        print(
            f"  {arm}: {seconds:6.1f} s  {summary['n_episodes']} rows,"
            f" {summary['n_dropped']} dropped  [load average {os.getloadavg()[0]:.1f}]"
        )
        ladder(summary)
    print(f"  three arms x {len(SCREENS)} substrates x {trials} trials: {total / 60:.1f} min")
    print(f"  cells (category x substrate) filled over the arms: {cells}")
    leaked = _watched()
    print(f"  processes left after the run: {len(leaked)}")
    for line in leaked[:10]:
        print(f"    {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=27)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--skip-full", action="store_true")
    parser.add_argument("--skip-episodes", action="store_true")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="part 1's run cadence over one task at 3 trials, not the whole dev split",
    )
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    if not args.skip_episodes:
        with ClinicProvider() as pack:
            print("Part 1: one episode at a time, screen_only arm")
            for substrate in (Substrate.DESKTOP, Substrate.REMOTE_DISPLAY):
                label = f"  {substrate.value} episode"
                if args.quick:
                    label += " (clean_draft, 3 trials)"
                    timed = cadence(
                        label,
                        pack="clinic",
                        substrate=substrate.value,
                        trials=3,
                        task="clean_draft",
                    )
                else:
                    timed = cadence(label, pack="clinic", substrate=substrate.value)
                print(timed.line())
            for substrate in (Substrate.DESKTOP, Substrate.REMOTE_DISPLAY):
                episodes(pack, substrate, args.episodes)
    if not args.skip_full:
        print(f"Part 2: 3 arms, {args.trials} trials, {args.workers} workers")
        full_run(args.trials, args.workers)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
