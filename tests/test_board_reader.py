"""What a board reader asks for (issue 55): harness and model as axes, first-try success and
retries, a cost-value frontier per board, trust tiers as a filter, the verdict on a phone.

One real build (verifier, charts, mkdocs) of the MockMed references and four systems of our
own that call a (pretend) model: three signed under the private Sigstore test root (ranked),
one unsigned (a preview)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Locator, Page, expect, sync_playwright
from support.browser import Watched, served
from support.site import RECORDS, REFERENCE, ROOT

from effectbench.attempts import EarlierAttempt, Ending
from effectbench.baselines import get_baseline
from effectbench.bundle import HarnessInfo, ModelInfo, SignerDecl, SystemInfo, model_of
from effectbench.cli import main
from effectbench.instances import configuration_file_digest
from effectbench.mcp.records import read_records, write_record
from effectbench.metrics import DEFAULT_PRICES, episode_frame, task_table
from effectbench.packs import get_pack
from effectbench.produce import make_submission, write_submission
from effectbench.run.runner import evaluate
from effectbench.schema import HARNESS_KEY, AgentReport, ModelCall, Split
from effectbench.seam import AgentTask, Attempt, EnvHandle
from effectbench.site import build_site
from effectbench.verdicts import board_order, rank_ranges, separation, standing

ALICE = "alice@example.org"
BOARD = "spec1-mockmed-anchor-web"
REFERENCES = ("always-halt", "effect-verified", "retry-on-error", "screen-only")
CLINIC = "2026-12-01_screen-only-clinic"
"""A board of references alone (the clinic's API board): no system's cost is measured."""
CLINIC_BOARD = "spec1-clinic-api"


class Metered:
    """A shipped baseline that calls a (pretend) model once per episode at ``cost`` dollars."""

    def __init__(self, name: str, baseline: str, model: str, cost: float) -> None:
        self.name = name
        self._inner = get_baseline(baseline, get_pack("mockmed"))
        self._call = ModelCall(
            index=0, model=model, input_tokens=10, output_tokens=5, cost_usd=cost, latency_s=0.1
        )

    def run(self, task: AgentTask, env: EnvHandle, params: Mapping[str, Any]) -> Attempt:
        report = self._inner.run(task, env, params)
        assert isinstance(report, AgentReport)
        return Attempt(report=report, model_calls=(self._call,))


@dataclass(frozen=True)
class Own:
    """One system of our own on the board."""

    folder: str
    name: str
    baseline: str
    model: str
    harness: str
    cost: float
    signed: bool = True
    retried: int = 0
    """Cells given an earlier attempt (an agent error before the counted one)."""


OWN = (
    Own(
        "2026-03-01_alpha",
        "Alpha agent",
        "effect_verified",
        "openai/alpha-1",
        "loop-a",
        0.02,
        retried=4,
    ),
    Own("2026-03-01_beta", "Beta agent", "screen_only", "anthropic/beta-2", "loop-a", 0.005),
    Own("2026-03-01_gamma", "Gamma agent", "retry_on_error", "openai/alpha-1", "loop-b", 0.05),
    Own(
        "2026-03-01_delta",
        "Delta agent",
        "effect_verified",
        "openai/alpha-1",
        "loop-b",
        0.001,
        signed=False,
    ),
)


def make_own(subs: Path, own: Own, trust: Path | None, token: Any) -> Path:
    """Run ``own`` on MockMed at 3 trials and write (and, if ``own.signed``, sign) its bundle."""
    from sigstore_testroot import GOOGLE

    from effectbench.signatures import sign_bundle

    pack = get_pack("mockmed")
    run = evaluate(Metered(own.name, own.baseline, own.model, own.cost), pack, trials=3)
    for row in run.rows[: own.retried]:  # each such cell failed once before the counted run
        run.attempts.append(EarlierAttempt(row.task_id, row.trial, 1, Ending.AGENT_ERROR, "x"))
    provider, ident = own.model.split("/")
    submission = make_submission(
        run,
        pack,
        SystemInfo(name=own.name),
        trials=3,
        split=Split.DEV,
        started_at="2026-03-01T00:00:00+00:00",
        finished_at="2026-03-01T01:00:00+00:00",
        signer=SignerDecl(identity=ALICE, issuer=GOOGLE) if own.signed else None,
        harness=HarnessInfo(name=own.harness, version="1.0"),
        model=ModelInfo(provider=provider, id=ident),
    )
    folder = write_submission(subs / own.folder, submission, run.rows)
    if own.signed:
        sign_bundle(folder, identity_token=token(ALICE), trust_config=trust)
    return folder


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One real build of the references and :data:`OWN`; its leaderboard.json and home page."""
    from sigstore_testroot import shared_instance

    instance = shared_instance()
    base = tmp_path_factory.mktemp("reader")
    subs = base / "submissions"
    subs.mkdir()
    for name in REFERENCES:
        shutil.copytree(REFERENCE / f"2026-12-01_{name}", subs / f"2026-12-01_{name}")
    shutil.copytree(REFERENCE / CLINIC, subs / CLINIC)
    for own in OWN:
        make_own(subs, own, instance.trust_config_path, instance.email_token)
    out = base / "public"
    build_site(
        subs,
        out,
        root=ROOT,
        cache_dir=base / "cache",
        allow_unsigned=True,
        records=RECORDS,
        trust_config=instance.trust_config_path,
    )
    doc = json.loads((out / "downloads" / "leaderboard.json").read_text(encoding="utf-8"))
    (found,) = [b for b in doc["boards"] if b["key"] == BOARD]
    return {"out": out, "doc": doc, "board": found, "subs": subs}


def entry(board: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [e for e in board["board"]["entries"] if e["system"] == name]
    assert isinstance(found, dict)
    return found


# -- harness and model ----------------------------------------------------------------------


def test_model_of_reads_provider_and_id_and_refuses_the_rest() -> None:
    assert model_of("openai/gpt-4o") == ModelInfo(provider="openai", id="gpt-4o")
    assert model_of("hf/org/model-7b").id == "org/model-7b"
    for bad in ("gpt-4o", "/x", "x/", "open\u0007ai/x"):
        with pytest.raises(ValueError, match="PROVIDER/ID|provider"):
            model_of(bad)


def test_every_entry_carries_harness_and_model(board: dict[str, Any]) -> None:
    for b in board["doc"]["boards"]:
        for e in b["entries"]:
            assert "harness" in e and "model" in e
    alpha = entry(board, "Alpha agent")
    assert alpha["model"] == {"provider": "openai", "id": "alpha-1"}
    assert alpha["harness"] == {"name": "loop-a", "version": "1.0", "config_digest": None}
    shipped = entry(board, "screen_only")  # a shipped bundle made before they were recorded
    assert shipped["harness"] is None and shipped["model"] is None


def test_board_is_viewed_by_model_and_by_harness(board: dict[str, Any]) -> None:
    b = board["board"]
    order = [e["slug"] for e in b["entries"]]
    slug = {e["system"]: e["slug"] for e in b["entries"]}
    assert set(b["by_model"]["openai/alpha-1"]) == {
        slug[n] for n in ("Alpha agent", "Gamma agent", "Delta agent")
    }
    assert b["by_harness"]["loop-a 1.0"] == sorted(
        [slug["Alpha agent"], slug["Beta agent"]], key=order.index
    )
    assert len(b["by_model"]["not recorded"]) == len(REFERENCES)
    html = (board["out"] / "index.html").read_text(encoding="utf-8")
    assert "By model, across harnesses" in html and "By harness, across models" in html
    assert "model openai/alpha-1 · harness loop-b 1.0" in html


def _header(out: Path) -> dict[str, Any]:
    (folder,) = out.iterdir()
    data: dict[str, Any] = json.loads((folder / "submission.json").read_text(encoding="utf-8"))
    return data


def test_submit_records_harness_and_model_from_what_it_knows_and_the_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["submit", "--baseline", "screen_only", "--trials", "1", "--name", "s"]
    assert main([*base, "--out", str(tmp_path / "a")]) == 0
    header = _header(tmp_path / "a")
    assert header["model"] == {"provider": "scripted", "id": "screen_only"}
    assert header["harness"]["name"] == "baseline:screen_only"
    assert "config_digest" not in header["harness"]  # not recorded: left out
    config = tmp_path / "loop.toml"
    config.write_text("temperature = 0\n", encoding="utf-8")
    flags = ["--model", "openai/gpt-x", "--harness", "my loop", "--harness-version", "2.1"]
    assert main([*base, "--out", str(tmp_path / "b"), *flags, "--config", str(config)]) == 0
    header = _header(tmp_path / "b")
    assert header["model"] == {"provider": "openai", "id": "gpt-x"}
    assert header["harness"] == {
        "name": "my loop",
        "version": "2.1",
        "config_digest": configuration_file_digest(config),
    }
    capsys.readouterr()
    for bad, said in (
        (["--model", "gpt-x"], "--model: 'gpt-x' is not PROVIDER/ID"),
        (["--harness", "loop\u0007"], "--harness:"),
        (["--harness-version", "v\u001b"], "--harness-version:"),
    ):
        assert main([*base, "--out", str(tmp_path / "c"), *bad]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and said in err, err
        assert not (tmp_path / "c").exists()


def test_records_name_the_mcp_client_as_the_harness(tmp_path: Path) -> None:
    pack = get_pack("mockmed")
    run = evaluate(get_baseline("screen_only", pack), pack, trials=2)
    a, b = {"name": "my-client", "version": "3"}, {"name": "other", "version": ""}
    for folder, later in (("one", a), ("two", b)):  # "two": trial 1 by another client
        for row in run.rows:
            client = a if row.trial == 0 else later
            marked = row.model_copy(update={"env_fingerprint": {HARNESS_KEY: client}})
            write_record(tmp_path / folder, row.task_id, row.trial, marked)
    assert read_records(tmp_path / "one", pack).harness == HarnessInfo(
        name="my-client", version="3"
    )
    assert read_records(tmp_path / "two", pack).harness is None  # no one harness drove it


# -- first-try success and retries ----------------------------------------------------------


def test_every_entry_carries_first_try_success_and_retries(board: dict[str, Any]) -> None:
    for b in board["doc"]["boards"]:
        for e in b["entries"]:
            assert "first_try" in e and "retries" in e
    alpha, beta = entry(board, "Alpha agent"), entry(board, "Beta agent")
    success = alpha["rates"]["task_success"]
    cells = success["n"]  # no drops: one cell per row
    # four cells ran twice; each of them succeeded (effect_verified succeeds wherever the
    # correct action was available) or not: first-try success loses exactly those successes
    rows = [json.loads(x) for x in (board["subs"] / OWN[0].folder / "episodes.jsonl").open()]
    lost = sum(1 for r in rows[: OWN[0].retried] if r["outcome"] == "success")
    assert alpha["first_try"] == {
        "k": success["k"] - lost,
        "n": cells,
        "rate": round((success["k"] - lost) / cells, 6),
    }
    assert alpha["retries"] == {
        "mean_attempts": round((cells + OWN[0].retried) / cells, 6),
        "earlier_attempts": OWN[0].retried,
    }
    assert beta["first_try"]["k"] == beta["rates"]["task_success"]["k"]
    assert beta["retries"] == {"mean_attempts": 1.0, "earlier_attempts": 0}
    html = (board["out"] / "index.html").read_text(encoding="utf-8")
    said = f"first try {success['k'] - lost}/{cells} · {(cells + 4) / cells:.2f} attempts per cell"
    assert said in html


# -- the frontier ---------------------------------------------------------------------------


def beaten(mine: tuple[float, float], other: tuple[float, float]) -> bool:
    """Whether ``other`` (cost, value) beats ``mine``: no dearer, worth no less, better on one."""
    return other[0] <= mine[0] and other[1] >= mine[1] and other != mine


def test_every_board_lists_its_frontier_recomputed_from_its_entries(
    board: dict[str, Any],
) -> None:
    for b in board["doc"]["boards"]:
        ranked = [e for e in b["entries"] if e["status"] == "ranked"]
        points = {
            e["slug"]: (e["cost"]["per_episode_usd"], e["value"]["per_100"])
            for e in ranked
            if e["cost"]["per_episode_usd"] is not None
        }
        front = [s for s, p in points.items() if not any(beaten(p, q) for q in points.values())]
        assert b["frontier"]["entries"] == sorted(
            front, key=lambda s: (points[s][0], -points[s][1])
        )
        assert b["frontier"]["unmeasured"] == [
            e["slug"] for e in ranked if e["cost"]["per_episode_usd"] is None
        ]
        assert bool(b["frontier"]["note"]) == (not points)
    mine = board["board"]
    slug = {e["system"]: e["slug"] for e in mine["entries"]}
    assert mine["frontier"]["entries"][0] == slug["Beta agent"]  # the cheapest is on it
    assert slug["Delta agent"] not in mine["frontier"]["entries"]  # a preview never is
    assert entry(board, "Beta agent")["cost"] == {"per_episode_usd": 0.005}
    # the references run no model: no measured cost, which is never a cost of zero
    assert entry(board, "screen_only")["cost"] == {"per_episode_usd": None}
    (clinic,) = [b for b in board["doc"]["boards"] if b["key"] == CLINIC_BOARD]
    assert clinic["frontier"] == {
        "entries": [],
        "unmeasured": [e["slug"] for e in clinic["entries"]],
        "note": "No ranked system on this board has a measured cost: there is no frontier.",
    }


def test_the_charts_page_draws_each_boards_frontier(board: dict[str, Any]) -> None:
    html = (board["out"] / "charts.html").read_text(encoding="utf-8")
    start = html.index(f'data-eb-cost-frontier="{BOARD}"')
    part = html[start : html.index("</div>\n<h3", start)]
    assert f'id="chart-{BOARD}-cost"' in part and "<svg" in part
    for own in OWN:
        assert (own.name in part) == own.signed  # the preview is not placed
    assert "Without a measured cost, so not placed (never at zero): " in part
    start = html.index(f'data-eb-cost-frontier="{CLINIC_BOARD}"')
    part = html[start : html.index("</div>", start)]
    assert "<svg" not in part and "there is no frontier." in part


# -- in Chromium: trust tiers as a filter, the verdict and the frontier on a phone ------------

GROUP = "spec1-mockmed-anchor"
"""The MockMed table (its one board, :data:`BOARD`)."""
PHONE = {"width": 390, "height": 844}
BROWSER_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu"]


@pytest.fixture(scope="module")
def browser(chromium: Path) -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(chromium), args=BROWSER_FLAGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def server(board: dict[str, Any]) -> Iterator[str]:
    """The built site on 127.0.0.1 (a free port), stopped with the module."""
    with served(board["out"]) as url:
        yield url


def expected_ranks(board: dict[str, Any], slugs: list[str]) -> dict[str, str]:
    """The rank ranges of ``slugs`` ranked as a family of their own at the board's prices, by
    the Python definitions (effectbench.verdicts), from their bundles' rows."""
    folders = {p.name.lower(): p for p in board["subs"].iterdir()}
    tables = []
    for slug in slugs:
        rows = [json.loads(x) for x in (folders[slug] / "episodes.jsonl").open()]
        available = {r["task_id"]: r["correct_action_available"] for r in rows}
        tables.append(task_table(episode_frame(rows), available))
    st = [standing(s, s, t, DEFAULT_PRICES) for s, t in zip(slugs, tables, strict=True)]
    order = board_order(st)
    apart = separation([tables[i] for i in order], DEFAULT_PRICES)
    best, worst = rank_ranges(range(len(order)), apart.beyond)
    return {
        slugs[i]: str(b) if b == w else f"{b}–{w}"
        for i, b, w in zip(order, best, worst, strict=True)
    }


def shown_ranks(page: Page) -> dict[str, str]:
    rows = page.locator(f"#eb-board-{GROUP} tbody:not([hidden]) tr[data-slug]:not([hidden])")
    script = "els => els.map(e => [e.dataset.slug, e.querySelector('[data-col=rank]').textContent])"
    return dict(rows.evaluate_all(script))


@pytest.mark.browser
def test_a_tier_filter_shows_its_rows_ranked_among_themselves_and_stays_in_the_url(
    board: dict[str, Any], browser: Browser, server: str
) -> None:
    entries = board["board"]["entries"]
    tier_of = {e["slug"]: e for e in entries}
    signed = [e["slug"] for e in entries if e["tier"] == "signed"]
    reproduced = [e["slug"] for e in entries if e["tier"] == "reproduced"]
    assert len(signed) == 3 and len(reproduced) == len(REFERENCES)
    w = Watched(browser)
    page = w.page
    page.goto(server + f"index.html?tier-{GROUP}=signed")
    expect(page.locator(f'select[data-eb-tier="{GROUP}"]')).to_have_value("signed")
    want = expected_ranks(board, signed)
    expect(page.locator(f"#eb-board-{GROUP} tbody tr[data-slug]:not([hidden])")).to_have_count(3)
    assert shown_ranks(page) == want
    # every row says its tier
    for slug in signed:
        label = page.locator(f'#eb-board-{GROUP} tr[data-slug="{slug}"] [data-eb-tier-label]')
        expect(label).to_have_text("tier: signed, on public seeds")
    page.select_option(f'select[data-eb-tier="{GROUP}"]', "reproduced")
    expect(page.locator(f"#eb-board-{GROUP} tbody tr[data-slug]:not([hidden])")).to_have_count(
        len(reproduced)
    )
    assert f"tier-{GROUP}=reproduced" in page.url
    assert shown_ranks(page) == expected_ranks(board, reproduced)
    # the unsigned preview is in no tier: never among a tier's rows, and never ranked
    preview = [e["slug"] for e in entries if e["tier"] == "preview"]
    assert [tier_of[s]["system"] for s in preview] == ["Delta agent"]
    assert page.locator(f'#eb-board-{GROUP} tr[data-slug="{preview[0]}"]').is_hidden()
    page.select_option(f'select[data-eb-tier="{GROUP}"]', "")
    expect(page.locator(f"#eb-board-{GROUP} tbody tr[data-slug]:not([hidden])")).to_have_count(
        len(entries)
    )
    assert f"tier-{GROUP}=" not in page.url
    assert shown_ranks(page) == {  # every ranked row ranked together: the build's own ranges
        e["slug"]: "—"
        if e["rank_best"] is None
        else str(e["rank_best"])
        if e["rank_best"] == e["rank_worst"]
        else f"{e['rank_best']}–{e['rank_worst']}"
        for e in entries
    }
    w.check()


def no_sideways_scroll(page: Page) -> None:
    width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    wide = page.evaluate(
        """() => [...document.querySelectorAll('body *')].filter(e => {
             const r = e.getBoundingClientRect(); return r.width && r.right > window.innerWidth;
           }).slice(0, 8).map(e => e.tagName + '.' + e.className)"""
    )
    assert width[0] <= width[1], f"the page scrolls sideways: {width} {wide}"


def on_first_screen(locator: Locator, height: int) -> None:
    box = locator.bounding_box()
    assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= height, box


@pytest.mark.browser
def test_the_verdict_reads_on_a_phone(browser: Browser, server: str) -> None:
    """At 390 px: no sideways scroll; the lede's definition of net value and the first ranked
    row, with its interval and the words for doing nothing, on the first screen."""
    w = Watched(browser, viewport=PHONE)
    page = w.page
    page.goto(server + "index.html")
    no_sideways_scroll(page)
    said = page.locator("p.eb-lede .eb-lede-def")  # net value's definition, on a phone too
    expect(said).to_be_visible()
    expect(said).to_contain_text("net value per 100 tasks")
    expect(said).to_contain_text("against doing nothing at 0")
    on_first_screen(said, PHONE["height"])
    first = page.locator("table.eb-board").first.locator("tbody:not([hidden]) tr[data-slug]").first
    for part in (first.locator(".eb-system a"), first.locator('[data-col="value"] .eb-ci')):
        on_first_screen(part, PHONE["height"])
    verdict = first.locator("[data-eb-verdict]")
    on_first_screen(verdict, PHONE["height"])
    assert verdict.inner_text() in (
        "above doing nothing",
        "below doing nothing",
        "within noise of doing nothing",
    )
    w.check()


@pytest.mark.browser
@pytest.mark.parametrize("viewport", [{"width": 1366, "height": 768}, PHONE])
def test_each_board_draws_its_frontier_on_a_laptop_and_a_phone(
    board: dict[str, Any], browser: Browser, server: str, viewport: dict[str, int]
) -> None:
    w = Watched(browser, viewport=viewport)
    page = w.page
    page.goto(server + "charts.html")
    no_sideways_scroll(page)
    for b in board["doc"]["boards"]:
        part = page.locator(f'[data-eb-cost-frontier="{b["key"]}"]')
        if not b["frontier"]["entries"]:
            expect(part.locator("[data-eb-no-frontier]")).to_be_visible()
            continue
        svg = part.locator(".eb-chart-box:visible svg")
        expect(svg).to_have_count(1)
        box = svg.bounding_box()
        assert box is not None and box["width"] <= viewport["width"]
        # the frontier line and each point's whiskers are drawn
        marks = svg.locator('[aria-roledescription="line mark"], path[aria-label^="frontier"]')
        assert marks.count() >= 1
    w.check()
