"""Benchmark the blindness audit of ``effectbench pack check``: observing, then training.

For each pack, prints how many episodes the audit observed and the median seconds of observing
them (provisioning each episode, building its view, reading its first screen) and of training
and cross-validating the classifiers over them, with the number of targets cross-validated.
The pack's construction time is printed apart (it is not the audit's). Prints figures, asserts
nothing; the load average is printed beside them (the machine may be shared).

    .venv/bin/python benchmarks/bench_blindness.py [--runs 3] [--substrate api]
        [--packs mockmed,clinic,ticketing,clinic-generated,ticketing-generated]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from effectbench.conformance.blindness import audit, observe
from effectbench.packs import get_pack
from effectbench.seam import Closable
from effectbench.variants import choose


def main() -> None:
    """Run the audit ``--runs`` times on each pack and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--substrate", default=None, help="default: each pack's own")
    parser.add_argument("--packs", default="mockmed,clinic", help="which packs, comma-separated")
    opts = parser.parse_args()
    print(f"load average {os.getloadavg()} on {os.cpu_count()} cores")
    for name in opts.packs.split(","):
        t0 = time.perf_counter()
        pack = get_pack(name)
        built = time.perf_counter() - t0
        observing, training = [], []
        try:
            substrates = choose(pack, opts.substrate)
            for _ in range(opts.runs):
                t0 = time.perf_counter()
                seen = observe(pack, substrates)
                t1 = time.perf_counter()
                results = audit(seen)
                observing.append(t1 - t0)
                training.append(time.perf_counter() - t1)
        finally:
            if isinstance(pack, Closable):
                pack.close()
        validated = sum(r.auroc is not None for r in results)
        where = ",".join(s.value for s in substrates)
        print(
            f"{name} on {where}: {len(seen)} episodes observed in "
            f"{statistics.median(observing):.2f} s, {validated}/{len(results)} targets "
            f"cross-validated in {statistics.median(training):.2f} s (median of {opts.runs}; "
            f"pack built in {built:.2f} s)"
        )
    print(f"load average {os.getloadavg()} after")


if __name__ == "__main__":
    main()
