"""Commands that run systems: ``reference``, ``run`` and ``manifest``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from effectbench.cli._args import (
    ANCHOR_PACK,
    executor_name,
    pack_arg,
    positive_int,
    print_json,
    progress_mode,
    split_name,
)

if TYPE_CHECKING:
    from effectbench.metrics import Results
    from effectbench.run.runner import RunResult
    from effectbench.seam import BenchmarkProvider, SystemUnderTest

PINNED: dict[str, dict[str, tuple[int, int] | int]] = {
    "screen_only": {"swer": (50, 90), "swer_wrong_write": 40, "swer_phantom": 10},
    "effect_verified": {"swer": (0, 90), "over_halt": (0, 90)},
}
"""SPEC 6: the MockMed anchor's pinned values at 10 trials (a regression anchor)."""


def add_system_arguments(p: argparse.ArgumentParser) -> None:
    """Add the options that choose and run a system (shared by ``run`` and ``submit``)."""
    p.add_argument("--baseline", metavar="NAME", help="a shipped baseline, by pack: {baselines}")
    p.add_argument(
        "--sut",
        metavar="MODULE:ATTR",
        help="your SystemUnderTest, imported from the current folder first (as python -m does)",
    )
    p.add_argument(
        "--pack",
        default=ANCHOR_PACK,
        type=pack_arg,
        help="the task pack: {packs}",
    )
    p.add_argument(
        "--instance-seed",
        metavar="SEED",
        help="a generated pack ({instance_packs}): draw its tasks afresh from SEED instead of "
        "its public dev seed (see docs/generated-tasks.md, Fresh instances)",
    )
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
        help="api, web, desktop, remote_display or all (default: the pack's own choice)",
    )


def instance_of(pack_name: str, seed: str | None) -> str | BenchmarkProvider:
    """The pack ``--pack`` names, drawn from ``--instance-seed`` when one is given."""
    if seed is None:
        return pack_name
    from effectbench.errors import UsageError
    from effectbench.kit.generate import GenerationError
    from effectbench.packs import get_pack, instance_packs
    from effectbench.seam import DrawsInstances

    if not seed:
        raise UsageError("--instance-seed: give a non-empty seed")
    pack = get_pack(pack_name)
    if not isinstance(pack, DrawsInstances):
        raise UsageError(
            f"--instance-seed: pack {pack_name!r} draws no instances from a seed (a generated "
            f"pack does: {', '.join(instance_packs()) or 'none is installed'})"
        )
    try:
        return pack.instantiate(seed)
    except GenerationError as exc:
        raise UsageError(f"--instance-seed {seed!r}: {exc}") from None


def run_system(
    args: argparse.Namespace, *, default_journal: Path | None = None
) -> tuple[BenchmarkProvider, SystemUnderTest, RunResult]:
    """Run the system the options of :func:`add_system_arguments` name (:func:`effectbench.run.
    run` with them as plain arguments); each finished episode goes to the journal
    (``--journal``, else ``default_journal`` unless resuming) before the next is taken."""
    from effectbench.run import run

    def notice(text: str) -> None:
        print(f"effectbench: {text}", file=sys.stderr)

    done = run(
        instance_of(args.pack, getattr(args, "instance_seed", None)),
        baseline=args.baseline,
        sut=args.sut,
        trials=args.trials,
        split=args.split,
        substrates=getattr(args, "substrate", None),
        task=getattr(args, "task", None),
        executor=args.executor,
        workers=args.workers,
        scheduler=args.scheduler,
        journal=args.journal if args.journal is not None or args.resume else default_journal,
        resume=args.resume,
        progress=args.progress,
        notice=notice,
    )
    return done.pack, done.system, done.result


def _cmd_reference(args: argparse.Namespace) -> int:
    from effectbench.baselines import REFERENCE_BASELINES, get_baseline
    from effectbench.manifest import fingerprint
    from effectbench.metrics import episode_frame, summarize, transactional_faults_mishandled
    from effectbench.packs import anchor_pack, get_pack
    from effectbench.report import format_results
    from effectbench.run.runner import evaluate

    pack = get_pack(anchor_pack())
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
    p.add_argument(
        "--pack",
        default=ANCHOR_PACK,
        type=pack_arg,
        help="the task pack: {packs}",
    )
    p.add_argument("--fingerprint", action="store_true", help="print only the fingerprint")
    p.set_defaults(func=_cmd_manifest)
