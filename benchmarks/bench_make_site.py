"""Benchmark what `make site` costs after set-up: the first build from the repository's
``submissions/`` (an empty cache: every bundle verified, every API row and a fixed sample of
each screen bundle's rows re-run in Chromium, under Xvfb and through Xvnc) and a rebuild with
nothing new (every report, chart and page from the cache). ``--submissions DIR`` builds
another folder of bundles instead (the smallest run, in the tests, builds two of them);
``--fresh`` builds as the deploy job does (every bundle verified and every pack audited anew).

Each build is ``effectbench site build`` in a child process with a private cache folder, so
the user's own cache is neither used nor touched. Prints wall and CPU seconds (user + system of
the build and everything it started) and the load average before and after each build (the
machine may be shared). Targets: first build under 180 s, rebuild under 20 s.

    .venv/bin/python benchmarks/bench_make_site.py [--rebuilds 2] [--submissions DIR] [--fresh]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _load() -> str:
    return Path("/proc/loadavg").read_text().strip()


def build(
    out: Path, cache: Path, submissions: Path = ROOT / "submissions", *, fresh: bool = False
) -> tuple[float, float, str]:
    """Run one build of ``submissions`` (``fresh``: with ``--fresh``); return (wall s, CPU s,
    the build's summary)."""
    cmd = [sys.executable, "-m", "effectbench.cli", "site", "build"]
    cmd += ["--submissions", str(submissions), "--out", str(out)]
    cmd += ["--root", str(ROOT), "--cache-dir", str(cache)]
    cmd += ["--records", str(ROOT / "reproductions")] + (["--fresh"] if fresh else [])
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_before = usage.ru_utime + usage.ru_stime
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"site build failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, usage.ru_utime + usage.ru_stime - cpu_before, done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rebuilds", type=int, default=2, help="rebuilds after the first")
    parser.add_argument(
        "--submissions",
        type=Path,
        default=ROOT / "submissions",
        help="the folder of bundles to build (default: the repository's)",
    )
    parser.add_argument("--fresh", action="store_true", help="build with --fresh (the deploy job)")
    args = parser.parse_args()
    if not args.submissions.is_dir():
        parser.error(f"--submissions {args.submissions}: no such folder")
    work = Path(tempfile.mkdtemp(prefix="bench-make-site-"))
    try:
        out, cache = work / "public", work / "cache"
        bundles = sorted(p.name for p in args.submissions.iterdir() if p.is_dir())
        print(f"{len(bundles)} bundles in {args.submissions}")
        print(f"load average before the first build: {_load()}")
        wall, cpu, summary = build(out, cache, args.submissions, fresh=args.fresh)
        print(f"first build (empty cache): {wall:.1f}s wall, {cpu:.1f}s CPU (target < 180 s)")
        print("  " + "\n  ".join(summary.strip().splitlines()))
        print(f"load average after: {_load()}")
        for i in range(args.rebuilds):
            wall, cpu, _ = build(out, cache, args.submissions, fresh=args.fresh)
            print(
                f"rebuild {i + 1} (nothing new): {wall:.1f}s wall, {cpu:.1f}s CPU "
                f"(target < 20 s); load average after: {_load()}"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
