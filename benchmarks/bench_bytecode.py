"""Benchmark what keeping bytecode saves a process that imports the verifier and the site.

The installs skip byte-compiling (``pip install --no-compile``: scripts/setup-venv), so a
process compiles every module it imports that has no bytecode yet. Where
``PYTHONDONTWRITEBYTECODE`` is set (as on CI's machine) nothing it compiles is kept, and
every process the tests start compiles the same modules again; ``scripts/check`` unsets it.

This script starts ``--runs`` child processes that import what ``effectbench verify`` and
``effectbench site build`` import, in two ways, each with a bytecode folder of its own
(``PYTHONPYCACHEPREFIX``, an empty temporary folder, so neither reads the ``__pycache__``
folders already on this machine nor writes any):

* **none kept**: ``PYTHONDONTWRITEBYTECODE=1``, every process compiles from source;
* **kept**: the first process compiles and keeps the bytecode, the others read it.

It prints, for each way, the first process's and the median later process's wall and CPU
seconds, and the ratio of the medians.

Run: ``.venv/bin/python benchmarks/bench_bytecode.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

IMPORTS = ("effectbench.site.build", "verifier.api", "effectbench.cli")
"""What a verify or site-build process imports (the engine, the verifier, pandas, altair,
sigstore; mkdocs' plugins come later, at the build's own step)."""


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _start(env: dict[str, str], code: str) -> tuple[float, float]:
    """Run one process running ``code``; return (wall s, CPU s)."""
    cpu0, t0 = _child_cpu(), time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    wall, cpu = time.perf_counter() - t0, _child_cpu() - cpu0
    if done.returncode != 0:
        sys.exit(f"the import failed:\n{done.stderr}")
    return wall, cpu


def _way(name: str, keep: bool, runs: int, code: str) -> tuple[float, float]:
    """Time ``runs`` processes one way; print and return the later ones' medians."""
    with tempfile.TemporaryDirectory(prefix="eb-bytecode-") as prefix:
        env = {**os.environ, "PYTHONPYCACHEPREFIX": prefix}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        if not keep:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        timings = [_start(env, code) for _ in range(runs + 1)]
        kept = sum(1 for _ in Path(prefix).rglob("*.pyc"))
    (first_wall, first_cpu), later = timings[0], timings[1:]
    wall = statistics.median(t[0] for t in later)
    cpu = statistics.median(t[1] for t in later)
    print(
        f"{name:>10}: first process {first_wall:.2f}s wall {first_cpu:.2f}s CPU; "
        f"median of {len(later)} later {wall:.2f}s wall {cpu:.2f}s CPU ({kept} .pyc kept)"
    )
    return wall, cpu


def _load() -> str:
    return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="later processes per way")
    parser.add_argument(
        "--module",
        action="append",
        help=f"a module to import instead (repeatable; default: {', '.join(IMPORTS)})",
    )
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    code = "import " + ", ".join(args.module or IMPORTS)
    print(f"each process runs: {code}")
    print(f"load average before: {_load()}")
    none_wall, none_cpu = _way("none kept", False, args.runs, code)
    kept_wall, kept_cpu = _way("kept", True, args.runs, code)
    print(
        f"kept / none kept, later processes: {kept_wall / none_wall:.2f}x wall, "
        f"{kept_cpu / none_cpu:.2f}x CPU"
    )
    print(f"load average after: {_load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
