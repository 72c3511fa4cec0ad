"""Benchmark the inspect_ai integration: an inspect eval of the clinic pack against the runner.

Prints figures, asserts nothing. The same scripted policy runs the clinic's
dev split in process (the runner) and as inspect's mock model (``inspect_ai.eval``
of ``effectbench/clinic``, usage set, offline); then ``import-inspect`` reads
the log back into a bundle. Under the figures: what inspect adds per sample.

On a GUI substrate (``--substrate web``, ``desktop`` or ``remote_display``)
the policy is the runner's screen-only bot: the runner's own baseline in
process, and through inspect's ``computer`` tool (and the accessibility tools
on the desktop) as the mock model, each screenshot one model call.

    .venv/bin/python benchmarks/bench_inspect.py [--trials 3] [--substrate web --trials 1]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

from effectbench.baselines import get_baseline
from effectbench.integrations.inspect_ai import SCORER_NAME
from effectbench.integrations.inspect_ai.episodes import close_pools, release_thread
from effectbench.integrations.inspect_ai.importer import import_log
from effectbench.integrations.inspect_ai.tasks import select_tasks
from effectbench.packs.clinic import ClinicProvider
from effectbench.run.runner import RunResult, evaluate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "inspect_support"))
from scripted import ScriptedSystem, mock_outputs  # noqa: E402

GUI_SCRIPTS = {"web": "pixels", "desktop": "desktop", "remote_display": "desktop"}
"""The mock model's script per GUI substrate: the runner's screen-only bot through the tools."""


def in_process(substrate: str, policy: str, trials: int) -> RunResult:
    """Run the policy on the dev split's variants with the runner (off the main thread)."""
    try:
        with ClinicProvider() as pack:
            dev = select_tasks(pack, "dev", substrate)
            sut = (
                ScriptedSystem(policy) if substrate == "api" else get_baseline("screen_only", pack)
            )
            return evaluate(sut, pack, trials=trials, tasks=dev)
    finally:
        release_thread()  # a browser is bound to the thread that made it


def main() -> None:
    """Print episode and sample costs for the two ways of running the same policy."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--policy", default="effect_verified", help="the script on api")
    parser.add_argument("--substrate", default="api", choices=["api", *GUI_SCRIPTS])
    args = parser.parse_args()

    # Playwright's sync client claims the thread it runs in: keep it off the main one.
    t0 = time.perf_counter()
    with ThreadPoolExecutor(1) as worker:
        run = worker.submit(in_process, args.substrate, args.policy, args.trials).result()
    took_in_process = time.perf_counter() - t0
    n = len(run.rows) + len(run.dropped)
    print(f"substrate {args.substrate}, {args.trials} trial(s) of the dev split")
    print(
        f"runner, in process:   {n} episodes in {took_in_process:6.2f} s  "
        f"({took_in_process / n * 1000:6.1f} ms/episode)"
    )

    script = GUI_SCRIPTS.get(args.substrate, args.policy)
    with tempfile.TemporaryDirectory() as tmp:
        model = get_model("mockllm/model", custom_outputs=mock_outputs(script))
        t0 = time.perf_counter()
        (log,) = inspect_eval(
            "effectbench/clinic",
            model=model,
            task_args={"substrate": args.substrate, "display": "native"},
            epochs=args.trials,
            display="none",
            log_dir=tmp,
        )
        wall = time.perf_counter() - t0
        samples = len(log.samples or [])
        calls = sum(1 for s in log.samples or [] for e in s.events if e.event == "model")
        print(
            f"inspect eval:         {samples} samples  in {wall:6.2f} s  "
            f"({wall / samples * 1000:6.1f} ms/sample, {calls} model calls, "
            f"{wall / max(calls, 1) * 1000:5.1f} ms/call)"
        )
        scored = {
            (str(s.id), s.epoch - 1): (s.scores or {}).get(SCORER_NAME) for s in log.samples or []
        }
        same = sum(
            1
            for r in run.rows
            if (score := scored.get((r.task_id, r.trial))) is not None
            and score.value == r.outcome.value
        )
        print(f"  outcomes equal to the runner's, trial for trial: {same} of {len(run.rows)}")
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
        print(f"inspect adds about {(wall - took_in_process) / n * 1000:6.1f} ms per trial")
    close_pools()


if __name__ == "__main__":
    main()
