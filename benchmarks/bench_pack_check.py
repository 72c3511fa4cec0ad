"""Benchmark ``effectbench pack check``: wall time of the audit per pack and substrate.

For each pack, prints the median of several audits (tasks, episodes run, seconds) and
the pack's construction time (the clinic and the ticketing pack run their own adversarial
audit when built, or adopt this machine's earlier one). ``--audit-only`` builds each pack with
the audit cache off, so the construction time is the live audit's, and runs no check (the
generated packs' 296 worlds: ``--packs clinic-generated,ticketing-generated --audit-only``).
Prints figures, asserts nothing; the load average is printed beside them (the machine may be
shared).

    .venv/bin/python benchmarks/bench_pack_check.py [--runs 3] [--substrate web]
        [--packs mockmed,clinic,ticketing] [--audit-only]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import time

from effectbench.conformance import check_pack
from effectbench.environment import variable
from effectbench.kit.audit import AuditCache
from effectbench.packs import get_pack
from effectbench.seam import Closable


def main() -> None:
    """Audit each pack ``--runs`` times and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--substrate", default=None, help="for the clinic and ticketing (default: api)"
    )
    parser.add_argument("--packs", default="mockmed,clinic", help="which packs, comma-separated")
    parser.add_argument(
        "--audit-only", action="store_true", help="time each pack's live audit only (no check)"
    )
    opts = parser.parse_args()
    print(f"load average {os.getloadavg()} on {os.cpu_count()} cores")
    for name in opts.packs.split(","):
        substrate = None if name == "mockmed" else opts.substrate
        t0 = time.perf_counter()
        live = variable(AuditCache.ENV, "off") if opts.audit_only else contextlib.nullcontext()
        with live:
            pack = get_pack(name)
        built = time.perf_counter() - t0
        seconds = []
        try:
            if opts.audit_only:
                print(f"{name}: built with its live audit in {built:.2f} s")
                continue
            for _ in range(opts.runs):
                report = check_pack(pack, substrate=substrate)
                seconds.append(report.seconds)
        finally:
            if isinstance(pack, Closable):
                pack.close()
        print(report.summary())
        print(
            f"  median of {opts.runs}: {statistics.median(seconds):.2f} s; built in {built:.2f} s"
        )
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
