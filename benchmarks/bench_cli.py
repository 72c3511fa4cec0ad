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


def _median_ms(argv: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times)


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
    floor = _median_ms([sys.executable, "-c", "pass"], opts.runs)
    print(f"bare interpreter start: {floor:.0f} ms (the floor)")
    for args in COMMANDS:
        ms = _median_ms([str(script), *args], opts.runs)
        n, heavy = _modules(args)
        print(
            f"effectbench {' '.join(args):<14} {ms:6.0f} ms median of {opts.runs}; "
            f"{n} modules imported; heavy: {heavy}"
        )


if __name__ == "__main__":
    main()
