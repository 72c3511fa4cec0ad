"""Speed of the clinic's web substrate: episodes, the three arms, MCP overhead.

Prints, each figure with the load average beside it: the web episode as a user
meets it (the start-to-start interval of consecutive episodes of an
``effectbench run`` of screen_only over the web dev split, and CPU seconds per
episode of every process of the run: see ``_cadence.py``); a screenshot; the
three arms at 3 trials on the web dev split with 2 workers (81 episodes each,
243 in all), with the ladder beside the API level's; and the MCP overhead per
tool call (a `screenshot` round trip over stdio minus the same screenshot in
process). Usage:

    .venv/bin/python benchmarks/bench_web.py [--trials 3] [--workers 2] [--quick]

``--quick`` (the test suite's smallest run) times the cadence over one task at 3 trials and
skips the three arms.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from effectbench.baselines import get_baseline
from effectbench.metrics import episode_frame, summarize
from effectbench.packs.clinic import ClinicProvider
from effectbench.run.parallel import evaluate_parallel
from effectbench.run.runner import evaluate
from effectbench.schema import Substrate
from effectbench.screens.browser import shared_browser

ARMS = ("screen_only", "effect_verified", "effect_verified_all")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from _cadence import cadence  # noqa: E402


def _load() -> str:
    return f"[load average {os.getloadavg()[0]:.1f}]"


def _ms(values: list[float]) -> str:
    values = sorted(values)
    p95 = values[min(len(values) - 1, int(0.95 * len(values)))]
    return f"median {statistics.median(values) * 1000:7.1f} ms  p95 {p95 * 1000:7.1f} ms"


def episodes(pack: ClinicProvider, runs: int, quick: bool) -> None:
    """The web episode start to start in real runs (over one task at 3 trials when ``quick``),
    and the screenshot they are made of."""
    for run in range(runs):
        label = f"web episode (screen_only, run {run + 1})"
        if quick:
            label += " (clean_draft, 3 trials)"
            timed = cadence(label, pack="clinic", substrate="web", trials=3, task="clean_draft")
        else:
            timed = cadence(label, pack="clinic", substrate="web")
        print(timed.line())
    tasks = [t for t in pack.tasks() if t.substrate is Substrate.WEB and t.split.value == "dev"]
    with pack.provision(tasks[0], 0, pack.trial_params(tasks[0], 0)) as episode:
        shots = []
        for _ in range(20):
            t0 = time.perf_counter()
            episode.env.screenshot()
            shots.append(time.perf_counter() - t0)
    print(f"  screenshot (1024x640 PNG)                   {_ms(shots)}  {_load()}")


def arms(pack: ClinicProvider, trials: int, workers: int) -> None:
    """The three arms on web (parallel) beside the API level (serial)."""
    web = [t for t in pack.tasks() if t.substrate is Substrate.WEB and t.split.value == "dev"]
    api = [t for t in pack.tasks() if t.substrate is Substrate.API and t.split.value == "dev"]
    total = 0.0
    for arm in ARMS:
        sut = get_baseline(arm, pack)
        t0 = time.perf_counter()
        run = evaluate_parallel(sut, pack, trials=trials, tasks=web, workers=workers)
        took = time.perf_counter() - t0
        total += took
        on_api = summarize(episode_frame(evaluate(sut, pack, trials=trials, tasks=api).rows))
        on_web = summarize(episode_frame(run.rows))
        print(
            f"{arm:20s} web SWER {on_web.swer.numerator}/{on_web.swer.denominator}"
            f" (api {on_api.swer.numerator}/{on_api.swer.denominator}), over-halt"
            f" {on_web.over_halt.numerator} (api {on_api.over_halt.numerator}),"
            f" dropped {len(run.dropped)}; {len(run.rows)} web episodes in {took:6.1f} s  {_load()}"
        )
    print(f"three arms on web, {trials} trials, {workers} workers: {total:6.1f} s  {_load()}")


def mcp_overhead(n: int) -> None:
    """A screenshot over MCP stdio minus a screenshot in process (same browser, same page)."""
    sys.path.insert(0, str(ROOT / "examples"))
    from mcp_screen_agent import McpEpisode

    records = tempfile.mkdtemp(prefix="effectbench-bench-records-")  # a fresh cell: attempt 1
    command = [sys.executable, "-m", "effectbench.cli", "mcp", "--task", "clean_draft"]
    command += ["--record-dir", records]
    episode = McpEpisode(command)
    try:
        episode.call("task")
        remote = []
        for _ in range(n):
            t0 = time.perf_counter()
            episode.call("task")  # no screen work: stdio, JSON-RPC, the episode thread's hop
            remote.append(time.perf_counter() - t0)
        shots = []
        for _ in range(n):
            t0 = time.perf_counter()
            episode.call("screenshot")
            shots.append(time.perf_counter() - t0)
        episode.call("report", {"success": False, "halted": True, "message": "bench"})
    finally:
        episode.close()
        shutil.rmtree(records, ignore_errors=True)
    print(f"MCP call overhead (task: no screen work)       {_ms(remote)}  {_load()}")
    print(f"MCP screenshot call (capture + base64 + stdio) {_ms(shots)}  {_load()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--runs", type=int, default=2, help="timed runs of the cadence")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="time the run cadence over one task at 3 trials, not the whole dev split, and "
        "skip the three-arm run",
    )
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with ClinicProvider() as pack:
        episodes(pack, args.runs, args.quick)
        shared_browser().close()
        mcp_overhead(50)
        if not args.quick:
            arms(pack, args.trials, args.workers)
    shared_browser().close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
