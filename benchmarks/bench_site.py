"""Benchmark the site build: 1,000 synthetic submissions (10 trials each), then one more.

Prints the wall time of a cold build (empty chart cache, no previous site), of a
rebuild after adding one submission (warm chart cache), the peak memory of each
build process (its pool workers included), and the build's own per-stage times,
so it says what dominates. Synthetic submissions are unsigned, so they are built
with ``--allow-unsigned`` (previews: verified and rendered like ranked ones, not ranked).

    .venv/bin/python benchmarks/bench_site.py [--n 1000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import platform
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from effectbench.baselines import get_baseline
from effectbench.bundle import Submission, write_bundle
from effectbench.manifest import fingerprint
from effectbench.metrics import episode_frame, summarize
from effectbench.packs import get_pack
from effectbench.runner import evaluate

ROOT = Path(__file__).resolve().parents[1]
TRIALS = 10
ARMS = ("screen_only", "effect_verified", "always_halt", "retry_on_error")


def baseline_rows() -> dict[str, list[dict[str, Any]]]:
    """Run the four shipped baselines once; their rows are the material of every synthetic run."""
    pack = get_pack("mockmed")
    return {
        n: [r.to_row() for r in evaluate(get_baseline(n, pack), pack, trials=TRIALS).rows]
        for n in ARMS
    }


def synthetic_bundle(out: Path, i: int, rows_by_arm: dict[str, list[dict[str, Any]]]) -> Path:
    """Write submission ``i``: per (task, trial) the real row of a randomly chosen baseline."""
    rng = random.Random(i)
    weights = [rng.random() for _ in ARMS]
    name = f"synthetic-{i:04d}"
    rows = []
    for k in range(len(rows_by_arm[ARMS[0]])):
        arm = rng.choices(ARMS, weights)[0]
        row = dict(rows_by_arm[arm][k])
        row["arm"] = name
        row["episode_id"] = f"{name}::{row['task_id']}::t{row['trial']}"
        rows.append(row)
    pack = get_pack("mockmed")
    sub = Submission(
        spec_version="1.0.0",
        system={"name": name, "description": "synthetic mix of baseline rows (benchmark)"},
        pack={"name": "mockmed-anchor", "fingerprint": fingerprint(pack.manifest())},
        trials_per_task=TRIALS,
        seeds=list(range(TRIALS)),
        environment={"python": platform.python_version(), "platform": sys.platform},
        results=summarize(episode_frame(rows)),
    )
    return write_bundle(out / f"2026-01-01_{name}", sub, rows)


def run_build(subs: Path, out: Path, cache: Path) -> tuple[float, float, str]:
    """Build in a child process; return (seconds, peak RSS of the build in MiB, its output)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    cmd = [sys.executable, "-m", "effectbench.cli", "site", "build", "--submissions", str(subs)]
    cmd += ["--out", str(out), "--root", str(ROOT), "--cache-dir", str(cache), "--allow-unsigned"]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"build failed:\n{proc.stdout}\n{proc.stderr}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, max(peak, before) / 1024, proc.stdout


def main() -> int:
    """Generate, build cold, add one, rebuild; print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-site-"))
    subs, out, cache = work / "submissions", work / "public", work / "cache"
    for p in (out, cache):
        shutil.rmtree(p, ignore_errors=True)
    material = baseline_rows()
    if args.keep and subs.is_dir() and len(list(subs.iterdir())) == args.n:
        print(f"reusing the {args.n} synthetic bundles in {subs}")
    else:
        shutil.rmtree(subs, ignore_errors=True)
        subs.mkdir(parents=True)
        t = time.perf_counter()
        for i in range(args.n):
            synthetic_bundle(subs, i, material)
        print(
            f"generated {args.n} synthetic bundles ({TRIALS} trials, 90 rows each) "
            f"in {time.perf_counter() - t:.1f}s"
        )

    seconds, peak, output = run_build(subs, out, cache)
    print(f"\ncold build of {args.n} submissions: {seconds:.1f}s wall, peak RSS {peak:.0f} MiB")
    print("  " + "\n  ".join(output.strip().splitlines()))
    synthetic_bundle(subs, args.n, material)
    seconds2, peak2, output2 = run_build(subs, out, cache)
    print(f"\nrebuild after adding one: {seconds2:.1f}s wall, peak RSS {peak2:.0f} MiB")
    print("  " + "\n  ".join(output2.strip().splitlines()))
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    print(f"\nsite: {sum(1 for _ in out.rglob('*.html'))} HTML pages, {size / 2**20:.0f} MiB")
    print("targets: cold <= 60 s and < 2 GB; rebuild after one more <= 15 s")
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
