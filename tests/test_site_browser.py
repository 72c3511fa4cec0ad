"""The built site in real headless Chromium (Debian's package), over http and file://.

Every request the browser makes is checked: anything that is not 127.0.0.1 or
file:// is aborted and fails the test.
"""

from __future__ import annotations

import functools
import http.server
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from playwright.sync_api import Browser, Locator, Page, Route, expect, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from test_site import (
    CLINIC_BOARD,
    MOCKMED_BOARD,
    REFERENCE_BOARDS,
    SCRIPT_NAME,
    build,
    make_submissions,
    slug_of,
)

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


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real build with the reference bundles, a <script> name and a refused bundle."""
    base = tmp_path_factory.mktemp("browser-site")
    paths = make_submissions(base)
    build(base, paths["subs"], base / "public", base / "cache")
    return {**paths, "out": base / "public", "base": base}


@pytest.fixture(scope="module")
def server(site: dict[str, Any]) -> Iterator[str]:
    """A real http server on 127.0.0.1 (free port) serving the built site."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(site["out"]))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser(chromium: Path) -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(chromium), args=FLAGS)
        yield b
        b.close()


@pytest.fixture(params=["http", "file"])
def base_url(request: pytest.FixtureRequest, site: dict[str, Any], server: str) -> str:
    return server if request.param == "http" else site["out"].as_uri() + "/"


class Watched:
    """A page whose off-machine requests are blocked and whose errors are recorded."""

    def __init__(self, browser: Browser) -> None:
        self.context = browser.new_context()
        self.blocked: list[str] = []
        self.errors: list[str] = []
        self.context.route("**/*", self._route)
        self.page: Page = self.context.new_page()
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def _route(self, route: Route) -> None:
        url = urlparse(route.request.url)
        if url.scheme in ("file", "data", "blob") or url.hostname == "127.0.0.1":
            route.continue_()
        else:
            self.blocked.append(route.request.url)
            route.abort()

    def check(self) -> None:
        assert self.blocked == [], f"requests left the machine: {self.blocked}"
        assert self.errors == [], f"console errors: {self.errors}"
        self.context.close()


@pytest.fixture
def watched(browser: Browser) -> Iterator[Watched]:
    w = Watched(browser)
    yield w
    w.check()


def cell_k(page: Page, slug: str, metric: str) -> str:
    return page.locator(f'tr[data-slug="{slug}"] td[data-metric="{metric}"] .eb-k').inner_text()


def test_board_shows_pinned_numbers(watched: Watched, base_url: str, site: dict[str, Any]) -> None:
    page = watched.page
    page.goto(base_url + "index.html")
    screen, halt = slug_of(site, "_screen-only"), slug_of(site, "_always-halt")
    assert cell_k(page, screen, "swer") == "50/90"
    assert cell_k(page, screen, "over_halt") == "0/90"
    assert cell_k(page, halt, "swer") == "0/90"
    assert cell_k(page, halt, "over_halt") == "30/90"
    clinic = slug_of(site, "_screen-only-clinic")
    assert cell_k(page, clinic, "swer") == "170/270"
    assert cell_k(page, clinic, "over_halt") == "0/270"
    assert page.locator(f'tr[data-slug="{site["bad"].name.lower()}"]').count() == 0


def board(page: Page, key: str) -> Locator:
    return page.locator(f"table#eb-board-{key}[data-eb-board]")


def test_sorting_and_filtering(watched: Watched, base_url: str) -> None:
    page = watched.page
    page.goto(base_url + "index.html")
    assert page.locator("table[data-eb-board]").count() == len(REFERENCE_BOARDS)
    n_mockmed = len(REFERENCE_BOARDS[MOCKMED_BOARD]) + 1  # and the <script>-named bundle
    n_clinic = len(REFERENCE_BOARDS[CLINIC_BOARD])
    table, clinic = board(page, MOCKMED_BOARD), board(page, CLINIC_BOARD)

    def slugs(t: Locator) -> list[str]:
        found: list[str] = t.locator("tbody tr").evaluate_all("els => els.map(e => e.dataset.slug)")
        return found

    clinic_order = slugs(clinic)
    swer = table.locator("th", has_text="SWER")
    oh = table.locator("th", has_text="Over-halt")

    def column(metric: str) -> list[float]:
        cells = table.locator(f'tbody tr td[data-metric="{metric}"]')
        return [float(v) for v in cells.evaluate_all("els => els.map(e => e.dataset.sort)")]

    assert swer.get_attribute("aria-sort") == "ascending"  # the default sort
    assert column("swer") == sorted(column("swer"))
    oh.click()
    assert oh.get_attribute("aria-sort") == "ascending"
    assert column("over_halt") == sorted(column("over_halt"))
    oh.click()
    assert oh.get_attribute("aria-sort") == "descending"
    assert column("over_halt") == sorted(column("over_halt"), reverse=True)
    assert slugs(clinic) == clinic_order  # sorting one board leaves the other alone

    mockmed_filter = page.locator(f'input[data-eb-filter="eb-board-{MOCKMED_BOARD}"]')
    clinic_filter = page.locator(f'input[data-eb-filter="eb-board-{CLINIC_BOARD}"]')
    mockmed_filter.fill("always")
    visible = table.locator("tbody tr:visible")
    assert visible.count() == 1 and "always_halt" in visible.inner_text()
    assert clinic.locator("tbody tr:visible").count() == n_clinic  # its own board only
    count = page.locator(f'[data-eb-count="eb-board-{MOCKMED_BOARD}"]')
    assert count.inner_text() == f"1 of {n_mockmed} shown"
    mockmed_filter.fill("")
    assert table.locator("tbody tr:visible").count() == n_mockmed
    clinic_filter.fill("screen_only")
    visible = clinic.locator("tbody tr:visible")
    assert visible.count() == 1 and "screen_only (clinic)" in visible.inner_text()
    assert table.locator("tbody tr:visible").count() == n_mockmed


def test_charts_render_with_size(watched: Watched, base_url: str) -> None:
    page = watched.page
    page.goto(base_url + "charts.html")
    imgs = page.locator("figure.eb-chart img")
    n = 3 * len(REFERENCE_BOARDS)  # frontier, gap and cells for every board
    assert imgs.count() == n
    for i in range(n):
        img = imgs.nth(i)
        img.scroll_into_view_if_needed()
        page.wait_for_function(
            "img => img.complete && img.naturalWidth > 0", arg=img.element_handle()
        )
        box = img.bounding_box()
        assert box is not None and box["width"] > 100 and box["height"] > 100
        assert len(img.get_attribute("alt") or "") > 30


def test_submission_page_shows_verifier_report_and_heatmap(
    watched: Watched, base_url: str, site: dict[str, Any]
) -> None:
    page = watched.page
    page.goto(base_url + "index.html")
    page.locator(f'tr[data-slug="{slug_of(site, "_screen-only")}"] .eb-system a').click()
    page.wait_for_selector('table[data-eb="checks"]')
    checks = page.locator('table[data-eb="checks"]').inner_text()
    assert "rescore" in checks and "reproduce" in checks and "passed" in checks
    img = page.locator("figure.eb-chart img")
    img.scroll_into_view_if_needed()
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=img.element_handle())
    assert page.locator('table[data-eb="matrix"] td').count() == 90


def test_script_in_a_name_renders_as_text(
    watched: Watched, base_url: str, site: dict[str, Any]
) -> None:
    page = watched.page
    page.goto(base_url + f"submissions/{site['evil'].name.lower()}.html")
    assert page.locator("h1#title").inner_text() == SCRIPT_NAME
    assert page.evaluate("window.__pwned") is None
    assert "<img src=x onerror=alert(1)>" in page.locator("pre.eb-readme").inner_text()
    page.goto(base_url + "index.html")
    assert page.evaluate("window.__pwned") is None
    assert SCRIPT_NAME in board(page, MOCKMED_BOARD).inner_text()


def test_refused_page_lists_the_refused_bundle(
    watched: Watched, base_url: str, site: dict[str, Any]
) -> None:
    page = watched.page
    page.goto(base_url + "refused.html")
    text = page.locator("#eb-refused").inner_text()
    assert site["bad"].name in text and "rescore" in text


def test_search_works(watched: Watched, base_url: str) -> None:
    page = watched.page
    page.goto(base_url + "methodology.html")
    page.locator("label.md-search__icon, .md-search__input").first.click()
    box = page.locator("input.md-search__input")
    results = page.locator(".md-search-result__item")
    # The search worker loads the index asynchronously (through the iframe-worker shim
    # on file://); a query typed before it is ready is dropped, so type again until ready.
    for _ in range(20):
        box.fill("")
        box.press_sequentially("over-halt", delay=20)
        try:
            results.first.wait_for(timeout=1_000)
            break
        except PlaywrightTimeout:
            continue
    assert results.count() > 0
    # Results of a partial query ("over-h") can show first; wait for the whole query's.
    expect(results.first).to_contain_text(re.compile("over-halt", re.IGNORECASE), timeout=10_000)
