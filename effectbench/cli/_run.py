"""Commands that run systems: ``reference``, ``run`` and ``manifest``."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from effectbench.cli._args import (
    executor_name,
    positive_int,
    print_json,
    progress_mode,
    split_name,
)
from effectbench.errors import UsageError

if TYPE_CHECKING:
    from effectbench.metrics import Results
    from effectbench.runner import RunResult
    from effectbench.seam import BenchmarkProvider, SystemUnderTest

PINNED: dict[str, dict[str, tuple[int, int] | int]] = {
    "screen_only": {"swer": (50, 90), "swer_wrong_write": 40, "swer_phantom": 10},
    "effect_verified": {"swer": (0, 90), "over_halt": (0, 90)},
}
"""SPEC 6: the MockMed anchor's pinned values at 10 trials (a regression anchor)."""


def load_sut(spec: str) -> SystemUnderTest:
    """Import ``module:attr``; an attribute that is a class or factory is called once.

    The module is looked up on ``sys.path`` with the current folder first, as
    ``python -m`` does: a module beside you imports.
    """
    from effectbench.seam import SystemUnderTest

    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise UsageError(f"--sut takes module:attr, got {spec!r}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj: Any = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise UsageError(f"cannot load system under test {spec!r}: {exc}") from None
    if isinstance(obj, type) or (callable(obj) and not hasattr(obj, "run")):
        obj = obj()
    if not isinstance(obj, SystemUnderTest):
        raise UsageError(f"{spec!r} is not a system under test (needs .name and .run())")
    return obj


def resolve_sut(baseline: str | None, sut: str | None, pack: BenchmarkProvider) -> SystemUnderTest:
    """Return the system named by ``--baseline`` or ``--sut`` (exactly one is given)."""
    from effectbench.baselines import get_baseline

    if (baseline is None) == (sut is None):
        raise UsageError("give exactly one of --baseline NAME or --sut module:attr")
    return get_baseline(baseline, pack) if baseline is not None else load_sut(str(sut))


def add_system_arguments(p: argparse.ArgumentParser) -> None:
    """Add the options that choose and run a system (shared by ``run`` and ``submit``)."""
    p.add_argument("--baseline", metavar="NAME", help="a shipped baseline, by pack: {baselines}")
    p.add_argument(
        "--sut",
        metavar="MODULE:ATTR",
        help="your SystemUnderTest, imported from the current folder first (as python -m does)",
    )
    p.add_argument("--pack", default="mockmed", help="the task pack: {packs}")
    p.add_argument("--trials", type=positive_int, default=10, help="trials per task")
    p.add_argument(
        "--split",
        type=split_name,
        default="dev",
        help="which split of the pack to run, {splits} (the sequestered test split is for "
        "maintainers)",
    )
    p.add_argument(
        "--workers", type=positive_int, default=1, help="--executor local: episodes in N processes"
    )
    p.add_argument(
        "--executor",
        type=executor_name,
        default="local",
        help="where episodes run, {executors}: this machine, or a Dask cluster (--scheduler)",
    )
    p.add_argument(
        "--scheduler", metavar="tcp://HOST:PORT", help="--executor dask: the Dask scheduler"
    )
    p.add_argument(
        "--journal",
        type=Path,
        metavar="FILE",
        help="write each finished episode to FILE as it finishes (a new file; default: none for "
        "run, beside the bundle for submit)",
    )
    p.add_argument(
        "--resume",
        type=Path,
        metavar="JOURNAL",
        help="continue the run JOURNAL records (same options): only episodes without a row run",
    )
    p.add_argument(
        "--progress",
        type=progress_mode,
        default="auto",
        help="progress on stderr, {progress_modes}: auto is a bar on a terminal, a line every "
        "30 s otherwise",
    )
    p.add_argument(
        "--substrate",
        metavar="NAME[,NAME]",
        help="api, web, desktop, remote_display or all (default: the pack's; api for clinic)",
    )


def run_system(
    args: argparse.Namespace, *, default_journal: Path | None = None
) -> tuple[BenchmarkProvider, SystemUnderTest, RunResult]:
    """Run the system the options of :func:`add_system_arguments` name; refuse an empty run.

    Each finished episode goes to the journal (``--journal``, else
    ``default_journal`` unless resuming) before the next is taken.
    """
    from effectbench.executors import execute, get_executor
    from effectbench.executors.progress import progress_for
    from effectbench.journal import open_journal
    from effectbench.packs import get_pack
    from effectbench.runner import RunPlan
    from effectbench.seam import ChecksFrontEnds
    from effectbench.variants import choose, named_tasks, tasks_on

    pack = get_pack(args.pack)
    sut = resolve_sut(args.baseline, args.sut, pack)
    substrates = choose(pack, getattr(args, "substrate", None))
    if isinstance(pack, ChecksFrontEnds):
        for substrate in substrates:
            pack.front_end(substrate)  # a missing system package says so now, in one line
    one = getattr(args, "task", None)
    if one is not None:
        tasks = named_tasks(pack, one, substrates, args.split)
        if not tasks:
            on = ", ".join(s.value for s in substrates)
            raise UsageError(
                f"--task {one}: pack {pack.name!r} has no such task in split {args.split!r} "
                f"on {on} (effectbench manifest --pack {pack.name} lists them)"
            )
    else:
        tasks = tasks_on(pack, substrates, args.split)
    if not tasks:
        raise UsageError(f"pack {pack.name!r} has no task in split {args.split!r}")
    plan = RunPlan.build(sut, pack, trials=args.trials, tasks=tasks)
    executor = get_executor(args.executor, workers=args.workers, scheduler=args.scheduler)
    start = args.journal if args.journal is not None or args.resume else default_journal
    journal = open_journal(plan, journal=start, resume=args.resume)
    with journal if journal is not None else nullcontext():
        if journal is not None and journal.torn_line is not None:
            print(
                f"effectbench: {journal.path}:{journal.torn_line}: last line was cut off "
                "mid-write; its episode runs again",
                file=sys.stderr,
            )
        run = execute(plan, executor, journal=journal, progress=progress_for(args.progress))
    if not run.rows:
        raise UsageError(f"no episode of {sut.name} on {pack.name} could be scored")
    return pack, sut, run


def _cmd_reference(args: argparse.Namespace) -> int:
    from effectbench.baselines import REFERENCE_BASELINES, get_baseline
    from effectbench.manifest import fingerprint
    from effectbench.metrics import episode_frame, summarize, transactional_faults_mishandled
    from effectbench.packs import get_pack
    from effectbench.report import format_results
    from effectbench.runner import evaluate

    pack = get_pack("mockmed")
    ok = True
    frames = {}
    for name in REFERENCE_BASELINES:
        frames[name] = episode_frame(
            evaluate(get_baseline(name, pack), pack, trials=args.trials).rows
        )
        res = summarize(frames[name])
        print(format_results(res))
        print()
        if args.trials == 10:
            ok &= _matches_pin(res)
    bad, total = transactional_faults_mishandled(frames["screen_only"])
    print(f"pack {pack.name} {fingerprint(pack.manifest())}")
    print(f"transactional faults silently mishandled by screen_only: {bad} of {total}")
    if args.trials == 10:
        ok &= (bad, total) == (5, 7)
        print("pinned anchor values (SPEC 6): " + ("reproduced" if ok else "NOT reproduced"))
    print("These are fixture invariants of a synthetic anchor, not a finding.")
    return 0 if ok else 1


def _matches_pin(res: Results) -> bool:
    pin = PINNED[res.arm]
    ok = True
    for key, want in pin.items():
        r = getattr(res, key)
        got = (r.numerator, r.denominator) if isinstance(want, tuple) else r.numerator
        ok &= got == want
    return ok


def _cmd_run(args: argparse.Namespace) -> int:
    from effectbench.metrics import episode_frame, summarize
    from effectbench.report import format_results

    _, _, run = run_system(args)
    res = summarize(episode_frame(run.rows))
    if args.json:
        print_json({**res.to_json(), "n_dropped": len(run.dropped)})
    else:
        print(format_results(res))
        print(f"  dropped: {len(run.dropped)}")
        for d in run.dropped:
            print(f"    {d.task_id} trial {d.trial}: {d.reason.value} ({d.detail})")
    return 0


def _cmd_manifest(args: argparse.Namespace) -> int:
    from effectbench.manifest import fingerprint
    from effectbench.packs import get_pack

    pack = get_pack(args.pack)
    manifest = pack.manifest()
    if args.fingerprint:
        print(fingerprint(manifest))
    else:
        print_json(manifest)
    return 0


def register(sub: Any) -> None:
    """Add ``reference``, ``run`` and ``manifest``."""
    p = sub.add_parser("reference", help="run both reference baselines on MockMed (SPEC 6)")
    p.add_argument(
        "--trials", type=positive_int, default=10, help="trials per task (10 checks the pins)"
    )
    p.set_defaults(func=_cmd_reference)

    p = sub.add_parser("run", help="run a baseline or your system on a pack and print its metrics")
    add_system_arguments(p)
    p.add_argument(
        "--task",
        metavar="ID",
        help="run this task only (its id, or its name: clean_draft, clean_draft@web), to "
        "iterate on one task",
    )
    p.add_argument("--json", action="store_true", help="print the results block as JSON")
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser("manifest", help="print a pack's public manifest")
    p.add_argument("--pack", default="mockmed", help="the task pack: {packs}")
    p.add_argument("--fingerprint", action="store_true", help="print only the fingerprint")
    p.set_defaults(func=_cmd_manifest)
