"""Benchmark this machine's audit cache: ``effectbench verify`` of one shipped bundle in a
child process, with the cache off (every process probes its pack), on an empty cache (the
first process probes and keeps the audit) and on the kept one (the next adopts it).

Prints the wall time of each (median of ``--runs``), the ratio off / kept and the load
average around the runs (the machine is shared). The bundle's verdict is the same in all
three (checked). The default bundle is the generated clinic's ``screen_only`` on the API
(296 tasks, 888 rows: an audit of 296 worlds); ``--bundle`` picks another.

    .venv/bin/python benchmarks/bench_audit_cache.py [--bundle DIR] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EFFECTBENCH = Path(sys.executable).with_name("effectbench")
DEFAULT = ROOT / "submissions" / "2026-12-02_screen-only-clinic-generated"


def _load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def _verify(bundle: Path, cache: str) -> tuple[float, str]:
    env = {**os.environ, "EFFECTBENCH_AUDIT_CACHE": cache}
    t0 = time.perf_counter()
    done = subprocess.run(
        [str(EFFECTBENCH), "verify", str(bundle), "--allow-unsigned"],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    wall = time.perf_counter() - t0
    verdict = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    if done.returncode not in (0, 1) or "Traceback" in done.stderr:
        sys.exit(f"bench_audit_cache: verify failed: {done.stderr[-2000:]}")
    return wall, verdict


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, default=DEFAULT)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if not (args.bundle / "submission.json").is_file():
        parser.error(f"--bundle {args.bundle} is not a bundle (no submission.json)")
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    print(f"bundle {args.bundle.name}, {args.runs} run(s) each  {_load()}")
    home = Path(tempfile.mkdtemp(prefix="bench-audit-cache-"))
    try:
        off, empty, kept = [], [], []
        verdicts = set()
        for _ in range(args.runs):
            wall, verdict = _verify(args.bundle, "off")
            off.append(wall)
            verdicts.add(verdict)
            shutil.rmtree(home / "audits", ignore_errors=True)
            wall, verdict = _verify(args.bundle, str(home))
            empty.append(wall)
            verdicts.add(verdict)
            wall, verdict = _verify(args.bundle, str(home))
            kept.append(wall)
            verdicts.add(verdict)
        if len(verdicts) != 1:
            sys.exit(f"bench_audit_cache: the verdicts differ: {sorted(verdicts)}")
        m_off, m_empty, m_kept = (statistics.median(x) for x in (off, empty, kept))
        print(f"verify, cache off:       {m_off:7.2f} s")
        print(f"verify, empty cache:     {m_empty:7.2f} s  (probes, then keeps the audit)")
        print(f"verify, audit adopted:   {m_kept:7.2f} s")
        print(f"off / adopted: {m_off / m_kept:.1f}x  {_load()}")
        print(f"verdict (all runs): {verdicts.pop()}")
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
