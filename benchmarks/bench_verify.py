"""Benchmark ``effectbench verify`` on 9,000 and 1,000,000-row bundles.

Prints, per size: the time to just parse ``episodes.jsonl`` (read + orjson per
line), the time of a full verification (every check, claims recomputed), their
ratio, and the CPU seconds (forked workers included) and peak RSS of each
(measured in a fresh child process). CPU seconds vary less than wall time when
others share the machine.

The bundles are synthetic but made of real rows: the shipped baselines' rows of
each task, renumbered into many trials of one custom arm, with the claims
computed by ``summarize``. Trials stay within the bundle format's cap
(``MAX_TRIALS``): up to 90,000 rows are MockMed's nine tasks, more are the
clinic's 108 dev tasks (27 on each of its four substrates).
Run: ``python benchmarks/bench_verify.py``
(``--sizes 9000`` for the small one only; ``--workdir DIR`` keeps the bundles there and
reuses them on the next run; ``--repeat N`` reports the best of N runs, since the
machine's two cores are shared). The load average is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from effectbench import SPEC_VERSION
from effectbench.baselines import baseline_names, get_baseline
from effectbench.bundle import (
    EPISODES_FILE,
    MAX_TRIALS,
    SUBMISSION_FILE,
    Submission,
    iter_episode_lines,
)
from effectbench.manifest import fingerprint
from effectbench.packs import get_pack
from effectbench.run.runner import evaluate
from effectbench.schema import TaskSpec
from effectbench.seam import BenchmarkProvider
from verifier.rows import RowChecker

ARM = "synthetic_agent"


def _pack_for(n_rows: int) -> tuple[BenchmarkProvider, list[TaskSpec]]:
    """The pack whose dev split holds ``n_rows`` in at most MAX_TRIALS trials per task.

    MockMed's nine tasks hold up to 90,000 rows; beyond that the clinic's dev tasks on
    all of its substrates (27 per substrate, 108 in all) hold up to 1,080,000.
    """
    for name in ("mockmed", "clinic"):
        pack = get_pack(name)
        tasks = [t for t in pack.tasks() if t.split.value == "dev"]
        if n_rows <= len(tasks) * MAX_TRIALS:
            return pack, tasks
        getattr(pack, "close", lambda: None)()
    raise SystemExit(f"{n_rows} rows do not fit any pack's dev split at {MAX_TRIALS} trials")


def _templates(pack: BenchmarkProvider, tasks: list[TaskSpec]) -> dict[str, list[dict[str, Any]]]:
    """Real rows of the shipped baselines for every task: each run where it runs fastest.

    A task variant on a screen substrate shares its base task's effect and fault, so
    its rows are the base task's run by the API-level baselines, renamed: a browser or
    an X session per template row would take minutes and change nothing the verifier
    reads.
    """
    defaults = set(getattr(pack, "default_substrates", ()))
    base = {t.task_id: t for t in pack.tasks() if not defaults or t.substrate in defaults}
    own = [t for t in tasks if t.task_id in base]
    rows: dict[str, list[dict[str, Any]]] = {t.task_id: [] for t in own}
    for name in baseline_names(pack):
        for record in evaluate(get_baseline(name, pack), pack, trials=1, tasks=own).rows:
            rows[record.task_id].append(record.to_row())
    templates: dict[str, list[dict[str, Any]]] = {}
    for task in tasks:
        source = rows[task.task_id.split("@", 1)[0]]
        templates[task.task_id] = [
            {**row, "task_id": task.task_id, "substrate": task.substrate.value} for row in source
        ]
    return templates


def build_bundle(out: Path, n_rows: int) -> Path:
    """Write a bundle of about ``n_rows`` real-looking rows into ``out``; return it."""
    pack, tasks = _pack_for(n_rows)
    templates = _templates(pack, tasks)
    trials = max(3, n_rows // len(tasks))  # at most n_rows: the verifier caps rows
    out.mkdir(parents=True)
    with (out / EPISODES_FILE).open("wb") as fh:
        for task in tasks:
            options = templates[task.task_id]
            for trial in range(trials):
                row = dict(options[(trial * 7 + len(task.task_id)) % len(options)])
                row["arm"] = ARM
                row["trial"] = trial
                row["seed"] = trial
                row["episode_id"] = f"{ARM}::{task.task_id}::t{trial}"
                row["cost_usd"] = round(0.001 * (trial % 5), 6)
                row["latency_s"] = round(0.5 + (trial % 11) * 0.1, 6)
                fh.write(orjson.dumps(row) + b"\n")
    # the claims: recompute exactly as the verifier will (through summarize)
    from effectbench.metrics import summarize
    from verifier.report import FindingSink

    sink = FindingSink()
    checker = RowChecker(sink, EPISODES_FILE, tasks=None, trials=None, seeds=None)
    for number, data in iter_episode_lines(out / EPISODES_FILE):
        assert data is not None
        checker.add(number, orjson.loads(data))
    results = summarize(checker.frame())
    sub = Submission.model_validate(
        {
            "spec_version": SPEC_VERSION,
            "system": {"name": "Synthetic agent (benchmark)"},
            "pack": {"name": pack.name, "fingerprint": fingerprint(pack.manifest())},
            "trials_per_task": trials,
            "seeds": list(range(trials)),
            "environment": {"python": "bench", "platform": "bench"},
            "results": results,
        }
    )
    (out / SUBMISSION_FILE).write_text(json.dumps(sub.to_json(), indent=2))
    getattr(pack, "close", lambda: None)()
    return out


def _child(mode: str, bundle: Path) -> None:
    from verifier.api import VerifyOptions, verify_bundle  # imports are not timed

    start = time.perf_counter()
    cpu_start = time.process_time()
    if mode == "parse":
        n = 0
        for _, data in iter_episode_lines(bundle / EPISODES_FILE):
            orjson.loads(data)  # type: ignore[arg-type]
            n += 1
        status = f"{n} rows"
    else:
        report = verify_bundle(bundle, VerifyOptions(allow_unsigned=True))
        status = f"{report.status.value}, {report.n_rows} rows"
        assert report.accepted, report.finding_ids()
    elapsed = time.perf_counter() - start
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = time.process_time() - cpu_start + children.ru_utime + children.ru_stime
    # VmHWM is this process's own peak (ru_maxrss would include the parent's before exec);
    # forked workers are added from RUSAGE_CHILDREN
    status_text = Path("/proc/self/status").read_text()
    hwm_kib = int(next(x for x in status_text.splitlines() if x.startswith("VmHWM")).split()[1])
    children_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    rss_mib = (hwm_kib + children_kib) / 1024
    print(json.dumps({"seconds": elapsed, "cpu": cpu, "rss_mib": rss_mib, "status": status}))


def _run_child(mode: str, bundle: Path) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(bundle)],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _run_cli(bundle: Path) -> dict[str, Any]:
    """Time ``effectbench verify`` on ``bundle`` from the command line (start-up included)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "effectbench.cli", "verify", "--allow-unsigned", str(bundle)],
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"effectbench verify exited {done.returncode}: {done.stderr[-500:]}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {"seconds": seconds, "cpu": cpu}


def _profile(bundle: Path) -> None:
    """Print where the verification time goes (top functions by own time)."""
    import cProfile
    import pstats

    from verifier.api import VerifyOptions, verify_bundle

    prof = cProfile.Profile()
    prof.enable()
    verify_bundle(bundle, VerifyOptions(allow_unsigned=True))
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(8)


def main() -> int:
    """Build the bundles, time parsing and verification, print the figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="9000,1000000")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "BUNDLE"))
    parser.add_argument("--profile", action="store_true", help="profile the smallest size")
    parser.add_argument("--workdir", type=Path, help="keep (and reuse) the bundles here")
    parser.add_argument("--repeat", type=int, default=1, help="best of N runs")
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], Path(args.child[1]))
        return 0
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"load average before: {_loadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        root = args.workdir or Path(tmp)
        for n in sizes:
            t0 = time.perf_counter()
            bundle = root / f"b{n}"
            if not (bundle / "submission.json").is_file():
                build_bundle(bundle, n)
            size_mib = (bundle / EPISODES_FILE).stat().st_size / 2**20
            built = time.perf_counter() - t0
            runs = max(args.repeat, 1)
            parse = min((_run_child("parse", bundle) for _ in range(runs)), key=_seconds)
            verify = min((_run_child("verify", bundle) for _ in range(runs)), key=_seconds)
            ratio = verify["seconds"] / parse["seconds"]
            print(
                f"{n:>9} rows ({size_mib:,.0f} MiB, ready in {built:.1f} s): "
                f"parse {parse['seconds']:.2f} s ({parse['cpu']:.2f} s CPU, "
                f"{parse['rss_mib']:.0f} MiB peak)  verify {verify['seconds']:.2f} s "
                f"({verify['cpu']:.2f} s CPU, {verify['rss_mib']:.0f} MiB peak)  "
                f"ratio {ratio:.1f}x  [{verify['status']}]"
            )
            cli = min((_run_cli(bundle) for _ in range(runs)), key=_seconds)
            print(
                f"{'':>9} effectbench verify from the command line: {cli['seconds']:.2f} s"
                f" ({cli['cpu']:.2f} s CPU), {cli['seconds'] / verify['seconds']:.1f}x the"
                f" in-process time ({cli['cpu'] / verify['cpu']:.1f}x its CPU)"
                f"  [load average {_loadavg().split()[0]}]"
            )
            if args.profile and n == min(sizes):
                _profile(bundle)
    print(f"load average after: {_loadavg()}")
    return 0


def _seconds(result: dict[str, Any]) -> float:
    return float(result["seconds"])


def _loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:  # pragma: no cover - not Linux
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
