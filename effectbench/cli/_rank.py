"""Command ``rank``: every board the site shows, from a folder of bundles, at your prices.

Bundles are verified as the site build verifies them (:func:`effectbench.site.verify_submissions`)
and their reports read from the same content-keyed cache, so right after ``make site`` nothing
runs again but what changed; a bar shows the verification on a terminal.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from effectbench.cli._args import add_bundle_paths, add_record_options, record_policy
from effectbench.cli._progress import Tell, bar, wanted

if TYPE_CHECKING:
    from effectbench.metrics import Prices, Resolution
    from effectbench.site._pooled import PooledBoard
    from effectbench.site._tables import Board, PairResolution, ViewFacts
    from verifier.records import RecordPolicy
    from verifier.report import BundleReport


def cost_prices(text: str) -> Any:
    """Parse ``--costs``: a preset name or ``silent,wrong_record,over_halt`` (one-line error)."""
    from effectbench.metrics import PriceError, parse_prices

    try:
        return parse_prices(text)
    except PriceError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def correct_value(text: str) -> float:
    """Parse ``--value``: the value of a correct effect, above 0 (one-line error)."""
    from effectbench.metrics import PriceError, parse_prices

    try:
        return parse_prices(None, text).value
    except PriceError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def substrate_names(text: str) -> list[str]:
    """Parse ``--substrate``: one substrate or a comma list (``web,desktop``)."""
    from effectbench.schema import Substrate

    known = [s.value for s in Substrate]
    names = [t.strip() for t in text.split(",") if t.strip()]
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown substrate {', '.join(map(repr, unknown)) or repr(text)}; known: "
            f"{', '.join(known)}"
        )
    return names


def reports_of(
    paths: list[Path],
    allow_unsigned: bool,
    reproduce: bool,
    cache: bool,
    progress: Tell | None = None,
    *,
    records: RecordPolicy | None = None,
    force_reproduce: bool = False,
) -> list[BundleReport]:
    """Return the verifier's reports of ``paths``: folders of bundles through the site build's
    own :func:`effectbench.site.verify_submissions` and its report cache (unless ``cache`` is
    false), single bundles and documents verified as they are; ``records`` and
    ``force_reproduce`` as ``site build`` takes them."""
    from effectbench.filenames import site_cache_home
    from effectbench.site import verify_submissions
    from verifier.api import VerifyOptions, is_bundle, verify_path
    from verifier.records import RecordPolicy

    policy = records or RecordPolicy()
    reports: list[BundleReport] = []
    for path in paths:
        if path.is_dir() and not is_bundle(path):
            reports.extend(
                verify_submissions(
                    path,
                    allow_unsigned,
                    site_cache_home() / "reports" if cache else None,
                    records=policy,
                    force_reproduce=force_reproduce,
                    reproduce=reproduce,
                    progress=progress,
                )
            )
        else:
            options = VerifyOptions(
                allow_unsigned=allow_unsigned,
                reproduce=reproduce,
                records=policy,
                force_reproduce=force_reproduce,
            )
            reports.extend(verify_path(path, options))
    return reports


def _rate(row: dict[str, Any], name: str, unit: str = "task") -> str:
    """A rate as ``rank`` prints it: k/n episodes, and with repeats the interval clustered by
    the board's unit (a task, or a generated pack's template)."""
    text = f"{100 * row[name]:.1f}% {row[name + '_k']}/{row[name + '_n']}"
    if row["max_trials"] > 1:
        lo, hi = 100 * row[name + "_tasks_lo"], 100 * row[name + "_tasks_hi"]
        text += f" episodes [{lo:.1f}, {hi:.1f}] by {unit}"
    if row[name + "_k"] == 0 and row[name + "_n"] > 0:
        text += f" (<= {100 * row[name + '_upper']:.1f}%)"
    return text


def _rank_text(row: dict[str, Any]) -> str:
    best, worst = row["rank_best"], row["rank_worst"]
    if best is None or best != best:
        return "-"
    return str(best) if best == worst else f"{best}-{worst}"


def _fresh_text(row: dict[str, Any]) -> str:
    """What a row says of its system's fresh-instance run (a column, not a row of its own)."""
    if row.get("contamination") == "unpaired":
        return "contamination delta: unpaired (a fresh instance with no public-seed run)"
    if not row.get("fresh_slug"):
        return ""
    from effectbench.site._format import signed

    rank = ""
    best, worst = row["fresh_rank_best"], row["fresh_rank_worst"]
    if best == best and best is not None:
        rank = f"; rank on fresh rows {int(best)}" + (f"-{int(worst)}" if worst != best else "")
    return (
        f"fresh instance ({row['fresh_slug']}): SWER {row['contamination_swer']:+.1f} points "
        f"[{row['contamination_swer_lo']:+.1f}, {row['contamination_swer_hi']:+.1f}], net value "
        f"{signed(row['contamination_value'])} [{signed(row['contamination_value_lo'])}, "
        f"{signed(row['contamination_value_hi'])}] (fresh minus public){rank}"
    )


def _finite(x: Any) -> float | None:
    return None if x is None or x != x or math.isinf(x) else float(x)


def resolution_json(r: Resolution) -> dict[str, Any]:
    """Return a pair's resolution of one measure as JSON: the paired figures (keys named
    ``paired_``) and the figure with the units held fixed (``fixed_``)."""
    return r.model_dump(mode="json")


def pair_json(p: PairResolution, substrate: str, names: dict[str, str]) -> dict[str, Any]:
    """Return a pair of a board's systems with its paired resolution of SWER and value."""
    from effectbench.site._tables import named

    return {
        "first": p.first,
        "second": p.second,
        "first_label": named(names[p.first], substrate),
        "second_label": named(names[p.second], substrate),
        "swer": resolution_json(p.swer),
        "value": resolution_json(p.value),
    }


def board_json(b: Board) -> dict[str, Any]:
    """Return one board as the JSON ``rank --json`` prints (no NaN, no infinity)."""
    from effectbench.site._bootstrap import BOOTSTRAP_KEY, all_pairs, bootstrap_block
    from effectbench.site._tables import every_pair, named

    facts = b.facts
    dead = facts.dead if facts is not None else None
    rows: list[dict[str, Any]] = []
    for row in json.loads(b.frame.to_json(orient="records")):
        even = b.frame.loc[len(rows), "break_even"]
        row["label"] = named(row["system"], row["substrate"])
        row["break_even"] = _finite(even)
        row["never_beats_doing_nothing"] = bool(even == even and math.isinf(even))
        rows.append(row)
    return {
        "board": b.key,
        "group": b.group,
        "title": b.title,
        "pack": b.pack,
        "substrate": b.substrate,
        "prices": b.prices.model_dump(),
        "withheld": [leak.text() for leak in b.withheld],
        "doing_nothing": None
        if facts is None or facts.idle is None
        else {"over_halt": facts.idle, "value_per_100": facts.idle_value},
        "family": None
        if facts is None
        else {
            "confidence": 0.95,
            "pair_confidence": facts.confidence,
            "ranked": facts.ranked,
            "min_shared_tasks": facts.min_tasks,
        },
        "single_rate_minimum_detectable_difference": None if facts is None else facts.mdd,
        "contamination": [
            {
                "system": c.system,
                "public": c.public,
                "fresh": c.fresh,
                "committed": c.committed,
                "swer": {k: getattr(c.delta, k) for k in ("difference", "lo", "hi", "tasks")},
                "value": {k: getattr(c.value, k) for k in ("difference", "lo", "hi", "tasks")},
            }
            for c in b.contamination
        ],
        "paired_resolution": [
            pair_json(p, b.substrate, dict(zip(b.frame["slug"], b.frame["system"], strict=True)))
            for p in every_pair(b)
        ],
        "dead_units": None if dead is None else dead.model_dump(mode="json"),
        BOOTSTRAP_KEY: bootstrap_block(b, all_pairs(b)),
        "rows": rows,
    }


def pooled_json(b: PooledBoard) -> dict[str, Any]:
    """Return a board pooling packs as ``rank --json --pooled`` prints it: as in
    ``leaderboard.json``'s ``pooled`` section, with every pair's paired resolution."""
    from effectbench.site._json import pooled_board_json

    out = pooled_board_json(b).model_dump(mode="json")
    names = dict(zip(b.frame["slug"], b.frame["system"], strict=True)) if len(b.frame) else {}
    out["paired_resolution"] = [pair_json(p, b.substrate, names) for p in every_pair_of(b)]
    return out


def every_pair_of(b: Board | PooledBoard) -> list[PairResolution]:
    """Return the paired resolution of every two systems of a board, in its default order."""
    from effectbench.site._tables import every_pair

    return every_pair(b) if len(b.frame) else []


def _print_resolution(facts: ViewFacts, names: dict[str, str], substrate: str) -> None:
    """Print a board's family line and the paired resolution of its adjacent systems."""
    from effectbench.site._format import resolution_text
    from effectbench.site._tables import named

    if facts.ranked > 1:
        pairs = facts.ranked * (facts.ranked - 1) // 2
        print(
            f"  rank ranges hold together at 95%: each of {pairs} pair"
            f"{'s' if pairs != 1 else ''} judged at {100 * facts.confidence:.4g}%, none told "
            f"apart on fewer than {facts.min_tasks} shared {facts.unit}s; they depend on "
            "the family of systems ranked together"
        )
    for pair in facts.adjacent:
        print(
            f"  resolution, {named(names[pair.first], substrate)} against "
            f"{named(names[pair.second], substrate)}: SWER {resolution_text(pair.swer)}; "
            f"net value {resolution_text(pair.value)}"
        )
    dead = facts.dead
    if dead is not None and dead.share is not None:
        print(
            f"  dead {dead.unit}s: {len(dead.dead)} of the {dead.units} every ranked system ran "
            f"({100 * dead.share:.1f}%) have the same outcome for all of them"
        )


def _print_pooled(b: PooledBoard, prices: Prices) -> None:
    from effectbench.site._format import signed
    from effectbench.site._tables import named

    facts = b.facts
    packs = ", ".join(f"{pack} ({record})" for record, pack in b.catalogues)
    print(f"{b.title}: pooling {packs}; prices {prices.text()}")
    print(f"  {b.rule}")
    print(
        "  net value per 100 tasks against doing nothing on the same tasks, over every pooled "
        "pack's episodes (a pack run at more trials per task weighs more); clusters: each "
        f"pack's templates, or its tasks where it has none, kept apart ({facts.tasks} in all)"
    )
    line = facts.line_after if facts.idle is not None else -1
    rows = b.frame.to_dict("records")
    for p, row in enumerate(rows):
        if p == line:
            print("  ------  doing nothing: 0")
        print(
            f"  {_rank_text(row):>6}  {named(row['system'], b.substrate)}: net value "
            f"{signed(row['value'])} [{signed(row['value_lo'])}, {signed(row['value_hi'])}]; "
            f"SWER {100 * row['swer']:.1f}%; over-halt {100 * row['over_halt']:.1f}%; "
            f"{row['n_tasks']} {row['unit']}s, n {row['n_episodes']}"
            + (f"; preview, not ranked: {row['unranked']}" if row.get("unranked") else "")
        )
    if rows and line == len(rows):
        print("  ------  doing nothing: 0")
    for i in b.incomplete:
        print(f"  incomplete, not ranked: {i.system} ({'; '.join(i.missing)})")
    names = dict(zip(b.frame["slug"], b.frame["system"], strict=True)) if rows else {}
    _print_resolution(facts, names, b.substrate)
    print()


def _print_board(b: Board, prices: Prices) -> None:
    from effectbench.site._format import break_even_text, signed
    from effectbench.site._tables import named

    facts = b.facts
    print(f"{b.title}: prices {prices.text()}")
    for leak in b.withheld:
        print(
            f"  not ranked until the pack is fixed: its blindness record (SPEC 5.3) finds "
            f"{leak.text()}"
        )
    if facts is not None and facts.idle is not None:
        print(
            f"  net value per 100 tasks against doing nothing on the same tasks (0: halting on "
            f"every task, which leaves the {100 * facts.idle:.1f}% of tasks whose correct action "
            "was available to a person)"
        )
    rows = b.frame.to_dict("records")
    unit = facts.unit if facts is not None else "task"
    line = facts.line_after if facts is not None and facts.idle is not None else -1
    for p, row in enumerate(rows):
        if p == line:
            print("  ------  doing nothing: 0")
        even = break_even_text(row["break_even"])
        print(
            f"  {_rank_text(row):>6}  {named(row['system'], row['substrate'])}: net value "
            f"{signed(row['value'])} [{signed(row['value_lo'])}, {signed(row['value_hi'])}]"
            f"{'; ' + even if even else ''}; SWER {_rate(row, 'swer', unit)}; over-halt "
            f"{_rate(row, 'over_halt', unit)}; record-wrong {_rate(row, 'record_wrong', unit)}"
            + (f"; preview, not ranked: {row['unranked']}" if row.get("unranked") else "")
        )
        fresh = _fresh_text(row)
        if fresh:
            print(f"          {fresh}")
    if line == len(rows):
        print("  ------  doing nothing: 0")
    if facts is not None:
        names = dict(zip(b.frame["slug"], b.frame["system"], strict=True))
        _print_resolution(facts, names, b.substrate)
    print()


def _rank_pooled(every: list[Board], chosen: Prices, args: argparse.Namespace) -> int:
    """Print the boards pooling packs (``--pooled``), as text or JSON."""
    from effectbench.site._pooled import pooled_boards

    pooled = pooled_boards(every, chosen)
    shown = [b for b in pooled if args.substrate is None or b.substrate in args.substrate]
    if args.json:
        print(json.dumps([pooled_json(b) for b in shown], indent=2, allow_nan=False))
        return 0 if shown else 1
    if not shown:
        have = ", ".join(sorted({b.substrate for b in pooled}))
        print(
            "no board pooling packs"
            + (f" on {', '.join(args.substrate)}: they are on {have}" if have else "")
        )
        return 1
    for b in shown:
        _print_pooled(b, chosen)
    return 0


def _cmd_rank(args: argparse.Namespace) -> int:
    from effectbench.metrics import DEFAULT_PRICES, prices
    from effectbench.site._entries import entry_from_report, unique_slugs
    from effectbench.site._tables import boards
    from verifier.ranking import rank_across

    base = args.costs or DEFAULT_PRICES
    chosen = prices(args.value if args.value is not None else base.value, *base.harms())
    with bar("verifying bundles", wanted(args.json)) as progress:
        reports = reports_of(
            args.paths,
            args.allow_unsigned,
            not args.no_reproduce,
            not args.no_cache,
            progress,
            records=record_policy(args),
            force_reproduce=args.reproduce,
        )
    reports = rank_across(reports)
    entries = [entry_from_report(r, s) for r, s in zip(reports, unique_slugs(reports), strict=True)]
    every = boards(entries, chosen)
    if args.pooled:
        return _rank_pooled(every, chosen, args)
    shown = [b for b in every if args.substrate is None or b.substrate in args.substrate]
    if args.json:
        print(json.dumps([board_json(b) for b in shown], indent=2, allow_nan=False))
        return 0 if shown else 1
    if not shown:
        if every:
            have = ", ".join(sorted({b.substrate for b in every}))
            print(f"no board on {', '.join(args.substrate)}: the boards are on {have}")
        else:
            print("no accepted bundle: nothing to rank")
        return 1
    for b in shown:
        _print_board(b, chosen)
    return 0


def register(sub: Any) -> None:
    """Add ``rank``."""
    p = sub.add_parser(
        "rank",
        help="verify bundles (reusing the site's cached reports) and print every board the site "
        "shows, one per substrate, by net value per 100 tasks (default prices, or --costs and "
        "--value)",
    )
    add_bundle_paths(p)
    p.add_argument(
        "--costs",
        type=cost_prices,
        metavar="PRICES",
        help="prices of a silent wrong effect, a wrong record and an over-halt, as "
        "'silent,wrong_record,over_halt' (e.g. 10,3,1, the default) or a preset "
        "(default, clinical-billing, back-office: it sets the value too)",
    )
    p.add_argument(
        "--value",
        type=correct_value,
        metavar="V",
        help="the value of a correct effect, above 0 (default 10, or the preset's)",
    )
    p.add_argument(
        "--substrate",
        type=substrate_names,
        metavar="NAME[,NAME]",
        help="print only the boards of these substrates (default: every board)",
    )
    p.add_argument(
        "--allow-unsigned", action="store_true", help="rank unsigned bundles as previews"
    )
    p.add_argument("--no-reproduce", action="store_true", help="do not re-run shipped baselines")
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="verify every bundle afresh (default: reuse the reports `site build` and earlier "
        "runs cached for the same bundle bytes, packs, code and records)",
    )
    add_record_options(p)
    p.add_argument(
        "--pooled",
        action="store_true",
        help="print the boards pooling packs instead: one per substrate, over one catalogue of "
        "each system of record (NAME-generated over NAME: the one with templates; a regression "
        "anchor, NAME-anchor, left out), each system that ran "
        "every pooled pack in full ranked by the same rules, any other listed as incomplete "
        "(with --json: as leaderboard.json's 'pooled' section, every pair's paired resolution)",
    )
    p.add_argument("--json", action="store_true", help="print the boards as JSON")
    p.set_defaults(func=_cmd_rank)
