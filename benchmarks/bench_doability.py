"""Benchmark the doability audit of ``effectbench pack check``, per pack and substrate.

For each pack and each substrate asked for (those it offers), prints the seconds of the audit
(comparing every task's required values with the front end's controls, then the informed
agent's episode on every task with a correct action), the informed runs, the tasks compared,
the seconds per informed run and how many tasks were undoable. The pack's construction and
its front end's start (a browser, an X display) are printed apart. Prints figures, asserts
nothing; the load average is printed beside them (the machine may be shared).

    .venv/bin/python benchmarks/bench_doability.py [--runs 1] [--trials 2]
        [--packs mockmed,clinic,clinic-generated] [--substrates api,web,desktop,remote_display]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from effectbench.kit.audit import Doability, audit_doability
from effectbench.packs import get_pack
from effectbench.schema import Substrate
from effectbench.seam import ChecksFrontEnds, Closable
from effectbench.variants import offered, tasks_on


def _measure(pack: object, substrate: Substrate, runs: int, trials: int) -> None:
    t0 = time.perf_counter()
    if isinstance(pack, ChecksFrontEnds):
        pack.front_end(substrate)
    started = time.perf_counter() - t0
    tasks = tasks_on(pack, [substrate])  # type: ignore[arg-type]
    seconds: list[float] = []
    result: Doability | None = None
    for _ in range(runs):
        result = audit_doability(pack, substrate, tasks, trials)
        seconds.append(result.seconds)
    assert result is not None
    median = statistics.median(seconds)
    per_run = median / result.informed if result.informed else 0.0
    print(
        f"{getattr(pack, 'name', '?')} on {substrate.value}: {median:.2f} s "
        f"(median of {runs}) for {result.informed} informed runs and {result.compared} tasks "
        f"compared, {per_run:.2f} s per informed run; {len(result.undoable)} undoable; "
        f"front end started in {started:.2f} s; load {os.getloadavg()[0]:.2f}"
    )


def main() -> None:
    """Run the audit ``--runs`` times on each pack and substrate and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--trials", type=int, default=2, help="trials whose values are compared")
    parser.add_argument("--packs", default="mockmed,clinic-generated", help="comma-separated")
    parser.add_argument(
        "--substrates", default="api", help="comma-separated; a pack's unoffered ones are skipped"
    )
    opts = parser.parse_args()
    wanted = [Substrate(s.strip()) for s in opts.substrates.split(",")]
    print(f"load average {os.getloadavg()} on {os.cpu_count()} cores")
    for name in opts.packs.split(","):
        t0 = time.perf_counter()
        pack = get_pack(name)
        print(f"{name}: pack built in {time.perf_counter() - t0:.2f} s")
        try:
            for substrate in (s for s in wanted if s in offered(pack)):
                _measure(pack, substrate, opts.runs, opts.trials)
        finally:
            if isinstance(pack, Closable):
                pack.close()
    print(f"load average {os.getloadavg()} after")


if __name__ == "__main__":
    main()
