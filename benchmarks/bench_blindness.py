"""Benchmark the blindness audit of ``effectbench pack check``: observing, then training.

For each pack and each substrate, prints how many episodes the audit observed and the median
seconds of observing them (provisioning each episode, building its view, reading its first
screen: on the web the first page from Chromium, its DOM text and accessibility tree; on the
desktop the app's accessibility tree), per episode too, and of training and cross-validating
the classifiers over them, with the number of targets cross-validated and the best AUROC. The
pack's construction time is printed apart (it is not the audit's). Prints figures, asserts
nothing; the load average is printed beside them (the machine may be shared).

    .venv/bin/python benchmarks/bench_blindness.py [--runs 3] [--substrate api,web]
        [--packs mockmed,clinic,ticketing,clinic-generated,ticketing-generated]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from effectbench.conformance.blindness import audit, observe
from effectbench.packs import get_pack
from effectbench.schema import Substrate
from effectbench.seam import Closable
from effectbench.variants import choose


def _measure(name: str, pack: object, substrate: Substrate, runs: int, built: float) -> None:
    observing, training = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        seen = observe(pack, substrate)
        t1 = time.perf_counter()
        results = audit(seen, substrate)
        observing.append(t1 - t0)
        training.append(time.perf_counter() - t1)
    validated = [r.auroc for r in results if r.auroc is not None]
    looked = statistics.median(observing)
    print(
        f"{name} on {substrate.value}: {len(seen)} episodes observed in {looked:.2f} s "
        f"({1000 * looked / max(len(seen), 1):.0f} ms each), {len(validated)}/{len(results)} "
        f"targets cross-validated in {statistics.median(training):.2f} s, best AUROC "
        f"{max(validated, default=float('nan')):.3f} (median of {runs}; pack built in "
        f"{built:.2f} s)"
    )


def main() -> None:
    """Run the audit ``--runs`` times on each pack and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--substrate", default=None, help="NAME[,NAME] or all (default: each pack's own)"
    )
    parser.add_argument("--packs", default="mockmed,clinic", help="which packs, comma-separated")
    opts = parser.parse_args()
    print(f"load average {os.getloadavg()} on {os.cpu_count()} cores")
    for name in opts.packs.split(","):
        t0 = time.perf_counter()
        pack = get_pack(name)
        built = time.perf_counter() - t0
        try:
            for substrate in choose(pack, opts.substrate):
                _measure(name, pack, substrate, opts.runs, built)
        finally:
            if isinstance(pack, Closable):
                pack.close()
    print(f"load average {os.getloadavg()} after")


if __name__ == "__main__":
    main()
