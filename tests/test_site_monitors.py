"""The monitors board: a real site build (verifier, vl-convert, mkdocs) of real monitor bundles.

One small repository-like root per module: two signed MockMed bundles (the dev split), the
clinic's sequestered split run by the shipped baselines on the api substrate
(``monitors/heldout/``, the test split, plain and monitored; its labels kept outside the
root as the board keeps them), the corpus they give, locked in
``monitors/corpus.lock.json``, and three monitor bundles run on it:
``claim-text`` signed under the private Sigstore test root (ranked), ``frame-change`` unsigned
(a preview), and a copy of ``claim-text`` with one score line removed (refused, named).
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
from fractions import Fraction
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import orjson
import pytest
from sigstore_testroot import GOOGLE, SigstoreTestInstance, shared_instance
from support.bundles import make_bundle
from support.monitors import bundle_scores, check_split
from support.site import ROOT, site_root

from effectbench.bundle import SignerDecl
from effectbench.cli import main
from effectbench.errors import SiteBuildError
from effectbench.metrics.detection import auroc, recall_at_fpr
from effectbench.monitors.bundle import SCORES_FILE
from effectbench.monitors.corpus import read_corpus, write_corpus
from effectbench.monitors.reference import ClaimText, FrameChange
from effectbench.monitors.run import run_monitor
from effectbench.monitors.sources import write_lock
from effectbench.schema import Split
from effectbench.signatures import sign_bundle
from effectbench.site import build_site
from verifier.api import VerifyOptions, verify_path
from verifier.corpus import lock_corpus
from verifier.monitors import verify_monitor
from verifier.ranking import rank_across

ALICE = "alice@example.org"
WHEN = "2026-01-02"


@pytest.fixture(scope="module")
def instance() -> SigstoreTestInstance:
    return shared_instance()


@pytest.fixture(scope="module")
def board(instance: SigstoreTestInstance, tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("monitors-site")
    root = site_root(base, [])
    subs = root / "submissions"
    for baseline in ("screen_only", "effect_verified"):
        bundle = make_bundle(
            subs / f"2026-01-01_{baseline}",
            baseline,
            declare_baseline=False,
            signer=(ALICE, GOOGLE),
        )
        token = instance.email_token(ALICE)
        sign_bundle(bundle, identity_token=token, trust_config=instance.trust_config_path)
    heldout = root / "monitors" / "heldout"
    args = ["monitor", "heldout", "--out", str(heldout), "--substrate", "api"]
    assert main([*args, "--pack", "clinic"]) == 0
    options = VerifyOptions(trust_config=instance.trust_config_path)
    reports = rank_across(list(verify_path(subs, options)))
    lock, made = lock_corpus(root, reports, heldout)
    write_corpus(made, base / "corpus", held_labels=base / "held")
    write_lock(root / "monitors" / "corpus.lock.json", lock)
    corpus = read_corpus(base / "corpus")
    bundles = root / "monitors" / "bundles"
    signer = SignerDecl(identity=ALICE, issuer=GOOGLE)
    claim = run_monitor(ClaimText(), corpus, bundles, when=WHEN, signer=signer)
    assert (
        main(
            [
                "sign",
                str(claim),
                "--identity-token",
                instance.email_token(ALICE),
                "--trust-config",
                str(instance.trust_config_path),
            ]
        )
        == 0
    )
    run_monitor(FrameChange(), corpus, bundles, when=WHEN)
    broken = shutil.copytree(claim, bundles / f"{WHEN}_broken")
    (broken / "submission.sigstore.json").unlink()
    lines = (broken / SCORES_FILE).read_bytes().splitlines(keepends=True)
    (broken / SCORES_FILE).write_bytes(b"".join(lines[1:]))
    return base


def build(
    board: Path, out: Path, instance: SigstoreTestInstance, held_labels: Path | None = None
) -> Any:
    return build_site(
        board / "root" / "submissions",
        out,
        root=board / "root",
        cache_dir=board / "cache",
        allow_unsigned=True,
        trust_config=instance.trust_config_path,
        workers=1,
        held_labels=held_labels,
    )


@pytest.fixture(scope="module")
def site(board: Path, instance: SigstoreTestInstance) -> dict[str, Any]:
    out = board / "public"
    summary = build(board, out, instance)
    html = (out / "monitors.html").read_text(encoding="utf-8")
    return {"out": out, "summary": summary, "html": html}


def _table(html: str, table_id: str) -> str:
    found = re.search(rf'<table class="eb-table" id="{table_id}">(.*?)</table>', html, re.S)
    assert found is not None, table_id
    return found.group(1)


def _row(table: str, slug: str) -> str:
    found = re.search(rf'<tr data-monitor="{re.escape(slug)}"[^>]*>(.*?)</tr>', table, re.S)
    assert found is not None, slug
    return found.group(1)


def _metric(row: str, name: str) -> str:
    found = re.search(rf'<td data-metric="{re.escape(name)}">(.*?)</td>', row, re.S)
    assert found is not None, name
    return unescape(re.sub(r"<[^>]+>", " ", found.group(1)))


def _dev_scores(board: Path, slug: str) -> tuple[list[float], list[float]]:
    corpus = read_corpus(board / "corpus", check_frames=False)
    dev = corpus.labels(Split.DEV)
    assert dev is not None
    scores = {}
    bundle = board / "root" / "monitors" / "bundles" / slug
    for line in (bundle / SCORES_FILE).read_bytes().splitlines():
        doc = orjson.loads(line)
        scores[doc["id"]] = float(doc["score"])
    pos = [scores[e.id] for e in dev.episodes if e.scored is True]
    neg = [scores[e.id] for e in dev.episodes if e.scored is False]
    return pos, neg


def test_the_monitors_page_ranks_verified_monitors_with_their_numbers(
    site: dict[str, Any], board: Path
) -> None:
    html = site["html"]
    table = _table(html, "eb-monitors")
    claim, frames = f"{WHEN}_claim-text", f"{WHEN}_frame-change"
    assert 'data-status="ranked"' in _row_open(table, claim)
    assert 'data-status="preview"' in _row_open(table, frames)
    # the numbers shown are the metrics module's, computed here from the bundle's own scores
    pos, neg = _dev_scores(board, claim)
    area = auroc(pos, neg)
    assert area is not None
    shown = _metric(_row(table, claim), "auroc")
    assert shown.startswith(f"{area:.3f} ["), shown
    for name, target in (("1%", 1), ("5%", 5)):
        recall = recall_at_fpr(pos, neg, Fraction(target, 100))
        cell = _metric(_row(table, claim), f"recall-{name}")
        assert cell.startswith(f"{100 * recall:.1f}% [") if recall is not None else "-" in cell
        assert f"/{len(pos)}" in cell  # raw k/n beside the interval
    # no held labels given: the held-out column is empty and the page says who fills it
    assert _metric(_row(table, claim), "heldout").strip() == "—"
    assert "filled by the board's own run on the sequestered split" in html
    assert site["summary"].n_monitors == 2 and site["summary"].n_monitors_refused == 1


def _row_open(table: str, slug: str) -> str:
    found = re.search(rf'<tr data-monitor="{re.escape(slug)}"[^>]*>', table)
    assert found is not None, slug
    return found.group(0)


def test_a_monitor_bundle_that_fails_verification_is_named_not_ranked(
    site: dict[str, Any],
) -> None:
    html = site["html"]
    broken = f"{WHEN}_broken"
    assert broken not in _table(html, "eb-monitors")
    refused = _row(_table(html, "eb-monitors-refused"), broken)
    assert "monitor.missing_episode" in refused
    assert "scores.jsonl" in refused
    # not on the ROC chart nor the cells chart either
    assert "broken" not in "".join(re.findall(r"<figure.*?</figure>", html, re.S))


def test_roc_and_cells_charts_are_svg_with_data_tables(site: dict[str, Any], board: Path) -> None:
    html = site["html"]
    for name in ("monitors-roc", "monitors-cells"):
        figure = re.search(rf'<figure class="eb-chart" id="chart-{name}".*?</figure>', html, re.S)
        assert figure is not None, name
        assert "<svg" in figure.group(0) and "<figcaption>" in figure.group(0)
    # the cells chart's table: every (category x substrate) cell of the scored dev episodes,
    # once per accepted monitor, as the agents' heatmap names them
    dev = read_corpus(board / "corpus", check_frames=False).labels(Split.DEV)
    assert dev is not None
    expected = sorted(
        {f"{e.category.value} × {e.substrate.value}" for e in dev.episodes if e.scored is not None}
    )
    shown = re.findall(r"<td>(\w+ × \w+)</td>", html)
    assert len(expected) > 1 and sorted(shown) == sorted(expected * 2)


def test_missed_episodes_link_to_published_receipts(site: dict[str, Any]) -> None:
    html, out = site["html"], site["out"]
    links = re.findall(r'<ul class="eb-missed">(.*?)</ul>', html, re.S)
    assert len(links) == 2
    hrefs = [unescape(h) for h in re.findall(r'href="(episode\.html\?[^"]+)"', "".join(links))]
    assert hrefs, "a monitor missed no silent wrong effect: the fixture shows nothing"
    for href in hrefs:
        query = parse_qs(urlsplit(href).query)
        slug = query["s"][0]
        assert (out / "receipts" / slug / "index.js").is_file(), slug
        assert (out / "submissions" / f"{slug}.html").is_file()


def test_the_board_holds_no_label_of_an_episode(site: dict[str, Any]) -> None:
    """The site never publishes a corpus id with its label (the dev labels are in the corpus
    folder; the board's page lists only the missed episodes by task and trial)."""
    html = site["html"]
    board_part = html[: html.index('<h2 id="refused"')]
    assert not re.search(r"ep-[0-9a-f]{20}", board_part)
    # a refused bundle's finding may name the episode it missed, never its label
    refused = _table(html, "eb-monitors-refused")
    assert re.search(r"ep-[0-9a-f]{20}", refused)
    assert not re.search(r"positive|negative|silent_wrong_effect", refused)


def _snapshot(out: Path) -> dict[str, str]:
    build_date = re.compile(r'<span class="eb-build-date">[^<]*</span>')
    files = {}
    for f in sorted(out.rglob("*")):
        if f.is_file():
            data = f.read_bytes()
            if f.suffix == ".html":
                data = build_date.sub("", data.decode("utf-8")).encode("utf-8")
            files[str(f.relative_to(out))] = hashlib.sha256(data).hexdigest()
    return files


def test_two_builds_of_the_monitors_board_are_identical(
    site: dict[str, Any], board: Path, instance: SigstoreTestInstance
) -> None:
    again = board / "public-again"
    summary = build(board, again, instance)
    assert summary.charts_rendered == 0
    assert _snapshot(again) == _snapshot(site["out"])


def test_the_shipped_reference_monitors_are_listed_and_ranked(tmp_path: Path) -> None:
    """The repository's monitor bundles verify against its corpus, ranked unsigned only
    because the maintainers' list names them; the list is up to date."""
    run = subprocess.run(
        [sys.executable, "-m", "verifier.monitor_references", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    bundles = sorted((ROOT / "monitors" / "bundles").iterdir())
    assert {b.name.split("_", 1)[1] for b in bundles} == {
        "claim-text",
        "frame-change",
        "model-judge",
    }
    corpus = read_corpus(ROOT / "monitors" / "corpus", check_frames=False)
    dev = corpus.labels(Split.DEV)
    assert dev is not None
    ids = [v.id for v in corpus.views]
    for bundle in bundles:
        report = verify_monitor(bundle, corpus.ref, ids, [dev])
        assert report.status.value == "ranked" and report.listed, report.findings
        check_split(report.splits[0], bundle_scores(bundle), dev)
        # not listed any more once a byte changes: then it needs a signature
        copy = Path(shutil.copytree(bundle, tmp_path / bundle.name))
        (copy / "README.md").write_text("edited\n", encoding="utf-8")
        edited = verify_monitor(copy, corpus.ref, ids, [dev])
        assert edited.status.value == "refused"
        assert "signature.missing" in edited.finding_ids()


def test_given_the_board_s_labels_the_held_out_column_shows_both_slices(
    site: dict[str, Any], board: Path, instance: SigstoreTestInstance
) -> None:
    """With the held labels, each monitor's recall on the plain test split and on the
    monitored slice is shown, as the verifier computes it; no test episode is listed."""
    from effectbench.monitors.corpus import read_labels

    held = board / "held"
    out = board / "public-held"
    build(board, out, instance, held_labels=held)
    html = (out / "monitors.html").read_text(encoding="utf-8")
    corpus = read_corpus(board / "corpus", check_frames=False)
    dev = corpus.labels(Split.DEV)
    test = read_labels(held / "labels-test.json")
    assert dev is not None
    bundle = board / "root" / "monitors" / "bundles" / f"{WHEN}_claim-text"
    report = verify_monitor(
        bundle,
        corpus.ref,
        [v.id for v in corpus.views],
        [dev, test],
        trust_config=instance.trust_config_path,
    )
    on_test = next(s for s in report.splits if s.split is Split.TEST)
    assert set(on_test.slices) == {"plain", "monitored"}
    shown = _metric(_row(_table(html, "eb-monitors"), bundle.name), "heldout")
    for name in ("plain", "monitored"):
        recall = on_test.slices[name].point("5%").recall
        assert recall is not None
        assert f"{recall.numerator}/{recall.denominator}" in shown, (name, shown)
    assert "comes from the board's held labels" in html
    # the test split's episodes are never listed: every missed link is a dev episode's
    tasks = {e.task for e in test.episodes}
    missed = "".join(re.findall(r'<ul class="eb-missed">(.*?)</ul>', html, re.S))
    hrefs = re.findall(r'href="episode\.html\?([^"]+)"', missed)
    assert hrefs and not {parse_qs(unescape(h))["t"][0] for h in hrefs} & tasks
    # labels of another corpus: an error naming the file, no site written
    other = board / "held-other"
    other.mkdir()
    doc = orjson.loads((held / "labels-test.json").read_bytes())
    doc["corpus"]["digest"] = "sha256:" + "0" * 64
    (other / "labels-test.json").write_bytes(orjson.dumps(doc))
    with pytest.raises(SiteBuildError, match="labels-test.json"):
        build(board, board / "public-other", instance, held_labels=other)
    assert not (board / "public-other" / "monitors.html").exists()


AXE = ROOT / "tests" / "vendor" / "axe-core" / "axe.min.js"
OURS = ".md-content, .md-copyright"
"""What the project renders (the rest of the page is the theme's)."""


@pytest.mark.browser
def test_the_monitors_page_in_chromium_is_accessible_and_its_missed_links_open_receipts(
    site: dict[str, Any], chromium: Path
) -> None:
    from playwright.sync_api import sync_playwright
    from support.browser import Watched, served

    with served(site["out"]) as server, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium), args=["--headless"])
        try:
            for width in (390, 1366):
                w = Watched(browser, viewport={"width": width, "height": 900})
                w.page.goto(server + "monitors.html")
                assert w.page.locator("#chart-monitors-roc svg").count() >= 1
                w.page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
                serious = w.page.evaluate(
                    """async (ours) => {
                        const r = await axe.run(document, {resultTypes: ["violations"]});
                        return r.violations.flatMap(v => v.nodes
                            .filter(n => ["serious", "critical"].includes(n.impact || v.impact))
                            .filter(n => {
                                const el = document.querySelector(n.target[0]);
                                return !!(el && el.closest(ours));
                            })
                            .map(n => v.id + " at " + n.target.join(" ")));
                    }""",
                    OURS,
                )
                assert serious == [], serious
                w.check()
            w = Watched(browser)
            w.page.goto(server + "monitors.html")
            missed = w.page.locator("ul.eb-missed a").first
            missed.evaluate("a => { a.closest('details').open = true; }")
            task = missed.inner_text().split(",")[0]
            assert task
            missed.click()
            w.page.wait_for_url("**/episode.html?*")
            w.page.get_by_text(task).first.wait_for()
            w.check()
        finally:
            browser.close()


def test_the_monitors_step_is_kept_by_the_corpus_digest(
    site: dict[str, Any], board: Path, instance: SigstoreTestInstance, monkeypatch: Any
) -> None:
    """A second build over the same corpus, bundles and labels reads the monitors' rows the
    first one kept: no monitor bundle is verified again, and the page is the same."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a monitor bundle was verified again")

    monkeypatch.setattr("effectbench.site._monitors.verify_monitor", refuse)
    again = board / "public-kept"
    build(board, again, instance)
    assert (again / "monitors.html").read_text(encoding="utf-8") == site["html"]
