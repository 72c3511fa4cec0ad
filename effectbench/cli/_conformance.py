"""Command group ``pack``: ``pack check NAME``, the conformance audit of a pack's oracle.

Prints one line per finding (``id``, the task or ``(pack)``, the attestation it fails,
what was seen) and a summary; each split's tasks per category, the doability audit's line per
substrate and the blindness audit's line per target (its best cross-validated AUROC and top
features, or why it was not cross-validated) go to stderr beside the notes;
``--json`` prints the report instead (the counts in ``tasks_per_split_and_category``). Exit 0
when the pack passes, 1 when any finding was made (``docs/pack-authors.md`` lists the ids).
While it runs, the tasks done so far are shown on stderr (on a terminal after each task, otherwise a
line every 30 s).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from effectbench.cli._args import positive_int, print_json

PROGRESS_EVERY_S = 30.0
"""How often a line of progress is written when stderr is not a terminal."""


def _progress(name: str) -> Callable[[int, int, int], None]:
    terminal = sys.stderr.isatty()
    shown = [time.monotonic()]

    def show(done: int, total: int, episodes: int) -> None:
        now = time.monotonic()
        if not terminal and now - shown[0] < PROGRESS_EVERY_S and done < total:
            return
        shown[0] = now
        line = f"pack check {name}: {done}/{total} tasks, {episodes} episodes"
        end = "" if terminal and done < total else "\n"
        print(("\r" if terminal else "") + line, end=end, file=sys.stderr, flush=True)

    return show


def _cmd_check(args: argparse.Namespace) -> int:
    from effectbench.conformance import check_pack
    from effectbench.errors import UsageError
    from effectbench.kit.audit import audits_live
    from effectbench.packs import get_pack
    from effectbench.seam import Closable

    if args.trials < 2:
        raise UsageError("--trials: trial-unique payloads need at least 2 trials to compare")
    with audits_live():  # the check audits now, whatever this machine audited before
        pack = get_pack(args.name)
        try:
            report = check_pack(
                pack,
                substrate=args.substrate,
                trials=args.trials,
                progress=_progress(args.name),
                doability=args.doability,
                blindness=args.blindness_substrate,
            )
        finally:
            if isinstance(pack, Closable):
                pack.close()
    if args.json:
        print_json(report.to_json())
        return 0 if report.passed else 1
    for finding in report.findings:
        print(finding.line())
    for move, reasons in report.not_applicable.items():
        for reason, n in reasons.items():
            print(f"note: {move} not applicable on {n} task(s): {reason}", file=sys.stderr)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    for line in report.count_lines():  # beside the notes: stdout stays findings, then summary
        print(line, file=sys.stderr)
    for line in [*report.doability_lines(), *report.blindness_lines()]:
        print(line, file=sys.stderr)
    print(report.summary(f"load average {load}"))
    return 0 if report.passed else 1


def register(sub: Any) -> None:
    """Add ``pack check``."""
    group = sub.add_parser("pack", help="audit a pack before its board is published")
    commands = group.add_subparsers(dest="pack_command", required=True, metavar="COMMAND")
    p = commands.add_parser(
        "check",
        help="audit a pack's oracle against SPEC 5.2.1 (isolation, trial-unique payloads, "
        "refusal controls, reachable states, a red team) and its blindness (SPEC 5.3: what a "
        "system observes before acting must not predict the trap); exit 1 on any finding",
    )
    p.add_argument("name", metavar="NAME", help="the pack: {packs}")
    p.add_argument(
        "--substrate",
        metavar="NAME[,NAME]",
        help="api, web, desktop, remote_display or all (default: the pack's own choice); "
        "the blindness audit observes the first screen on these substrates too",
    )
    p.add_argument(
        "--doability",
        metavar="NAME[,NAME]",
        help="the substrates of the doability audit (every task's required values against the "
        "front end's controls, an informed agent on every task with a correct action), as "
        "--substrate takes them, or none (default: the checked substrates); the screens' "
        "runs are slow",
    )
    p.add_argument(
        "--blindness-substrate",
        metavar="NAME[,NAME]",
        help="the substrates the blindness audit observes instead (api, web, desktop, "
        "remote_display or all; default: those of --substrate). On a screen substrate it "
        "reads the first page or window of a sample of tasks (4 groups per category): the "
        "web page's title, route, text, markup and Chromium's accessibility tree, the "
        "desktop's accessibility tree, the first frame's layout",
    )
    p.add_argument(
        "--trials",
        type=positive_int,
        default=10,
        help="trials whose parameters must all differ (at least 2)",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=_cmd_check)
