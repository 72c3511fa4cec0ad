"""Benchmark the ticketing pack's episode set-up on PostgreSQL beside the SQLite clinic's.

Prints figures with the load average, asserts nothing. Target from the issue: the median
episode set-up on PostgreSQL (a fresh database cloned from the template, the app's and the
oracle's connections, the service mounted) under 150 ms. Also printed: the bare clone, the
teardown (drop), the whole episode (screen_only, oracle before and after), the cluster's
start and the provider's start (cluster, template, live audit).

    .venv/bin/python benchmarks/bench_ticketing.py [--episodes 60]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections import defaultdict

from effectbench_ticketing import TicketingProvider
from effectbench_ticketing.cluster import Cluster
from effectbench_ticketing.db import TEMPLATE

from effectbench.api import Substrate, get_baseline
from effectbench.baselines import following
from effectbench.packs.clinic import ClinicProvider
from effectbench.run.view import agent_view


def _ms(values: list[float]) -> str:
    values = sorted(values)
    p95 = values[min(len(values) - 1, int(0.95 * len(values)))]
    return f"median {statistics.median(values) * 1000:7.2f} ms  p95 {p95 * 1000:7.2f} ms"


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def episodes(pack: TicketingProvider | ClinicProvider, n: int) -> dict[str, list[float]]:
    """Time set-up, the whole episode and teardown of ``n`` screen_only episodes on api."""
    sut = get_baseline("screen_only", pack)
    tasks = [t for t in pack.tasks() if t.substrate is Substrate.API]
    out: dict[str, list[float]] = defaultdict(list)
    for i in range(n):
        task = tasks[i % len(tasks)]
        params = pack.trial_params(task, i)
        t0 = time.perf_counter()
        with pack.provision(task, i, params) as episode:
            t1 = time.perf_counter()
            before = episode.oracle.snapshot()
            with following(task):
                sut.run(agent_view(task, params, i, episode.env), episode.env, params)
            episode.oracle.judge(before)
            t2 = time.perf_counter()
        t3 = time.perf_counter()
        out["set-up (fresh database, connect, mount)"].append(t1 - t0)
        out["teardown"].append(t3 - t2)
        out["episode total"].append(t3 - t0)
    return out


def clones(cluster: Cluster, n: int) -> dict[str, list[float]]:
    """Time the bare ``CREATE DATABASE ... TEMPLATE`` and ``DROP DATABASE``."""
    out: dict[str, list[float]] = defaultdict(list)
    for i in range(n):
        t0 = time.perf_counter()
        cluster.clone(f"bench_{i}", TEMPLATE)
        t1 = time.perf_counter()
        cluster.drop(f"bench_{i}")
        out["CREATE DATABASE ... TEMPLATE tpl"].append(t1 - t0)
        out["DROP DATABASE ... WITH (FORCE)"].append(time.perf_counter() - t1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=60)
    args = parser.parse_args()
    print(_load(), "(figures on a shared machine: they move with the load)")

    t0 = time.perf_counter()
    cluster = Cluster().start()
    started = time.perf_counter() - t0
    cluster.stop()
    print(f"PostgreSQL cluster start (initdb + server up): {started * 1000:7.0f} ms")

    t0 = time.perf_counter()
    with TicketingProvider() as ticketing:
        print(
            f"ticketing provider start (cluster, template, live audit): "
            f"{(time.perf_counter() - t0) * 1000:7.0f} ms   {_load()}"
        )
        for name, values in clones(ticketing.cluster, args.episodes).items():
            print(f"  postgres  {name:42s} {_ms(values)}")
        for name, values in episodes(ticketing, args.episodes).items():
            print(f"  postgres  {name:42s} {_ms(values)}")
    print(_load())
    with ClinicProvider() as clinic:
        for name, values in episodes(clinic, args.episodes).items():
            print(f"  sqlite    {name:42s} {_ms(values)}")
    print(_load())


if __name__ == "__main__":
    main()
