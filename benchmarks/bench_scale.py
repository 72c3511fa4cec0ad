"""Benchmark durable and distributed runs: Dask overhead, journal cost, resume of a big journal.

Prints figures, asserts nothing. Targets from issue 14:

* per-episode overhead of ``--executor dask`` over the local pool on the clinic
  pack at most 10 ms;
* journal cost per row at most 1 ms;
* resume of a 100,000-episode journal (synthetic rows) finds the missing cells
  in at most 2 s.

Per-episode cost is the marginal cost: the wall time of a large run minus that
of a small one, divided by the episodes between them, so the start-up of pools,
clusters and packs (reported separately) is not spread over the episodes. The
Dask cluster is a ``LocalCluster`` on 127.0.0.1 with as many single-thread
worker processes as the pool has.

    .venv/bin/python benchmarks/bench_scale.py [--workers 2] [--repeat 3] [--rows 2000]
        [--journal-episodes 100000] [--workdir DIR] [--trials 2,10] [--tasks N]
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

import orjson
from distributed import LocalCluster

from effectbench.baselines import get_baseline
from effectbench.packs.clinic import ClinicProvider
from effectbench.run.executors import Executor, execute
from effectbench.run.executors.dask_cluster import DaskExecutor
from effectbench.run.executors.local import LocalExecutor
from effectbench.run.journal import FORMAT, FORMAT_VERSION, Journal, read_journal
from effectbench.run.runner import Cell, RunPlan
from effectbench.schema import EpisodeRecord, TaskSpec
from effectbench.variants import tasks_on

ARM = "screen_only"


def _timed(plan: RunPlan, executor: Executor) -> tuple[float, float]:
    """Return the wall seconds of running ``plan`` and this process's CPU seconds meanwhile."""
    w0, c0 = time.perf_counter(), time.process_time()
    execute(plan, executor)
    return time.perf_counter() - w0, time.process_time() - c0


def api_tasks(pack: ClinicProvider, limit: int | None) -> list[TaskSpec]:
    """The clinic's API-level tasks (no screen start-up), the first ``limit`` of them if given."""
    tasks = list(tasks_on(pack, pack.default_substrates))
    return tasks if limit is None else tasks[:limit]


def marginal(
    pack: ClinicProvider,
    executor: Executor,
    small: int,
    large: int,
    repeat: int,
    limit: int | None,
) -> tuple[float, float, float]:
    """Return per-episode wall and driver-CPU seconds beyond start-up, and start-up seconds."""
    sut = get_baseline(ARM, pack)
    tasks = api_tasks(pack, limit)
    plans = {n: RunPlan.build(sut, pack, trials=n, tasks=tasks) for n in (small, large)}
    runs: dict[int, list[tuple[float, float]]] = {small: [], large: []}
    for _ in range(repeat):
        for n, plan in plans.items():
            runs[n].append(_timed(plan, executor))
    cells = {n: len(plan.cells()) for n, plan in plans.items()}
    (w_small, c_small), (w_large, c_large) = (min(runs[n]) for n in (small, large))
    between = cells[large] - cells[small]
    per_episode = (w_large - w_small) / between  # from the least disturbed runs
    return per_episode, (c_large - c_small) / between, w_small - per_episode * cells[small]


def bench_executors(workers: int, repeat: int, small: int, large: int, limit: int | None) -> None:
    """Print the per-episode cost of serial, the local pool and Dask on the clinic pack."""
    with ClinicProvider() as pack:
        api = len(api_tasks(pack, limit))
        print(f"clinic pack (api level), {ARM}, {api} tasks, trials {small} and {large}:")
        serial, _, _ = marginal(pack, LocalExecutor(1), small, large, repeat, limit)
        print(f"  serial (this process)     {serial * 1000:7.2f} ms/episode")
        pool, pool_cpu, pool_start = marginal(
            pack, LocalExecutor(workers), small, large, repeat, limit
        )
        print(
            f"  local pool, {workers} workers     {pool * 1000:7.2f} ms/episode  "
            f"driver CPU {pool_cpu * 1000:5.2f} ms/episode  "
            f"(start-up per run {pool_start:5.2f} s: forkserver, imports, pack per worker)"
        )
        t0 = time.perf_counter()
        with LocalCluster(  # type: ignore[no-untyped-call]
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
            worker_dashboard_address="127.0.0.1:0",
            silence_logs=logging.CRITICAL,
        ) as cluster:
            cluster_start = time.perf_counter() - t0
            dask = DaskExecutor(cluster.scheduler_address)
            warm = api_tasks(pack, limit)
            execute(RunPlan.build(get_baseline(ARM, pack), pack, trials=1, tasks=warm), dask)
            on_dask, dask_cpu, dask_start = marginal(pack, dask, small, large, repeat, limit)
        print(
            f"  dask, {workers} workers           {on_dask * 1000:7.2f} ms/episode  "
            f"driver CPU {dask_cpu * 1000:5.2f} ms/episode, scheduler included  "
            f"(start-up per run {dask_start:5.2f} s: connect, worker check, submit; "
            f"cluster {cluster_start:4.2f} s, started once)"
        )
        print(
            f"  dask over the local pool  {(on_dask - pool) * 1000:+7.2f} ms/episode "
            "(target <= 10 ms)"
        )


def _rows(n: int) -> list[EpisodeRecord]:
    with ClinicProvider() as pack:
        tasks = api_tasks(pack, n)  # fewer rows than tasks: only as many tasks as rows
        plan = RunPlan.build(
            get_baseline(ARM, pack), pack, trials=max(1, n // len(tasks) + 1), tasks=tasks
        )
        run = execute(plan, LocalExecutor(1))
    return run.rows[:n]


def bench_journal(rows: list[EpisodeRecord], workdir: Path) -> None:
    """Print the cost of journalling one row: building the line, then write + fsync."""
    with ClinicProvider() as pack:
        plan = RunPlan.build(get_baseline(ARM, pack), pack, trials=max(r.trial for r in rows) + 1)
        path = workdir / "bench.journal"
        path.unlink(missing_ok=True)
        whole: list[float] = []
        encode: list[float] = []
        bare: list[float] = []
        probe = os.open(workdir / "probe", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        with Journal.create(path, plan) as journal:
            for row in rows:
                cell = Cell(row.task_id, row.trial, row.seed or 0)
                t0 = time.perf_counter()
                journal.append(cell, row)
                t1 = time.perf_counter()
                line = orjson.dumps({"run": journal.run_id, "row": row.to_row()})
                t2 = time.perf_counter()
                os.write(probe, line + b"\n")  # the device alone: the same bytes, write + fsync
                os.fsync(probe)
                t3 = time.perf_counter()
                whole.append(t1 - t0)
                encode.append(t2 - t1)
                bare.append(t3 - t2)
        os.close(probe)
        size = path.stat().st_size / len(rows)
        path.unlink()
    whole.sort()
    p95 = whole[int(0.95 * len(whole))]
    median, enc, device = (statistics.median(v) for v in (whole, encode, bare))
    print(f"journal, {len(rows)} clinic rows of {size:.0f} bytes in {workdir}:")
    print(
        f"  per row  median {median * 1000:6.3f} ms  p95 {p95 * 1000:6.3f} ms  (target <= 1 ms); "
        f"building the line {enc * 1000:6.3f} ms; a bare write + fsync of the same bytes "
        f"{device * 1000:6.3f} ms (the device)"
    )


def bench_resume(row: EpisodeRecord, episodes: int, workdir: Path) -> None:
    """Print how long finding the missing cells of a big synthetic journal takes."""
    trials = 100
    tasks = [f"synthetic::task-{i:05d}" for i in range(episodes // trials)]
    cells = [Cell(t, trial, trial) for t in tasks for trial in range(trials)]
    rng = random.Random(14)
    missing = set(rng.sample(range(len(cells)), len(cells) // 100))
    run = "0" * 32
    header = {
        "journal": FORMAT,
        "version": FORMAT_VERSION,
        "run": run,
        "started_at": "",
        "config": {
            "system": row.arm,
            "tasks": tasks,
            "trials": trials,
            "seeds": list(range(trials)),
        },
    }
    template = row.to_row()
    lines = [orjson.dumps(header)]
    for i, cell in enumerate(cells):
        if i in missing:
            continue
        template.update(task_id=cell.task_id, trial=cell.trial, seed=cell.seed)
        entry = {"run": run, "task_id": cell.task_id, "trial": cell.trial, "row": template}
        lines.append(orjson.dumps(entry))
    path = workdir / "big.journal"
    path.write_bytes(b"\n".join(lines) + b"\n" + lines[-1][:100])  # and a torn last line
    size = path.stat().st_size
    times, read_only = [], []
    for _ in range(3):
        t0 = time.perf_counter()
        path.read_bytes()
        t1 = time.perf_counter()
        contents = read_journal(path)
        found = contents.missing(cells)
        t2 = time.perf_counter()
        read_only.append(t1 - t0)
        times.append(t2 - t1)
    t0 = time.perf_counter()
    loaded = contents.outcomes()
    load = time.perf_counter() - t0
    path.unlink()
    assert len(found) == len(missing) and contents.torn_line is not None
    assert len(loaded) == len(cells) - len(missing)
    best, raw = min(times), min(read_only)
    print(
        f"resume of a {len(cells)}-episode journal ({size / 1e6:.0f} MB, {len(missing)} cells "
        f"missing, a torn last line):"
    )
    print(
        f"  finds the missing cells in {best:5.2f} s (target <= 2 s); reading the file "
        f"{raw:5.2f} s, splitting it and parsing each line's cell the rest"
    )
    print(
        f"  then loads and checks every journalled row for the bundle in {load:5.2f} s "
        f"({load / len(loaded) * 1e6:.0f} us a row, pydantic from JSON)"
    )


def main() -> None:
    """Run the three benchmarks and print their figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--journal-episodes", type=int, default=100_000)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument(
        "--trials",
        default="2,10",
        help="the small and the large run's trials, whose difference prices an episode",
    )
    parser.add_argument(
        "--tasks",
        type=int,
        default=None,
        help="run the executors on the first N API-level tasks only (default: every one)",
    )
    args = parser.parse_args()
    small, large = (int(n) for n in args.trials.split(","))
    if not 0 < small < large:
        parser.error(f"--trials {args.trials}: want SMALL,LARGE with 0 < SMALL < LARGE")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    if args.workdir is not None:
        Path(args.workdir).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.workdir) as scratch:
        workdir = Path(scratch)
        rows = _rows(args.rows)
        bench_journal(rows, workdir)
        bench_resume(rows[0], args.journal_episodes, workdir)
    if args.tasks is not None and args.tasks < 1:
        parser.error(f"--tasks {args.tasks}: want at least 1")
    bench_executors(args.workers, args.repeat, small, large, args.tasks)


if __name__ == "__main__":
    main()
