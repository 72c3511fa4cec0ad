"""The board script's rank ranges at other prices (site/assets/leaderboard.js, EB_STATS) equal
the Python definitions (effectbench.verdicts.separation and rank_ranges), in real Chromium:
systems that ran the same tasks are compared all at once, others pair by pair, and both ways
give the same ranges."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, sync_playwright
from support.outcomes import outcome_counts

from effectbench.metrics import EVENTS, PRICE_PRESETS, Prices, TaskTable, t_table
from effectbench.site._prices import EVENT_KEYS, price_list
from effectbench.verdicts import board_order, rank_ranges, separation, standing

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "site" / "assets" / "leaderboard.js"
OUTCOMES = ("success", "silent_wrong_write", "wrong_action", "over_halt", "phantom", "false_abort")


@pytest.fixture(scope="module")
def page(chromium: Path) -> Iterator[Page]:
    with sync_playwright() as p:
        browser: Browser = p.chromium.launch(
            executable_path=str(chromium), args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        page = browser.new_page()
        page.set_content("<!doctype html><title>t</title>")
        page.add_script_tag(path=str(SCRIPT))
        yield page
        browser.close()


def _system(rnd: random.Random, tasks: list[str], trials: int, skill: float) -> TaskTable:
    per_task = [
        [
            "success" if rnd.random() < skill else rnd.choice(OUTCOMES[1:])
            for _ in range(trials if rnd.random() < 0.7 else 1)
        ]
        for _ in tasks
    ]
    counts = [outcome_counts(o) for o in per_task]
    return TaskTable(
        task_id=list(tasks),
        category=["control"] * len(tasks),
        substrate=["api"] * len(tasks),
        trials=[len(o) for o in per_task],
        events={e: [c[e] for c in counts] for e in EVENTS},
        correct_action_available=[True] * len(tasks),
    )


def _js_system(i: int, table: TaskTable, index: dict[str, int]) -> dict[str, Any]:
    return {
        "slug": f"s{i:03d}",
        "status": "ranked",
        "t": [index[t] for t in table.task_id],
        "m": list(table.trials),
        **{short: list(table.events[event]) for short, event in EVENT_KEYS.items()},
        "a": None if (a := table.a()) is None else [int(x) for x in a],
    }


def _js_ranges(
    page: Page,
    systems: list[dict[str, Any]],
    order: list[int],
    prices: Prices,
    apart: Any,
    pairwise: bool,
) -> tuple[list[int], list[int]]:
    w = dict(zip(("value", "silent", "wrong", "halt"), price_list(prices), strict=True))
    most = max(len(s["t"]) for s in systems)
    view = {"t": t_table(apart.confidence, most), "min_tasks": apart.min_tasks}
    t95 = t_table(0.95, most)
    best, worst = page.evaluate(
        """([systems, order, w, view, pairwise, t95]) => {
            const S = window.EB_STATS;
            const st = systems.map(sys => S.standing(sys, w, t95));
            return S.rankRanges(st, order, w, view, pairwise);
        }""",
        [systems, order, w, view, pairwise, t95],
    )
    return list(best), list(worst)


@pytest.mark.parametrize("seed", range(8))
def test_the_script_ranks_as_python_both_ways(page: Page, seed: int) -> None:
    rnd = random.Random(seed)
    n_tasks = rnd.choice((8, 20, 40))
    tasks = [f"t{i:02d}" for i in range(n_tasks)]
    same = seed % 4 != 3  # else some systems skip some tasks (pair by pair in Python too)
    tables = []
    for _ in range(rnd.choice((12, 30))):
        mine = tasks if same else sorted(rnd.sample(tasks, rnd.randint(n_tasks // 2, n_tasks)))
        tables.append(_system(rnd, mine, 3, rnd.random()))
    prices = rnd.choice([p for _, p in PRICE_PRESETS.values()])
    st = [standing(f"s{i:03d}", f"s{i:03d}", t, prices) for i, t in enumerate(tables)]
    order = board_order(st)
    apart = separation([tables[i] for i in order], prices)
    expected = rank_ranges(range(len(order)), apart.beyond)
    assert expected[0] != expected[1]  # some ranges are wider than one place, some are not
    index = {t: i for i, t in enumerate(tasks)}
    systems = [_js_system(i, t, index) for i, t in enumerate(tables)]
    for pairwise in (False, True):
        assert _js_ranges(page, systems, order, prices, apart, pairwise) == expected, pairwise
