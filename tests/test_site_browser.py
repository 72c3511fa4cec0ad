"""The built site in real headless Chromium (Debian's package), over http and file://.

Every request the browser makes is checked: anything that is not 127.0.0.1 or
file:// is aborted and fails the test. The site holds the reference bundles, a
bundle named with a <script>, a refused (tampered) one and an unsigned preview
that ran two substrates, so one board has a substrate filter.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from playwright.sync_api import Browser, Locator, Page, expect, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from support.browser import Watched, served
from support.site import (
    CLINIC_API,
    CLINIC_BOARD,
    MOCKMED_BOARD,
    MOCKMED_WEB,
    RECORDS,
    REFERENCE_BOARDS,
    ROOT,
    SCREENS_ARMS,
    SCREENS_BOARD,
    SCREENS_PACK,
    SCRIPT_NAME,
    ScreensPack,
    make_submissions,
    registered,
    screens_bundles,
    slug_of,
)

from effectbench.metrics import (
    DEFAULT_PRICES,
    RATE_OUTCOMES,
    Difference,
    Prices,
    TaskTable,
    break_even,
    episode_frame,
    idle_share,
    net_value,
    parse_prices,
    rate_difference,
    task_table,
    value_difference,
)
from effectbench.packs import register
from effectbench.site import build_site
from effectbench.site._format import break_even_text
from effectbench.site._prices import SHARD_BYTES
from effectbench.site._tables import BOARD_COLUMNS
from effectbench.verdicts import board_order, grain, rank_ranges, separation, standing

pytestmark = pytest.mark.browser

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
AXE = ROOT / "tests" / "vendor" / "axe-core" / "axe.min.js"
TWO_BOARD = SCREENS_BOARD
"""The table of a pack whose every task runs on two substrates: a web board and a desktop one."""
N_SCREENS_ROWS = len(SCREENS_ARMS) + 2
"""Rows of each of its boards: the three baselines, the one-bundle mix and the two-bundle one's
bundle on that substrate."""
BOARDS = (*REFERENCE_BOARDS, TWO_BOARD)
"""The page's tables (one per pack)."""
COMPARE_BOARDS = (MOCKMED_WEB, CLINIC_API, f"{TWO_BOARD}-web", f"{TWO_BOARD}-desktop")
"""Every board (one per pack and substrate): what the compare view picks from."""
WIDTHS = (390, 1366)
ROWS_INLINE = 3
"""The rows each board holds on the page in this module's build: the two-substrate pack's boards
hold more, so the page loads the rest of their rows from shards when a test sorts, filters or
re-prices them, and every test of those boards covers that path."""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A real build: the reference bundles, a <script> name, a refused bundle, and systems on
    a pack whose tasks each run on two substrates (built in this process, where that pack is
    known)."""
    base = tmp_path_factory.mktemp("browser-site")
    paths = make_submissions(base)
    with register(SCREENS_PACK, ScreensPack):
        screens = screens_bundles(paths["subs"])
        two = [b for bundles in screens.values() for b in bundles]
        out = base / "public"
        # Previews allowed: only the listed reference bundles are ranked unsigned; the
        # runs on two substrates and the <script>-named one are unsigned previews.
        build_site(  # the copied references from their records; the runs above re-run
            paths["subs"],
            out,
            root=ROOT,
            cache_dir=base / "cache",
            workers=1,
            allow_unsigned=True,
            records=RECORDS,
            rows_inline=ROWS_INLINE,
        )
        yield {**paths, "two": two, "screens": screens, "out": out, "base": base}


@pytest.fixture(scope="module")
def server(site: dict[str, Any]) -> Iterator[str]:
    """A real http server on 127.0.0.1 (free port) serving the built site."""
    with served(site["out"]) as url:
        yield url


@pytest.fixture(scope="module")
def browser(chromium: Path) -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(chromium), args=FLAGS)
        yield b
        b.close()


@pytest.fixture(params=["http", "file"])
def base_url(request: pytest.FixtureRequest, site: dict[str, Any], server: str) -> str:
    return server if request.param == "http" else site["out"].as_uri() + "/"


@pytest.fixture
def watched(browser: Browser) -> Iterator[Watched]:
    w = Watched(browser)
    yield w
    w.check()


def board(page: Page, key: str) -> Locator:
    return page.locator(f"table#eb-board-{key}[data-eb-board]")


def settled(page: Page) -> None:
    """Wait until nothing is loading from shards: a board loading its rows and the compare
    view loading a board's systems say ``aria-busy`` meanwhile."""
    expect(page.locator('[aria-busy="true"]')).to_have_count(0)


def show_all(page: Page, key: str) -> None:
    """Load every row of the board a pack's table shows, when the page holds only its first
    rows (its "Show all" button; the paragraph goes once they are in)."""
    button = page.locator(f'p[data-eb-facts="{key}"]:not([hidden]) button[data-eb-show-all]')
    if button.count():
        button.click()
        expect(button).to_have_count(0)


def cell_k(page: Page, slug: str, metric: str) -> str:
    row = page.locator(f'tbody:not([hidden]) tr[data-slug="{slug}"]')
    return row.locator(f'td[data-metric="{metric}"] .eb-k').inner_text()


RANKED = "tbody[data-eb-board-key]"
"""A board's ranked rows (and a withheld board's, unranked): its table's body."""
PREVIEWS = "tbody[data-eb-previews]"
"""A board's unsigned previews: a marked section of its own, after its ranked rows."""


def shown_slugs(page: Page, key: str, part: str = "tbody") -> list[str]:
    """The slugs of the rows a pack's table shows, top to bottom (``part``: of one section)."""
    rows = board(page, key).locator(f"{part}:not([hidden]) tr[data-slug]:not([hidden])")
    return [str(s) for s in rows.evaluate_all("els => els.map(e => e.dataset.slug)")]


def sectioned(slugs: list[str], statuses: dict[str, str]) -> list[str]:
    """``slugs`` (in the default order) as a board shows them: its ranked rows, then its
    unsigned previews in their section, each part in that order."""
    return [s for s in slugs if statuses[s] != "preview"] + [
        s for s in slugs if statuses[s] == "preview"
    ]


def column(page: Page, key: str, col: str, part: str = "tbody") -> list[tuple[float | str, int]]:
    """(sort value, default position) of every shown row of a board (``part``: of one of its
    sections), top to bottom."""
    rows = board(page, key).locator(f"{part}:not([hidden]) tr[data-slug]:not([hidden])")
    script = """(els, col) => els.map(e => [
        e.querySelector('[data-col="' + col + '"]').dataset.sort, Number(e.dataset.order)])"""
    numeric = board(page, key).locator(f'th[data-eb-column="{col}"]').get_attribute("data-eb-type")
    out: list[tuple[float | str, int]] = []
    for value, order in rows.evaluate_all(script, col):
        if numeric == "number" and value == "":  # not measured: sorted as the page does, last
            out.append((float("inf"), int(order)))
            continue
        try:
            out.append((float(value), int(order)))
        except ValueError:
            out.append((str(value), int(order)))
    return out


def boards_of(site: dict[str, Any]) -> list[str]:
    return sorted(BOARDS)


# -- the board: numbers, order, sorting, filtering, links -----------------------------------


def test_a_board_past_its_first_rows_keeps_the_rest_in_shards(site: dict[str, Any]) -> None:
    """Each board's tbody holds its first rows; the rest, in the default order of the CSV, are
    in its row shards with their per-task counts, each within the shard bound, and the pack's
    board script carries the counts of the rows on the page only. The compare view's script of
    a board holds as many systems, its parts the rest, in the same order."""
    out: Path = site["out"]
    html = (out / "index.html").read_text(encoding="utf-8")
    csv = pd.read_csv(out / "downloads" / "leaderboard.csv")
    sharded = 0
    status = {str(x): str(y) for x, y in zip(csv.slug, csv.status, strict=True)}
    for view, slugs in csv.groupby("board", sort=False)["slug"]:
        order = [str(x) for x in slugs]
        first = order[:ROWS_INLINE]
        body = re.search(rf'<tbody id="{view}"[^>]*>(.*?)</tbody>', html, re.S)
        assert body is not None, view
        # the first rows of the default order: the ranked ones in the board's table, the
        # unsigned previews in their section right after it
        ranked = re.findall(r'<tr data-slug="([^"]+)"', body.group(1))
        assert ranked == [x for x in first if status[x] != "preview"], view
        section = re.search(rf'<tbody [^>]*id="previews-{view}"[^>]*>(.*?)</tbody>', html, re.S)
        previews = [x for x in order if status[x] == "preview"]
        assert (section is not None) == bool(previews), view
        if section is not None:
            assert section.start() == body.end() + 1, view
            shown = re.findall(r'<tr data-slug="([^"]+)"', section.group(1))
            assert shown == [x for x in first if status[x] == "preview"], view
        group = html[: body.start()].rsplit('data-eb-board="', 1)[1].split('"', 1)[0]
        substrate = str(csv.loc[csv.board == view, "substrate"].iloc[0])
        head = registered(out / "boards" / f"{group}.js")["views"][substrate]["systems"]
        assert [x["slug"] for x in head] == order[:ROWS_INLINE], view
        shards = sorted((out / "boards").glob(f"{view}-*.js"))
        if len(order) <= ROWS_INLINE:
            assert "data-eb-shards" not in body.group(0)[:400] and not shards, view
            continue
        sharded += 1
        opening = body.group(0)[: body.group(0).index(">")]
        assert f'data-eb-rows="{len(order)}"' in opening
        assert f'data-eb-shards="{len(shards)}"' in opening
        rows: list[str] = []
        systems: list[str] = []
        for i in range(len(shards)):
            path = out / "boards" / f"{view}-{i}.js"
            assert path.stat().st_size <= SHARD_BYTES + 200, path
            data = registered(path)
            rows += [re.findall(r'<tr data-slug="([^"]+)"', r)[0] for r in data["rows"]]
            systems += [x["slug"] for x in data["systems"]]
        assert rows == systems == order[ROWS_INLINE:], view
    for view, slugs in csv.groupby("board", sort=False)["slug"]:
        order = [str(x) for x in slugs]
        compare = registered(out / "compare" / f"{view}.js")
        parts = sorted((out / "compare").glob(f"{view}-*.js"))
        assert compare["parts"] == len(parts) == (0 if len(order) <= ROWS_INLINE else 1), view
        shown = [x["slug"] for x in compare["systems"]]
        for i in range(len(parts)):
            path = out / "compare" / f"{view}-{i}.js"
            assert path.stat().st_size <= SHARD_BYTES + 200, path
            shown += [x["slug"] for x in registered(path)["systems"]]
        assert shown == order, view  # the compare view's systems: the board's, in its order
    assert sharded >= 2  # the two-substrate pack's boards


def test_board_shows_pinned_numbers(watched: Watched, base_url: str, site: dict[str, Any]) -> None:
    page = watched.page
    page.goto(base_url + "index.html")
    screen, halt = slug_of(site, "_screen-only"), slug_of(site, "_always-halt")
    assert cell_k(page, screen, "swer") == "50/90"
    assert cell_k(page, screen, "over_halt") == "0/90"
    assert cell_k(page, halt, "swer") == "0/90"
    assert cell_k(page, halt, "over_halt") == "30/90"
    clinic = slug_of(site, "_screen-only-clinic")
    show_all(page, CLINIC_BOARD)  # the clinic's fourth row is past the rows a page opens with
    assert cell_k(page, clinic, "swer") == "170/270"
    assert cell_k(page, clinic, "over_halt") == "0/270"
    assert page.locator(f'tr[data-slug="{site["bad"].name.lower()}"]').count() == 0


def test_first_screen_holds_the_lead_and_a_board_with_swer_beside_over_halt(
    browser: Browser, server: str
) -> None:
    """On a 1366 x 768 laptop screen, before any scrolling: the lead and the first board's top
    row, its SWER, over-halt and record-wrong numbers (value and k/n) in view; the long
    definition stays folded."""
    w = Watched(browser, viewport={"width": 1366, "height": 768})
    w.page.goto(server + "index.html")
    top = w.page.locator("table.eb-board").first.locator("tbody:not([hidden]) tr[data-slug]").first
    for part in (
        w.page.locator("p.eb-lede"),
        top.locator(".eb-system a"),
        *(
            top.locator(f'td[data-metric="{m}"] {part}')
            for m in ("value", "swer", "over_halt", "record_wrong")
            for part in (".eb-p", ".eb-ci")
        ),
        *(
            top.locator(f'td[data-metric="{m}"] .eb-k')
            for m in ("swer", "over_halt", "record_wrong")
        ),
    ):
        box = part.bounding_box()
        assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 768, box
    assert w.page.locator("details.eb-howto").get_attribute("open") is None
    w.check()


def test_default_order_is_the_same_with_and_without_javascript_and_in_the_csv(
    browser: Browser, base_url: str, site: dict[str, Any]
) -> None:
    csv = pd.read_csv(site["out"] / "downloads" / "leaderboard.csv")
    data = json.loads((site["out"] / "downloads" / "leaderboard.json").read_text())
    with_js, without_js = Watched(browser), Watched(browser, java_script_enabled=False)
    for w in (with_js, without_js):
        w.page.goto(base_url + "index.html")
    first_board = {g["key"]: g["boards"][0] for g in data["groups"]}
    status = {str(x): str(y) for x, y in zip(csv.slug, csv.status, strict=True)}
    for key in boards_of(site):  # each pack's table shows its first substrate's board
        expected = [
            str(s) for s, b in zip(csv.slug, csv.board, strict=True) if b == first_board[key]
        ]
        # the ranked rows in the default order, then the previews' section in it
        first = sectioned(expected[:ROWS_INLINE], status)
        assert shown_slugs(without_js.page, key) == first, key
        assert shown_slugs(with_js.page, key) == first, key
        more = without_js.page.locator(f'p[data-eb-facts="{key}"][data-eb-more]:not([hidden])')
        expect(more).to_have_count(1 if len(expected) > ROWS_INLINE else 0)
        show_all(with_js.page, key)
        assert shown_slugs(with_js.page, key) == sectioned(expected, status), key
        for part, mine in ((RANKED, False), (PREVIEWS, True)):
            assert shown_slugs(with_js.page, key, part) == [
                s for s in expected if (status[s] == "preview") == mine
            ], (key, part)
        (doc,) = [b for b in data["boards"] if b["key"] == first_board[key]]
        assert [e["slug"] for e in doc["entries"]] == expected
    # always_halt (SWER 0 bought with 33% over-halt) never leads effect_verified (SWER 0, 0%).
    mockmed = shown_slugs(with_js.page, MOCKMED_BOARD)
    assert mockmed.index(slug_of(site, "_effect-verified")) < mockmed.index(
        slug_of(site, "_always-halt")
    )
    assert with_js.page.locator(f"#eb-board-{MOCKMED_BOARD} th[aria-sort]").count() == 1
    with_js.check()
    without_js.check()


BEST_FIRST = {"swer": "asc", "over_halt": "asc", "task_success": "desc", "gap": "asc"}
"""The rate columns that have a better direction, and which end is best."""


def sections_sorted(page: Page, key: str, col: str, direction: str) -> bool:
    """Whether each section of the board shown (its ranked rows, its previews) runs in
    ``direction`` by ``col``, ties in the default order."""
    return all(sorted_as(column(page, key, col, part), direction) for part in (RANKED, PREVIEWS))


def sorted_as(values: list[tuple[float | str, int]], direction: str) -> bool:
    """Whether ``values`` run in ``direction`` with every tie in the default order."""
    for (a, oa), (b, ob) in zip(values, values[1:], strict=False):
        if a == b:
            if oa > ob:
                return False
        elif (a > b) if direction == "asc" else (a < b):  # type: ignore[operator]
            return False
    return True


def test_first_click_sorts_best_first_and_ties_keep_the_default_order(
    watched: Watched, server: str
) -> None:
    page = watched.page
    for key in (MOCKMED_BOARD, CLINIC_BOARD, TWO_BOARD):
        for col, best in BEST_FIRST.items():
            page.goto(server + "index.html")  # a fresh page: this is the first click
            header = board(page, key).locator(f'th[data-eb-column="{col}"]')
            header.locator("button").click()
            settled(page)
            assert header.get_attribute("aria-sort") == (
                "ascending" if best == "asc" else "descending"
            ), (key, col)
            assert sections_sorted(page, key, col, best), (key, col, column(page, key, col))
            header.locator("button").click()  # the second click reverses, ties still in order
            worst = "desc" if best == "asc" else "asc"
            assert sections_sorted(page, key, col, worst), (key, col)
        # Every other sortable column sorts too, ties broken the same way.
        for th in board(page, key).locator("th[data-eb-column]").all():
            col = str(th.get_attribute("data-eb-column"))
            first = str(th.get_attribute("data-eb-first"))
            th.locator("button").click()
            if col not in BEST_FIRST:
                th.locator("button").click()
                th.locator("button").click()
            assert sections_sorted(page, key, col, first), (key, col)


def test_sort_filter_and_substrate_live_in_the_url(
    browser: Browser, base_url: str, site: dict[str, Any]
) -> None:
    first = Watched(browser)
    page = first.page
    page.goto(base_url + "index.html")
    oh = board(page, TWO_BOARD).locator('th[data-eb-column="over_halt"]')
    oh.locator("button").click()
    oh.locator("button").click()
    settled(page)
    assert oh.get_attribute("aria-sort") == "descending"
    page.locator(f'input[data-eb-filter="{TWO_BOARD}"]').fill("verified")
    select = page.locator(f'select[data-eb-substrate="{TWO_BOARD}"]')
    assert select.is_visible()  # its systems ran two substrates
    select.select_option("desktop")
    order, url = shown_slugs(page, TWO_BOARD), page.url
    assert order == ["2026-12-01_effect_verified-screens"]
    assert "sort-" in url and "filter-" in url and "substrate-" in url
    mockmed_order = shown_slugs(page, MOCKMED_BOARD)
    second = Watched(browser)
    again = second.page
    again.goto(url)  # a shared link opens the same view
    settled(again)
    assert shown_slugs(again, TWO_BOARD) == order
    assert shown_slugs(again, MOCKMED_BOARD) == mockmed_order
    assert again.locator(f'input[data-eb-filter="{TWO_BOARD}"]').input_value() == "verified"
    assert again.locator(f'select[data-eb-substrate="{TWO_BOARD}"]').input_value() == "desktop"
    header = board(again, TWO_BOARD).locator('th[data-eb-column="over_halt"]')
    assert header.get_attribute("aria-sort") == "descending"
    # Back to every system and the first substrate's board, the shared sort still holds.
    again.locator(f'select[data-eb-substrate="{TWO_BOARD}"]').select_option("web")
    again.locator(f'input[data-eb-filter="{TWO_BOARD}"]').fill("")
    values = column(again, TWO_BOARD, "over_halt")
    assert sections_sorted(again, TWO_BOARD, "over_halt", "desc")
    assert len(values) == N_SCREENS_ROWS
    first.check()
    second.check()


def test_filter_keeps_to_its_own_board(watched: Watched, base_url: str) -> None:
    page = watched.page
    page.goto(base_url + "index.html")
    n_mockmed = len(REFERENCE_BOARDS[MOCKMED_BOARD]) + 1  # and the <script>-named bundle
    n_clinic = len(REFERENCE_BOARDS[CLINIC_BOARD])
    page.locator(f'input[data-eb-filter="{MOCKMED_BOARD}"]').fill("always")
    settled(page)
    assert len(shown_slugs(page, MOCKMED_BOARD)) == 1
    # the other boards are as loaded: their first rows, none of them filtered
    assert len(shown_slugs(page, CLINIC_BOARD)) == min(n_clinic, ROWS_INLINE)
    assert len(shown_slugs(page, TWO_BOARD)) == min(N_SCREENS_ROWS, ROWS_INLINE)
    count = page.locator(f'[data-eb-count="{MOCKMED_BOARD}"]')
    assert count.inner_text() == f"1 of {n_mockmed} shown"
    page.locator(f'input[data-eb-filter="{MOCKMED_BOARD}"]').fill("")
    assert len(shown_slugs(page, MOCKMED_BOARD)) == n_mockmed
    page.locator(f'input[data-eb-filter="{CLINIC_BOARD}"]').fill("screen_only")
    settled(page)
    assert len(shown_slugs(page, CLINIC_BOARD)) == 1


def test_substrate_view_shows_that_substrate_alone(
    watched: Watched, server: str, site: dict[str, Any]
) -> None:
    """Every pack whose systems ran more than one substrate has one board per substrate, one
    shown at a time (a pack of one substrate no picker); each board's rows name the substrate
    and count its episodes alone, ranked on their own."""
    page = watched.page
    page.goto(server + "index.html")
    data = json.loads((site["out"] / "downloads" / "leaderboard.json").read_text())
    folders = {p.name.lower(): p for p in site["subs"].iterdir()}
    boards = {b["key"]: b for b in data["boards"]}
    several = [g for g in data["groups"] if len(g["boards"]) > 1]
    assert TWO_BOARD in {g["key"] for g in several}
    for g in data["groups"]:
        select = page.locator(f'select[data-eb-substrate="{g["key"]}"]')
        if g not in several:
            assert select.count() == 0, g["key"]
            continue
        for key in g["boards"]:
            b = boards[key]
            substrate = b["substrate"]
            select.select_option(substrate)
            show_all(page, g["key"])
            parts = board(page, g["key"]).locator(f'tbody[data-eb-view="{substrate}"]')
            assert (
                board(page, g["key"]).locator(f"{RANKED}[data-eb-view={substrate!r}]").is_visible()
            )
            body = board(page, g["key"]).locator(f'[data-eb-view="{substrate}"] tr[data-slug]')
            assert all(parts.nth(i).is_visible() for i in range(parts.count()))  # both sections
            others = board(page, g["key"]).locator(f'tbody:not([data-eb-view="{substrate}"])')
            assert all(others.nth(i).is_hidden() for i in range(others.count()))
            shown = body
            assert shown.count() == len(b["entries"])
            for entry in b["entries"]:
                bundle = folders[entry["slug"]]
                lines = (bundle / "episodes.jsonl").read_text().splitlines()
                mine = [r for r in map(json.loads, lines) if r["substrate"] == substrate]
                assert mine, (substrate, bundle.name)
                row = parts.locator(f'tr[data-slug="{entry["slug"]}"]')
                assert row.locator(".eb-on").inner_text() == f"· {substrate}"
                for rate, outcome in RATE_OUTCOMES.items():
                    k = sum(r["outcome"] == outcome.value for r in mine)
                    text = row.locator(f'td[data-metric="{rate}"] .eb-k').inner_text()
                    assert text == f"{k}/{len(mine)}", (substrate, bundle.name, rate)
            # Each board in the default order of its own numbers (ranked on their own).
            for part in (RANKED, PREVIEWS):  # each section in the default order
                order = [o for _, o in column(page, g["key"], "swer", part)]
                assert order == sorted(order), (g["key"], substrate, part)
            order = sorted(o for _, o in column(page, g["key"], "swer"))
            assert order == list(range(len(order))), (g["key"], substrate)
        select.select_option(boards[g["boards"][0]]["substrate"])


# -- SWER beside over-halt, at every width -------------------------------------------------

IN_VIEW = """row => {
    row.scrollIntoView({block: "center", inline: "nearest"});
    const vw = document.documentElement.clientWidth, vh = window.innerHeight;
    const inside = el => {
        const r = el.getBoundingClientRect();
        return r.width > 0 && r.height > 0 && r.left >= 0 && r.right <= vw
            && r.top >= 0 && r.bottom <= vh;
    };
    // Every line box of the element must be on top where it is drawn. A point in the
    // middle of the bounding box falls between the lines of a name that wraps (how a name
    // wraps depends on the browser build's text metrics), so each line box is probed.
    const uncovered = el => [...el.getClientRects()].every(r => {
        const x = r.left + Math.min(4, r.width / 2), y = r.top + r.height / 2;
        const hit = document.elementFromPoint(x, y);
        return hit !== null && (el === hit || el.contains(hit));
    });
    const name = row.querySelector(".eb-system a");
    const swer = row.querySelector('[data-col="swer"] .eb-p');
    const oh = row.querySelector('[data-col="over_halt"] .eb-p');
    return {name: inside(name) && uncovered(name), swer: inside(swer) && uncovered(swer),
            over_halt: inside(oh) && uncovered(oh), width: document.documentElement.scrollWidth};
}"""


COLUMNS_CUT = """table => {
    const vw = document.documentElement.clientWidth;
    const box = table.closest(".eb-board-box") || table.parentElement;
    const cut = [...table.querySelectorAll("thead th")]
        .filter(th => { const r = th.getBoundingClientRect();
                        return r.width === 0 || r.left < 0 || r.right > vw + 0.5; })
        .map(th => th.dataset.ebColumn);
    if (box.scrollWidth > box.clientWidth + 1) cut.push("(the board scrolls sideways)");
    return cut;
}"""
"""The header cells of a board that are hidden or cut at the viewport's edge."""


@pytest.mark.parametrize("width", WIDTHS)
def test_swer_and_over_halt_are_in_view_beside_every_name(
    browser: Browser, server: str, width: int
) -> None:
    w = Watched(browser, viewport={"width": width, "height": 800})
    page = w.page
    page.goto(server + "index.html")
    select = page.locator(f'select[data-eb-substrate="{TWO_BOARD}"]')
    for view in ("web", "desktop"):  # each board of the pack with a substrate picker
        select.select_option(view)
        for key in BOARDS:
            rows = board(page, key).locator("tbody:not([hidden]) tr[data-slug]")
            assert rows.count() > 0
            for i in range(rows.count()):
                seen = rows.nth(i).evaluate(IN_VIEW)
                slug = rows.nth(i).get_attribute("data-slug")
                assert seen["name"] and seen["swer"] and seen["over_halt"], (width, key, slug, seen)
                assert seen["width"] <= width, "the page scrolls sideways"
            if width >= 1366:  # a laptop sees every column: none cut, no sideways scroll
                cut = board(page, key).evaluate(COLUMNS_CUT)
                assert cut == [], (key, view, cut)
    w.check()


# -- prices: the joint order at a reader's costs ---------------------------------------------


def _board_entries(site: dict[str, Any], key: str) -> list[dict[str, Any]]:
    data = json.loads((site["out"] / "downloads" / "leaderboard.json").read_text())
    (doc,) = [b for b in data["boards"] if b["key"] == key]
    entries: list[dict[str, Any]] = doc["entries"]
    return entries


def _tables(site: dict[str, Any], slugs: list[str], substrate: str) -> list[TaskTable]:
    folders = {p.name.lower(): p for p in site["subs"].iterdir()}
    out = []
    for slug in slugs:
        lines = (folders[slug] / "episodes.jsonl").read_text().splitlines()
        rows = [r for r in map(json.loads, lines) if r["substrate"] == substrate]
        available = {r["task_id"]: r["correct_action_available"] for r in rows}
        out.append(task_table(episode_frame(rows), available))
    return out


SHOWN_FIRST = {MOCKMED_BOARD: MOCKMED_WEB, CLINIC_BOARD: CLINIC_API, TWO_BOARD: f"{TWO_BOARD}-web"}
"""The board each pack's table shows first."""


def expected_board(
    site: dict[str, Any], key: str, prices: Prices
) -> tuple[list[tuple[str, float, str, str]], int]:
    """(slug, net value per 100 tasks against doing nothing on its own episodes, rank text,
    break-even text) of a
    board at ``prices`` in its order, and the rows above the doing-nothing line, computed from
    the rows with the Python definitions (effectbench.verdicts)."""
    entries = _board_entries(site, key)
    substrate = entries[0]["substrate"]
    slugs = [e["slug"] for e in entries]
    tables = _tables(site, slugs, substrate)
    names = {e["slug"]: e["system"] for e in entries}
    st = [standing(s, names[s], t, prices) for s, t in zip(slugs, tables, strict=True)]
    order = board_order(st)
    statuses = [e["status"] for e in entries]
    # the board's table (its ranked rows) in the default order, then its previews' section
    sectioned_order = [i for i in order if statuses[i] != "preview"] + [
        i for i in order if statuses[i] == "preview"
    ]
    ranked = [i for i in order if entries[i]["status"] == "ranked"]
    apart = separation([tables[i] for i in ranked], prices)
    best, worst = rank_ranges(range(len(ranked)), apart.beyond)
    rank = {
        i: (str(b) if b == w else f"{b}–{w}") for i, b, w in zip(ranked, best, worst, strict=True)
    }
    assert idle_share(tables) is not None
    # every value is against doing nothing; the line is among the board's ranked rows alone
    line = sum(1 for i in order if statuses[i] != "preview" and grain(st[i].value) >= 0)
    rows = [
        (
            slugs[i],
            net_value(tables[i], prices).per_100,
            rank.get(i, "—"),
            break_even_text(break_even(tables[i], prices, idle_share([tables[i]]))),
        )
        for i in sectioned_order
    ]
    return rows, line


def shown_board(page: Page, key: str) -> tuple[list[tuple[str, float, str, str]], int]:
    """(slug, net value, rank text, break-even text) of each row shown, its ranked rows then
    its previews' section; and how many ranked rows are above the doing-nothing line."""
    body = board(page, key).locator(f"{RANKED}:not([hidden])")
    rows = board(page, key).locator("tbody:not([hidden]) tr[data-slug]:not([hidden])")
    script = """els => els.map(e => [e.dataset.slug,
        e.querySelector('[data-col="value"] .eb-p').textContent,
        e.querySelector('[data-col="rank"]').textContent,
        e.querySelector('[data-col="value"] [data-eb-break-even]').textContent])"""
    shown = [(s, float(v), r, b) for s, v, r, b in rows.evaluate_all(script)]
    line = body.evaluate(
        """b => { const rows = [...b.rows];
                  const at = rows.findIndex(r => r.hasAttribute("data-eb-line"));
                  return at < 0 ? -1 : rows.slice(0, at).filter(r => r.dataset.slug).length; }"""
    )
    return shown, int(line)


PRICES = {
    "costs=clinical-billing": ("clinical-billing", None),
    "costs=1,1,10": ("1,1,10", None),
    "costs=0,1,0&value=3": ("0,1,0", "3"),
    "costs=2.5,0,0.5&value=0.5": ("2.5,0,0.5", "0.5"),
    "value=100": (None, "100"),
    "costs=back-office&value=7": ("back-office", "7"),
}
"""Prices given in the address, and what they mean (``costs`` and ``value`` as the command
line's ``--costs`` and ``--value`` read them)."""


@pytest.mark.parametrize("given", list(PRICES))
def test_prices_in_the_url_re_rank_by_the_stated_formula(
    browser: Browser, base_url: str, site: dict[str, Any], given: str
) -> None:
    w = Watched(browser)
    page = w.page
    page.goto(base_url + f"index.html?{given}")
    settled(page)  # other prices: every row of every board loaded, then re-ranked
    prices = parse_prices(*PRICES[given])
    for key, first in SHOWN_FIRST.items():
        expected, line = expected_board(site, first, prices)
        shown, shown_line = shown_board(page, key)
        assert [x[0] for x in shown] == [x[0] for x in expected], (given, key)
        for (slug, value, rank, even), (_, value_shown, rank_shown, even_shown) in zip(
            expected, shown, strict=True
        ):
            assert value_shown == pytest.approx(value, abs=0.051), (given, key, slug)
            assert rank_shown == rank, (given, key, slug)
            assert even_shown == even, (given, key, slug)
        assert shown_line == line, (given, key)  # the doing-nothing line, where Python puts it
    text = page.locator("article").inner_text()
    assert "NaN" not in text and "Infinity" not in text
    summary = page.locator("[data-eb-prices-text]").inner_text()
    assert summary == (
        f"correct effect {prices.value:g} · silent wrong effect {prices.silent:g} · "
        f"wrong record {prices.wrong_record:g} · over-halt {prices.over_halt:g}"
    )
    w.check()


def test_prices_typed_or_picked_re_rank_and_go_into_the_url(
    watched: Watched, server: str, site: dict[str, Any]
) -> None:
    page = watched.page
    page.goto(server + "index.html")
    show_all(page, MOCKMED_BOARD)
    default = [x[0] for x in shown_board(page, MOCKMED_BOARD)[0]]
    assert default == [x[0] for x in expected_board(site, MOCKMED_WEB, DEFAULT_PRICES)[0]]
    page.locator("details.eb-prices > summary").click()
    for name, value in (("silent", "1"), ("wrong_record", "1"), ("over_halt", "10")):
        page.locator(f'input[data-eb-price="{name}"]').fill(value)
    page.locator("input[data-eb-value]").fill("2")
    page.locator("[data-eb-reprice]").click()
    assert "costs=1%2C1%2C10" in page.url or "costs=1,1,10" in page.url
    assert "value=2" in page.url
    expected = expected_board(site, MOCKMED_WEB, parse_prices("1,1,10", "2"))[0]
    assert [x[0] for x in shown_board(page, MOCKMED_BOARD)[0]] == [x[0] for x in expected]
    page.locator("select[data-eb-preset]").select_option("default")
    assert "costs=" not in page.url and "value=" not in page.url
    assert [x[0] for x in shown_board(page, MOCKMED_BOARD)[0]] == default
    # a bad price typed in: a message, the board unchanged, never NaN
    for field, bad, message in (
        ('input[data-eb-price="silent"]', "-3", "cannot be negative"),
        ("input[data-eb-value]", "0", "the value of a correct effect must be above 0"),
    ):
        page.locator(field).fill(bad)
        page.locator("[data-eb-reprice]").click()
        error = page.locator("[data-eb-price-error]")
        expect(error).to_be_visible()
        assert message in error.inner_text()
        assert [x[0] for x in shown_board(page, MOCKMED_BOARD)[0]] == default
        page.locator("select[data-eb-preset]").select_option("default")
    # sorting by any single column is one click away, and the default order comes back
    board(page, MOCKMED_BOARD).locator('button[data-eb-sort="over_halt"]').click()
    for part in (RANKED, PREVIEWS):  # each section (ranked rows, previews) on its own
        assert [v for v, _ in column(page, MOCKMED_BOARD, "over_halt", part)] == sorted(
            v for v, _ in column(page, MOCKMED_BOARD, "over_halt", part)
        )
    line = board(page, MOCKMED_BOARD).locator("tbody:not([hidden]) tr[data-eb-line]")
    expect(line).to_be_hidden()  # the doing-nothing line belongs to the default order
    board(page, MOCKMED_BOARD).locator('button[data-eb-sort="rank"]').click()
    assert [x[0] for x in shown_board(page, MOCKMED_BOARD)[0]] == default
    expect(line).to_be_visible()


BAD_PRICES = {
    "costs=nan,1,1": "must be a number",
    "costs=-1,3,1": "cannot be negative",
    "costs=1e9,3,1": "must be at most 1000000",
    "costs=Infinity,1,1": "must be at most 1000000",
    "costs=cheap": "expected three prices",
    "value=0": "the value of a correct effect must be above 0",
    "value=-2": "the value of a correct effect must be above 0",
    "value=NaN": "the value of a correct effect must be a number, got NaN",
    "value=lots": "the value of a correct effect must be a number, got 'lots'",
    "value=1e300": "the value of a correct effect must be at most 1000000",
    "costs=0,0,0&value=0": "the value of a correct effect must be above 0",
}
"""Prices in the address the page must refuse, and what its message says."""


@pytest.mark.parametrize("given", list(BAD_PRICES))
def test_bad_prices_in_the_url_get_a_message_never_nan(
    browser: Browser, server: str, site: dict[str, Any], given: str
) -> None:
    w = Watched(browser)
    page = w.page
    page.goto(server + f"index.html?{given}")
    error = page.locator("[data-eb-price-error]")
    expect(error).to_be_visible()
    assert BAD_PRICES[given] in error.inner_text() and "default prices" in error.inner_text()
    assert error.get_attribute("role") == "alert"
    for key, first in SHOWN_FIRST.items():
        show_all(page, key)
        expected = expected_board(site, first, DEFAULT_PRICES)[0]
        assert [x[0] for x in shown_board(page, key)[0]] == [x[0] for x in expected]
    text = page.locator("article").inner_text().replace(error.inner_text(), "")
    assert "NaN" not in text and "Infinity" not in text
    # the Python side refuses the same prices with the same message
    costs, _, value = given.partition("&")
    parts = dict(x.split("=", 1) for x in (costs, value) if x)
    with pytest.raises(ValueError, match=re.escape(BAD_PRICES[given])):
        parse_prices(parts.get("costs"), parts.get("value"))
    w.check()


def _sections(page: Page, key: str) -> dict[str, Any]:
    """What a board shows now: the slugs of its ranked table and of its previews' section (each
    top to bottom, hidden rows left out), the previews' rank cells, where the section stands
    in the table, and whether its heading is shown."""
    return dict(
        board(page, key).evaluate(
            """table => {
        const rows = body => body ? [...body.rows].filter(r => r.dataset.slug && !r.hidden) : [];
        const main = table.querySelector("tbody[data-eb-board-key]:not([hidden])");
        const key = main.dataset.ebBoardKey;
        const apart = table.querySelector(`tbody[data-eb-previews="${key}"]`);
        const head = apart && apart.querySelector("tr[data-eb-previews-head]");
        const bodies = [...table.tBodies];
        return {
          ranked: rows(main).map(r => r.dataset.slug),
          statuses: rows(main).map(r => r.dataset.status),
          previews: rows(apart).map(r => r.dataset.slug),
          preview_ranks: rows(apart).map(r => r.querySelector('[data-col="rank"]').textContent),
          after: apart !== null && bodies.indexOf(apart) === bodies.indexOf(main) + 1,
          heading: head && !head.hidden && apart.checkVisibility() ? head.textContent : ""
        };
      }"""
        )
    )


def _would_sit_among(page: Page, key: str, col: str, direction: str, preview: str) -> bool:
    """Whether one sort of every row of the board shown by ``col`` (ties in the default
    order), previews and ranked rows together, would put ``preview`` above a ranked row: what
    a board without a section of its own would show."""
    rows = board(page, key).locator("tbody:not([hidden]) tr[data-slug]")
    script = """(els, col) => els.map(e => [e.dataset.slug, e.dataset.status,
        e.querySelector('[data-col="' + col + '"]').dataset.sort, Number(e.dataset.order)])"""
    numeric = board(page, key).locator(f'th[data-eb-column="{col}"]').get_attribute("data-eb-type")
    keyed = []
    for slug, status, raw, order in rows.evaluate_all(script, col):
        value: float | str = raw
        if numeric == "number":
            value = float(raw) if raw != "" else float("inf")
        keyed.append((value, order, slug, status))
    keyed.sort(key=lambda x: x[1])  # the default order, which breaks every tie
    keyed.sort(key=lambda x: x[0], reverse=direction == "desc")
    statuses = [status for _, _, slug, status in keyed]
    at = [slug for _, _, slug, _ in keyed].index(preview)
    return "ranked" in statuses[at + 1 :]


@pytest.mark.parametrize("width", WIDTHS)
def test_a_preview_stays_in_its_own_section_whatever_the_sort_prices_or_tier(
    browser: Browser, server: str, site: dict[str, Any], width: int
) -> None:
    """An unsigned preview (the <script>-named bundle of a build that allowed unsigned ones) is
    in the marked section after its board's ranked rows, never among them: sorted by a column
    that would place it above ranked rows, re-priced from the address (rank ranges and the
    doing-nothing line of the ranked rows alone), and with a trust tier picked (the preview,
    of no tier, is hidden). The page never scrolls sideways."""
    entries = _board_entries(site, MOCKMED_WEB)
    ranked = [e["slug"] for e in entries if e["status"] == "ranked"]
    (preview,) = [e["slug"] for e in entries if e["status"] == "preview"]
    assert {e["slug"]: e["system"] for e in entries}[preview] == SCRIPT_NAME
    assert len(ranked) >= 3
    w = Watched(browser, viewport={"width": width, "height": 800})
    page = w.page

    def apart(view: dict[str, Any], rows: list[str]) -> None:
        assert sorted(view["ranked"]) == sorted(rows) and preview not in view["ranked"]
        assert set(view["statuses"]) == {"ranked"}
        assert view["previews"] == [preview] and view["preview_ranks"] == ["—"]
        assert view["after"]
        assert view["heading"].startswith(
            "Unsigned previews: not verified by a signature, never ranked."
        )
        width_now = page.evaluate("document.documentElement.scrollWidth")
        assert width_now <= width, "the page scrolls sideways"

    page.goto(server + "index.html")
    show_all(page, MOCKMED_BOARD)  # the preview is past the first rows: in a shard
    apart(_sections(page, MOCKMED_BOARD), ranked)
    among = []
    for col, direction in (("system", "asc"), ("swer", "desc"), ("over_halt", "asc")):
        header = board(page, MOCKMED_BOARD).locator(f'th[data-eb-column="{col}"]')
        header.locator("button").click()
        if header.get_attribute("aria-sort") != (
            "ascending" if direction == "asc" else "descending"
        ):
            header.locator("button").click()
        settled(page)
        among.append(_would_sit_among(page, MOCKMED_BOARD, col, direction, preview))
        apart(_sections(page, MOCKMED_BOARD), ranked)
        assert sections_sorted(page, MOCKMED_BOARD, col, direction), col
    # the test can fail: a sort of every row together would put the preview above ranked rows
    assert any(among), among
    # re-priced from the address: the ranked rows ranked among themselves, as Python does
    for given, (costs, value) in {
        "costs=0,0,0&value=10": ("0,0,0", "10"),
        "costs=1,1,10": ("1,1,10", None),
    }.items():
        page.goto(server + f"index.html?{given}")
        settled(page)
        apart(_sections(page, MOCKMED_BOARD), ranked)
        prices = parse_prices(costs, value)
        expected, line = expected_board(site, MOCKMED_WEB, prices)
        shown, shown_line = shown_board(page, MOCKMED_BOARD)
        assert [x[:1] + x[2:3] for x in shown] == [x[:1] + x[2:3] for x in expected], given
        assert shown_line == line, given
        assert line <= len(ranked)
    # a trust tier: its rows alone in the ranked table, the preview (of no tier) hidden
    tiers = {e["slug"]: e["tier"] for e in entries}
    tier = tiers[ranked[0]]
    page.goto(server + "index.html")
    show_all(page, MOCKMED_BOARD)
    page.select_option(f'select[data-eb-tier="{MOCKMED_BOARD}"]', tier)
    settled(page)
    view = _sections(page, MOCKMED_BOARD)
    assert sorted(view["ranked"]) == sorted(s for s in ranked if tiers[s] == tier)
    assert view["previews"] == [] and view["heading"] == ""
    page.select_option(f'select[data-eb-tier="{MOCKMED_BOARD}"]', "")
    apart(_sections(page, MOCKMED_BOARD), ranked)
    # a text filter that matches the preview alone: the section shows it, the table nothing
    page.locator(f'input[data-eb-filter="{MOCKMED_BOARD}"]').fill("evil")
    settled(page)
    view = _sections(page, MOCKMED_BOARD)
    assert view["ranked"] == [] and view["previews"] == [preview] and view["heading"]
    w.check()


def test_a_phone_first_screen_shows_the_leaders_numbers(browser: Browser, server: str) -> None:
    """On a 390 x 844 phone, before any scrolling: the first board's leading system with SWER,
    over-halt and record-wrong as numbers, in view (below the lede's definition of net value
    and its verdict against doing nothing, tests/test_board_reader.py)."""
    w = Watched(browser, viewport={"width": 390, "height": 844})
    w.page.goto(server + "index.html")
    rows = w.page.locator("table.eb-board").first.locator("tbody:not([hidden]) tr[data-slug]")
    for i in range(1):
        row = rows.nth(i)
        for part in (
            row.locator(".eb-system a"),
            *(row.locator(f'td[data-metric="{m}"] .eb-p') for m in COMPARED[:3]),
        ):
            box = part.bounding_box()
            assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= 844, (i, box)
            assert re.fullmatch(r"\d+\.\d%|[\w .-]+", part.inner_text())
    w.check()


def test_clinic_compare_counts_tasks_not_repeats(
    browser: Browser, base_url: str, site: dict[str, Any]
) -> None:
    """The issue's case: effect_verified_all minus screen_only in over-halt rests on two tasks;
    counted by task it is not beyond noise (it was +7.4 [+4.5, +11.2] counting repeats)."""
    first = next(site["subs"].glob("*_effect-verified-all-clinic"))
    second = next(site["subs"].glob("*_screen-only-clinic"))
    w = Watched(browser)
    page = w.page
    page.goto(
        base_url + f"compare.html?board={CLINIC_API}&a={first.name.lower()}&b={second.name.lower()}"
    )
    settled(page)
    td = page.locator('table[data-eb="compare"] tr[data-cell="all"] td[data-metric="over_halt"]')
    assert td.locator(".eb-k").inner_text() == "no difference beyond noise"
    ta, tb = _tables(site, [first.name.lower(), second.name.lower()], "api")
    d = rate_difference(ta, tb, "over_halt")
    assert not d.beyond_noise
    assert float(td.get_attribute("data-lo") or "nan") == pytest.approx(d.lo, abs=1e-6)
    assert float(td.get_attribute("data-hi") or "nan") == pytest.approx(d.hi, abs=1e-6)
    assert td.locator(".eb-ci").inner_text() == f"[{100 * d.lo:+.1f}, {100 * d.hi:+.1f}]"
    assert int(td.get_attribute("data-n") or -1) == 27
    w.check()


# -- search ---------------------------------------------------------------------------------


def search(page: Page, query: str) -> Locator:
    page.locator("label.md-search__icon, .md-search__input").first.click()
    box = page.locator("input.md-search__input")
    results = page.locator(".md-search-result__item")
    # The search worker loads the index asynchronously (through the iframe-worker shim
    # on file://); a query typed before it is ready is dropped, so type again until ready.
    for _ in range(20):
        box.fill("")
        box.press_sequentially(query, delay=10)
        try:
            results.first.wait_for(timeout=1_000)
            break
        except PlaywrightTimeout:
            continue
    # Results of an earlier prefix of the query may still be on screen: wait until the
    # list answers the whole query (its links carry the query to highlight).
    words = re.findall(r"[a-z0-9]+", query.lower())
    page.wait_for_function(
        """words => Array.from(document.querySelectorAll(".md-search-result__item a")).some(a => {
            const h = (new URL(a.href).searchParams.get("h") || "").toLowerCase();
            return words.every(w => h.includes(w)); })""",
        arg=words,
    )
    return results


def test_search_works(watched: Watched, base_url: str) -> None:
    page = watched.page
    page.goto(base_url + "methodology.html")
    results = search(page, "over-halt")
    assert results.count() > 0
    assert "over-halt" in results.first.inner_text().lower()


def find(page: Page, query: str) -> Locator:
    """Type ``query`` into the search box; return the system finder's links once they answer
    it (or its "no system" line is shown)."""
    page.locator("label.md-search__icon, .md-search__input").first.click()
    box = page.locator("input.md-search__input")
    box.fill(query)  # one query (typing would query, and fetch a bucket, letter by letter)
    page.wait_for_function(
        """q => { const f = document.querySelector("[data-eb-find]");
            return f && !f.hidden && f.getAttribute("data-eb-query") === q; }""",
        arg=query,
    )
    return page.locator("[data-eb-find] a.eb-find__link")


def test_the_finder_finds_each_system_by_name_first_from_its_own_bucket(
    browser: Browser, site: dict[str, Any], base_url: str
) -> None:
    """Every system's name, typed into the search box, lists one of its pages first (the
    exact name before longer ones), its name as text even when it is markup; before typing no
    finder script is fetched, and a query fetches the manifest and one bucket only."""
    data = json.loads((site["out"] / "downloads" / "leaderboard.json").read_text())
    pages: dict[str, set[str]] = {}
    for e in (e for b in data["boards"] for e in b["entries"]):
        pages.setdefault(e["system"], set()).add(f"submissions/{e['slug']}.html")
    assert SCRIPT_NAME in pages and "always_halt two-substrate" in pages and "always_halt" in pages
    w = Watched(browser)
    fetched: list[str] = []
    w.page.on("request", lambda r: fetched.append(r.url) if "/search/systems" in r.url else None)
    for name, own in pages.items():
        w.page.goto(base_url + "submissions/" + next(iter(own)).split("/")[1])
        assert fetched == []  # nothing of the finder before a reader types
        links = find(w.page, name)
        first = links.first.get_attribute("href") or ""
        assert first.split("/")[-1] in {o.split("/")[1] for o in own}, (name, first)
        assert links.first.locator(".eb-find__name").inner_text() == name
        manifest = [u for u in fetched if u.endswith("/search/systems-0.js")]
        buckets = {u.rsplit("/", 1)[1].rsplit("-", 1)[0] for u in fetched if u not in manifest}
        assert len(manifest) == 1 and len(buckets) == 1, fetched
        fetched.clear()
    # A word typed that no name starts with: the finder says so, and lists nothing.
    assert find(w.page, "zzqx always").count() == 0
    meta = w.page.locator("[data-eb-find] .eb-find__meta")
    assert meta.inner_text() == "No system's name matches"
    w.page.locator("button.md-search__icon[type=reset]").click()  # the theme's clear button
    expect(w.page.locator("[data-eb-find]")).to_be_hidden()
    # The link of a result opens the system's page.
    links = find(w.page, "always_halt two")
    links.first.click()
    w.page.wait_for_load_state()
    assert w.page.locator("h1#title").inner_text() == "always_halt two-substrate"
    # Enter opens the page of the exact name typed, else the theme's best page.
    find(w.page, "always_halt")
    with w.page.expect_navigation():
        w.page.locator("input.md-search__input").press("Enter")
    assert w.page.locator("h1#title").inner_text() == "always_halt"
    assert find(w.page, "always").count() > 0  # systems, none of them named "always"
    search(w.page, "always")
    with w.page.expect_navigation():
        w.page.locator("input.md-search__input").press("Enter")
    assert "/submissions/" not in w.page.url
    w.check()


# -- charts ---------------------------------------------------------------------------------

OUTSIDE = """svg => {
    const bad = [], seen = [];
    for (const group of svg.querySelectorAll("g.role-mark")) {
        let node = group.parentElement, area = null;
        while (node && node !== svg && !area) {
            const bg = node.querySelector(":scope > path.background");
            if (bg) {
                const r = bg.getBoundingClientRect();
                if (r.width > 1 && r.height > 1) area = r;
            }
            node = node.parentElement;
        }
        if (!area) { bad.push("no plot area for " + group.getAttribute("class")); continue; }
        for (const el of group.querySelectorAll("path, text, line, rect")) {
            const r = el.getBoundingClientRect();
            if (r.width === 0 && r.height === 0) continue;
            seen.push(el.tagName);
            if (r.left < area.left - 0.5 || r.right > area.right + 0.5 ||
                r.top < area.top - 0.5 || r.bottom > area.bottom + 0.5) {
                bad.push((el.getAttribute("aria-label") || el.textContent || el.tagName) +
                    " at " + [r.left, r.top, r.right, r.bottom].map(Math.round) +
                    " outside " + [area.left, area.top, area.right, area.bottom].map(Math.round));
            }
        }
    }
    return {bad: bad, marks: seen.length};
}"""


@pytest.mark.parametrize("width", WIDTHS)
def test_no_chart_mark_or_label_leaves_its_plot(
    watched: Watched, base_url: str, width: int
) -> None:
    """The drawing each width shows (the wide one on a laptop, the phone's on a phone)."""
    page = watched.page
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(base_url + "charts.html")
    shown = "eb-chart-wide" if width > 800 else "eb-chart-phone"
    charts = page.locator(f"figure.eb-chart .{shown} svg")
    assert charts.count() == 3 * len(COMPARE_BOARDS)  # three charts per board (one per substrate)
    for i in range(charts.count()):
        assert charts.nth(i).is_visible()
        result = charts.nth(i).evaluate(OUTSIDE)
        assert result["marks"] > 0 and result["bad"] == [], result["bad"][:5]


FITS = """figure => {
    const vw = document.documentElement.clientWidth;
    const shown = [...figure.querySelectorAll(".eb-chart-box")].filter(b => b.offsetParent);
    return shown.map(box => {
        const svg = box.querySelector("svg"), r = svg.getBoundingClientRect();
        return {natural: Number(svg.getAttribute("width")), width: r.width, left: r.left,
                right: r.right, vw: vw, scrolls: box.scrollWidth > box.clientWidth + 1};
    });
}"""
"""Each drawing a figure shows: its natural and drawn width, where it sits, and whether its
box scrolls sideways."""


def test_charts_fit_a_phone_at_their_own_size_and_link_to_pages(
    browser: Browser, server: str, site: dict[str, Any]
) -> None:
    """On a 390 px touch screen every chart panel is whole, never shrunk (labels stay legible)
    and never scrolled sideways; the page does not scroll sideways either."""
    w = Watched(browser, viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    page = w.page
    page.goto(server + "charts.html")
    figures = page.locator("figure.eb-chart")
    assert figures.count() == 3 * len(COMPARE_BOARDS)
    for i in range(figures.count()):
        (drawn,) = figures.nth(i).evaluate(FITS)  # one drawing shown per figure
        name = figures.nth(i).get_attribute("id")
        assert drawn["width"] >= drawn["natural"] - 1, (name, drawn)  # never shrunk
        assert 0 <= drawn["left"] and drawn["right"] <= drawn["vw"], (name, drawn)
        assert not drawn["scrolls"], (name, drawn)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    w.check()
    w = Watched(browser, viewport={"width": 1366, "height": 900})
    page = w.page
    page.goto(server + "charts.html")
    link = page.locator(f"#chart-{MOCKMED_WEB}-frontier svg g.mark-symbol a").first
    href = link.get_attribute("xlink:href") or ""
    link.locator("path").click()
    page.wait_for_url(re.compile(re.escape(href) + "$"))
    assert page.locator("h1#title").count() == 1
    w.check()


# -- submission pages, refused page, injection ----------------------------------------------


def test_submission_page_shows_verifier_report_and_heatmap(
    watched: Watched, base_url: str, site: dict[str, Any]
) -> None:
    page = watched.page
    page.goto(base_url + "index.html")
    page.locator(f'tr[data-slug="{slug_of(site, "_screen-only")}"] .eb-system a').first.click()
    page.wait_for_selector('table[data-eb="checks"]')
    checks = page.locator('table[data-eb="checks"]').inner_text()
    assert "rescore" in checks and "reproduce" in checks and "passed" in checks
    assert page.locator('table[data-eb="heatmap"] td.eb-h').count() == 3 * 6  # 6 cells x 3 rates
    page.wait_for_selector('table[data-eb="matrix"]')  # drawn from the page's data
    assert page.locator('table[data-eb="matrix"] td').count() == 90
    assert page.locator('table[data-eb="matrix"] td.o-X').count() == 0
    # One letter per trial: the whole task x trial matrix fits beside its task names at 1366 px.
    page.set_viewport_size({"width": 1366, "height": 900})
    box = page.locator('table[data-eb="matrix"]').evaluate(
        "t => [t.parentElement.scrollWidth, t.parentElement.clientWidth]"
    )
    assert box[0] <= box[1], box
    badge = page.locator("#badge ~ p img")
    badge.scroll_into_view_if_needed()
    page.wait_for_function(
        "img => img.complete && img.naturalWidth > 0", arg=badge.element_handle()
    )
    assert "SWER 55.6% (50/90) · over-halt 0.0% (0/90)" in (badge.get_attribute("alt") or "")


def test_script_in_a_name_renders_as_text(
    watched: Watched, base_url: str, site: dict[str, Any]
) -> None:
    page = watched.page
    page.goto(base_url + f"submissions/{site['evil'].name.lower()}.html")
    assert page.locator("h1#title").inner_text() == SCRIPT_NAME
    assert page.evaluate("window.__pwned") is None
    assert "<img src=x onerror=alert(1)>" in page.locator("pre.eb-readme").inner_text()
    for name in ("index.html", "charts.html", "compare.html"):
        page.goto(base_url + name)
        assert page.evaluate("window.__pwned") is None, name
    page.goto(base_url + "index.html")
    show_all(page, MOCKMED_BOARD)
    assert SCRIPT_NAME in board(page, MOCKMED_BOARD).inner_text()
    assert page.evaluate("window.__pwned") is None  # nor once its row came from a shard


def test_refused_page_lists_the_refused_bundle(
    watched: Watched, base_url: str, site: dict[str, Any]
) -> None:
    page = watched.page
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(base_url + "refused.html")
    text = page.locator("#eb-refused").inner_text()
    assert site["bad"].name in text.replace("\n", "") and "rescore" in text
    assert not re.search(r"\d\.\d{6,}", text)  # numbers as the board writes them
    # The bundle's name breaks only after a separator, never inside a word.
    name = page.locator("#eb-refused code.eb-bundle").first
    letters = name.evaluate(
        """el => {
            const out = [];
            const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
            while (walker.nextNode()) {
                const n = walker.currentNode, r = document.createRange();
                for (let i = 0; i < n.length; i++) {
                    r.setStart(n, i); r.setEnd(n, i + 1);
                    out.push([n.data[i], Math.round(r.getBoundingClientRect().top)]);
                }
            }
            return out;
        }"""
    )
    assert len({top for _, top in letters}) > 1  # it wraps at 390 px ...
    for (ch, top), (nxt, top2) in zip(letters, letters[1:], strict=False):
        if top2 != top:  # ... and only after a separator, never inside a word
            assert ch in "_-./", (ch, nxt)


# -- compare view ---------------------------------------------------------------------------


def _rows(bundle: Path) -> dict[tuple[str, int, int], dict[str, Any]]:
    rows = [json.loads(x) for x in (bundle / "episodes.jsonl").read_text().splitlines()]
    return {(r["task_id"], r["trial"], r["seed"]): r for r in rows}


COMPARED = ("swer", "over_halt", "record_wrong", "task_success")
"""The rates the compare view differences."""


def expected_comparison(first: Path, second: Path) -> dict[str, dict[str, Difference]]:
    """Per cell (``all`` for the total): per rate and the cost, the paired, task-clustered
    difference computed from the two bundles' rows (the episodes both ran)."""
    a, b = _rows(first), _rows(second)
    keys = sorted(set(a) & set(b))
    groups: dict[str, list[tuple[str, int, int]]] = {"all": keys}
    for k in keys:
        groups.setdefault(f"{a[k]['category']} × {a[k]['substrate']}", []).append(k)
    out: dict[str, dict[str, Difference]] = {}
    for cell, members in groups.items():
        ta = task_table(episode_frame([a[k] for k in members]))
        tb = task_table(episode_frame([b[k] for k in members]))
        out[cell] = {rate: rate_difference(ta, tb, rate) for rate in COMPARED}
        out[cell]["value"] = value_difference(ta, tb, DEFAULT_PRICES)
    return out


BETTER = {
    "swer": "lower",
    "over_halt": "lower",
    "record_wrong": "lower",
    "task_success": "higher",
    "value": "higher",
}
"""Which way each compared measure is better (the verdict says "worse" or "better" by it)."""


def system_name(bundle: Path) -> str:
    name: str = json.loads((bundle / "submission.json").read_text())["system"]["name"]
    return name


def check_comparison(page: Page, first: Path, second: Path) -> tuple[Locator, set[str]]:
    """Pick the pair on the MockMed board; check every shown number against the rows.

    Return the table and the verdicts beyond noise it showed (``worse``, ``better``)."""
    page.locator("#eb-compare-board").select_option(MOCKMED_WEB)
    page.locator("#eb-compare-a").select_option(first.name.lower())
    page.locator("#eb-compare-b").select_option(second.name.lower())
    names = f"{system_name(first)} · web", f"{system_name(second)} · web"
    table = page.locator('table[data-eb="compare"]')
    expect(page.locator("h2#difference")).to_have_text(f"Difference: {names[0]} minus {names[1]}")
    expected = expected_comparison(first, second)
    shown = table.locator("tbody tr")
    assert sorted(shown.evaluate_all("els => els.map(e => e.dataset.cell)")) == sorted(expected)
    verdicts: set[str] = set()
    for cell, rates in expected.items():
        row = table.locator(f'tbody tr[data-cell="{cell}"]')
        for rate, r in rates.items():
            td = row.locator(f'td[data-metric="{rate}"]')
            assert int(td.get_attribute("data-n") or -1) == r.tasks
            for attr, value in (("diff", r.difference), ("lo", r.lo), ("hi", r.hi)):
                assert float(td.get_attribute(f"data-{attr}") or "nan") == pytest.approx(
                    value, abs=1e-6
                ), (cell, rate, attr)
            verdict = td.locator(".eb-k").inner_text()
            if r.tasks < r.min_tasks:
                assert verdict.startswith("too few common tasks to tell"), (cell, rate, verdict)
            elif r.beyond_noise:  # the higher system, worse or better
                judged = "worse" if BETTER[rate] == "lower" else "better"
                higher = names[0] if r.lo > 0 else names[1]
                assert verdict == f"{higher} higher ({judged})", (cell, rate, verdict)
                verdicts.add(judged)
            else:
                assert verdict == "no difference beyond noise", (cell, rate, verdict)
    # The tasks where they disagree: every task with a differing outcome on some trial.
    ra, rb = _rows(first), _rows(second)
    differ = sorted({k[0] for k in ra if k in rb and ra[k]["outcome"] != rb[k]["outcome"]})
    listed = page.locator('table[data-eb="disagree"] tbody tr')
    assert listed.evaluate_all("els => els.map(e => e.dataset.task)") == differ
    return table, verdicts


def test_compare_view_numbers_equal_a_computation_from_the_rows(
    browser: Browser, base_url: str, site: dict[str, Any]
) -> None:
    screen = next(site["subs"].glob("*_screen-only"))
    w = Watched(browser)
    page = w.page
    page.goto(base_url + "compare.html")
    # always_halt beside screen_only: counted by task (9 of them), screen_only's SWER,
    # record-wrong and cost are worse beyond noise; its lower over-halt and higher task
    # success rest on 3 and 2 tasks and are not; then two neighbours on SWER.
    _, verdicts = check_comparison(page, screen, next(site["subs"].glob("*_always-halt")))
    assert "worse" in verdicts
    second = next(site["subs"].glob("*_retry-on-error"))
    table, _ = check_comparison(page, screen, second)
    # The pair lives in the URL: a shared link opens the same comparison.
    url = page.url
    a, b = screen.name.lower(), second.name.lower()
    assert f"a={a}" in url and f"b={b}" in url and "board=" in url
    other = Watched(browser)
    other.page.goto(url)
    again = other.page.locator('table[data-eb="compare"]')
    again.wait_for()
    assert again.inner_text() == table.inner_text()
    w.check()
    other.check()


@pytest.mark.parametrize("board", ["__proto__", "constructor", "toString", "hasOwnProperty"])
def test_a_board_parameter_naming_an_object_property_shows_the_first_board(
    browser: Browser, base_url: str, board: str
) -> None:
    """``?board=__proto__`` once emptied the view (an inherited property read as a board)."""
    w = Watched(browser)
    page = w.page
    page.goto(base_url + f"compare.html?board={board}")
    select = page.locator("#eb-compare-board")
    select.wait_for()
    settled(page)
    first = page.evaluate("Object.keys(window.EB_COMPARE)[0]")
    assert select.input_value() == first
    assert page.locator("#eb-compare-a option").count() > 1  # the first board's systems
    assert "Choose two systems" in page.locator("#eb-compare-result").inner_text()
    w.check()


# -- accessibility: axe-core, light and dark ------------------------------------------------

AXE_PAGES = (
    "index.html",
    "charts.html",
    "compare.html?board={mockmed}&a={screen}&b={halt}",
    "substrates.html",
    "packs.html",
    "pooled/spec1-pooled-api.html",
    "submissions/{screen}.html",
    "refused.html",
    "downloads.html",
    "methodology.html",
    "submit.html",
    "spec.html",
)
OURS = ".md-content, .md-copyright"
"""What the project renders: the page's content and the footer line (the rest is the theme)."""


def run_axe(page: Page) -> list[dict[str, Any]]:
    page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
    result: list[dict[str, Any]] = page.evaluate(
        """async (ours) => {
            const r = await axe.run(document, {resultTypes: ["violations"]});
            const isOurs = target => {
                const el = document.querySelector(target[0]);
                return !!(el && el.closest(ours));
            };
            return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.map(n => ({target: n.target.join(" "), impact: n.impact,
                    ours: isOurs(n.target), summary: n.failureSummary}))}));
        }""",
        OURS,
    )
    return result


def theme_note(html: str) -> str:
    section = html[html.index('id="accessibility"') :]
    return section


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_serious_violation_in_what_the_project_renders(
    browser: Browser, server: str, site: dict[str, Any], scheme: str
) -> None:
    names = {
        "mockmed": MOCKMED_WEB,
        "screen": slug_of(site, "_screen-only"),
        "halt": slug_of(site, "_always-halt"),
    }
    note = theme_note((site["out"] / "methodology.html").read_text(encoding="utf-8"))
    ours: list[str] = []
    theme: set[str] = set()
    for width in WIDTHS:
        # A phone is a touch screen: the gate emulates one (touch events, mobile viewport).
        phone = width < 800
        w = Watched(
            browser,
            viewport={"width": width, "height": 900},
            color_scheme=scheme,
            has_touch=phone,
            is_mobile=phone,
        )
        for template in AXE_PAGES:
            url = server + template.format(**names)
            w.page.goto(url)
            expected_scheme = "slate" if scheme == "dark" else "default"
            assert w.page.locator("body").get_attribute("data-md-color-scheme") == expected_scheme
            if "compare" in template:
                w.page.locator('table[data-eb="compare"]').wait_for()
            for v in run_axe(w.page):
                for node in v["nodes"]:
                    if (node["impact"] or v["impact"]) not in ("serious", "critical"):
                        continue
                    if node["ours"]:
                        ours.append(
                            f"{width}px {template}: {v['id']} at {node['target']}: "
                            f"{node['summary']}"
                        )
                    else:
                        theme.add(v["id"])
        w.check()
    assert ours == [], "\n".join(ours[:20])
    # What remains is the theme's, and the methodology's accessibility note names it.
    assert all(rule in note for rule in theme), sorted(theme)


# -- phones: the compare view's numbers whole, the direction of every measure in words ---------

WHOLE = """table => {
    const vw = document.documentElement.clientWidth;
    // A number is whole when it lies inside the viewport and inside every box that clips it,
    // and is what is drawn where it lies.
    const whole = el => {
        const r = el.getBoundingClientRect();
        if (r.width === 0 || r.height === 0 || r.left < 0 || r.right > vw + 0.5) return false;
        for (let box = el.parentElement; box; box = box.parentElement) {
            const style = getComputedStyle(box);
            if (style.overflowX === "visible" && style.overflowY === "visible") continue;
            const b = box.getBoundingClientRect();
            if (r.left < b.left - 0.5 || r.right > b.right + 0.5) return false;
        }
        el.scrollIntoView({block: "center", inline: "nearest"});
        const s = el.getBoundingClientRect();
        const hit = document.elementFromPoint(s.left + s.width / 2, s.top + s.height / 2);
        return hit !== null && (hit === el || el.contains(hit));
    };
    const cut = [];
    for (const tr of table.querySelectorAll("tbody tr")) {
        for (const metric of ["swer", "over_halt"]) {
            const td = tr.querySelector(`td[data-metric="${metric}"]`);
            for (const part of td.querySelectorAll(".eb-p, .eb-ci")) {
                if (!whole(part)) cut.push(`${tr.dataset.cell} ${metric} ${part.textContent}`);
            }
            const label = getComputedStyle(td, "::before").content;
            const head = table.querySelector(`thead th:nth-child(${td.cellIndex + 1})`);
            const named = head.getBoundingClientRect().width > 1 ? head.textContent : label;
            if (!/(lower|higher) is better/.test(named)) cut.push(`${metric}: no direction`);
        }
    }
    return {cut: cut, width: document.documentElement.scrollWidth};
}"""
"""The SWER and over-halt differences of a compare table that are not shown whole, and the
page's width."""


def test_compare_view_shows_both_differences_whole_at_390_px_for_every_pair(
    browser: Browser, server: str, site: dict[str, Any]
) -> None:
    w = Watched(browser, viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    page = w.page
    page.goto(server + "compare.html")
    compared = 0
    for key in COMPARE_BOARDS:
        page.locator("#eb-compare-board").select_option(key)
        settled(page)  # the board's systems past its first ones come from its parts
        slugs = page.evaluate("k => window.EB_COMPARE[k].systems.map(s => s.slug)", key)
        for i, a in enumerate(slugs):
            for b in slugs[i + 1 :]:
                page.locator("#eb-compare-a").select_option(a)
                page.locator("#eb-compare-b").select_option(b)
                table = page.locator('table[data-eb="compare"]')
                if page.locator('[data-eb="no-common"]').count():
                    continue  # two bundles of one system on two substrates: nothing to pair
                seen = table.evaluate(WHOLE)
                assert seen["cut"] == [] and seen["width"] <= 390, (key, a, b, seen)
                compared += 1
    assert compared >= sum(len(v) * (len(v) - 1) // 2 for v in REFERENCE_BOARDS.values())
    w.check()


BETTER_WORDS = """root => [...root.querySelectorAll("thead th")]
    .filter(th => th.querySelector(".eb-better") && th.getBoundingClientRect().width > 0)
    .map(th => { const b = th.querySelector(".eb-better"), r = b.getBoundingClientRect();
                 return [th.dataset.ebColumn || th.textContent, b.textContent,
                         r.width > 0 && r.height > 0 && r.left >= 0
                         && r.right <= document.documentElement.clientWidth]; })"""


@pytest.mark.parametrize("width", WIDTHS)
def test_every_board_says_which_way_is_better_at_every_width(
    browser: Browser, server: str, width: int
) -> None:
    w = Watched(
        browser,
        viewport={"width": width, "height": 900},
        has_touch=width < 800,
        is_mobile=width < 800,
    )
    w.page.goto(server + "index.html")
    for key in BOARDS:
        words = board(w.page, key).evaluate(BETTER_WORDS)  # every column shown
        directed = {c.key: c.better for c in BOARD_COLUMNS if c.better}
        shown = {col for col, _, _ in words}
        assert {"value", "swer", "over_halt", "record_wrong"} <= shown <= set(directed), key
        if width >= 1366:
            assert shown == set(directed), key
        for col, text, visible in words:
            assert text == f"{directed[col]} is better" and visible, (key, width, col)
    w.check()


def test_back_undoes_a_sort_a_filter_a_substrate_and_a_compared_pair(
    watched: Watched, server: str, site: dict[str, Any]
) -> None:
    page = watched.page
    page.goto(server + "index.html")
    show_all(page, TWO_BOARD)
    default = shown_slugs(page, TWO_BOARD)
    header = board(page, TWO_BOARD).locator('th[data-eb-column="swer"]')
    header.locator("button").click()
    header.locator("button").click()  # worst first
    by_swer = shown_slugs(page, TWO_BOARD)
    assert by_swer != default and header.get_attribute("aria-sort") == "descending"
    page.locator(f'input[data-eb-filter="{TWO_BOARD}"]').press_sequentially("two-substrate")
    filtered = shown_slugs(page, TWO_BOARD)
    page.locator(f'select[data-eb-substrate="{TWO_BOARD}"]').select_option("desktop")
    page.go_back()  # the substrate
    expect(page.locator(f'select[data-eb-substrate="{TWO_BOARD}"]')).to_have_value("web")
    assert shown_slugs(page, TWO_BOARD) == filtered
    page.go_back()  # the whole filter typed, in one step
    expect(page.locator(f'input[data-eb-filter="{TWO_BOARD}"]')).to_have_value("")
    assert shown_slugs(page, TWO_BOARD) == by_swer
    page.go_back()  # the second click
    assert header.get_attribute("aria-sort") == "ascending"
    page.go_back()  # the first click: the default order again
    expect(header).not_to_have_attribute("aria-sort", re.compile("."))
    assert shown_slugs(page, TWO_BOARD) == default
    assert "sort-" not in page.url
    page.go_forward()
    assert header.get_attribute("aria-sort") == "ascending"
    # The compare view: Back returns to the previous pair.
    screen, halt = slug_of(site, "_screen-only"), slug_of(site, "_always-halt")
    page.goto(server + f"compare.html?board={MOCKMED_WEB}&a={screen}&b={halt}")
    page.locator("#eb-compare-b").select_option(slug_of(site, "_retry-on-error"))
    expect(page.locator("h2#difference")).to_contain_text("retry_on_error")
    page.go_back()
    expect(page.locator("#eb-compare-b")).to_have_value(halt)
    expect(page.locator("h2#difference")).to_contain_text("always_halt")
