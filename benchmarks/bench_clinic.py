"""Benchmark the clinic pack: episode cost by phase, service reuse, whole-pack wall time.

Prints figures, asserts nothing, the load average beside each. Targets from
the issue: median episode (provision, act over HTTP, oracle audit) at most
20 ms; the whole pack for the three arms at 10 trials in at most 30 s with 2
workers. The episode as a user meets it is the start-to-start interval of
consecutive episodes of an ``effectbench run`` (``_cadence.py``); the phases
are timed one by one in this process.

    .venv/bin/python benchmarks/bench_clinic.py [--trials 10] [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import defaultdict
from typing import Any

from effectbench.baselines import following, get_baseline
from effectbench.kit.http import ServiceClient
from effectbench.packs.clinic import ClinicProvider, audit_pack
from effectbench.run.parallel import evaluate_parallel
from effectbench.run.runner import evaluate, run_episode
from effectbench.run.view import agent_view
from effectbench.schema import Substrate

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cadence import cadence  # noqa: E402

ARMS = ("screen_only", "effect_verified", "effect_verified_all")


def _load() -> str:
    return f"[load average {os.getloadavg()[0]:.1f}]"


def _ms(values: list[float]) -> str:
    values = sorted(values)
    p95 = values[min(len(values) - 1, int(0.95 * len(values)))]
    return f"median {statistics.median(values) * 1000:6.2f} ms  p95 {p95 * 1000:6.2f} ms  {_load()}"


def phases(pack: ClinicProvider, arm: str, trials: int) -> dict[str, list[float]]:
    """Time each phase of every episode of ``arm`` (the runner's steps, one by one)."""
    sut = get_baseline(arm, pack)
    out: dict[str, list[float]] = defaultdict(list)
    for task in [t for t in pack.tasks() if t.substrate is Substrate.API]:
        for seed in range(trials):
            params = pack.trial_params(task, seed)
            t0 = time.perf_counter()
            with pack.provision(task, seed, params) as episode:
                t1 = time.perf_counter()
                before = episode.oracle.snapshot()
                t2 = time.perf_counter()
                with following(task):
                    sut.run(agent_view(task, params, seed, episode.env), episode.env, params)
                t3 = time.perf_counter()
                episode.oracle.judge(before)
                t4 = time.perf_counter()
            t5 = time.perf_counter()
            out["provision (copy template, mount, connect)"].append(t1 - t0)
            out["oracle before-reading (mode=ro, all tables)"].append(t2 - t1)
            out["arm acts over HTTP (+ product readback)"].append(t3 - t2)
            out["oracle after-reading + delta audit"].append(t4 - t3)
            out["teardown (unmount, close, unlink)"].append(t5 - t4)
            out["episode total"].append(t5 - t0)
    return out


def episode_totals(pack: ClinicProvider, arm: str, trials: int) -> list[float]:
    """Time whole :func:`run_episode` calls (scoring and the row included)."""
    sut = get_baseline(arm, pack)
    times = []
    for task in [t for t in pack.tasks() if t.substrate is Substrate.API]:
        for seed in range(trials):
            t0 = time.perf_counter()
            run_episode(sut, pack, task, seed, seed)
            times.append(time.perf_counter() - t0)
    return times


def http_round_trip(pack: ClinicProvider, n: int = 200) -> list[float]:
    """Time one keep-alive GET against the record service."""
    task = pack.tasks()[0]
    with pack.provision(task, 0, pack.trial_params(task, 0)):
        assert pack.service.channel is not None
        client = ServiceClient(pack.service.channel)
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            client.call("GET", "/api/patients?name=Jonas%20Berg")
            times.append(time.perf_counter() - t0)
        client.close()
    return times


def ladder(runs: dict[str, Any]) -> None:
    """Print SWER k/n per arm and the categories each arm misses."""
    print("\nladder (SWER k/n; categories with a silent wrong effect)")
    for arm, run in runs.items():
        swer = [r for r in run.rows if r.outcome.value == "silent_wrong_effect"]
        cats = sorted({r.category.value for r in swer})
        halt = sum(r.outcome.value == "over_halt" for r in run.rows)
        print(
            f"  {arm:<20} SWER {len(swer):>3}/{len(run.rows)} = {len(swer) / len(run.rows):5.1%}"
            f"  over-halt {halt}/{len(run.rows)}  dropped {len(run.dropped)}"
        )
        print(f"  {'':<20} misses: {', '.join(cats) or 'none'}")


def main() -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    print(cadence("api episode (screen_only)", pack="clinic", substrate="api").line())
    t0 = time.perf_counter()
    audit_pack()
    took = time.perf_counter() - t0
    print(f"live adversarial audit (30 tasks x 11 probes, cold): {took:.2f} s  {_load()}")

    pack = ClinicProvider()
    print(f"record service GET round trip: {_ms(http_round_trip(pack))}")

    print(f"\nepisode phases, arm effect_verified_all, {args.trials} trials:")
    timed = phases(pack, "effect_verified_all", args.trials)
    total = statistics.median(timed["episode total"])
    for name, values in timed.items():
        share = statistics.median(values) / total if name != "episode total" else 1.0
        print(f"  {name:<46} {_ms(values)}  ({share:4.0%} of median)")
    parts = {k: statistics.median(v) for k, v in timed.items() if k != "episode total"}
    print(f"  dominated by: {max(parts, key=lambda k: parts[k])}")

    print("\nwhole run_episode (incl. scoring), re-pointed service vs a service per episode:")
    for arm in ARMS:
        print(f"  {arm:<20} shared service      {_ms(episode_totals(pack, arm, args.trials))}")
    per_episode = ClinicProvider(service_per_episode=True)
    print(
        f"  {'screen_only':<20} service per episode "
        f"{_ms(episode_totals(per_episode, 'screen_only', args.trials))}"
    )
    per_episode.close()

    t0 = time.perf_counter()
    api = [t for t in pack.tasks() if t.substrate is Substrate.API]
    serial = {a: evaluate(get_baseline(a, pack), pack, trials=args.trials, tasks=api) for a in ARMS}
    serial_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    parallel = {
        a: evaluate_parallel(
            get_baseline(a, pack), pack, trials=args.trials, tasks=api, workers=args.workers
        )
        for a in ARMS
    }
    parallel_s = time.perf_counter() - t0
    n = sum(len(r.rows) + len(r.dropped) for r in serial.values())
    print(f"\nwhole pack, {len(ARMS)} arms x {args.trials} trials = {n} episodes:")
    print(f"  serial, one process        {serial_s:6.2f} s  {_load()}")
    print(
        f"  --workers {args.workers} (pool per arm)  {parallel_s:6.2f} s "
        f"(includes worker start-up; workers adopt the parent's audit)  {_load()}"
    )
    same = all(
        [_strip(r) for r in serial[a].rows] == [_strip(r) for r in parallel[a].rows] for a in ARMS
    )
    print(f"  parallel rows identical to serial (timings aside): {same}")
    ladder(serial)
    pack.close()


def _strip(row: Any) -> dict[str, Any]:
    data: dict[str, Any] = row.to_row()
    for key in ("latency_s", "started_at", "finished_at"):
        data.pop(key)
    return data


if __name__ == "__main__":
    main()
