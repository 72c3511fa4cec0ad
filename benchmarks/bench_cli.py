"""Benchmark the command line's start: ``effectbench --version``, ``--help`` and a command's help.

For each, prints the median wall time of several runs of the installed console
script (beside a bare interpreter's start, the floor), how many modules the
command imports beyond a bare interpreter, and which heavy libraries it loaded.
A user's first command should answer in well under half a second.

Run: ``.venv/bin/python benchmarks/bench_cli.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

COMMANDS = (["--version"], ["--help"], ["run", "--help"], ["verify", "--help"], ["site", "--help"])
HEAVY = ("pandas", "numpy", "pyarrow", "altair", "sigstore", "pydantic", "mkdocs", "jinja2")
"""Libraries a start-up should not import (each costs tens to hundreds of milliseconds)."""

_COUNT = """
import contextlib, io, os, sys
base = set(sys.modules)
from effectbench.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main(sys.argv[1:])
    except SystemExit:
        pass
new = set(sys.modules) - base
heavy = sorted({m.split(".")[0] for m in new} & set(os.environ["BENCH_HEAVY"].split(",")))
print(len(new), " ".join(heavy) or "-")
"""


def _script() -> Path:
    script = Path(sys.executable).with_name("effectbench")
    if not script.is_file():
        sys.exit(f"{script} not found: run `make setup` first")
    return script


def _median_ms(argv: list[str], runs: int) -> tuple[float, float]:
    """Return the median wall time and the median CPU time (user + system) of ``argv``.

    On a busy machine the wall time waits for a core; the CPU time is what the
    command itself costs.
    """
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        walls.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return 1000 * statistics.median(walls), 1000 * statistics.median(cpus)


def _modules(args: list[str]) -> tuple[int, str]:
    out = subprocess.run(
        [sys.executable, "-c", _COUNT, *args],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "BENCH_HEAVY": ",".join(HEAVY)},
    ).stdout.split(maxsplit=1)
    return int(out[0]), out[1].strip()


def main() -> None:
    """Print the start-up figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="runs per command (default: 15)")
    opts = parser.parse_args()
    script = _script()
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs")
    wall, cpu = _median_ms([sys.executable, "-c", "pass"], opts.runs)
    print(f"bare interpreter start: {wall:.0f} ms wall, {cpu:.0f} ms CPU (the floor)")
    print(f"load average {os.getloadavg()[0]:.1f}; medians of {opts.runs} runs")
    for args in COMMANDS:
        wall, cpu = _median_ms([str(script), *args], opts.runs)
        n, heavy = _modules(args)
        print(
            f"effectbench {' '.join(args):<14} {wall:6.0f} ms wall {cpu:6.0f} ms CPU; "
            f"{n:4d} modules imported; heavy: {heavy}"
        )


if __name__ == "__main__":
    main()
