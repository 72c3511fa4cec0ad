"""Benchmark the inspect_ai integration: an inspect eval of the clinic pack against the runner.

Prints figures, asserts nothing. The same scripted policy runs the clinic's
dev split in process (the runner) and as inspect's mock model (``inspect_ai.eval``
of ``effectbench/clinic``, usage set, offline); then ``import-inspect`` reads
the log back into a bundle. Under the figures: what inspect adds per sample.

    .venv/bin/python benchmarks/bench_inspect.py [--trials 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

from effectbench.integrations.inspect_ai.episodes import close_pools
from effectbench.integrations.inspect_ai.importer import import_log
from effectbench.integrations.inspect_ai.tasks import select_tasks
from effectbench.packs.clinic import ClinicProvider
from effectbench.runner import evaluate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "inspect_support"))
from scripted import ScriptedSystem, mock_outputs  # noqa: E402


def main() -> None:
    """Print episode and sample costs for the two ways of running the same policy."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--policy", default="effect_verified")
    args = parser.parse_args()

    with ClinicProvider() as pack:
        dev = select_tasks(pack, "dev", None)
        t0 = time.perf_counter()
        run = evaluate(ScriptedSystem(args.policy), pack, trials=args.trials, tasks=dev)
        in_process = time.perf_counter() - t0
    n = len(run.rows) + len(run.dropped)
    print(
        f"runner, in process:   {n} episodes in {in_process:6.2f} s  "
        f"({in_process / n * 1000:6.1f} ms/episode)"
    )

    with tempfile.TemporaryDirectory() as tmp:
        model = get_model("mockllm/model", custom_outputs=mock_outputs(args.policy))
        t0 = time.perf_counter()
        (log,) = inspect_eval(
            "effectbench/clinic", model=model, epochs=args.trials, display="none", log_dir=tmp
        )
        wall = time.perf_counter() - t0
        samples = len(log.samples or [])
        calls = sum(1 for s in log.samples or [] for e in s.events if e.event == "model")
        print(
            f"inspect eval:         {samples} samples  in {wall:6.2f} s  "
            f"({wall / samples * 1000:6.1f} ms/sample, {calls} model calls, "
            f"{wall / max(calls, 1) * 1000:5.1f} ms/call)"
        )
        started, finished = log.stats.started_at, log.stats.completed_at
        print(f"  of which the eval itself (log stats): {started} .. {finished}")
        t0 = time.perf_counter()
        assert log.location
        imported = import_log(Path(log.location), Path(tmp) / "out")
        took = time.perf_counter() - t0
        size = Path(log.location).stat().st_size
        print(
            f"import-inspect:       {imported.n_rows} rows from a {size / 1e6:.2f} MB log "
            f"in {took:6.2f} s ({took / max(imported.n_rows, 1) * 1000:5.1f} ms/row)"
        )
        print(f"inspect adds about {(wall - in_process) / n * 1000:6.1f} ms per trial")
    close_pools()


if __name__ == "__main__":
    main()
