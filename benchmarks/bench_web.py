"""Speed of the clinic's web substrate: episodes, the three arms, MCP overhead.

Prints: the median web episode (context, page load, the arm's actions with
screenshots, oracle) and its phases; the three arms at 3 trials on the web dev
split with 2 workers (81 episodes each, 243 in all), with the ladder beside the
API level's; and the MCP overhead per tool call (a `screenshot` round trip over
stdio minus the same screenshot in process). Usage:

    .venv/bin/python benchmarks/bench_web.py [--trials 3] [--workers 2] [--quick]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from effectbench.baselines import get_baseline
from effectbench.metrics import episode_frame, summarize
from effectbench.packs.clinic import ClinicProvider
from effectbench.parallel import evaluate_parallel
from effectbench.runner import evaluate, run_episode
from effectbench.schema import Substrate
from effectbench.screens.browser import shared_browser

ARMS = ("screen_only", "effect_verified", "effect_verified_all")
ROOT = Path(__file__).resolve().parents[1]


def _ms(values: list[float]) -> str:
    values = sorted(values)
    p95 = values[min(len(values) - 1, int(0.95 * len(values)))]
    return f"median {statistics.median(values) * 1000:7.1f} ms  p95 {p95 * 1000:7.1f} ms"


def episodes(pack: ClinicProvider, n: int) -> None:
    """Time whole web episodes of screen_only, and the screenshot they are made of."""
    tasks = [t for t in pack.tasks() if t.substrate is Substrate.WEB and t.split.value == "dev"]
    sut = get_baseline("screen_only", pack)
    run_episode(sut, pack, tasks[0], 0, 0)  # the browser's launch is not an episode's cost
    times = []
    for i in range(n):
        task = tasks[i % len(tasks)]
        t0 = time.perf_counter()
        run_episode(sut, pack, task, 1, 1)
        times.append(time.perf_counter() - t0)
    print(f"web episode (screen_only, {n} episodes)      {_ms(times)}")
    with pack.provision(tasks[0], 0, pack.trial_params(tasks[0], 0)) as episode:
        shots = []
        for _ in range(20):
            t0 = time.perf_counter()
            episode.env.screenshot()
            shots.append(time.perf_counter() - t0)
    print(f"  screenshot (1024x640 PNG)                   {_ms(shots)}")


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
            f" dropped {len(run.dropped)}; {len(run.rows)} web episodes in {took:6.1f} s"
        )
    print(f"three arms on web, {trials} trials, {workers} workers: {total:6.1f} s")


def mcp_overhead(n: int) -> None:
    """A screenshot over MCP stdio minus a screenshot in process (same browser, same page)."""
    sys.path.insert(0, str(ROOT / "examples"))
    from mcp_screen_agent import McpEpisode

    command = [sys.executable, "-m", "effectbench.cli", "mcp", "--task", "clean_draft"]
    command += ["--record-dir", "/tmp/effectbench-bench-records"]
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
    print(f"MCP call overhead (task: no screen work)       {_ms(remote)}")
    print(f"MCP screenshot call (capture + base64 + stdio) {_ms(shots)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="skip the three-arm run")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with ClinicProvider() as pack:
        episodes(pack, args.episodes)
        shared_browser().close()
        mcp_overhead(50)
        if not args.quick:
            arms(pack, args.trials, args.workers)
    shared_browser().close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
