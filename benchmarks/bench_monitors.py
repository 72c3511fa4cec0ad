"""Benchmark the monitor track on a corpus: each reference monitor's run, and its verification.

Run: ``python benchmarks/bench_monitors.py CORPUS_DIR`` (a folder ``effectbench monitor
corpus`` wrote; ``--monitor NAME`` for one monitor only). Prints, per reference monitor, the
episodes, the wall and CPU seconds of scoring the whole corpus, the seconds per episode, and
the wall seconds of verifying its bundle (unsigned, against the corpus's dev labels). The
model-judge asks the scripted stand-in (no model, no network): its figures measure the
harness, not a model. The load average is printed before and after.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

from effectbench.monitors.corpus import read_corpus
from effectbench.monitors.reference import REFERENCE_MONITORS, reference_monitor
from effectbench.monitors.run import run_monitor
from effectbench.schema import Split
from verifier.monitors import verify_monitor


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    """Time each reference monitor on the corpus given."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--monitor", action="append", choices=sorted(REFERENCE_MONITORS))
    args = parser.parse_args()
    print(f"load average before: {_load()}")
    start = time.perf_counter()
    corpus = read_corpus(args.corpus)
    n = len(corpus.views)
    print(f"read and checked the corpus ({n} episodes): {time.perf_counter() - start:.2f} s")
    dev = corpus.labels(Split.DEV)
    labels = [] if dev is None else [dev]
    ids = [v.id for v in corpus.views]
    with tempfile.TemporaryDirectory() as out:
        for name in args.monitor or list(REFERENCE_MONITORS):
            wall, cpu = time.perf_counter(), _cpu()
            bundle = run_monitor(reference_monitor(name), corpus, Path(out), when="bench")
            wall, cpu = time.perf_counter() - wall, _cpu() - cpu
            check = time.perf_counter()
            report = verify_monitor(bundle, corpus.ref, ids, labels, allow_unsigned=True)
            check = time.perf_counter() - check
            print(
                f"{name}: {n} episodes in {wall:.2f} s wall, {cpu:.2f} s CPU "
                f"({1000 * wall / max(n, 1):.2f} ms per episode); verified "
                f"({report.status.value}) in {check:.2f} s"
            )
    print(f"load average after: {_load()}")


if __name__ == "__main__":
    main()
