"""Benchmark ``effectbench rank submissions`` after ``make site``: every board the site shows,
from the verifier reports the site build cached.

``rank`` verifies through the site build's own function and reads its content-keyed report
cache (the bundle's bytes, the packs, the code, the trust root), so after ``make site`` it
re-runs nothing. The script runs the installed command as a user types it (output to a pipe,
no progress bar), several times, and prints each run's wall time and CPU time (user + system
of the command and its children: load-independent), how many reports it found cached (the
cache folder's entries before and after: a run that verified something adds one), and the load
average before and after (the machine is shared). The target is under 10 s on a two-core
machine.

With ``--cold`` it first empties a private cache (``XDG_CACHE_HOME`` in a temporary folder) and
times the first run too: every bundle verified afresh (a shipped baseline judged by its
reproduction record, or re-run where it has none).

    .venv/bin/python benchmarks/bench_rank.py [--runs N] [--cold] [--submissions DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 10.0


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _reports(cache_home: Path) -> int:
    folder = cache_home / "effectbench" / "site" / "reports"
    return len(list(folder.glob("*.json"))) if folder.is_dir() else 0


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """Return wall seconds, CPU seconds and the exit status of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        sys.exit(f"rank failed ({done.returncode}): {done.stderr.decode()[-400:]}")
    return wall, cpu, done.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="timed runs (default 3)")
    parser.add_argument("--cold", action="store_true", help="start from an empty private cache")
    parser.add_argument("--submissions", type=Path, default=ROOT / "submissions")
    args = parser.parse_args()
    script = Path(sys.executable).with_name("effectbench")
    if not script.is_file():
        sys.exit(f"{script} not found: run `make setup` first")
    env = dict(os.environ)
    tmp = None
    if args.cold:
        tmp = tempfile.TemporaryDirectory(prefix="bench-rank-")
        env["XDG_CACHE_HOME"] = tmp.name
    cache_home = Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    argv = [str(script), "rank", str(args.submissions)]
    print(f"effectbench rank {args.submissions} (cache: {cache_home / 'effectbench' / 'site'})")
    if not args.cold and _reports(cache_home) == 0:
        print("  no cached report: run `make site` first (or pass --cold to time a cold run)")
    walls: list[float] = []
    try:
        for i in range(args.runs + (1 if args.cold else 0)):
            cached, load = _reports(cache_home), _load()
            wall, cpu, status = _run(argv, env)
            added = _reports(cache_home) - cached
            label = "cold" if args.cold and i == 0 else f"run {len(walls) + 1}"
            if not (args.cold and i == 0):
                walls.append(wall)
            print(
                f"  {label:>6}: {wall:6.2f} s wall, {cpu:6.2f} s CPU, exit {status}; "
                f"{cached} reports cached before, {added} verified and added; "
                f"load {load} -> {_load()}"
            )
    finally:
        if tmp is not None:
            tmp.cleanup()
    best = min(walls) if walls else float("nan")
    verdict = "under" if best < TARGET_S else "OVER"
    print(f"  fastest warm run {best:.2f} s: {verdict} the {TARGET_S:.0f} s target")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
