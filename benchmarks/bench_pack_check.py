"""Benchmark ``effectbench pack check``: wall time of the audit per pack and substrate.

For each pack, prints the median of several audits (tasks, episodes run, seconds) and
the pack's construction time (the clinic and the ticketing pack run their own adversarial
audit when built). Prints figures, asserts nothing; the load average is printed beside them
(the machine may be shared).

    .venv/bin/python benchmarks/bench_pack_check.py [--runs 3] [--substrate web]
        [--packs mockmed,clinic,ticketing]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from effectbench.conformance import check_pack
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
    opts = parser.parse_args()
    print(f"load average {os.getloadavg()} on {os.cpu_count()} cores")
    for name in opts.packs.split(","):
        substrate = None if name == "mockmed" else opts.substrate
        t0 = time.perf_counter()
        pack = get_pack(name)
        built = time.perf_counter() - t0
        seconds = []
        try:
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
