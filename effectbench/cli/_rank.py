"""Command ``rank``: the boards of a folder of bundles, in the default order or at your prices."""

from __future__ import annotations

import argparse
import json
from typing import Any

from effectbench.cli._args import add_bundle_paths, add_record_options, record_policy


def cost_prices(text: str) -> Any:
    """Parse ``--costs``: a preset name or ``silent,wrong_record,over_halt`` (one-line error)."""
    from effectbench.metrics import CostError, parse_costs

    try:
        return parse_costs(text)
    except CostError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _rate(row: dict[str, Any], name: str) -> str:
    text = f"{100 * row[name]:.1f}% {row[name + '_k']}/{row[name + '_n']}"
    if row["max_trials"] > 1:
        text += f" tasks [{100 * row[name + '_tasks_lo']:.1f}, {100 * row[name + '_tasks_hi']:.1f}]"
    if row[name + "_k"] == 0 and row[name + "_n"] > 0:
        text += f" (<= {100 * row[name + '_upper']:.1f}%)"
    return text


def _cmd_rank(args: argparse.Namespace) -> int:
    from effectbench.metrics import DEFAULT_COSTS
    from effectbench.site._entries import entry_from_report, unique_slugs
    from effectbench.site._tables import boards
    from verifier.api import VerifyOptions, verify_path
    from verifier.ranking import rank_across

    costs = args.costs or DEFAULT_COSTS
    options = VerifyOptions(
        allow_unsigned=args.allow_unsigned,
        reproduce=not args.no_reproduce,
        records=record_policy(args),
        force_reproduce=args.reproduce,
    )
    reports = []
    for path in args.paths:
        reports.extend(verify_path(path, options))
    reports = rank_across(reports)
    entries = [entry_from_report(r, s) for r, s in zip(reports, unique_slugs(reports), strict=True)]
    every = boards(entries, costs)
    if args.json:
        out = []
        for b in every:
            facts = b.facts.get("all")
            out.append(
                {
                    "board": b.key,
                    "prices": costs.model_dump(),
                    "idle_cost": None if facts is None else facts.idle_cost,
                    "minimum_detectable_difference": None if facts is None else facts.mdd,
                    "rows": json.loads(b.frame.to_json(orient="records")),
                }
            )
        print(json.dumps(out, indent=2))
        return 0 if every else 1
    if not every:
        print("no accepted bundle: nothing to rank")
        return 1
    for b in every:
        facts = b.facts.get("all")
        print(f"{b.title}: prices {costs.text()} (silent wrong effect, wrong record, over-halt)")
        if facts is not None and facts.idle_cost is not None:
            print(f"  doing nothing (halting on every task): {facts.idle_cost:.1f} per 100 tasks")
        for row in b.frame.to_dict("records"):
            best, worst = row["rank_best"], row["rank_worst"]
            rank = (
                "-"
                if best is None or best != best
                else (str(best) if best == worst else f"{best}-{worst}")
            )
            print(
                f"  {rank:>6}  {row['system']}: cost {row['cost']:.1f} "
                f"[{row['cost_lo']:.1f}, {row['cost_hi']:.1f}] per 100 tasks; "
                f"SWER {_rate(row, 'swer')}; over-halt {_rate(row, 'over_halt')}; "
                f"record-wrong {_rate(row, 'record_wrong')}"
            )
        if facts is not None:
            print(
                f"  minimum detectable difference in a rate: {100 * facts.mdd:.0f} points "
                f"(80% power, {facts.n_effective:.1f} effective tasks)"
            )
        print()
    return 0


def register(sub: Any) -> None:
    """Add ``rank``."""
    p = sub.add_parser(
        "rank",
        help="verify bundles and print their boards by expected cost per 100 tasks "
        "(default prices, or --costs)",
    )
    add_bundle_paths(p)
    p.add_argument(
        "--costs",
        type=cost_prices,
        metavar="PRICES",
        help="prices of a silent wrong effect, a wrong record and an over-halt, as "
        "'silent,wrong_record,over_halt' (e.g. 10,3,1, the default) or a preset "
        "(default, clinical-billing, back-office)",
    )
    p.add_argument(
        "--allow-unsigned", action="store_true", help="rank unsigned bundles as previews"
    )
    p.add_argument("--no-reproduce", action="store_true", help="do not re-run shipped baselines")
    add_record_options(p)
    p.add_argument("--json", action="store_true", help="print the boards as JSON")
    p.set_defaults(func=_cmd_rank)
