"""Benchmark the site build's export step (:mod:`effectbench.site._exports`): each accepted
bundle of a folder exported as EEE records, ATIF trajectories and an Inspect log, each
archived as the site publishes it (deterministic ``.tar.xz``).

Verifies the folder first (through the site build's report cache, from reproduction records;
not timed), then per bundle times reading it for export and each format's export and archive,
and prints the seconds, the archives' bytes and the load average before and after (the
machine is shared). Bundles the verifier refuses are skipped and counted.

usage: python benchmarks/bench_exports.py [--submissions DIR]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from effectbench.cli._rank import reports_of
from effectbench.exports import FORMATS, files_of
from effectbench.site._entries import entry_from_report
from effectbench.site._exports import archive, source_of

ROOT = Path(__file__).resolve().parents[1]


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=Path, default=ROOT / "submissions")
    args = parser.parse_args()
    reports = reports_of([args.submissions], False, True, True)
    accepted = [r for r in reports if r.accepted and r.kind == "bundle"]
    print(f"load average before: {_load()}")
    print(
        f"bundles {len(reports)}: exported {len(accepted)}, skipped {len(reports) - len(accepted)}"
    )
    seconds = dict.fromkeys(("read", *FORMATS), 0.0)
    sizes = dict.fromkeys(FORMATS, 0)
    start = time.perf_counter()
    for report in accepted:
        t = time.perf_counter()
        source = source_of(entry_from_report(report))
        seconds["read"] += time.perf_counter() - t
        for fmt in FORMATS:
            t = time.perf_counter()
            sizes[fmt] += len(archive(files_of(source, fmt)))
            seconds[fmt] += time.perf_counter() - t
    total = time.perf_counter() - start
    for part, s in seconds.items():
        size = f", {sizes[part] / 2**20:.2f} MiB" if part in sizes else ""
        print(f"  {part}: {s:.2f}s{size}")
    print(
        f"export step: {total:.2f}s for {len(accepted)} bundles, "
        f"{sum(sizes.values()) / 2**20:.2f} MiB of archives"
    )
    print(f"load average after: {_load()}")


if __name__ == "__main__":
    main()
