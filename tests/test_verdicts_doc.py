"""Every figure of docs/verdicts.md, and the worked examples of the site's methodology page,
printed from the shipped bundles in ``submissions/``.

Each figure is computed here with the metrics' own functions from the bundles' rows and must
stand in the documents as printed; and every number docs/verdicts.md states outside code must
be one of them (or a count this test also derives), so no figure there goes stale unseen.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from statistics import median
from typing import Any

import pytest
from support.outcomes import outcome_counts

from effectbench.metrics import (
    CONFIDENCE,
    DEFAULT_PRICES,
    MAX_PRICE,
    POWER,
    PRICE_PRESETS,
    TaskTable,
    break_even,
    dead_units,
    episode_frame,
    family_confidence,
    idle_share,
    idle_value,
    joined,
    min_shared_tasks,
    minimum_detectable_difference,
    net_value,
    paired_difference,
    rate_difference,
    resolution,
    task_rate,
    task_table,
    value_difference,
)
from effectbench.packs import get_pack
from effectbench.packs.references import REFERENCE_FRESH_SEED
from effectbench.verdicts import board_order, rank_ranges, separation, standing
from verifier.pack import clusters_of, pack_tasks

ROOT = Path(__file__).resolve().parents[1]
SUBMISSIONS = ROOT / "submissions"
DOC = ROOT / "docs" / "verdicts.md"
METHODOLOGY = ROOT / "site" / "methodology.md"
CLINIC = ("effect_verified_all", "effect_verified", "screen_only")
MOCKMED = ("effect_verified", "always_halt", "screen_only", "retry_on_error")
SCREENS = ("web", "desktop", "remote_display")
SUBSTRATES = ("api", *SCREENS)
"""SPEC's order."""


def _rows(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (folder / "episodes.jsonl").read_text().splitlines()]


def _table(rows: list[dict[str, Any]]) -> TaskTable:
    available = {r["task_id"]: r["correct_action_available"] for r in rows}
    return task_table(episode_frame(rows), available)


FRESH = "+fresh"
"""Said after the pack of a reference drawn on a fresh instance of the generated clinic."""


def bundles() -> dict[tuple[str, str, str], Path]:
    """(pack, substrate, arm) of every shipped bundle -> its folder (the pack followed by
    :data:`FRESH` for a reference on a fresh instance)."""
    out = {}
    for folder in sorted(SUBMISSIONS.iterdir()):
        sub = folder / "submission.json"
        if not sub.is_file():
            continue
        doc = json.loads(sub.read_text())
        (substrate,) = {r["substrate"] for r in _rows(folder)}
        fresh = (doc.get("instances") or {}).get("seed") == REFERENCE_FRESH_SEED
        pack = doc["pack"]["name"] + (FRESH if fresh else "")
        out[(pack, substrate, doc["system"]["baseline"])] = folder
    return out


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def signed(x: float) -> str:
    """As the documents print a net value or a difference: a true minus sign."""
    text = f"{x:+.1f}".replace("-", "−")
    return "0.0" if text in ("+0.0", "−0.0") else text


def interval(lo: float, hi: float, scale: float = 1.0) -> str:
    return f"[{signed(scale * lo)}, {signed(scale * hi)}]"


def board(pack: str, substrate: str, arms: tuple[str, ...]) -> dict[str, Any]:
    """One shipped board, as the site and ``effectbench rank`` compute it."""
    found = bundles()
    tables = {arm: _table(_rows(found[(pack, substrate, arm)])) for arm in arms}
    standings = [standing(a, a, tables[a], DEFAULT_PRICES) for a in arms]
    order = [arms[i] for i in board_order(standings)]
    ordered = [tables[a] for a in order]
    apart = separation(ordered, DEFAULT_PRICES)
    best, worst = rank_ranges(range(len(order)), apart.beyond)
    idle = idle_share(ordered)
    assert idle is not None
    # what a board's minimum detectable difference rests on: the median effective tasks
    neff = [task_rate(t, "swer").clustered.n_effective for t in ordered]
    return {
        "tables": tables,
        "order": order,
        "ranks": {
            a: f"{b}" if b == w else f"{b}–{w}" for a, b, w in zip(order, best, worst, strict=True)
        },
        "idle": idle,
        "apart": apart,
        "value": {a: net_value(t, DEFAULT_PRICES) for a, t in tables.items()},
        "even": {a: break_even(t, DEFAULT_PRICES, idle) for a, t in tables.items()},
        "mdd": minimum_detectable_difference(median(neff)),
        "neff": median(neff),
    }


def generated_tables(found: dict[tuple[str, str, str], Path]) -> dict[str, TaskTable]:
    """The generated clinic's public-seed API bundles counted per template, as the verifier
    counts them (the pack's own clusters)."""
    folder = found[("clinic-generated", "api", "effect_verified")]
    doc = json.loads((folder / "submission.json").read_text())
    facts = pack_tasks(get_pack(doc["pack"]["name"]), doc.get("split", "dev"))
    available = {t: f.correct_action_available for t, f in facts.items()}
    clusters = clusters_of(facts)
    return {
        arm: task_table(
            episode_frame(_rows(found[("clinic-generated", "api", arm)])), available, clusters
        )
        for arm in CLINIC
    }


def _bundle_figures(found: dict[tuple[str, str, str], Path]) -> dict[str, str]:
    """How many bundles there are, of what, and at how many trials."""
    out: dict[str, str] = {}
    out["bundles"] = str(len(found))
    trials = {
        k: json.loads((f / "submission.json").read_text())["trials_per_task"]
        for k, f in found.items()
    }
    out["mockmed bundles"] = str(sum(k[0] == "mockmed-anchor" for k in found))
    out["clinic arms"] = str(len(CLINIC))
    screens = [k for k in found if k[0] == "clinic" and k[1] in SCREENS]
    out["screen bundles"] = str(len(screens))
    out["api trials"] = str(trials[("clinic", "api", "effect_verified_all")])
    out["screen trials"] = str(trials[("clinic", "web", "effect_verified_all")])
    ticketing = sorted(
        (k for k in found if k[0] == "ticketing" and k[2] in CLINIC),
        key=lambda k: SUBSTRATES.index(k[1]),
    )
    on_screen = [*screens, *(k for k in ticketing if k[1] in SCREENS)]
    _assert_trials(trials, on_screen, out)
    out["generated bundles"] = _generated_bundles(found, trials)
    out.update(_ticketing_bundles(ticketing, out))
    out["clinic boards"] = str(1 + len(SCREENS))
    return out


def _assert_trials(
    trials: dict[tuple[str, str, str], int],
    on_screen: list[tuple[str, str, str]],
    counted: dict[str, str],
) -> None:
    """Every bundle on a screen has the screen trials, every other (the generated clinic's
    aside) the API's."""
    assert {trials[k] for k in on_screen} == {int(counted["screen trials"])}
    written = [k for k in trials if not k[0].startswith("clinic-generated") and k not in on_screen]
    assert {trials[k] for k in written} == {int(counted["api trials"])}


def _tasks_on(
    found: dict[tuple[str, str, str], Path], bundles: list[tuple[str, str, str]], substrate: str
) -> int:
    """How many tasks ``bundles`` on ``substrate`` ran."""
    return len({r["task_id"] for k in bundles if k[1] == substrate for r in _rows(found[k])})


def _generated_bundles(
    found: dict[tuple[str, str, str], Path], trials: dict[tuple[str, str, str], int]
) -> str:
    """The generated clinic's bundles, said in one phrase."""
    # the careful arm (look_before_write, the API only) is not one of the ladder's arms
    generated = [k for k in found if k[0] == "clinic-generated" and k[2] in CLINIC]
    on = {s: {trials[k] for k in generated if k[1] == s} for s in ("api", "web")}
    assert len(generated) == 2 * len(CLINIC) and all(len(v) == 1 for v in on.values())
    tasks = {s: _tasks_on(found, generated, s) for s in on}
    fresh = [k for k in found if k[0] == "clinic-generated" + FRESH]
    assert sorted(k[1:] for k in fresh) == sorted(k[1:] for k in generated if k[1] == "api")
    assert {trials[k] for k in fresh} == on["api"]
    return (
        f"the generated clinic's {len(CLINIC)} arms on its API at {min(on['api'])} trials of "
        f"{tasks['api']} tasks, on its public dev seed and again on a fresh instance, and on the "
        f"web at {min(on['web'])} trials of its {tasks['web']}-task sample "
        f"({len(generated) + len(fresh)} bundles"
    )


def _ticketing_bundles(
    ticketing: list[tuple[str, str, str]], counted: dict[str, str]
) -> dict[str, str]:
    """The ticketing pack's bundles and boards (``counted``: the trials already printed)."""
    ticketing_on = list(dict.fromkeys(k[1] for k in ticketing))
    assert ticketing_on == ["api", "web"] and len(ticketing) == len(CLINIC) * len(ticketing_on)
    return {
        "ticketing bundles": (
            f"the ticketing pack's {len(CLINIC)} arms on its API at {counted['api trials']} "
            f"trials and on the web at {counted['screen trials']} ({len(ticketing)} bundles)"
        ),
        "ticketing boards": (
            f"the ticketing pack {len(ticketing_on)} ({', '.join(f'`{s}`' for s in ticketing_on)})"
        ),
    }


def _clinic_rate_figures(t: dict[str, TaskTable]) -> dict[str, str]:
    """The clinic's API board: its task count and the rates the doc tabulates."""
    out: dict[str, str] = {}
    out["tasks"] = str(t["effect_verified_all"].n_tasks)
    swer = task_rate(t["effect_verified_all"], "swer")
    wrong = task_rate(t["effect_verified_all"], "record_wrong")
    out["eva swer"] = f"{swer.numerator}/{swer.denominator}"
    out["eva record-wrong"] = f"{wrong.numerator}/{wrong.denominator}"
    out["eva record-wrong pct"] = pct(wrong.rate)
    for arm, event in (
        ("effect_verified_all", "over_halt"),
        ("effect_verified", "swer"),
        ("screen_only", "over_halt"),
    ):
        r = task_rate(t[arm], event)
        out[f"{arm} {event} row"] = (
            f"| {r.numerator}/{r.denominator} | [{pct(r.ci.lo)}, {pct(r.ci.hi)}] | "
            f"{r.clustered.design_effect:.1f} | [{pct(r.clustered.lo)}, {pct(r.clustered.hi)}] |"
        )
    zero = task_rate(t["screen_only"], "over_halt")
    assert zero.upper is not None and zero.clustered_upper is not None
    out["zero raw"] = pct(zero.upper)
    out["zero tasks"] = pct(zero.clustered_upper)
    return out


def _assert_every_clinic_board_is_the_apis(api: dict[str, Any]) -> None:
    """The clinic's boards: the same on every substrate."""
    for substrate in SCREENS:
        other = board("clinic", substrate, CLINIC)
        assert other["order"] == api["order"] and other["ranks"] == api["ranks"]
        for arm in CLINIC:
            mine, theirs = other["value"][arm], api["value"][arm]
            assert interval(mine.lo, mine.hi) == interval(theirs.lo, theirs.hi)
            assert signed(mine.per_100) == signed(theirs.per_100)
    assert api["order"] == list(CLINIC)


def _clinic_value_figures(api: dict[str, Any]) -> dict[str, str]:
    """The clinic's API board: each arm's value row, the idle line and the break-evens."""
    out: dict[str, str] = {}
    t = api["tables"]
    for arm in CLINIC:
        v = api["value"][arm]
        out[f"clinic {arm} row"] = (
            f"| `{arm}` | {signed(v.per_100)} {interval(v.lo, v.hi)} | {api['even'][arm]:.1f} | "
            f"{api['ranks'][arm]} |"
        )
    out["idle share"] = pct(api["idle"])
    avail = t["effect_verified_all"].correct_action_available
    assert avail is not None
    out["idle tasks"] = f"{sum(avail)} of {len(avail)}"
    out["idle value"] = signed(idle_value(DEFAULT_PRICES, api["idle"]))
    out["eva even"] = f"{api['even']['effect_verified_all']:.1f}"
    out["ev even"] = f"{api['even']['effect_verified']:.1f}"
    out["so even"] = f"{api['even']['screen_only']:.1f}"
    out["ev swer k"] = str(task_rate(t["effect_verified"], "swer").numerator)
    return out


def _mockmed_figures(mock: dict[str, Any]) -> dict[str, str]:
    """The MockMed anchor's web board."""
    out: dict[str, str] = {}
    assert mock["order"] == list(MOCKMED)
    for arm in MOCKMED:
        out[f"mockmed {arm}"] = signed(mock["value"][arm].per_100)
        even = mock["even"][arm]
        if even is not None and even != float("inf"):
            out[f"mockmed {arm} even"] = f"{even:.1f}"
    assert mock["even"]["always_halt"] == float("inf")
    out["mockmed ranks"] = ", ".join(f"`{arm}` {mock['ranks'][arm]}" for arm in MOCKMED)
    out["mockmed tasks"] = str(mock["tables"]["effect_verified"].n_tasks)
    out["mockmed pairs"] = str(len(MOCKMED) * (len(MOCKMED) - 1) // 2)
    out["mockmed level"] = pct(mock["apart"].confidence)
    out["mockmed min tasks"] = str(mock["apart"].min_tasks)
    ev = mock["tables"]["effect_verified"]
    out["mockmed successes"] = f"{int(ev.k('task_success').sum())} of the {ev.n_episodes}"
    return out


def _careless_figure() -> str:
    """One right, nine wrong records (the issue's case): its value."""
    careless = TaskTable(
        task_id=[f"t{i}" for i in range(10)],
        category=["control"] * 10,
        substrate=["api"] * 10,
        trials=[3] * 10,
        events={
            e: [outcome_counts(["success"] * 3)[e]] + [outcome_counts(["wrong_action"] * 3)[e]] * 9
            for e in outcome_counts([])
        },
        correct_action_available=[True] * 10,
    )
    return signed(net_value(careless, DEFAULT_PRICES).per_100)


def _difference_figures(
    api: dict[str, Any], found: dict[tuple[str, str, str], Path]
) -> dict[str, str]:
    """The family-wise level, the fewest shared tasks, and the differences the doc works."""
    out: dict[str, str] = {}
    t = api["tables"]
    out["clinic pairs"] = "3"
    out["clinic level"] = pct(api["apart"].confidence)
    assert api["apart"].confidence == family_confidence(len(CLINIC))
    out["clinic min tasks"] = str(api["apart"].min_tasks)
    out["single min tasks"] = str(min_shared_tasks(CONFIDENCE))
    level = api["apart"].confidence
    d = value_difference(t["effect_verified"], t["effect_verified_all"], DEFAULT_PRICES, level)
    assert not d.beyond_noise
    out["ev - eva value"] = f"{signed(d.difference)} {interval(d.lo, d.hi)}"
    d = value_difference(t["effect_verified_all"], t["screen_only"], DEFAULT_PRICES, level)
    assert d.beyond_noise
    out["eva - so value"] = f"{signed(d.difference)} {interval(d.lo, d.hi)}"
    # rate differences
    d = rate_difference(t["effect_verified_all"], t["screen_only"], "over_halt")
    assert not d.beyond_noise
    out["oh diff"] = signed(100 * d.difference)
    out["oh diff tasks"] = interval(d.lo, d.hi, 100)
    out["oh diff episodes"] = _naive_over_halt_difference(found)
    d = rate_difference(t["effect_verified"], t["effect_verified_all"], "swer")
    out["swer diff"] = f"{signed(100 * d.difference)} points {interval(d.lo, d.hi, 100)}"
    d = rate_difference(t["effect_verified_all"], t["effect_verified_all"], "over_halt")
    assert d.difference == d.lo == d.hi == 0.0
    out["identical"] = f"{signed(d.difference)} {interval(d.lo, d.hi, 100)}"
    return out


def _naive_over_halt_difference(found: dict[tuple[str, str, str], Path]) -> str:
    """The over-halt difference with repeats counted as independent pairs: "beyond noise"."""
    a, b = (
        {(r["task_id"], r["trial"]): r for r in _rows(found[("clinic", "api", arm)])}
        for arm in ("effect_verified_all", "screen_only")
    )
    pairs = [(a[k]["outcome"] == "over_halt", b[k]["outcome"] == "over_halt") for k in a]
    naive = paired_difference(
        sum(x and y for x, y in pairs),
        sum(x and not y for x, y in pairs),
        sum(y and not x for x, y in pairs),
        sum(not x and not y for x, y in pairs),
    )
    assert naive.ci.lo > 0
    return interval(naive.ci.lo, naive.ci.hi, 100)


def _paired_figures(gen: dict[str, TaskTable]) -> dict[str, str]:
    """The paired resolution on the generated clinic's API board (templates its units)."""
    out: dict[str, str] = {}
    for (x, y), key in (
        (("effect_verified_all", "effect_verified"), "eva ev"),
        (("effect_verified", "screen_only"), "ev so"),
    ):
        rs = resolution(gen[x], gen[y], "swer", DEFAULT_PRICES)
        v = resolution(gen[x], gen[y], "value", DEFAULT_PRICES)
        assert rs.paired_mdd is not None and rs.paired_sd is not None and rs.fixed_mdd is not None
        assert v.paired_mdd is not None and v.fixed_mdd is not None
        out[f"paired {key}"] = f"{rs.paired_mdd:.1f} points"
        out[f"paired {key} sd"] = f"{rs.paired_sd:.1f}"
        out[f"paired {key} fixed"] = f"{rs.fixed_mdd:.1f}"
        out[f"paired {key} value"] = f"{v.paired_mdd:.1f}"
        out[f"paired {key} value fixed"] = f"{v.fixed_mdd:.1f}"
        out["paired templates"] = str(rs.paired_units)
    return out


def _pooled_figures(
    gen: dict[str, TaskTable], found: dict[tuple[str, str, str], Path]
) -> dict[str, str]:
    """The board pooling packs on the API: one catalogue per system of record (the generated
    clinic's templates, the ticketing pack's tasks), kept apart."""
    ticketing_api = {arm: _table(_rows(found[("ticketing", "api", arm)])) for arm in CLINIC}
    pooled = {
        arm: joined([("clinic-generated", gen[arm]), ("ticketing", ticketing_api[arm])])
        for arm in CLINIC
    }
    rp = resolution(
        pooled["effect_verified_all"], pooled["effect_verified"], "swer", DEFAULT_PRICES
    )
    assert rp.paired_mdd is not None and rp.paired_mdd <= 12.0  # the bound
    return {
        "pooled eva ev": f"{rp.paired_mdd:.1f} points",
        "pooled units": str(rp.paired_units),
        "ticketing tasks": str(ticketing_api["effect_verified"].n_tasks),
    }


def _resolution_and_constant_figures(api: dict[str, Any], mock: dict[str, Any]) -> dict[str, str]:
    """The clinic's dead tasks (every arm the same outcome there), the boards' detectable
    differences, and the constants the documents state (the code's own)."""
    out: dict[str, str] = {}
    dead = dead_units([api["tables"][a] for a in CLINIC])
    out["clinic dead"] = f"{len(dead.dead)} of its {dead.units} tasks"
    out["clinic mdd"] = f"{100 * api['mdd']:.0f}"
    out["clinic neff"] = f"{api['neff']:.0f}"
    out["mockmed mdd"] = f"{100 * mock['mdd']:.0f}"
    out["mockmed neff"] = f"{mock['neff']:.1f}"
    out["max price"] = f"{MAX_PRICE:,.0f}"
    out["power"] = f"{100 * POWER:.0f}%"
    out["prices"] = (
        f"a correct effect {DEFAULT_PRICES.value:g}, a silent wrong effect "
        f"{DEFAULT_PRICES.silent:g}, a wrong record {DEFAULT_PRICES.wrong_record:g}, an "
        f"over-halt {DEFAULT_PRICES.over_halt:g}"
    )
    billing = PRICE_PRESETS["clinical-billing"][1]
    out["billing"] = billing.costs_text()
    return out


def figures() -> dict[str, str]:
    """Every figure the documents state, by what it is, as printed."""
    found = bundles()
    out = _bundle_figures(found)
    api = board("clinic", "api", CLINIC)
    out.update(_clinic_rate_figures(api["tables"]))
    web = board("clinic", "web", CLINIC)
    oh = task_rate(web["tables"]["effect_verified_all"], "over_halt")
    out["web over-halt"] = f"{oh.numerator}/{oh.denominator}, [{pct(oh.ci.lo)}, {pct(oh.ci.hi)}]"
    _assert_every_clinic_board_is_the_apis(api)
    out.update(_clinic_value_figures(api))
    mock = board("mockmed-anchor", "web", MOCKMED)
    out.update(_mockmed_figures(mock))
    out["careless"] = _careless_figure()
    out.update(_difference_figures(api, found))
    gen = generated_tables(found)
    out.update(_paired_figures(gen))
    out.update(_pooled_figures(gen, found))
    out.update(_resolution_and_constant_figures(api, mock))
    return out


@pytest.fixture(scope="module")
def printed() -> dict[str, str]:
    found = figures()
    print("\n".join(f"{k}: {v}" for k, v in found.items()))  # the figures, printed
    return found


IN_DOC = [
    *(
        key
        for key in (
            "bundles",
            "mockmed bundles",
            "clinic arms",
            "screen bundles",
            "ticketing bundles",
            "generated bundles",
            "clinic boards",
            "ticketing boards",
            "eva swer",
            "eva record-wrong",
            "eva record-wrong pct",
            "effect_verified_all over_halt row",
            "effect_verified swer row",
            "screen_only over_halt row",
            "zero raw",
            "zero tasks",
            "web over-halt",
            "clinic effect_verified_all row",
            "clinic effect_verified row",
            "clinic screen_only row",
            "idle share",
            "idle tasks",
            "idle value",
            "eva even",
            "ev even",
            "ev swer k",
            "mockmed effect_verified",
            "mockmed effect_verified even",
            "mockmed always_halt",
            "mockmed screen_only",
            "mockmed screen_only even",
            "mockmed retry_on_error",
            "mockmed retry_on_error even",
            "mockmed ranks",
            "mockmed tasks",
            "mockmed pairs",
            "mockmed level",
            "mockmed min tasks",
            "careless",
            "clinic pairs",
            "clinic level",
            "clinic min tasks",
            "single min tasks",
            "ev - eva value",
            "eva - so value",
            "oh diff",
            "oh diff tasks",
            "oh diff episodes",
            "identical",
            "paired eva ev",
            "paired eva ev sd",
            "paired eva ev fixed",
            "paired eva ev value",
            "paired eva ev value fixed",
            "paired ev so",
            "paired templates",
            "pooled eva ev",
            "pooled units",
            "ticketing tasks",
            "clinic dead",
            "max price",
            "prices",
            "billing",
        )
    )
]


NUMBER = r"[−+]?\d+(?:,\d{3})*(?:\.\d+)?%?"
"""A number as the documents write one (``1,200``, ``−86.6``, ``44.4%``)."""


def _prose(text: str) -> str:
    """The document without its code (fenced blocks and inline code)."""
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    return re.sub(r"`[^`]*`", " ", text)


def test_every_figure_of_the_verdicts_doc_is_printed_from_the_shipped_bundles(
    printed: dict[str, str],
) -> None:
    doc = " ".join(DOC.read_text(encoding="utf-8").split())  # figures may wrap across lines
    missing = [(k, printed[k]) for k in IN_DOC if printed[k] not in doc]
    assert missing == []
    # ... and no number of it is anything else: each is (part of) a printed figure, or a count
    # the figures above derive, or the code's own constant.
    numbers = set(re.findall(NUMBER, _prose(doc)))
    known = {n for v in printed.values() for n in re.findall(NUMBER, v)}
    structural = {"1.0", "1.1", "1.2", "1.3", "1.3.0", "1", "0", "2", "4", "1e-6", "1,200"}
    structural |= {"95", "95%", "5", "5%", "13", "10", "3", "8", "9", "100"}
    structural |= {"1,000", "40"}  # the generated boards of tests/test_metrics_clustered.py
    assert sorted(numbers - known - structural) == []


METHODOLOGY_FIGURES = (
    "idle share",
    "eva even",
    "ev even",
    "so even",
    "mockmed effect_verified",
    "mockmed successes",
    "oh diff",
    "oh diff episodes",
    "oh diff tasks",
    "swer diff",
    "clinic level",
    "clinic min tasks",
    "single min tasks",
    "clinic mdd",
    "mockmed mdd",
    "mockmed neff",
    "paired eva ev",
    "paired ev so",
)


def test_the_methodology_pages_worked_examples_are_the_shipped_bundles(
    printed: dict[str, str],
) -> None:
    page = " ".join(METHODOLOGY.read_text(encoding="utf-8").split())
    missing = [(k, printed[k]) for k in METHODOLOGY_FIGURES if printed[k] not in page]
    assert missing == []
    row = printed["effect_verified_all over_halt row"].strip("| ").split(" | ")
    assert f"over-halt is {row[0]} = 7.4%" in page and f"interval is {row[1]}" in page
    assert f"design effect is {row[2]}" in page and f"**{row[3]}**" in page
    assert f"{printed['zero raw']} on 270 episodes but **{printed['zero tasks']} on 27 tasks**" in (
        page
    )
    value = printed["clinic effect_verified_all row"].split(" | ")[1]
    assert f"`effect_verified_all` is {value}" in page
    diff = printed["ev - eva value"]
    assert f"in net value {diff.split(' ', 1)[0]} per 100 tasks {diff.split(' ', 1)[1]}" in page
    assert printed["clinic screen_only row"].split(" | ")[1].split(" ")[0] in page
