"""The site's receipts, in headless Chromium: every episode one link away from its cell.

A real build of the reference bundles (made before receipts: shown without them), the shipped
reference run of screen_only on the clinic's web substrate (3 trials of real Chromium episodes,
with their receipts and frames, judged by the maintainers' reproduction record as ``make site``
does), two runs on the clinic's API level made by ``effectbench submit``, and a bundle whose
receipt holds a script (refused). Two clicks from the board (the system, then a letter of its
task x trial table) open a screen_only silent wrong effect's episode view, which names the
field whose actual value differs and shows the banner frame the agent believed; a heatmap count
lists the episodes behind it; the compare view opens two systems' receipts of one task and
trial side by side; at 390 px the receipt's evidence, the per-cell table and the prices panel
fit the screen and a frame opens at full size; axe finds no serious violation at 390 px (touch)
and 1366 px, light and dark; nothing leaves the machine and no markup from a receipt reaches a
page.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, sync_playwright
from support.browser import Watched as SiteWatched
from support.browser import served
from support.bundles import edit_receipts
from support.site import RECORDS, REFERENCE, copy_references

from effectbench.cli import main
from effectbench.screens.browser import close_shared_browser
from effectbench.site import build_site

pytestmark = [pytest.mark.browser, pytest.mark.web]

ROOT = Path(__file__).resolve().parents[1]
AXE = ROOT / "tests" / "vendor" / "axe-core" / "axe.min.js"
OURS = ".md-content, .md-copyright"
CLINIC_BOARD = "spec1-clinic"
"""The clinic's table: one board per substrate, the api board shown first."""
WEB_REFERENCE = REFERENCE / "2026-12-01_screen-only-clinic-web"
"""The shipped screen_only run on the clinic's web substrate: 27 tasks x 3 trials of real
Chromium episodes with their receipts, and a maintainers' reproduction record."""


def _submit(out: Path, name: str, *args: str) -> Path:
    before = set(out.iterdir())
    assert main(["submit", "--pack", "clinic", *args, "--name", name, "--out", str(out)]) == 0
    (new,) = set(out.iterdir()) - before
    return new


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("receipts-site")
    subs = base / "submissions"
    copy_references(subs)
    three = ("--trials", "3")
    web = subs / WEB_REFERENCE.name  # recorded Chromium episodes: no browser runs to build it
    shutil.copytree(WEB_REFERENCE, web)
    api = _submit(subs, "Screen only api", "--baseline", "screen_only", *three)
    verified = _submit(subs, "Effect verified api", "--baseline", "effect_verified", *three)
    rows_only = _submit(subs, "Rows only api", "--baseline", "always_halt", *three)
    (rows_only / "receipts.jsonl").unlink()  # as a bundle made before receipts (format 1)
    header = (rows_only / "submission.json").read_text(encoding="utf-8")
    header = header.replace('"effectbench_bundle_version": 2', '"effectbench_bundle_version": 1')
    (rows_only / "submission.json").write_text(header, encoding="utf-8")
    evil = subs / "2026-01-01_scripted-receipt"
    shutil.copytree(api, evil)

    def plant(receipts: list[dict[str, Any]]) -> None:
        receipts[0]["claim"]["message"] = "<script>window.__pwned=4</script>"

    edit_receipts(evil, plant)
    out = base / "public"
    build_site(  # the copied references (the web one too) from their records; the runs re-run
        subs,
        out,
        root=ROOT,
        cache_dir=base / "cache",
        workers=1,
        allow_unsigned=True,
        records=RECORDS,
    )
    close_shared_browser()  # a browser the build may have started: the tests drive their own
    yield {
        "subs": subs,
        "out": out,
        "web": web,
        "api": api,
        "verified": verified,
        "evil": evil,
        "rows_only": rows_only,
    }


@pytest.fixture(scope="module")
def server(site: dict[str, Any]) -> Iterator[str]:
    with served(site["out"]) as url:
        yield url


@pytest.fixture(scope="module")
def browser(site: dict[str, Any]) -> Iterator[Browser]:
    """The tests' Chromium, started once the site is built (one Playwright per thread)."""
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        yield b
        b.close()


class Watched(SiteWatched):
    """A watched page (support.browser) on which no receipt's script ever ran."""

    def check(self) -> None:
        assert self.page.evaluate("window.__pwned") is None
        super().check()


def _swer_link(page: Page, task: str) -> Any:
    row = page.locator('table[data-eb="matrix"] tr', has=page.locator(f'th:text-is("{task}")'))
    return row.locator("td.o-W a").first


@pytest.mark.parametrize("scheme", ["http", "file"])
def test_two_clicks_from_the_board_open_a_silent_wrong_effects_receipt(
    browser: Browser, server: str, site: dict[str, Any], scheme: str
) -> None:
    base = server if scheme == "http" else site["out"].as_uri() + "/"
    w = Watched(browser, viewport={"width": 1366, "height": 900})
    page = w.page
    page.goto(base + f"index.html?substrate-{CLINIC_BOARD}=web")  # the clinic's web board
    slug = site["web"].name
    page.locator(
        f'table#eb-board-{CLINIC_BOARD} tbody:not([hidden]) tr[data-slug="{slug}"] th.eb-system a'
    ).click()
    assert page.url.split("?")[0].endswith(f"submissions/{slug}.html")  # click 1
    _swer_link(page, "clinic::partial_note@web").click()  # click 2
    receipt = page.locator("section.eb-receipt")
    receipt.wait_for()
    differs = receipt.locator('tr[data-eb-differs="yes"]')
    assert differs.count() == 1
    assert differs.locator("th").inner_text() == "note"  # the field whose actual differs
    assert differs.locator("td.eb-differs").inner_text().startswith("differs")
    assert "field note" in receipt.locator('[data-eb="differs"]').inner_text()
    assert "banner: green banner" in receipt.locator('[data-eb="claim"]').inner_text()
    frame = receipt.locator('figure[data-eb-frame="report"] img')
    # the banner frame, once decoded (on a loaded machine the page may still be fetching it)
    assert frame.evaluate("img => img.decode().then(() => img.naturalWidth)") == 1024
    assert "silent_wrong_effect" in receipt.locator('[data-eb="truth"]').inner_text()
    assert "Untouched: billing, patients, sqlite_master" in receipt.inner_text()
    assert "re-ran" in receipt.locator('[data-eb="reproduction"]').inner_text()
    w.check()


def test_the_board_reports_the_collateral_write_rate_beside_swer(
    browser: Browser, server: str, site: dict[str, Any]
) -> None:
    w = Watched(browser, viewport={"width": 1366, "height": 900})
    page = w.page
    page.goto(server + f"index.html?substrate-{CLINIC_BOARD}=web")  # the clinic's web board
    rows = page.locator(f"table#eb-board-{CLINIC_BOARD} tbody:not([hidden])")
    web = rows.locator(f'tr[data-slug="{site["web"].name}"] td[data-metric="collateral_write"]')
    k, n = web.locator(".eb-k").first.inner_text().split("/")
    assert int(n) == 27 * 3 and int(k) > 0  # every episode; the homonym, stale allergies, ...
    assert web.locator(".eb-ci").count() >= 1  # with its interval
    page.goto(server + "index.html")  # the api board, where the bundle without receipts ran
    old = rows.locator(
        f'tr[data-slug="{site["rows_only"].name}"] td[data-metric="collateral_write"]'
    )
    assert "not measured" in old.inner_text()  # a bundle made before receipts
    w.check()


def test_a_heatmap_count_lists_its_episodes_and_each_opens(
    browser: Browser, server: str, site: dict[str, Any]
) -> None:
    w = Watched(browser, viewport={"width": 1366, "height": 900})
    page = w.page
    page.goto(server + f"submissions/{site['web'].name}.html")
    cell = page.locator(
        'table[data-eb="heatmap"] tr', has=page.locator('th:text-is("C4_stale_overwrite")')
    )
    link = cell.locator('td[data-metric="swer"] a')
    count = int(link.inner_text().split("/")[0])
    link.click()
    listed = page.locator("#eb-episode table a")
    listed.first.wait_for()
    assert listed.count() == count
    listed.first.click()
    page.locator("section.eb-receipt").wait_for()
    collateral = page.locator("li.eb-collateral")
    assert (
        collateral.count() >= 1 and "patients" in page.locator('[data-eb="changes"]').inner_text()
    )
    w.check()


def test_the_compare_view_opens_two_receipts_side_by_side(
    browser: Browser, server: str, site: dict[str, Any]
) -> None:
    w = Watched(browser, viewport={"width": 1366, "height": 900})
    page = w.page
    a, b = site["api"].name, site["verified"].name
    page.goto(server + f"compare.html?board={CLINIC_BOARD}-api&a={a}&b={b}")
    page.locator('table[data-eb="disagree"]').wait_for()
    page.locator('table[data-eb="disagree"] tr[data-task="clinic::partial_note"] a').first.click()
    sides = page.locator(".eb-side section.eb-receipt")
    sides.first.wait_for()
    assert sides.count() == 2
    assert [s.get_attribute("data-eb-slug") for s in sides.all()] == [a, b]
    w.check()


def test_a_receipt_with_a_script_is_refused_and_its_markup_never_reaches_a_page(
    browser: Browser, server: str, site: dict[str, Any]
) -> None:
    out: Path = site["out"]
    slug = site["evil"].name
    assert not (out / "submissions" / f"{slug}.html").exists()
    assert not (out / "receipts" / slug).exists()
    refused = (out / "refused.html").read_text(encoding="utf-8")
    assert "receipt.markup" in refused and "<script>window.__pwned=4" not in refused
    w = Watched(browser, viewport={"width": 1366, "height": 900})
    w.page.goto(server + "refused.html")
    w.page.goto(server + f"episode.html?s={slug}&t=clinic%3A%3Aclean_draft&n=0")
    alert = w.page.locator("#eb-episode [role=alert]")
    assert "no receipts" in alert.inner_text()  # a refused bundle has none on the site
    assert [e for e in w.errors if "404" not in e] == []  # its index is simply not there
    w.errors.clear()
    w.check()


def run_axe(page: Page) -> list[str]:
    page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
    found: list[str] = page.evaluate(
        """async (ours) => {
            const r = await axe.run(document, {resultTypes: ["violations"]});
            const out = [];
            for (const v of r.violations) for (const n of v.nodes) {
                const el = document.querySelector(n.target[0]);
                const impact = n.impact || v.impact;
                if (el && el.closest(ours) && (impact === "serious" || impact === "critical"))
                    out.push(v.id + " at " + n.target.join(" ") + ": " + n.failureSummary);
            }
            return out;
        }""",
        OURS,
    )
    return found


PHONE = 390
OUTSIDE = """(els, width) => els
    .map(e => [e.tagName.toLowerCase() + "." + e.className, e.getBoundingClientRect()])
    .filter(([, r]) => r.width === 0 || r.left < 0 || r.right > width)
    .map(([what, r]) => what + " " + Math.round(r.left) + ".." + Math.round(r.right))"""
"""Of the elements given, those not shown whole within the viewport's width (or not shown)."""


def _sideways(page: Page) -> int:
    return int(page.evaluate("document.documentElement.scrollWidth"))


def test_on_a_phone_the_evidence_fits_the_screen_and_a_frame_opens_at_full_size(
    browser: Browser, server: str, site: dict[str, Any]
) -> None:
    """At 390 px (touch): the receipt's "differs" cell, its frames and actions, every card of
    the submission's per-cell table (no row whose numbers sit beyond a sideways scroll) and the
    prices panel, opened, lie within the screen's width, and no page scrolls sideways; a frame
    opens as the frame itself, at its full size."""
    w = Watched(browser, viewport={"width": PHONE, "height": 844}, has_touch=True, is_mobile=True)
    page = w.page
    page.goto(server + f"submissions/{site['web'].name}.html")
    rates = page.locator('table[data-eb="cells"] td.eb-rate')
    assert rates.count() >= 6 * 8  # six rates in each of the run's eight cells
    assert rates.evaluate_all(OUTSIDE, PHONE) == []
    assert _sideways(page) <= PHONE
    _swer_link(page, "clinic::partial_note@web").click()
    receipt = page.locator("section.eb-receipt")
    receipt.wait_for()
    shown = receipt.locator("td.eb-differs, figure.eb-frame, figure.eb-frame img, ol.eb-actions")
    assert receipt.locator("td.eb-differs").count() == 1
    assert receipt.locator("figure.eb-frame img").count() >= 1
    assert shown.evaluate_all(OUTSIDE, PHONE) == []
    assert _sideways(page) <= PHONE
    frame = receipt.locator('figure[data-eb-frame="report"] a.eb-frame-open')
    name = str(frame.get_attribute("href")).rsplit("/", 1)[-1]
    frame.click()
    page.wait_for_url(f"**/{name}")
    opened = page.evaluate("[document.images.length, document.images[0].naturalWidth]")
    assert opened == [1, 1024]  # the whole frame, never the thumbnail the page showed
    page.goto(server + "index.html")
    page.locator("details.eb-prices > summary").click()
    panel = page.locator("details.eb-prices[open]")
    panel.wait_for()
    inside = panel.locator("summary, p:not([hidden]), label, input, select, button")
    assert inside.evaluate_all(OUTSIDE, PHONE) == []
    assert _sideways(page) <= PHONE
    w.check()


@pytest.mark.parametrize("color", ["light", "dark"])
def test_axe_finds_no_serious_violation_on_the_episode_views(
    browser: Browser, server: str, site: dict[str, Any], color: str
) -> None:
    web, api, verified = site["web"].name, site["api"].name, site["verified"].name
    pages = (
        f"episode.html?s={web}&t=clinic%3A%3Apartial_note%40web&n=0",
        f"episode.html?s={web}&t=clinic%3A%3Astale_allergies%40web&n=1",
        f"episode.html?s={web}&cell=C1_partial_save%7Cweb&m=swer",
        f"episode.html?s={api}&t=clinic%3A%3Ahomonym_dob&n=0&vs={verified}",
        f"submissions/{web}.html",
    )
    found = []
    for width, touch in ((390, True), (1366, False)):
        w = Watched(
            browser,
            viewport={"width": width, "height": 900},
            color_scheme=color,
            has_touch=touch,
            is_mobile=touch,
        )
        for url in pages:
            w.page.goto(server + url)
            if "episode" in url:
                w.page.locator("#eb-episode h2").wait_for()
            found += [f"{width}px {url}: {v}" for v in run_axe(w.page)]
        w.check()
    assert found == [], "\n".join(found[:20])
