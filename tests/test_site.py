"""The leaderboard site: real builds of real bundles (verifier, vl-convert, mkdocs)."""

from __future__ import annotations

import gc
import gzip
import hashlib
import json
import os
import posixpath
import re
import shlex
import shutil
import subprocess
import sys
from html import escape as html_escape
from html import unescape
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pytest
import yaml
from mkdocs.utils.yaml import yaml_load
from support.across import WRONG_RATES, jsonl_rows, paired
from support.site import (
    CLINIC_API,
    CLINIC_BOARD,
    EVIL_URL,
    MOCKMED_BOARD,
    MOCKMED_WEB,
    N_REFERENCE,
    RECORDS,
    REFERENCE,
    REFERENCE_BOARD_KEYS,
    REFERENCE_BOARDS,
    ROOT,
    SCREENS_BOARD,
    SCREENS_PACK,
    SCRIPT_NAME,
    ScreensPack,
    copy_references,
    make_submissions,
    registered,
    registered_body,
    screens_bundles,
    site_root,
    slug_of,
)

from effectbench.cli import build_parser, main
from effectbench.errors import DataError, SiteBuildError
from effectbench.metrics import rate_difference
from effectbench.packs import register
from effectbench.site import (
    VlConvertRenderer,
    build_site,
    normalise_svg,
    read_withdrawn,
)
from effectbench.site import _find as find
from effectbench.site._prices import SHARD_BYTES
from effectbench.site._receipts import CHUNK_BYTES
from effectbench.site._render import ChartCache

BUILD_DATE = re.compile(r'<span class="eb-build-date">[^<]*</span>')


def build(base: Path, subs: Path, out: Path, cache: Path) -> Any:
    """Build the site with the repository's own mkdocs.yml, templates and SPEC.md; the copied
    references are judged by their maintainers' records, the bundles a test made re-run."""
    return build_site(subs, out, root=ROOT, cache_dir=cache, allow_unsigned=True, records=RECORDS)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One real build shared by the tests of this module."""
    base = tmp_path_factory.mktemp("site")
    paths = make_submissions(base)
    out = base / "public"
    summary = build(base, paths["subs"], out, base / "cache")
    return {**paths, "out": out, "summary": summary, "base": base}


def page(site: dict[str, Any], name: str) -> str:
    out: Path = site["out"]
    return (out / name).read_text(encoding="utf-8")


def _group(pattern: str, text: str, flags: int = 0) -> str:
    """Return the first group of ``pattern``'s match in ``text`` (which must match)."""
    match = re.search(pattern, text, flags)
    assert match, f"{pattern!r} not found"
    return match.group(1)


class Resources(HTMLParser):
    """Collects every URL a page would load or link to."""

    def __init__(self) -> None:
        super().__init__()
        self.loads: list[str] = []
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.duplicate_ids: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            if str(a["id"]) in self.ids:
                self.duplicate_ids.append(str(a["id"]))
            self.ids.add(str(a["id"]))
        for key in ("src", "srcset", "poster", "data"):
            if a.get(key):
                self.loads.append(str(a[key]))
        if tag == "link" and a.get("href"):
            self.loads.append(str(a["href"]))
        elif tag == "a" and a.get("href"):
            self.links.append(str(a["href"]))
        elif tag == "a" and a.get("xlink:href"):  # a chart mark's link (inline SVG)
            self.links.append(str(a["xlink:href"]))
        if a.get("style") and "url(" in str(a["style"]):
            self.loads.append(str(a["style"]))


def parse(html: str) -> Resources:
    r = Resources()
    r.feed(html)
    return r


# -- pure parts --------------------------------------------------------------------------


# Rank ranges and the default order: tests/test_verdicts.py.


def test_chart_cache_renders_once_and_normalises_gradients(tmp_path: Path) -> None:
    spec = {
        "data": {"values": [{"a": i, "b": str(i)} for i in range(4)]},
        "mark": "rect",
        "encoding": {
            "x": {"field": "b", "type": "nominal"},
            "color": {"field": "a", "type": "quantitative"},
        },
    }
    renderer = VlConvertRenderer()
    one, two = renderer.render([spec, spec])
    assert one != two  # vl-convert numbers gradients per call ...
    assert normalise_svg(one, "k") == normalise_svg(two, "k")  # ... which we undo
    cache = ChartCache(tmp_path, renderer)
    (first,) = cache.svg_paths([spec])
    (again,) = cache.svg_paths([spec])
    assert first == again and cache.stats.rendered == 1 and cache.stats.cached == 1
    changed = {**spec, "mark": "bar"}
    cache.svg_paths([spec, changed])
    assert cache.stats.rendered == 2
    assert "ebgrad-" in first.read_text() and "gradient_" not in first.read_text()


def test_withdrawn_list_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "withdrawn.yml"
    bad.write_text("- bundle: x\n")
    with pytest.raises(DataError) as err:
        read_withdrawn(bad)
    assert str(bad) in err.value.diagnostics() and "reason" in err.value.diagnostics()
    bad.write_text("- [unclosed\n")
    with pytest.raises(DataError):
        read_withdrawn(bad)
    assert read_withdrawn(tmp_path / "absent.yml") == []


# -- one real build ----------------------------------------------------------------------


def board_table(html: str, key: str) -> str:
    """The one board table with anchor ``key`` (its id must be unique on the page)."""
    tables = re.findall(
        rf'<table class="eb-board" id="eb-board-{re.escape(key)}"[^>]*>.*?</table>', html, re.S
    )
    assert len(tables) == 1, f"{len(tables)} tables for board {key}"
    return str(tables[0])


def board_slugs(table: str) -> list[str]:
    """The slugs of the board's default view (its first body), in order."""
    body = re.search(r"<tbody[^>]*>(.*?)</tbody>", table, re.S)
    assert body, "a board without a body"
    return re.findall(r'<tr data-slug="([^"]+)"', body.group(1))


def board_row(html: str, slug: str) -> str:
    match = re.search(rf'<tr data-slug="{re.escape(slug)}".*?</tr>', html, re.S)
    assert match, f"no board row for {slug}"
    return match.group(0)


def metric_k(row: str, metric: str) -> str:
    match = re.search(rf'data-metric="{metric}">.*?<span class="eb-k">([^<]+)</span>', row, re.S)
    assert match
    return match.group(1)


def test_pinned_numbers_on_the_board(site: dict[str, Any]) -> None:
    html = board_table(page(site, "index.html"), MOCKMED_BOARD)
    screen = board_row(html, slug_of(site, "_screen-only"))
    assert metric_k(screen, "swer") == "50/90" and metric_k(screen, "over_halt") == "0/90"
    halt = board_row(html, slug_of(site, "_always-halt"))
    assert metric_k(halt, "swer") == "0/90" and metric_k(halt, "over_halt") == "30/90"
    # What every row shares is said once above the board, not on each row.
    index = page(site, "index.html")
    meta = re.search(
        rf'<h2 id="{MOCKMED_BOARD}">.*?<p class="eb-board-meta">(.*?)</p>', index, re.S
    )
    assert meta and "reproduced" in meta.group(1) and "re-scored" in meta.group(1)
    assert "eb-badge" not in screen
    # Default order: effect_verified (SWER 0, acts) first, always_halt (never acts) second.
    order = board_slugs(html)
    assert set(order[:2]) == {slug_of(site, "_always-halt"), slug_of(site, "_effect-verified")}


def test_the_page_opens_with_a_short_lead_then_the_boards(site: dict[str, Any]) -> None:
    """What the boards rank and why SWER is never alone, in one short lead before any board;
    the long definition is on demand (a closed <details>), never between lead and board."""
    index = page(site, "index.html")
    content = index[index.index("<h1") :]
    lead = _group(r'<p class="eb-lede">(.*?)</p>', content, re.S)
    words = cell_text(lead).split()
    assert len(words) <= 70, len(words)
    text = cell_text(lead)
    assert "SWER" in text and "over-halt" in text and "record-wrong" in text
    assert "net value per 100 tasks" in text  # what the boards rank by
    assert "doing nothing" in text  # why SWER is never alone: halting buys it
    before_lead = content[: content.index('<p class="eb-lede">')]
    assert "<p" not in before_lead  # the lead is the first paragraph under the title
    first_board = content.index('<table class="eb-board"')
    between = content[content.index("</p>", content.index('<p class="eb-lede">')) : first_board]
    howto = _group(r"(<details[^>]*>.*?</details>)", between, re.S)
    assert howto.startswith('<details class="eb-howto">')  # closed until asked for
    assert "Wilson" in howto and "default order" in howto  # the long definition lives there
    outside = cell_text(re.sub(r"<details.*?</details>", "", between, flags=re.S))
    assert len(outside.split()) <= 60, outside  # board heading and its one-line meta only


def test_every_rate_shows_interval_and_counts_and_rank_is_a_range(site: dict[str, Any]) -> None:
    mockmed = board_table(page(site, "index.html"), MOCKMED_BOARD)
    screen = board_row(mockmed, slug_of(site, "_screen-only"))
    assert re.search(
        r'<span class="eb-p">55\.6%</span> <span class="eb-ci">\[45\.3%, 65\.4%\]', screen
    )
    rank = re.search(r'<td class="eb-rank"[^>]*>([^<]+)</td>', screen)
    assert rank and "–" in rank.group(1)  # overlaps with retry_on_error: no false precision


def test_refused_bundle_only_on_the_refused_page(site: dict[str, Any]) -> None:
    slug = site["bad"].name.lower()
    assert f'data-slug="{slug}"' not in page(site, "index.html")
    assert not (site["out"] / "submissions" / f"{slug}.html").exists()
    refused = page(site, "refused.html")
    assert site["bad"].name in refused
    assert "rescore.outcome" in refused or "claims." in refused
    assert site["summary"].n_refused == 1
    assert not re.search(r"\d\.\d{6,}", cell_text(refused))  # numbers as the board writes them
    breakable = re.sub(r"([_\-./])", r"\1<wbr>", site["bad"].name)  # breaks after separators only
    assert f'<code class="eb-bundle">{breakable}</code>' in refused


def test_script_in_a_name_and_readme_is_text(site: dict[str, Any]) -> None:
    for html_file in site["out"].rglob("*.html"):
        text = html_file.read_text(encoding="utf-8")
        assert "<script>window.__pwned" not in text, html_file
        assert "onerror=alert" not in text or "&lt;img" in text, html_file
    sub = page(site, f"submissions/{site['evil'].name.lower()}.html")
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt; Evil bot" in sub
    assert "&lt;img src=x onerror=alert(1)&gt;" in sub
    assert "&lt;img src=x onerror=&#34;window.__pwned=3&#34;&gt; described" in sub
    assert f'<code class="eb-url">{EVIL_URL}</code>' in sub  # shown, never a link
    for html_file in site["out"].rglob("*.html"):
        text = html_file.read_text(encoding="utf-8")
        assert not re.search(r"href=\"\s*javascript:", text, re.I), html_file
        assert 'onerror="window' not in text, html_file


def test_submission_page_has_every_section(site: dict[str, Any]) -> None:
    sub = page(site, f"submissions/{slug_of(site, '_screen-only')}.html")
    for family in ("structure", "spec", "pack", "rescore", "claims", "signature", "reproduce"):
        assert f'<code class="eb-check-id">{family}</code>' in sub
    for anchor in (
        "headline",
        "cells",
        "outcomes",
        "pass-k",
        "cost",
        "matrix",
        "verifier",
        "signer",
        "manifest",
        "readme",
        "downloads",
    ):
        assert f'id="{anchor}"' in sub
    from effectbench.site._pages import SUBMISSION_HEADINGS

    h2 = re.findall(r'<h2 id="([^"]+)" data-search-exclude>([^<]+)</h2>', sub)
    assert h2 == list(SUBMISSION_HEADINGS)  # every section, in order, none twice
    tables = ("headline", "heatmap", "cells", "outcomes", "passk", "checks")
    for table in (*tables, "manifest"):
        assert re.search(rf'<table class="eb-table[^"]*" data-eb="{table}">', sub), table
    # ranked by its re-run alone: the submitter's timings and costs are not shown
    assert 'data-eb="cost"' not in sub and "Not measured" in sub
    assert "run.started_at" in sub
    outcomes = re.search(r'<table class="eb-table" data-eb="outcomes">.*?</table>', sub, re.S)
    assert outcomes
    counts = re.findall(r"</span></td><td>(\d+)</td>", outcomes.group(0))
    assert sum(int(c) for c in counts) == 90
    # the task x trial table is one letter per episode in the page, drawn by leaderboard.js
    # (test_site_browser counts its cells in Chromium); without JS the rows' download
    data = re.search(r'<script type="application/json" data-eb-matrix>(.*?)</script>', sub, re.S)
    assert data and "data-eb-matrix-box" in sub and "assets/leaderboard.js" in sub
    matrix = json.loads(data.group(1))
    assert sum(len(letters) for _task, letters in matrix["tasks"]) == 90
    assert set("".join(letters for _task, letters in matrix["tasks"])) <= set("SHOWFA")
    assert re.search(r'<noscript><p class="eb-empty" data-eb="matrix-nojs">', sub)
    slug = slug_of(site, "_screen-only")
    bundle = next(REFERENCE.glob("*_screen-only"))
    published = site["out"] / "submissions" / slug
    for name in ("submission.json", "episodes.jsonl"):
        assert f'href="{slug}/{name}.gz"' in sub
        signed_bytes = (bundle / name).read_bytes()  # gunzip gives back the signed bytes
        assert gzip.decompress((published / f"{name}.gz").read_bytes()) == signed_bytes
    assert "sha256:ce941f1e8dfa41164f88f04eed7a6416f65fa2813c6ba3de9755cf3e5a402b1f" in sub


def test_no_external_resources_and_no_broken_links(site: dict[str, Any]) -> None:
    out: Path = site["out"]
    external = re.compile(r"^(https?:)?//", re.I)
    for html_file in out.rglob("*.html"):
        res = parse(html_file.read_text(encoding="utf-8"))
        assert res.duplicate_ids == [], html_file  # e.g. two boards or charts sharing an anchor
        assert not [u for u in res.loads if external.search(u)], html_file
        if html_file.name == "404.html":
            continue  # served at any depth by a host, so mkdocs writes it with absolute links
        for link in res.links + res.loads:
            if external.search(link) or link.startswith(("#", "mailto:", "data:")):
                continue
            target = (html_file.parent / link.split("#")[0].split("?")[0]).resolve()
            assert target.exists(), f"{html_file.relative_to(out)} links to missing {link}"
        for link in res.links:
            if external.search(link):
                # the only off-site links are a submitter's project URL and the links the
                # project's own pages write in their source (never loaded)
                source = ROOT / "site" / f"{html_file.stem}.md"
                written = source.is_file() and f"({link})" in source.read_text(encoding="utf-8")
                assert html_file.parent.name == "submissions" or written, (html_file, link)
    for css in out.rglob("*.css"):
        for url in re.findall(r"url\(([^)]+)\)", css.read_text(encoding="utf-8")):
            assert not external.search(url.strip("'\" ")), (css, url)
    assert not (out / "charts").exists()  # charts are inline; links were checked above
    for svg in (out / "badges").glob("*.svg"):
        body = svg.read_text(encoding="utf-8")
        assert not re.search(r'(href|src)="https?:', body) and "url(http" not in body


def test_search_index_holds_the_site_pages_and_the_finder_every_submission(
    site: dict[str, Any],
) -> None:
    """The theme's index (loaded whole on every page) holds the site's own pages and no
    submission page; the finder's buckets hold each accepted submission once in the bucket of
    each word of its name and nowhere else, every part within the shard bound."""
    out: Path = site["out"]
    index = json.loads(page(site, "search/search_index.json"))
    locations = [d["location"] for d in index["docs"]]
    assert "methodology.html" in locations and "index.html" in locations
    assert not [x for x in locations if x.startswith("submissions/")]
    text = " ".join(d["text"] for d in index["docs"])
    # No board row, chart or data table in the index (their cells ran together without spaces).
    assert "Data table" not in text and "[45.3%, 65.4%]" not in text and "[0.0%, 4.1%]" not in text
    assert not [d for d in index["docs"] if d["location"].startswith("charts.html#chart-")]
    assert (out / "search" / "search_index.js").is_file()  # offline plugin: file://

    manifest = registered(out / "search" / "systems-0.js")
    assert manifest["separator"] == find.SEPARATOR and manifest["key_chars"] == 2
    config = yaml_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    theme_search = next(p["search"] for p in config["plugins"] if isinstance(p, dict))
    assert theme_search["separator"] == find.SEPARATOR  # a query splits alike in both
    held: dict[str, list[str]] = {}
    details: dict[str, tuple[str, str]] = {}
    for key, parts in manifest["buckets"].items():
        for n in range(parts):
            f = out / "search" / "systems" / f"{key}-{n}.js"
            assert len(registered_body(f.read_text(encoding="utf-8"))) <= SHARD_BYTES
            for name, slug, detail in registered(f):
                held.setdefault(slug, []).append(key)
                details[slug] = (name, detail.split(" · ")[0])
    assert sorted(held) == sorted(b.name.lower() for b in accepted_bundles(site))
    boards = json.loads(page(site, "downloads/leaderboard.json"))["boards"]
    names = {e["slug"]: e["system"] for b in boards for e in b["entries"]}
    assert details == {e["slug"]: (e["system"], b["pack"]) for b in boards for e in b["entries"]}
    for slug, keys in held.items():
        want = {w[:2].encode().hex() for w in re.split(find.SEPARATOR, names[slug].lower()) if w}
        assert sorted(keys) == sorted(want), (slug, names[slug])
    assert SCRIPT_NAME in names.values()  # a name that is markup is held as the text it is


def test_the_finder_splits_a_bucket_past_the_shard_bound_and_keys_any_letters() -> None:
    many = [
        find.Findable(f"Synthetic agent {i:05d}", f"s{i:05d}", "clinic · api") for i in range(12000)
    ]
    odd = find.Findable("Ärzte-Bot <b>x</b> 🤖🤖", "odd", "clinic · web")
    files = find.find_scripts([*many, odd])
    manifest = registered(files["search/systems-0.js"])
    buckets = manifest["buckets"]
    key = b"sy".hex()
    assert buckets[key] >= 2  # 12,000 names in one bucket: more than one part
    seen = []
    for n in range(buckets[key]):
        part = files[f"search/systems/{key}-{n}.js"]
        assert len(registered_body(part)) <= SHARD_BYTES
        seen += [slug for _, slug, _ in registered(part)]
    assert seen == [f"s{i:05d}" for i in range(12000)]  # name order, each once
    assert find.words(odd.name) == ["ärzte", "bot", "b", "x", "b", "🤖🤖"]
    for w in ("är", "bo", "b", "x", "🤖🤖"):
        assert buckets[w.encode().hex()] == 1
    assert set(buckets) == {
        key,
        b"ag".hex(),
        *(w[:2].encode().hex() for w in [f"{i:05d}" for i in range(12000)]),
        *(w.encode().hex() for w in ("är", "bo", "b", "x", "🤖🤖")),
    }


def accepted_bundles(site: dict[str, Any]) -> list[Path]:
    """The bundles the build accepts: every reference bundle and the <script>-named one."""
    return sorted(p for p in site["subs"].iterdir() if p != site["bad"])


def test_downloads_hold_the_same_numbers(site: dict[str, Any]) -> None:
    accepted = accepted_bundles(site)
    assert len(accepted) == N_REFERENCE + 1
    board = pd.read_csv(site["out"] / "downloads" / "leaderboard.csv")
    assert sorted(board["slug"]) == sorted(p.name.lower() for p in accepted)  # every board
    per_board = board.groupby(["spec_major", "pack"]).size()
    assert {f"spec{m}-{p}".lower(): n for (m, p), n in per_board.items()} == {
        k: len(v) + (k == MOCKMED_BOARD) for k, v in REFERENCE_BOARDS.items()
    }
    screen = board[board["slug"] == slug_of(site, "_screen-only")].iloc[0]
    assert (screen["swer_k"], screen["swer_n"], screen["over_halt_k"]) == (50, 90, 0)
    clinic = board[board["slug"] == slug_of(site, "_screen-only-clinic")].iloc[0]
    assert (clinic["swer_k"], clinic["swer_n"], clinic["over_halt_k"]) == (170, 270, 0)
    parquet = pd.read_parquet(site["out"] / "downloads" / "leaderboard.parquet")
    assert list(parquet.columns) == list(board.columns) and len(parquet) == len(board)
    episodes = pd.read_parquet(site["out"] / "downloads" / "episodes.parquet")
    lines = {p.name.lower(): len((p / "episodes.jsonl").read_text().splitlines()) for p in accepted}
    assert episodes.groupby("submission").size().to_dict() == lines
    assert "oracle.verdict" in episodes.columns


def test_charts_have_captions_data_tables_and_links(site: dict[str, Any]) -> None:
    html = page(site, "charts.html")
    found = figures(html)
    kinds = ("frontier", "gap", "cells")
    assert sorted(name for name, _, _, _ in found) == sorted(
        f"{board}-{kind}"
        for board in REFERENCE_BOARD_KEYS
        for kind in kinds
        for _ in ("wide", "phone")
    )  # three charts for every board (one per substrate), each drawn wide and for a phone
    assert all(len(caption) > 30 for _, _, caption, _ in found)
    assert len({svg for _, svg, _, _ in found}) == len(found)  # each board its own charts
    assert html.count("Data table: the numbers in this chart") == len(found) // 2
    for name, svg, _, table in found:
        # The drawing is hidden from assistive technology (caption and table say it all) and
        # its marks link to the submission pages, outside the tab order; the table links too.
        assert svg.startswith('<svg aria-hidden="true" focusable="false" '), name
        marks = set(re.findall(r'<a tabindex="-1" xlink:href="([^"]+)"', svg))
        assert marks and all(re.fullmatch(r"submissions/[a-z0-9_.-]+\.html", m) for m in marks)
        assert "<a " not in re.sub(r'<a tabindex="-1" ', "", svg), name
        assert marks <= set(re.findall(r'<th scope="row"><a href="([^"]+)">', table)), name
    alt = {name: caption for name, _, caption, _ in found}
    mockmed = alt[f"{MOCKMED_WEB}-frontier"]
    assert "always_halt" in mockmed and "33.3%" in mockmed and "effect_verified_all" not in mockmed
    assert "First in the default order: effect_verified" in mockmed
    assert "Doing nothing's over-halts would cost 33.3 per 100 tasks" in mockmed
    assert "3 of 5 are worth less than doing nothing at these prices" in mockmed
    assert "2 systems reach SWER 0; among them over-halt goes up to 33.3% (always_halt)" in mockmed
    clinic = alt[f"{CLINIC_API}-frontier"]
    assert "First in the default order: look_before_write, SWER 0.0%, over-halt 0.0%" in clinic
    assert "2 systems reach SWER 0; among them over-halt goes up to 7.4% (effect_verified_all)" in (
        clinic
    )
    assert "lowest over-halt: look_before_write at 0.0% with SWER 0.0%" in clinic
    assert "always_halt" not in clinic


def test_clinic_board_has_its_four_ranked_rows_and_ladder(site: dict[str, Any]) -> None:
    html = page(site, "index.html")
    assert html.count(f'<h2 id="{CLINIC_BOARD}"') == 1
    clinic = board_table(html, CLINIC_BOARD)
    ladder = {  # slug suffix: (SWER k/n, over-halt k/n), in the board's default order
        "_look-before-write-clinic": ("0/270", "0/270"),
        "_effect-verified-all-clinic": ("0/270", "20/270"),
        "_effect-verified-clinic": ("30/270", "20/270"),
        "_screen-only-clinic": ("170/270", "0/270"),
    }
    slugs = [slug_of(site, suffix) for suffix in ladder]
    assert len(REFERENCE_BOARDS[CLINIC_BOARD]) == 4
    assert board_slugs(clinic) == slugs  # exactly the clinic bundles, cheapest first
    for slug, (swer, over_halt) in zip(slugs, ladder.values(), strict=True):
        row = board_row(clinic, slug)
        assert 'data-status="ranked"' in row
        assert metric_k(row, "swer") == swer and metric_k(row, "over_halt") == over_halt
    ranks = re.findall(r'<td class="eb-rank"[^>]*>([^<]+)</td>', clinic)
    # The first three differ in SWER on 3 tasks and in over-halt on 2 only: counted by task,
    # their cost differences are not beyond noise, so they share a tie group; screen_only is
    # separated from all three.
    assert ranks == ["1–3", "1–3", "1–3", "4"]
    assert not set(slugs) & set(board_slugs(board_table(html, MOCKMED_BOARD)))


def cell_text(html: str) -> str:
    """The visible text of an HTML fragment, whitespace collapsed."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def board_headers(html: str) -> list[list[tuple[str, str]]]:
    """Per board on the page: (column label, better direction in words or "") of every header."""
    out = []
    for thead in re.findall(
        r'<table class="eb-board" id="eb-board-[^>]*>.*?<thead>(.*?)</thead>', html, re.S
    ):
        cells = re.findall(r"<th [^>]*>(.*?)</th>", thead, re.S)
        out.append(
            [
                (
                    cell_text(_group(r"<button[^>]*>(.*?)</button>", c, re.S)),
                    cell_text(" ".join(re.findall(r'<span class="eb-better">(\w+) is better', c))),
                )
                for c in cells
            ]
        )
    return out


def methodology_columns(html: str) -> list[tuple[str, str]]:
    """(column, better) of every row of the methodology page's table of columns."""
    section = html[html.index('id="the-columns"') :]
    table = re.search(r"<table>.*?</table>", section, re.S)
    assert table, "the methodology page has no table of columns"
    rows = re.findall(
        r"<tr>\s*<td>(.*?)</td>\s*<td>.*?</td>\s*<td>(.*?)</td>\s*</tr>", table.group(0), re.S
    )
    return [(cell_text(name), cell_text(better)) for name, better in rows]


def test_methodology_defines_every_board_column_and_its_direction(site: dict[str, Any]) -> None:
    from effectbench.site._tables import BOARD_COLUMNS

    headers = board_headers(page(site, "index.html"))
    assert len(headers) == len(REFERENCE_BOARDS)
    every = [(c.label, c.better or "") for c in BOARD_COLUMNS]
    # The methodology defines every column a board can show, with the same better direction.
    assert methodology_columns(page(site, "methodology.html")) == every
    data = json.loads((site["out"] / "downloads" / "leaderboard.json").read_text())
    by_key = {b["key"]: b for b in data["boards"]}
    specs = [
        {e["spec_version"] for key in g["boards"] for e in by_key[key]["entries"]}
        for g in data["groups"]
    ]
    assert len(specs) == len(headers)
    for board, versions in zip(headers, specs, strict=True):
        # Each reference board runs one pack version: Pack collapses into the board's header,
        # and so does Spec when every entry ran one SPEC version (a board of one SPEC major
        # can mix minors: the <script>-named bundle is made under today's SPEC); the rest are
        # shown, better directions in words.
        collapsed = {"Pack"} | ({"Spec"} if len(versions) == 1 else set())
        assert board == [x for x in every if x[0] not in collapsed]
    # Both shipped tables mix SPEC minors (the 1.4 look_before_write and <script> bundles), so
    # Spec is shown on both; Pack collapses on both.
    assert all(len(v) > 1 for v in specs)
    labels = [label for label, _ in every]
    for label in ("Trials", "Pack", "Spec", "Date", "SWER", "Over-halt"):
        assert label in labels
    assert labels.index("Over-halt") == labels.index("SWER") + 1  # never one without the other
    methodology = page(site, "methodology.html")
    assert "regression anchor" in methodology and "never shown alone" in methodology.lower()


def test_board_rows_fill_every_column(site: dict[str, Any]) -> None:
    from effectbench.site._tables import BOARD_COLUMNS

    html = page(site, "index.html")
    table = board_table(html, MOCKMED_BOARD)
    screen = board_row(table, slug_of(site, "_screen-only"))
    cells = re.findall(r"<t[hd] [^>]*data-col=\"([^\"]+)\"[^>]*>(.*?)</t[hd]>", screen, re.S)
    # One pack version: said above the board, not in its columns; the SPEC version too when
    # every row has the same (the reference bundles are 1.1.0, a bundle made now is newer).
    one_spec = len(set(re.findall(r'data-col="spec_version"', table))) == 0
    hidden = ("pack", "spec_version") if one_spec else ("pack",)
    shown = [c for c in BOARD_COLUMNS if c.key not in hidden]
    assert [key for key, _ in cells] == [c.key for c in shown]
    by_label = {c.label: cell_text(v) for c, (_, v) in zip(shown, cells, strict=True)}
    sub = json.loads((next(REFERENCE.glob("*_screen-only")) / "submission.json").read_text())
    assert by_label["Trials"] == f"{sub['trials_per_task']} n 90 · 9 tasks · dropped 0"
    assert sub["trials_per_task"] == 10
    # Pack, fingerprint and SPEC version are the same on every row: said once, above the board.
    short = sub["pack"]["fingerprint"].removeprefix("sha256:")[:12]
    meta = re.search(rf'<h2 id="{MOCKMED_BOARD}">.*?<p class="eb-board-meta">(.*?)</p>', html, re.S)
    assert meta
    said = f"pack {sub['pack']['name']} · fingerprint {short}"
    if one_spec:
        said += f" · SPEC {sub['spec_version']}"
    assert said in cell_text(meta.group(1))
    assert f'title="{sub["pack"]["fingerprint"]}"' in meta.group(1)
    clinic = json.loads(
        (next(REFERENCE.glob("*_screen-only-clinic")) / "submission.json").read_text()
    )
    clinic_meta = _group(
        rf'<h2 id="{CLINIC_BOARD}">.*?<p class="eb-board-meta">(.*?)</p>', html, re.S
    )
    # The clinic table mixes SPEC minors (look_before_write is 1.4): each row shows its own.
    assert f"SPEC {clinic['spec_version']}" not in cell_text(clinic_meta)
    clinic_table = board_table(html, CLINIC_BOARD)
    clinic_row = board_row(clinic_table, slug_of(site, "_screen-only-clinic"))
    assert clinic["spec_version"] in cell_text(
        _group(r'<td [^>]*data-col="spec_version"[^>]*>(.*?)</td>', clinic_row, re.S)
    )
    listed = json.loads((ROOT / "verifier" / "reference_bundles.json").read_text())
    (entry,) = [b for b in listed["bundles"] if b["folder"].endswith("_screen-only")]
    assert by_label["Date"] == entry["date"]  # the maintainers' list, not the folder name
    # raw k/n with SPEC's Wilson, then the interval that counts its 9 tasks, with the design effect
    assert by_label["SWER"] == "55.6% [45.3%, 65.4%] 50/90 tasks [25.4%, 82.1%] · deff 11.2"
    assert by_label["Over-halt"].startswith("0.0% [0.0%, 4.1%] 0/90")
    assert "0 seen: ≤ 3.3% (≤ 28.3% by tasks)" in by_label["Over-halt"]  # 0/n: one-sided bound
    assert by_label["Record-wrong"].startswith("44.4% [34.6%, 54.7%] 40/90")
    assert re.fullmatch(r"\+\d+\.\d pts \[\+\d+\.\d, \+\d+\.\d\]", by_label["Gap"])


NUMBER = re.compile(r"[+-]?\d+(?:\.\d+)?%|\d+/\d+|[+-]\d+\.\d\b")
"""The numbers a chart states: percentages, k/n counts and signed points."""


def figures(html: str) -> list[tuple[str, str, str, str]]:
    """(name, inline SVG, caption, data table) of every chart figure on a page: the wide
    drawing and the phone's, each with the figure's caption and table."""
    found = re.findall(
        r'<figure class="eb-chart" id="chart-([^"]+)" data-search-exclude>\s*'
        r'<div class="eb-scroll eb-chart-box eb-chart-wide"[^>]*>(<svg .*?</svg>)</div>\s*'
        r'<div class="eb-chart-box eb-chart-phone">(<svg .*?</svg>)</div>\s*'
        r"<figcaption>(.*?)</figcaption>.*?"
        r'<details class="eb-data" data-search-exclude>.*?(<table class="eb-table">.*?</table>)',
        html,
        re.S,
    )
    return [
        (name, svg, cell_text(caption), table)
        for name, wide, phone, caption, table in found
        for svg in (wide, phone)
    ]


def svg_labels(svg: str) -> list[str]:
    """The labels of a chart's marks (axes and legends left out)."""
    labels = [unescape(x) for x in re.findall(r'aria-label="([^"]+)"', svg)]
    return [x for x in labels if not re.match(r"(X|Y)-axis|Symbol legend|Size legend", x)]


def check_chart_numbers(name: str, svg: str, alt: str, table: str) -> None:
    numbers = set(NUMBER.findall(cell_text(table)))
    stated = NUMBER.findall(alt)
    assert stated, f"{name}: the alt text states no number: {alt}"
    assert set(stated) <= numbers, f"{name}: alt numbers missing from its table: {alt}"
    labels = svg_labels(svg)
    assert labels, f"{name}: no labelled mark"
    for label in labels:
        assert not re.search(r"\d\.\d{4,}", label), f"{name}: raw float in {label!r}"
        assert set(NUMBER.findall(label)) <= numbers, f"{name}: {label!r} not in its table"


def test_chart_numbers_match_their_data_tables(site: dict[str, Any]) -> None:
    """Alt text and every mark of every chart state only numbers its data table shows."""
    charts = figures(page(site, "charts.html"))
    assert len(charts) == 2 * 3 * len(REFERENCE_BOARD_KEYS)  # wide and phone drawings
    for name, svg, alt, table in charts:
        check_chart_numbers(name, svg, alt, table)
    # The frontier's table holds the board's very numbers, system by system.
    frontier = {n: t for n, _, _, t in charts}[f"{MOCKMED_WEB}-frontier"]
    rows = [
        [cell_text(c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r, re.S)]
        for r in re.findall(r"<tr>(.*?)</tr>", frontier.split("<tbody>")[1], re.S)
    ]
    board = board_table(page(site, "index.html"), MOCKMED_BOARD)
    shown = {}
    for row in re.findall(r"<tr data-slug=.*?</tr>", board, re.S):
        system = cell_text(_group(r'class="eb-system"[^>]*><a [^>]*>(.*?)</a>', row))
        cells = [
            cell_text(_group(rf'data-metric="{m}">(.*?)</td>', row, re.S))
            for m in ("swer", "over_halt", "record_wrong")
        ]
        shown[system] = cells
    # The chart's table states the board's numbers: p [Wilson] k/n, then the interval that
    # counts tasks (the one the chart draws), as the board's cell does.
    assert set(shown) == {r[0] for r in rows}
    for r in rows:
        for table_cell, board_cell in zip(r[1:4], shown[r[0]], strict=True):
            head, tasks = table_cell.split("; tasks ")
            assert board_cell.startswith(head) and f"tasks {tasks}" in board_cell


def test_submission_heatmap_pairs_swer_and_over_halt_in_every_cell(site: dict[str, Any]) -> None:
    """The per-cell heatmap shows both rates in every cell, shaded by value, as its table says."""
    from effectbench.site._pages import HEAT_BOUNDS

    for suffix in ("_always-halt", "_screen-only-clinic"):
        sub = page(site, f"submissions/{slug_of(site, suffix)}.html")
        heat = re.search(r'data-eb="heatmap">.*?</table>', sub, re.S)
        cells = re.search(r'data-eb="cells">.*?</table>', sub, re.S)
        assert heat and cells
        shaded = re.findall(
            r'<tr><th scope="row">([^<]+)</th>'
            # a count of episodes with receipts links to them: <a href=...>k/n</a>
            r'<td class="eb-h eb-h-s(\d)" data-metric="swer">(?:<a [^>]*>)?(\d+)/(\d+)(?:</a>)?'
            r"<span>[^<]+</span></td>"
            r'<td class="eb-h eb-h-o(\d)" data-metric="over_halt">(?:<a [^>]*>)?(\d+)/(\d+)'
            r"(?:</a>)?<span>[^<]+</span></td>"
            r'<td class="eb-h eb-h-r\d" data-metric="record_wrong">(?:<a [^>]*>)?\d+/\d+',
            heat.group(0),
        )
        listed = re.findall(
            r'<tr><th scope="row">([^<]+)</th><td[^>]*>[^<]+</td><td[^>]*>\d+</td>'
            r'<td class="eb-rate"[^>]*>.*?<span class="eb-k">(\d+)/(\d+)</span>.*?</td>'
            r'<td class="eb-rate"[^>]*>.*?<span class="eb-k">(\d+)/(\d+)</span>.*?</td>',
            cells.group(0),
        )
        assert len(shaded) == len(listed) > 0
        for (cat, sb, sk, sn, ob, ok, on), (cat2, k1, n1, k2, n2) in zip(
            sorted(shaded), sorted(listed), strict=True
        ):
            assert (cat, sk, sn, ok, on) == (cat2, k1, n1, k2, n2)
            for shade, k, n in ((sb, sk, sn), (ob, ok, on)):
                rate = int(k) / int(n)
                expected = 0 if rate == 0 else 1 + sum(rate > b for b in HEAT_BOUNDS)
                assert int(shade) == expected, (cat, k, n, shade)
        if suffix == "_always-halt":  # SWER 0 everywhere, yet its over-halt shows in the map
            assert {b for _, b, *_ in shaded} == {"0"} and {b for *_, b, _, _ in shaded} != {"0"}


def snapshot(out: Path) -> dict[str, str]:
    files = {}
    for f in sorted(out.rglob("*")):
        if f.is_file():
            data = f.read_bytes()
            if f.suffix == ".html":
                data = BUILD_DATE.sub("", data.decode("utf-8")).encode("utf-8")
            files[str(f.relative_to(out))] = hashlib.sha256(data).hexdigest()
    return files


def test_two_builds_are_identical(site: dict[str, Any]) -> None:
    again = site["base"] / "public-again"
    summary = build(site["base"], site["subs"], again, site["base"] / "cache")
    assert summary.charts_rendered == 0  # every chart came from the content cache
    n_pages = len(list(site["out"].glob("submissions/*.html")))
    assert (summary.pages_kept, summary.pages_rendered) == (n_pages, 0)  # every body kept
    entries = sum(
        len(b["entries"]) for b in json.loads(page(site, "downloads/leaderboard.json"))["boards"]
    )
    assert summary.entries_kept == entries  # and every entry's rates and cells
    assert snapshot(again) == snapshot(site["out"])


def test_a_rebuild_links_the_files_it_left_unchanged(site: dict[str, Any], tmp_path: Path) -> None:
    """Rebuilt into the same output, each file published as it is (bundle copies, receipt
    shards, downloads ...) is the previous output's file, hard-linked; a file edited or
    replaced in the output since, and every file under a planted memo, is written afresh; the
    site is the same either way."""
    cache, out = tmp_path / "cache", tmp_path / "out"
    shutil.copytree(site["base"] / "cache", cache)
    first = build(site["base"], site["subs"], out, cache)
    assert first.files_linked == 0 and first.files_written > 100
    copy = sorted(out.glob("submissions/*/episodes.jsonl.gz"))[0]
    shard = sorted(out.glob("receipts/c/*/*.js"))[0]
    edited = sorted(out.glob("submissions/*/submission.json.gz"))[0]
    replaced = out / "downloads" / "leaderboard.csv"
    inode = {p: p.stat().st_ino for p in (copy, shard)}
    before = edited.stat()
    with edited.open("r+b") as fh:  # in place, the same size, its modification time set back:
        fh.seek(20)  # only the change time tells
        byte = fh.read(1)
        fh.seek(20)
        fh.write(bytes([byte[0] ^ 1]))
    os.utime(edited, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert edited.stat().st_mtime_ns == before.st_mtime_ns
    swap = replaced.with_name("new.csv")
    swap.write_bytes(replaced.read_bytes())
    swap.replace(replaced)  # the same bytes, another file

    second = build(site["base"], site["subs"], out, cache)
    assert (second.files_linked, second.files_written) == (first.files_written - 2, 2)
    assert {p: p.stat().st_ino for p in inode} == inode  # linked: the very same files
    assert snapshot(out) == snapshot(site["out"])  # the edit is gone
    again = build(site["base"], site["subs"], out, cache)  # links set the change times: kept
    assert (again.files_linked, again.files_written) == (first.files_written, 0)

    memo = cache / "output" / f"{hashlib.sha256(os.fsencode(out.resolve())).hexdigest()[:32]}.memo"
    memo.write_bytes(b"\0" * 32 + memo.read_bytes()[32:])  # planted: another key's seal
    third = build(site["base"], site["subs"], out, cache)
    assert (third.files_linked, third.files_written) == (0, first.files_written)
    assert snapshot(out) == snapshot(site["out"])
    assert all(p.stat().st_nlink == 1 for p in out.rglob("*") if p.is_file())  # nothing shared
    assert gc.isenabled()  # the build paused the cycle collector, and only for itself


def test_compiled_templates_are_kept_and_only_this_machines_are_loaded(
    site: dict[str, Any], tmp_path: Path
) -> None:
    """A build keeps the templates' compiled code in the cache folder, and the next build
    loads it: kept code sealed by this machine is run as it is (compiled code a test put
    there shows), code sealed by another key is never loaded, and the site is the same."""
    from jinja2.bccache import Bucket

    from effectbench.sealed import CacheSeal, default_seal
    from effectbench.site._compiled import SealedTemplateCode
    from effectbench.site._mkdocs import load_site_config

    cache, out = tmp_path / "cache", tmp_path / "out"
    shutil.copytree(site["base"] / "cache", cache)
    shutil.rmtree(cache / "templates", ignore_errors=True)
    build(site["base"], site["subs"], out, cache)
    kept = sorted((cache / "templates").glob("*.code"))
    assert len(kept) > 20  # the theme's templates and the site's

    env = load_site_config(ROOT / "mkdocs.yml", tmp_path / "unused").theme.get_env()
    source, filename, _ = env.loader.get_source(env, "base.html")  # type: ignore[union-attr]
    assert source.count("</body>") == 1
    store = SealedTemplateCode(cache / "templates", default_seal())
    key = store.get_cache_key("base.html", filename)
    assert (cache / "templates" / f"{key}.code").is_file()  # the theme's page frame was kept

    def plant(seal: CacheSeal) -> None:
        """Keep, under the real base.html's key and source checksum, code compiled from a
        changed source (what a planted or stale entry could run)."""
        bucket = Bucket(env, key, store.get_source_checksum(source))
        changed = source.replace("</body>", "<!-- planted code ran --></body>")
        bucket.code = env.compile(changed, "base.html", filename)
        SealedTemplateCode(cache / "templates", seal).dump_bytecode(bucket)

    plant(CacheSeal(b"another machine's key, 32 bytes."))
    build(site["base"], site["subs"], out, cache)
    assert "planted code ran" not in (out / "index.html").read_text(encoding="utf-8")
    assert snapshot(out) == snapshot(site["out"])
    plant(default_seal())  # this machine's seal: the kept code is what runs
    build(site["base"], site["subs"], out, cache)
    assert "planted code ran" in (out / "index.html").read_text(encoding="utf-8")


PLACES = re.compile(r"(?:rank [^<]*|not ranked \(preview\)) on the <a [^>]*>[^<]*</a> board")


def test_kept_pages_show_where_they_rank_now(site: dict[str, Any], tmp_path: Path) -> None:
    """A withdrawal moves the other systems' ranks: pages whose bodies were kept from the
    module's build show the new ranks, and the site is the one a build rendering every page
    afresh makes; a planted, a damaged and an unwritable kept body change nothing."""
    from verifier.references import bundle_content_hash

    subs: Path = site["subs"]
    (gone,) = [p for p in subs.iterdir() if p.name.endswith("_effect-verified-clinic")]
    hashed = bundle_content_hash(gone)
    root = site_root(tmp_path, [{"content_hash": hashed, "reason": "test", "date": "2026-02-04"}])
    cache = tmp_path / "cache"
    shutil.copytree(site["base"] / "cache", cache)
    kept, fresh = tmp_path / "kept", tmp_path / "fresh"
    summary = build_site(
        subs, kept, root=root, cache_dir=cache, allow_unsigned=True, records=RECORDS
    )
    assert summary.pages_kept > 0 and summary.pages_rendered == 0
    kept_now = sorted((cache / "pages").rglob("*.html"))
    assert len(kept_now) == summary.pages_kept  # the withdrawn bundle's body was pruned
    moved = [
        f.name
        for f in kept.glob("submissions/*.html")
        if PLACES.findall(f.read_text()) != PLACES.findall(page(site, f"submissions/{f.name}"))
    ]
    assert moved  # the clinic board lost a ranked system: its others' ranks changed

    shutil.rmtree(cache / "pages")  # keep this build's bodies alone
    filled = build_site(
        subs, fresh, root=root, cache_dir=cache, allow_unsigned=True, records=RECORDS
    )
    assert (filled.pages_kept, filled.pages_rendered) == (0, summary.pages_kept)
    assert snapshot(fresh) == snapshot(kept)
    bodies = sorted((cache / "pages").rglob("*.html"))
    tails = sorted((cache / "pages").rglob("*.json"))  # each entry's rates
    assert len(bodies) == summary.pages_kept and len(tails) == summary.entries_kept > 0
    # each entry's cells on each board: the kept build's cells.parquet (above) was read
    # from them and has the fresh one's bytes
    assert len(list((cache / "pages").rglob("*.cells"))) == len(tails)
    bodies[0].write_bytes(bodies[0].read_bytes()[:-10] + b"<b>x</b>!!")  # damaged
    bodies[1].write_bytes(bodies[1].read_bytes()[:32] + b"<script>alert(1)</script>")  # planted
    bodies[2].unlink()
    tails[0].write_bytes(tails[0].read_bytes()[:32] + b'"rates":{"swer":0}')  # planted
    again = build_site(
        subs, fresh, root=root, cache_dir=cache, allow_unsigned=True, records=RECORDS
    )
    assert (again.pages_kept, again.pages_rendered) == (summary.pages_kept - 3, 3)
    assert again.entries_kept == summary.entries_kept - 1
    assert snapshot(fresh) == snapshot(kept)

    shutil.rmtree(cache / "pages")
    (cache / "pages").write_text("not a folder")  # nothing can be kept (as a full disk)
    unkept = tmp_path / "unkept"
    third = build_site(
        subs, unkept, root=root, cache_dir=cache, allow_unsigned=True, records=RECORDS
    )
    assert (third.pages_kept, third.pages_rendered, third.entries_kept) == (
        0,
        summary.pages_kept,
        0,
    )
    assert len([n for n in third.notes if n.startswith("cannot keep what a build makes")]) == 1
    assert snapshot(unkept) == snapshot(kept)


def test_builds_with_the_same_source_date_epoch_are_byte_identical(
    site: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two builds of the same inputs under one SOURCE_DATE_EPOCH: every byte the same,
    the build date included (and it is the epoch's day, not today)."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")  # 2023-11-14 22:13:20 UTC
    outs = [site["base"] / f"public-epoch-{i}" for i in (1, 2)]
    for out in outs:
        build(site["base"], site["subs"], out, site["base"] / "cache")
    one, two = (
        {str(f.relative_to(out)): f.read_bytes() for f in sorted(out.rglob("*")) if f.is_file()}
        for out in outs
    )
    assert one.keys() == two.keys() and [k for k in one if one[k] != two[k]] == []
    assert '<span class="eb-build-date">2023-11-14</span>' in one["index.html"].decode()
    assert json.loads(one["downloads/leaderboard.json"])["build_date"] == "2023-11-14"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "next tuesday")
    with pytest.raises(SiteBuildError, match="SOURCE_DATE_EPOCH"):
        build(site["base"], site["subs"], site["base"] / "public-epoch-3", site["base"] / "cache")


def test_leaderboard_json_follows_its_schema_and_the_boards(site: dict[str, Any]) -> None:
    import jsonschema

    downloads = site["out"] / "downloads"
    doc = json.loads((downloads / "leaderboard.json").read_text(encoding="utf-8"))
    schema = json.loads((downloads / "leaderboard.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(doc)
    csv = pd.read_csv(downloads / "leaderboard.csv")
    cells = pd.read_parquet(downloads / "cells.parquet")
    flat = [(b, e) for b in doc["boards"] for e in b["entries"]]
    assert [e["slug"] for _, e in flat] == list(csv["slug"])  # the CSV's rows, in its order
    for (b, e), row in zip(flat, csv.itertuples(), strict=True):
        assert (b["spec_major"], b["pack"]) == (str(row.spec_major), row.pack)
        # every row names the substrate its numbers come from, in the JSON and the CSV
        assert e["substrate"] == b["substrate"] == row.substrate and b["key"] == row.board
        assert e["label"] == f"{e['system']} · {e['substrate']}"
        for rate in ("swer", "over_halt", "task_success", "screen_success"):
            r = e["rates"][rate]
            assert (r["k"], r["n"]) == (getattr(row, f"{rate}_k"), getattr(row, f"{rate}_n"))
            assert r["lo"] == pytest.approx(getattr(row, f"{rate}_lo"), abs=1e-6)
        assert e["value"]["per_100"] == pytest.approx(row.value, abs=1e-6)
        assert (site["out"] / e["page"]).is_file()
        assert e["badge"] is None or (site["out"] / e["badge"]).is_file()
        # Its cells are in cells.parquet, whose counts add up to the board's.
        mine = cells[(cells["board"] == b["key"]) & (cells["slug"] == e["slug"])]
        assert len(mine) and set(mine["substrate"]) == {b["substrate"]}
        assert set(mine["system"]) == {e["system"]}
        for rate in ("swer", "over_halt", "record_wrong", "swer_wrong_write"):
            assert mine[f"{rate}_k"].sum() == e["rates"][rate]["k"]
            assert mine[f"{rate}_n"].sum() == e["rates"][rate]["n"] == mine["n"].sum()
        assert "cells" not in e  # format 4: the document carries each entry's rates alone
    assert doc["format"] == 4
    assert len(cells) == len(cells.drop_duplicates(["board", "slug", "category"]))
    assert [k for g in doc["groups"] for k in g["boards"]] == [b["key"] for b in doc["boards"]]
    broken = json.loads(json.dumps(doc))
    broken["boards"][0]["entries"][0]["rates"]["swer"]["k"] = "many"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate(broken)
    # The schema names every status and the shape of every date.
    entry = schema["$defs"]["EntryJSON"]["properties"]
    assert entry["status"]["enum"] == ["ranked", "preview", "withheld"]
    for field, bad in (("status", "refused"), ("status", "anything"), ("date", "30/11/2026")):
        broken = json.loads(json.dumps(doc))
        broken["boards"][0]["entries"][0][field] = bad
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.Draft202012Validator(schema).validate(broken)
    broken = json.loads(json.dumps(doc))
    broken["boards"][0]["entries"][0]["date"] = ""  # a date not known is empty
    jsonschema.Draft202012Validator(schema).validate(broken)
    broken["build_date"] = "2026-13"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate(broken)


def test_badges_state_swer_and_over_halt_together(site: dict[str, Any]) -> None:
    import xml.etree.ElementTree as ET

    doc = json.loads((site["out"] / "downloads" / "leaderboard.json").read_text())
    entries = [e for b in doc["boards"] for e in b["entries"]]
    assert entries and all((e["badge"] is None) == (e["status"] != "ranked") for e in entries)
    pack_of = {e["slug"]: b["pack"] for b in doc["boards"] for e in b["entries"]}
    for e in [e for e in entries if e["status"] == "ranked"]:  # previews carry no badge
        svg = (site["out"] / e["badge"]).read_text(encoding="utf-8")
        root = ET.fromstring(svg)  # well-formed, names escaped
        title = root.find("{http://www.w3.org/2000/svg}title")
        assert title is not None and root.get("aria-label") == title.text
        swer, oh = e["rates"]["swer"], e["rates"]["over_halt"]  # one substrate: the bundle's
        rw = e["rates"]["record_wrong"]
        stated = (
            f"SWER {100 * swer['rate']:.1f}% ({swer['k']}/{swer['n']}) · over-halt "
            f"{100 * oh['rate']:.1f}% ({oh['k']}/{oh['n']}) · record-wrong "
            f"{100 * rw['rate']:.1f}% ({rw['k']}/{rw['n']})"
        )
        assert title.text is not None and title.text.endswith(stated), (title.text, stated)
        # the badge names the substrate its numbers come from
        assert title.text.startswith(f"EffectBench {pack_of[e['slug']]} · {e['substrate']}: ")
        sub = page(site, e["page"])
        assert f'src="../{e["badge"]}"' in sub and f"]({e['badge']})" in sub  # shown, with markdown


def test_refused_messages_write_numbers_as_the_board_does() -> None:
    from effectbench.site._pages import readable_numbers

    claim = "claimed 0.5555555555555556, the rows give 0.5444444444444444"
    assert readable_numbers(claim, "results.swer.rate") == "claimed 55.6%, the rows give 54.4%"
    close = "claimed 0.5555555555555556, the rows give 0.5555655555555556"
    assert readable_numbers(close, "results.swer.ci.lo") == "claimed 55.556%, the rows give 55.557%"
    assert readable_numbers("latency 12.3456789012", "results.latency.mean_s") == "latency 12.35"
    assert readable_numbers("trial 3 of 10", None) == "trial 3 of 10"


def test_failed_build_leaves_previous_site_untouched(site: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "public"
    shutil.copytree(site["out"], out)
    before = snapshot(out)
    root = tmp_path / "root"
    shutil.copytree(ROOT / "site", root / "site")
    shutil.copy(ROOT / "SPEC.md", root / "SPEC.md")
    cfg = yaml_load((ROOT / "mkdocs.yml").read_text())
    cfg["nav"].append({"Missing": "no-such-page.md"})  # strict mode refuses this
    (root / "mkdocs.yml").write_text(yaml.safe_dump(cfg))
    with pytest.raises(SiteBuildError):
        build_site(site["subs"], out, root=root, cache_dir=site["base"] / "cache")
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["public", "root"]  # no staging left


@pytest.mark.slow
def test_cli_build_and_errors(site: dict[str, Any], tmp_path: Path, capsys: Any) -> None:
    out = tmp_path / "out"
    subs = copy_references(tmp_path / "subs")
    args = ["site", "build", "--submissions", str(subs), "--out", str(out)]
    args += ["--root", str(ROOT), "--cache-dir", str(site["base"] / "cache")]
    assert main(args) == 0
    assert f"ranked {N_REFERENCE}" in capsys.readouterr().out
    status = main(["site", "build", "--submissions", str(tmp_path / "nope"), "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 2 and "nope" in err and "Traceback" not in err
    assert (out / "index.html").is_file()


@pytest.mark.slow
def test_workflows_call_commands_that_exist(tmp_path: Path) -> None:
    parser = build_parser()
    subs = copy_references(tmp_path / "subs")  # the screen ones: tests/test_shipped_site.py
    for wf in (ROOT / ".github" / "workflows").glob("*.yml"):
        doc = yaml.safe_load(wf.read_text())
        for job in doc["jobs"].values():
            for step in job["steps"]:
                for line in str(step.get("run", "")).splitlines():
                    line = line.strip()
                    if line.startswith("effectbench "):
                        words = [w for w in line.split()[1:] if not w.startswith('"$')]
                        words = [w for w in words if w not in (">", "report.txt", "2>&1", "||")]
                        words = [w for w in words if not w.startswith("status=")]
                        if words[0] == "verify":
                            words.append(str(subs))
                        parser.parse_args(words)
    cmd = [sys.executable, "-m", "effectbench.cli", "verify", str(subs)]
    assert subprocess.run(cmd, capture_output=True, check=False).returncode == 0


@pytest.mark.slow
def test_report_cache_reuses_only_byte_identical_bundles(tmp_path: Path) -> None:
    from effectbench.site import verify_submissions

    subs = copy_references(tmp_path / "subs")
    cache = tmp_path / "reports"
    first = verify_submissions(subs, cache_dir=cache)
    assert len(list(cache.glob("*.json"))) == N_REFERENCE
    again = verify_submissions(subs, cache_dir=cache)
    assert [r.to_json() for r in again] == [r.to_json() for r in first]
    bundle = next(subs.glob("*screen-only"))
    text = (bundle / "submission.json").read_text().replace('"screen_only"', '"screen only"', 1)
    (bundle / "submission.json").write_text(text)  # the claims no longer match the rows
    changed = verify_submissions(subs, cache_dir=cache)
    assert len(list(cache.glob("*.json"))) == N_REFERENCE + 1
    idx = sorted(subs.iterdir()).index(bundle)
    assert changed[idx].to_json() != first[idx].to_json()  # verified afresh, not reused
    assert [r.to_json() for i, r in enumerate(changed) if i != idx] == [
        r.to_json() for i, r in enumerate(first) if i != idx
    ]


@pytest.mark.slow
def test_parallel_build_equals_serial_build(
    site: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Verification and charts on spawn-pool workers give the very same site as in-process."""
    from effectbench.site._pool import Workers

    batches: list[int] = []
    submit = Workers.submit_chunks

    def counting(self: Workers, fn: Any, items: Any, per_worker: int = 8) -> Any:
        batches.append(len(items))
        return submit(self, fn, items, per_worker)

    # Small batches normally stay in-process; send every batch to the pool here.
    monkeypatch.setattr(Workers, "worth_it", lambda self, n, threshold: n >= 1)
    monkeypatch.setattr(Workers, "submit_chunks", counting)
    out = tmp_path / "public"
    summary = build_site(  # as the module's build (records included), on the pool
        site["subs"],
        out,
        root=ROOT,
        cache_dir=tmp_path / "cache",
        workers=2,
        allow_unsigned=True,
        records=RECORDS,
    )
    n_bundles = len(list(site["subs"].iterdir()))
    assert batches[0] == n_bundles  # every bundle verified on the workers
    assert summary.charts_rendered == sum(batches[1:]) > 0  # every chart rendered there
    assert snapshot(out) == snapshot(site["out"])


# -- signed bundles under the private Sigstore test root ---------------------------------

ALICE = "alice@example.org"
SIGNED = "2026-02-01_signed-agent"
UNSIGNED = "2026-02-02_unsigned-agent"
PUBLISHED = "https://effectbench.example/board"
"""The signed sites' ``site_url`` (the badge snippets' links start with it)."""
WITHDRAWN = "2026-02-03_withdrawn-halt"
WITHDRAW_REASON = "the submitter asked for it: wrong pack version"


def own_system(bundle: Path, name: str, description: str) -> None:
    """Give a test bundle (not a declared baseline) its own name before it is signed."""
    data = json.loads((bundle / "submission.json").read_text(encoding="utf-8"))
    assert data["system"]["baseline"] is None  # ranked only by a signature, never reproduced
    data["system"].update(name=name, description=description)
    (bundle / "submission.json").write_text(json.dumps(data, indent=2), encoding="utf-8")


@pytest.fixture(scope="module")
def signed_sites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Two builds of one folder through the CLI: under the test root, and under production.

    The folder holds a custom system signed by ALICE under the private test root,
    an unsigned custom system (SWER 0: it would outrank the others if it were
    ranked), the reproduced screen_only reference bundle, and a withdrawn bundle.
    """
    from sigstore_testroot import GOOGLE, shared_instance
    from support.bundles import make_bundle

    from effectbench.signatures import sign_bundle

    instance = shared_instance()
    base = tmp_path_factory.mktemp("signed-site")
    subs = base / "submissions"
    reference = next(REFERENCE.glob("*_screen-only"))
    shutil.copytree(reference, subs / reference.name)
    shutil.copytree(next(REFERENCE.glob("*_always-halt")), subs / WITHDRAWN)
    signed = make_bundle(
        subs / SIGNED, "retry_on_error", declare_baseline=False, signer=(ALICE, GOOGLE)
    )
    own_system(signed, "Signed agent", "A custom system, signed under the test root.")
    trust = instance.trust_config_path
    sign_bundle(signed, identity_token=instance.email_token(ALICE), trust_config=trust)
    unsigned = make_bundle(subs / UNSIGNED, "effect_verified", declare_baseline=False)
    own_system(unsigned, "Unsigned agent", "A custom system nobody signed.")
    from verifier.references import bundle_content_hash

    gone = {"content_hash": bundle_content_hash(subs / WITHDRAWN), "reason": WITHDRAW_REASON}
    root = site_root(base, [{**gone, "date": "2026-02-04"}], site_url=PUBLISHED)
    common = ["site", "build", "--submissions", str(subs), "--root", str(root)]
    common += ["--cache-dir", str(base / "cache")]
    with_root, production = base / "with-test-root", base / "production"
    assert main([*common, "--out", str(with_root), "--trust-config", str(trust)]) == 0
    assert main([*common, "--out", str(production), "--allow-unsigned"]) == 0
    return {
        "subs": subs,
        "trust": trust,
        "reference": reference.name.lower(),
        "test_root": with_root,
        "production": production,
    }


def read(out: Path, name: str) -> str:
    return (out / name).read_text(encoding="utf-8")


def test_signed_bundle_is_ranked_with_its_signer(signed_sites: dict[str, Any]) -> None:
    from sigstore_testroot import GOOGLE

    out = signed_sites["test_root"]
    index = read(out, "index.html")
    table = board_table(index, MOCKMED_BOARD)
    assert sorted(board_slugs(table)) == sorted([SIGNED.lower(), signed_sites["reference"]])
    row = board_row(table, SIGNED.lower())
    assert 'data-status="ranked"' in row
    rank = re.search(r'<td class="eb-rank"[^>]*>([^<]+)</td>', row)
    assert rank and rank.group(1) != "—"
    badge = re.search(
        r'<span class="eb-badge eb-badge--signed" title="([^"]+)">(.*?)</span></span>', row
    )
    assert badge, row
    text = re.sub(r"<[^>]+>", "", badge.group(2))
    assert text == f"signed by {ALICE} (accounts.google.com)"
    assert GOOGLE in badge.group(1)
    assert "reproduced" not in row  # ranked by its signature alone
    assert "Not the production trust root" in index and "trust_config.json" in index

    page_ = read(out, f"submissions/{SIGNED.lower()}.html")
    signer = re.search(r'<table class="eb-table" data-eb="signer">.*?</table>', page_, re.S)
    assert signer, "no signer table"
    assert f'<code class="eb-signer">{ALICE}</code>' in signer.group(0)
    assert f'<code class="eb-issuer">{GOOGLE}</code>' in signer.group(0)
    when = re.search(r'<time datetime="([^"]+)">([^<]+)</time>', signer.group(0))
    assert when and when.group(1) == when.group(2)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", when.group(1))
    assert "A custom system, signed under the test root." in page_
    link = f'href="{SIGNED.lower()}/submission.sigstore.json"'
    downloads = page_[page_.index('id="downloads"') :]
    assert link in downloads
    published = out / "submissions" / SIGNED.lower() / "submission.sigstore.json"
    assert published.read_bytes() == (signed_sites["subs"] / SIGNED / published.name).read_bytes()
    csv = pd.read_csv(out / "downloads" / "leaderboard.csv").set_index("slug")
    assert csv.loc[SIGNED.lower(), "signer"] == ALICE
    assert csv.loc[SIGNED.lower(), "signer_issuer"] == GOOGLE


def test_unsigned_custom_bundle_is_refused_without_allow_unsigned(
    signed_sites: dict[str, Any],
) -> None:
    out = signed_sites["test_root"]
    assert f'data-slug="{UNSIGNED.lower()}"' not in read(out, "index.html")
    assert not (out / "submissions" / f"{UNSIGNED.lower()}.html").exists()
    refused = refused_rows(read(out, "refused.html"))
    assert refused[UNSIGNED.lower()] == ["signature", "signature.missing"]


def refused_rows(html: str) -> dict[str, list[str]]:
    """Slug -> the check ids (family, then findings) the refused table shows for it."""
    table = re.search(r'<table class="eb-table" id="eb-refused">.*?</table>', html, re.S)
    assert table, "no refused table"
    out: dict[str, list[str]] = {}
    for slug, body in re.findall(r'<tr data-slug="([^"]+)">(.*?)</tr>', table.group(0), re.S):
        out.setdefault(slug, []).extend(
            re.findall(r'<code class="eb-check-id">([^<]+)</code>', body)
        )
    return out


def test_signature_under_another_root_is_refused_on_the_production_build(
    signed_sites: dict[str, Any],
) -> None:
    out = signed_sites["production"]
    index = read(out, "index.html")
    assert f'data-slug="{SIGNED.lower()}"' not in index
    assert not (out / "submissions" / f"{SIGNED.lower()}.html").exists()
    assert "Not the production trust root" not in index
    refused = read(out, "refused.html")
    checks = refused_rows(refused)[SIGNED.lower()]
    assert checks[0] == "signature" and "signature.untrusted" in checks[1:]
    assert all(c == "signature" or c.startswith("signature.") for c in checks)
    assert SIGNED in refused and "Signed agent" in refused


def test_allow_unsigned_shows_an_unranked_preview(signed_sites: dict[str, Any]) -> None:
    out = signed_sites["production"]
    table = board_table(read(out, "index.html"), MOCKMED_BOARD)
    # the board's table holds its ranked row; the preview, which would rank first, is in a
    # marked section of its own after it, never among the ranked rows
    assert board_slugs(table) == [signed_sites["reference"]]
    section = re.search(r'<tbody class="eb-previews"[^>]*>(.*?)</tbody>', table, re.S)
    assert section is not None and section.start() > table.index("</tbody>")
    assert "Unsigned previews: not verified by a signature, never ranked." in section.group(1)
    assert re.findall(r'<tr data-slug="([^"]+)"', section.group(1)) == [UNSIGNED.lower()]
    assert 'data-eb-previews="' in section.group(0)
    preview = board_row(section.group(1), UNSIGNED.lower())
    assert 'data-status="preview"' in preview and "preview · not ranked" in preview
    assert re.search(r'<td class="eb-rank"[^>]*>—</td>', preview)
    assert metric_k(preview, "swer") == "0/27"  # it would rank first if previews were ranked
    ranked = board_row(table, signed_sites["reference"])
    assert re.search(r'<td class="eb-rank"[^>]*>1</td>', ranked)
    csv = pd.read_csv(out / "downloads" / "leaderboard.csv").set_index("slug")
    assert csv.loc[UNSIGNED.lower(), "status"] == "preview"
    assert pd.isna(csv.loc[UNSIGNED.lower(), "rank_best"])
    assert pd.isna(csv.loc[UNSIGNED.lower(), "rank_worst"])
    assert csv.loc[signed_sites["reference"], "rank_best"] == 1
    sub = read(out, f"submissions/{UNSIGNED.lower()}.html")
    assert "not ranked (preview)" in sub


def test_withdrawn_bundle_leaves_the_board_for_the_withdrawn_list(
    signed_sites: dict[str, Any],
) -> None:
    for out in (signed_sites["test_root"], signed_sites["production"]):
        index = read(out, "index.html")
        assert f'data-slug="{WITHDRAWN.lower()}"' not in index
        assert "1 withdrawn" in index
        assert not (out / "submissions" / f"{WITHDRAWN.lower()}.html").exists()
        html = read(out, "refused.html")
        table = re.search(r'<table class="eb-table" id="eb-withdrawn">.*?</table>', html, re.S)
        assert table, "no withdrawn table"
        cells = [
            cell_text(c.replace("<wbr>", ""))
            for c in re.findall(r"<td>(.*?)</td>", table.group(0), re.S)
        ]
        assert cells == [WITHDRAWN, "always_halt", "2026-02-04", WITHDRAW_REASON]
        assert WITHDRAWN.lower() not in refused_rows(html)  # withdrawn, not refused


def test_report_cache_key_holds_the_trust_roots_content(
    signed_sites: dict[str, Any], tmp_path: Path
) -> None:
    from effectbench.site import verify_submissions

    subs = tmp_path / "subs"
    shutil.copytree(signed_sites["subs"] / SIGNED, subs / SIGNED)
    cache = tmp_path / "reports"
    trust = tmp_path / "trust.json"
    shutil.copy(signed_sites["trust"], trust)
    (first,) = verify_submissions(subs, cache_dir=cache, trust_config=trust)
    assert first.status.value == "ranked" and first.signer is not None
    assert first.signer.identity == ALICE
    (production,) = verify_submissions(subs, cache_dir=cache)  # same bundle, pinned root
    assert production.status.value == "refused"
    assert len(list(cache.glob("*.json"))) == 2
    (again,) = verify_submissions(subs, cache_dir=cache, trust_config=trust)
    assert again.to_json() == first.to_json() and len(list(cache.glob("*.json"))) == 2
    # The same path now holds another root (the production one): the cached report is stale.
    shutil.copy(ROOT / "effectbench" / "signatures" / "trust" / "trusted_root.json", trust)
    (other,) = verify_submissions(subs, cache_dir=cache, trust_config=trust)
    assert other.status.value == "refused"
    assert "signature.untrusted" in other.finding_ids()


def test_cli_trust_config_must_be_a_file(tmp_path: Path, capsys: Any) -> None:
    missing = tmp_path / "absent.json"
    args = ["site", "build", "--submissions", str(REFERENCE), "--out", str(tmp_path / "o")]
    status = main([*args, "--root", str(ROOT), "--trust-config", str(missing)])
    err = capsys.readouterr().err
    assert status == 2 and str(missing) in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def page_commands(html: str) -> list[list[str]]:
    """Every shell command in the code blocks of a built page, as words (comments dropped)."""
    commands = []
    for block in re.findall(r'<pre><code class="language-sh">(.*?)</code></pre>', html, re.S):
        text = unescape(block).replace("\\\n", " ")
        for line in text.splitlines():
            words = shlex.split(line, comments=True)
            while words:  # a pipeline's and a list's commands, each without its redirection
                cut = next((i for i, w in enumerate(words) if w in ("&&", "|")), len(words))
                command = words[:cut]
                if ">" in command:
                    command = command[: command.index(">")]
                commands.append(command)
                words = words[cut + 1 :]
    return commands


def test_submit_page_commands_exist_and_fit_together(site: dict[str, Any], tmp_path: Path) -> None:
    """Every effectbench command on the Submit page parses, and every door writes the one
    bundle folder the page then signs, verifies and adds (tests/test_doors.py runs them)."""
    from effectbench.produce import bundle_folder
    from effectbench.signatures import load_policy

    commands = page_commands(page(site, "submit.html"))
    parser = build_parser()
    parsed: dict[str, list[Any]] = {}
    for words in commands:
        if words[0] == "effectbench":
            args = parser.parse_args(words[1:])  # exits (fails the test) on an unknown option
            name = " ".join(words[1:3]) if words[1] == "site" else words[1]
            parsed.setdefault(name, []).append(args)
    doors = {"mcp", "submit", "import-inspect", "run", "sign", "verify", "site build", "site serve"}
    assert doors <= set(parsed)
    # The folder each door writes (under a fixed date) is the one signed, verified and added.
    day = re.search(r"effectbench sign submissions/(\d{4}-\d\d-\d\d)_", page(site, "submit.html"))
    assert day, "the sign command names no dated bundle folder"
    made = [*parsed["submit"], *parsed["import-inspect"]]
    bundles = [a for a in made if str(a.out).rstrip("/") == "submissions"]
    assert len(bundles) == 4  # MCP, a vendor loop, inspect and a system in process
    folders = {bundle_folder(tmp_path / a.out, a.name, day.group(1)) for a in bundles}
    (folder,) = folders
    bundle = str(folder.relative_to(tmp_path))
    assert [a.dir for a in parsed["sign"]] == [bundle]
    assert [[str(p) for p in a.paths] for a in parsed["verify"]] == [[bundle]]
    git = [w for w in commands if w[0] == "git"]
    assert ["git", "add", bundle] in git and any(w[:2] == ["git", "push"] for w in git)
    assert any(w[:3] == ["gh", "pr", "create"] for w in commands)  # opening the pull request
    # The declared signer is one the leaderboard ranks, and the page lists exactly those issuers.
    policy = load_policy()
    for args in bundles:
        assert args.signer_identity and policy.accepts(args.signer_issuer)
    listed = re.findall(r"<td><code>(https://[^<]+)</code></td>", page(site, "submit.html"))
    assert sorted(listed) == sorted(policy.accepted_issuers)
    assert all(a.pack != "mockmed" for a in parsed["submit"])  # findings, not an anchor run


def test_spec_page_renders_the_spec(site: dict[str, Any]) -> None:
    spec = (ROOT / "SPEC.md").read_text(encoding="utf-8")
    title = spec.splitlines()[0].removeprefix("# ").strip()
    html = page(site, "spec.html")
    assert re.search(rf"<h1 id=\"[^\"]+\">{re.escape(title)}<a", html)
    headings = re.findall(r"^## (.+)$", spec, re.M)
    assert headings and all(unescape(h).strip() in unescape(cell_text(html)) for h in headings)


@pytest.mark.slow
def test_site_serve_previews_the_build(site: dict[str, Any], tmp_path: Path) -> None:
    """``effectbench site serve`` serves the built site on 127.0.0.1 (a real process)."""
    import urllib.request

    cmd = [sys.executable, "-m", "effectbench.cli", "site", "serve", "--dir", str(site["out"])]
    proc = subprocess.Popen(
        [*cmd, "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert match, line + (proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
        url = match.group(0)
        with urllib.request.urlopen(url + "index.html", timeout=10) as response:
            assert response.status == 200
            assert response.read() == (site["out"] / "index.html").read_bytes()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    empty = subprocess.run(
        [*cmd[:-1], str(tmp_path)], capture_output=True, text=True, check=False, timeout=60
    )
    assert empty.returncode == 2 and "site build" in empty.stderr
    assert "Traceback" not in empty.stderr


def _record_wrong_by_hand(bundle: Path) -> tuple[int, int, float, float, float, float]:
    """Record-wrong of a bundle's rows, counted here without the metrics module: k, n, the
    design effect (Rao-Scott, per task) and Wilson on the effective counts (statsmodels)."""
    from statsmodels.stats.proportion import proportion_confint

    per_task: dict[str, list[int]] = {}
    for line in (bundle / "episodes.jsonl").read_text().splitlines():
        row = json.loads(line)
        wrong = row["outcome"] == "silent_wrong_effect" and row["swer_variant"] == "wrong_write"
        wrong = wrong or row["outcome"] == "wrong_action"
        counts = per_task.setdefault(row["task_id"], [0, 0])
        counts[0] += int(wrong)
        counts[1] += 1
    k = sum(c[0] for c in per_task.values())
    n = sum(c[1] for c in per_task.values())
    g = len(per_task)
    p = k / n
    if max(c[1] for c in per_task.values()) <= 1:
        deff = 1.0
    elif 0 < p < 1 and g > 1:  # with Rao and Scott's small-sample factor g / (g - 1)
        squares = sum((c[0] - p * c[1]) ** 2 for c in per_task.values())
        deff = g / (g - 1) * squares / (n * p * (1 - p))
    else:
        deff = sum(c[1] ** 2 for c in per_task.values()) / n
    deff = max(1.0, deff)
    lo, hi = proportion_confint(k / deff, n / deff, method="wilson")
    return k, n, deff, n / deff, max(0.0, lo), min(1.0, hi)


def test_every_row_carries_record_wrong_with_its_task_clustered_interval(
    site: dict[str, Any],
) -> None:
    """leaderboard.json and the CSV: record-wrong k/n, the interval that counts tasks and its
    design effect, equal to a recomputation from each bundle's rows."""
    import csv

    doc = json.loads((site["out"] / "downloads" / "leaderboard.json").read_text())
    with (site["out"] / "downloads" / "leaderboard.csv").open(newline="") as fh:
        csv_rows = {r["slug"]: r for r in csv.DictReader(fh)}
    folders = {p.name.lower(): p for p in site["subs"].iterdir()}
    checked = 0
    for board in doc["boards"]:
        assert board["prices"] == {
            "value": 10.0,
            "silent": 10.0,
            "wrong_record": 3.0,
            "over_halt": 1.0,
        }
        for e in board["entries"]:
            k, n, deff, neff, lo, hi = _record_wrong_by_hand(folders[e["slug"]])
            rw = e["rates"]["record_wrong"]
            assert (rw["k"], rw["n"]) == (k, n)
            assert rw["tasks"]["design_effect"] == pytest.approx(deff, abs=1e-6)
            assert rw["tasks"]["n_effective"] == pytest.approx(neff, abs=1e-6)
            assert rw["tasks"]["lo"] == pytest.approx(lo, abs=1e-6)
            assert rw["tasks"]["hi"] == pytest.approx(hi, abs=1e-6)
            row = csv_rows[e["slug"]]
            assert (int(row["record_wrong_k"]), int(row["record_wrong_n"])) == (k, n)
            assert float(row["record_wrong_deff"]) == pytest.approx(deff, abs=1e-6)
            assert float(row["record_wrong_tasks_lo"]) == pytest.approx(lo, abs=1e-6)
            assert float(row["record_wrong_tasks_hi"]) == pytest.approx(hi, abs=1e-6)
            for name in ("swer", "over_halt", "record_wrong"):
                assert f"{name}_deff" in row and f"{name}_tasks_lo" in row
            assert float(row["value"]) == pytest.approx(e["value"]["per_100"], abs=1e-5)
            checked += 1
    assert checked >= 7


def test_shipped_clinic_board_ranks_by_net_value_against_the_doing_nothing_line(
    site: dict[str, Any],
) -> None:
    html = page(site, "index.html")
    clinic = board_table(html, CLINIC_BOARD)
    line = _group(r'<tr class="eb-idle-line" data-eb-line><td[^>]*>(.*?)</td>', clinic, re.S)
    text = cell_text(line)
    assert "Doing nothing (halting on every task): 0 net value" in text and "29.6%" in text
    # at the default prices look_before_write and effect_verified_all are worth more than
    # doing nothing, and effect_verified exactly as much (its break-even value is the default,
    # 10): all three above
    slugs = board_slugs(clinic)
    assert slugs == [
        slug_of(site, s)
        for s in (
            "_look-before-write-clinic",
            "_effect-verified-all-clinic",
            "_effect-verified-clinic",
            "_screen-only-clinic",
        )
    ]
    assert clinic.index('<tr class="eb-idle-line"') > clinic.index(f'<tr data-slug="{slugs[2]}"')
    assert clinic.index('<tr class="eb-idle-line"') < clinic.index(f'<tr data-slug="{slugs[3]}"')
    best = board_row(clinic, slugs[0])
    assert "+214.8" in best and "break-even 2.8" in best
    second = board_row(clinic, slugs[1])
    assert "+111.1" in second and "break-even 5.0" in second
    assert "break-even 10.0" in board_row(clinic, slugs[2])
    mockmed = board_table(html, MOCKMED_BOARD)
    slugs = board_slugs(mockmed)
    # always_halt is doing nothing itself (0); effect_verified does 30 tasks right at SWER 0
    assert slugs[:2] == [slug_of(site, "_effect-verified"), slug_of(site, "_always-halt")]
    halt = board_row(mockmed, slug_of(site, "_always-halt"))
    assert "never acts" in halt and "never beats doing nothing" in halt
    assert '<span class="eb-p">0.0</span>' in halt
    doc = json.loads((site["out"] / "downloads" / "leaderboard.json").read_text())
    board = next(b for b in doc["boards"] if b["key"] == CLINIC_API)
    assert board["substrate"] == "api" and board["group"] == CLINIC_BOARD
    assert board["doing_nothing"]["over_halt"] == pytest.approx(8 / 27, abs=1e-6)
    assert board["doing_nothing"]["value_per_100"] == pytest.approx(-800 / 27, abs=1e-4)
    assert board["family"] == {
        "confidence": 0.95,
        "pair_confidence": pytest.approx(1 - 0.05 / 6, abs=1e-6),  # 4 ranked: 6 pairs
        "ranked": 4,
        "min_shared_tasks": 8,
    }
    assert round(100 * board["minimum_detectable_difference"]) == 38
    ranks = [(e["rank_best"], e["rank_worst"]) for e in board["entries"]]
    assert ranks == [(1, 3), (1, 3), (1, 3), (4, 4)]
    assert "Rank ranges hold together at 95%" in clinic or "Rank ranges hold together" in html


# -- the same system across substrates ---------------------------------------------------------


@pytest.fixture(scope="module")
def screens_site(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The reference bundles beside systems on a pack whose every task runs on the web and the
    desktop: baselines in one bundle each, a mixed system in one bundle and one in two."""
    base = tmp_path_factory.mktemp("screens-site")
    subs = copy_references(base / "submissions")
    with register(SCREENS_PACK, ScreensPack):
        systems = screens_bundles(subs)
        out = base / "public"
        build_site(subs, out, root=ROOT, cache_dir=base / "cache", workers=1, allow_unsigned=True)
    return {"subs": subs, "systems": systems, "out": out}


class Sections(HTMLParser):
    """The substrate page's systems: per (board, system) its rate cells and difference cells."""

    def __init__(self) -> None:
        super().__init__()
        self.systems: dict[tuple[str, str], dict[str, Any]] = {}
        self._current: dict[str, Any] | None = None
        self._row: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "section" and "data-eb-system" in a:
            self._current = {"rates": {}, "diffs": {}}
            self.systems[(a["data-eb-board"], a["data-eb-system"])] = self._current
        elif tag == "tr" and self._current is not None:
            self._row = a
        elif tag == "td" and self._current is not None and "data-metric" in a:
            if "data-substrate" in self._row:
                self._current["rates"][(self._row["data-substrate"], a["data-metric"])] = a
            else:
                pair = (self._row["data-first"], self._row["data-second"])
                self._current["diffs"][(*pair, a["data-metric"])] = a


def test_every_system_on_several_substrates_has_its_sensitivity_view(
    screens_site: dict[str, Any],
) -> None:
    """Every board's systems (entries of one name and signer) that ran more than one substrate,
    on the page and in leaderboard.json, with every two substrates compared."""
    out: Path = screens_site["out"]
    data = json.loads((out / "downloads" / "leaderboard.json").read_text(encoding="utf-8"))
    sections = Sections()
    sections.feed((out / "substrates.html").read_text(encoding="utf-8"))
    expected: set[tuple[str, str]] = set()
    boards = {b["key"]: b for b in data["boards"]}
    for g in data["groups"]:
        ran: dict[tuple[str, str], set[str]] = {}
        for key in g["boards"]:
            for e in boards[key]["entries"]:
                who = (e["system"], (e["signer"] or {}).get("identity", ""))
                ran.setdefault(who, set()).add(e["substrate"])
        several = [who for who, subs in ran.items() if len(subs) > 1]
        assert [
            (s["system"], (s["signer"] or {}).get("identity", "")) for s in g["across_substrates"]
        ] == several
        for (name, _), system in zip(several, g["across_substrates"], strict=True):
            subs = set(system["substrates"])
            assert subs == ran[(name, _)]
            assert len(system["differences"]) == len(subs) * (len(subs) - 1) // 2
            expected.add((g["key"], name))
    assert set(sections.systems) == expected
    assert {name for key, name in expected if key == SCREENS_BOARD} == set(screens_site["systems"])


def test_substrate_differences_equal_a_recomputation_from_the_rows(
    screens_site: dict[str, Any],
) -> None:
    out: Path = screens_site["out"]
    sections = Sections()
    sections.feed((out / "substrates.html").read_text(encoding="utf-8"))
    data = json.loads((out / "downloads" / "leaderboard.json").read_text(encoding="utf-8"))
    (group,) = [g for g in data["groups"] if g["key"] == SCREENS_BOARD]
    doc = {s["system"]: s for s in group["across_substrates"]}
    beyond: dict[str, set[str]] = {}
    for name, bundles in screens_site["systems"].items():
        rows = [r for bundle in bundles for r in jsonl_rows(bundle)]
        shown = sections.systems[(SCREENS_BOARD, name)]
        for sub in ("web", "desktop"):
            mine = [r for r in rows if r["substrate"] == sub]
            for rate, counts in WRONG_RATES.items():
                cell = shown["rates"][(sub, rate)]
                k = sum(map(counts, mine))
                assert (int(cell["data-k"]), int(cell["data-n"])) == (k, len(mine)), (name, sub)
                assert doc[name]["substrates"][sub][rate]["k"] == k
        web, desktop = paired(rows, "desktop", "web")
        (pair,) = doc[name]["differences"]
        assert (pair["first"], pair["second"]) == ("desktop", "web")
        for rate in WRONG_RATES:
            d = rate_difference(web, desktop, rate)
            cell = shown["diffs"][("desktop", "web", rate)]
            assert int(cell["data-n"]) == d.tasks == pair[rate]["tasks"] == 9
            for attr, value in (("diff", d.difference), ("lo", d.lo), ("hi", d.hi)):
                assert float(cell[f"data-{attr}"]) == pytest.approx(value, abs=1e-6), (name, rate)
                key = "difference" if attr == "diff" else attr
                assert pair[rate][key] == pytest.approx(value, abs=1e-6), (name, rate)
            if d.beyond_noise:
                beyond.setdefault(name, set()).add(rate)
    # The baselines act the same on both screens; the mixed systems trust the desktop's screen.
    assert beyond == {"verifies_on_web": {"swer"}, "pixel_trusting": {"swer"}}


def test_badge_snippets_are_absolute_under_site_url_and_say_so_when_it_is_not_set(
    site: dict[str, Any], signed_sites: dict[str, Any]
) -> None:
    """A snippet pasted into a README must keep its image and link: under mkdocs.yml's
    site_url both are absolute; without site_url the build and the page say so in a line."""
    out: Path = signed_sites["test_root"]
    snippets = {}
    for p in (out / "submissions").glob("*.html"):
        found = re.search(
            r'<pre class="eb-snippet"><code>(.*?)</code></pre>', read(p.parent, p.name)
        )
        if found:
            snippets[p.stem] = unescape(found.group(1))
    assert set(snippets) >= {signed_sites["reference"], SIGNED.lower()}
    for slug, md in snippets.items():
        image, link = _group(r"\]\(([^)]+)\)\]", md), _group(r"\]\(([^)]+)\)$", md)
        assert image == f"{PUBLISHED}/badges/{slug}.svg", md
        assert link == f"{PUBLISHED}/submissions/{slug}.html", md
        assert 'data-eb="relative-badge"' not in read(out / "submissions", f"{slug}.html")
    # The repository's mkdocs.yml names no site_url: relative links, said on the page and by
    # the build.
    (note,) = site["summary"].notes
    assert "site_url" in note and "\n" not in note
    screen = page(site, f"submissions/{slug_of(site, '_screen-only')}.html")
    assert 'data-eb="relative-badge"' in screen and "site_url" in screen
    assert re.search(r"<code>\[!\[[^]]+\]\(badges/[^)]+\.svg\)\]\(submissions/", screen)


def test_the_site_ships_only_the_theme_files_its_pages_load(site: dict[str, Any]) -> None:
    """No source map and no search-language bundle the search never loads (the site's search
    is English): every script and style sheet of the theme is one a page names."""
    out: Path = site["out"]
    assert not list(out.rglob("*.map"))
    shipped = {
        str(p.relative_to(out))
        for folder in ("assets/javascripts", "assets/stylesheets")
        for p in (out / folder).rglob("*")
        if p.is_file()
    }
    loaded: set[str] = set()
    for html in out.rglob("*.html"):
        text = html.read_text(encoding="utf-8")
        rel = html.parent.relative_to(out).as_posix()
        refs = re.findall(r'(?:src|href)="([^"]*assets/(?:javascripts|stylesheets)/[^"]+)"', text)
        refs += re.findall(r'"search": *"([^"]+)"', text)  # the theme's search worker
        # (the 404 page names them from the site's root)
        loaded.update(posixpath.normpath(posixpath.join(rel, ref)).lstrip("/") for ref in refs)
    assert shipped == loaded, sorted(shipped ^ loaded)
    for name in shipped:
        assert b"sourceMappingURL" not in (out / name).read_bytes(), name


def test_receipts_are_content_addressed_shards_each_episode_view_fetches(
    site: dict[str, Any],
) -> None:
    """A submission's receipts are packed task by task into shards named by the hash of their
    content (each at most CHUNK_BYTES of JSON unless one task alone is more); its index names,
    per task, the shard of the task's facts and the one holding its receipts, which the
    episode view fetches (the view itself is exercised in Chromium by test_receipts_site)."""

    def unpacked(path: Path) -> bytes:  # the JSON a data script carries packed
        text = path.read_text(encoding="utf-8")
        assert text[text.index("] = ") + 4 :].startswith('"'), path  # gzip in base64
        return registered_body(text).encode("utf-8")

    def shard(name: str) -> Any:
        raw = unpacked(out / "receipts" / "c" / name[:2] / f"{name}.js")
        assert hashlib.sha256(raw).hexdigest()[:32] == name  # named by its content
        return json.loads(raw)

    out: Path = site["out"]
    indexes = sorted((out / "receipts").glob("*/index.js"))
    assert indexes, "the reference bundles carry receipts: the site publishes them"
    assert not list((out / "receipts").glob("*/[0-9]*.js"))  # no per-submission receipt files
    checked = 0
    for path in indexes:
        index = json.loads(unpacked(path))
        slug = path.parent.name
        bundle = site["subs"] / slug
        assert bundle.is_dir(), slug
        lines = (bundle / "receipts.jsonl").read_bytes().splitlines()
        by_key = {(r["task_id"], r["trial"]): r for r in map(json.loads, filter(None, lines))}
        assert len(by_key) == sum(len(t["trials"]) for t in index["tasks"])
        packed: dict[str, list[str]] = {}
        for task in index["tasks"]:
            packed.setdefault(task["receipts"], []).append(task["id"])
            receipts = shard(task["receipts"])[task["id"]]
            assert len(receipts) == len(task["trials"])
            for trial, receipt in zip(task["trials"], receipts, strict=True):
                signed = by_key[(task["id"], trial)]
                assert receipt["truth"] == signed["truth"]
                assert receipt["claim"] == signed["claim"]
                assert "episode_id" not in receipt and receipt["trial"] == trial
                checked += 1
            assert shard(task["task"])["title"] == task["title"]
        for name, ids in packed.items():  # each shard holds exactly its run of tasks
            held = shard(name)
            assert sorted(held) == sorted(ids)
            if len(ids) > 1:  # (re-serialized here, so a little slack)
                assert sum(len(orjson.dumps(v)) for v in held.values()) <= CHUNK_BYTES * 1.05
    assert checked >= len(indexes)
    summary = site["summary"]
    assert summary.receipt_shards == len(list((out / "receipts" / "c").glob("*/*.js")))
    assert summary.receipt_shard_unshared >= summary.receipt_shard_bytes > 0


def test_compare_data_pairs_only_episodes_two_systems_ran() -> None:
    """A fresh instance's episodes (drawn for one submission) pair with nothing: they are left
    out of the compare data, so it grows with the number of systems, not its square, and each
    system says how many episodes it ran (the view's "left out" count)."""
    import pyarrow as pa

    from effectbench.site._compare import MISSING, compare_data
    from effectbench.site._pages import BoardView

    def rows(tasks: list[str], outcome: str) -> pa.Table:
        return pa.table(
            {
                "task_id": tasks,
                "trial": [0] * len(tasks),
                "seed": [0] * len(tasks),
                "category": ["control"] * len(tasks),
                "substrate": ["api"] * len(tasks),
                "outcome": [outcome] * len(tasks),
                "swer_variant": ["none"] * len(tasks),
            }
        )

    public = ["p::a@api", "p::b@api"]
    rows_of = {"one": rows(public, "success"), "two": rows([*public, "p::c@api"], "over_halt")}
    rows_of |= {f"fresh{i}": rows([f"p::a-{i}@api", f"p::b-{i}@api"], "success") for i in range(40)}
    view = BoardView(
        key="spec1-p-api",
        title="p · api",
        pack="p",
        fingerprints=(),
        frame=pd.DataFrame(),
        rows=[
            {"slug": s, "system": s, "substrate": "api", "status": "preview", "rank_text": "—"}
            for s in rows_of
        ],
        n_ranked=0,
        anchor=False,
        substrate="api",
    )
    data = compare_data(view, rows_of)
    assert [e[0] for e in data["episodes"]] == public  # p::c and every fresh task: one system
    letters = {s["slug"]: s["outcomes"] for s in data["systems"]}
    ran = {s["slug"]: s["ran"] for s in data["systems"]}
    assert letters["one"] == "SS" and letters["two"] == "OO" and ran["two"] == 3
    assert letters["fresh7"] == MISSING * 2 and ran["fresh7"] == 2
    # What the view says of a pair: "one" and "two" share 2 episodes, so 1 is left out.
    pairs = zip(letters["one"], letters["two"], strict=True)
    both = sum(x != MISSING and y != MISSING for x, y in pairs)
    assert ran["one"] + ran["two"] - 2 * both == 1


def test_the_published_address_comes_from_one_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mkdocs.yml takes site_url from EFFECTBENCH_SITE_URL (one setting for the published
    address; unset, the badge snippets are relative and the page says so)."""
    from effectbench.site.build import SiteSources

    sources = SiteSources(ROOT)
    monkeypatch.delenv("EFFECTBENCH_SITE_URL", raising=False)
    assert sources.site_url == ""
    monkeypatch.setenv("EFFECTBENCH_SITE_URL", "https://board.example.org/effectbench")
    assert sources.site_url == "https://board.example.org/effectbench/"


def test_each_board_counts_its_own_rows_and_states_its_paired_resolution(
    site: dict[str, Any],
) -> None:
    """The header of a pack's boards counts each board's own rows (one substrate at a time,
    never every substrate's entries together); under each board, the paired resolution of each
    two systems next to each other; leaderboard.json
    carries the paired figures under keys named with "paired"."""
    index = page(site, "index.html")
    data = json.loads(page(site, "downloads/leaderboard.json"))
    by_group: dict[str, list[dict[str, Any]]] = {}
    for b in data["boards"]:
        by_group.setdefault(b["group"], []).append(b)
    for group, boards in by_group.items():
        meta = _group(rf'<h2 id="{group}">.*?<p class="eb-board-meta">(.*?)</p>', index, re.S)
        for b in boards:
            ranked = sum(e["status"] == "ranked" for e in b["entries"])
            n = len(b["entries"])
            said = (
                f"{n} system{'s' if n != 1 else ''} on the {b['substrate']} board ({ranked} ranked)"
            )
            assert said in cell_text(meta), (group, b["substrate"])
            pairs = b["paired_resolution"]
            slugs = [e["slug"] for e in b["entries"]]
            assert [(p["first"], p["second"]) for p in pairs] == list(
                zip(slugs, slugs[1:], strict=False)
            )
            for p in pairs:
                for measure in ("swer", "value"):
                    r = p[measure]
                    assert {"paired_mdd", "paired_units", "paired_sd", "paired_method"} <= set(r)
                    assert r["paired_mdd"] is not None or r["paired_note"]  # never silent
    assert "<ul data-eb-resolution>" in index


def test_each_substrate_has_a_pooled_board_page_and_every_board_its_dead_templates(
    site: dict[str, Any],
) -> None:
    """The board pooling packs: one page per substrate with a non-anchor pack, linked from the
    boards index, in leaderboard.json's ``pooled`` section; with one catalogue (the copied
    references hold the clinic's API runs alone) it ranks as that catalogue's board does. Every
    board's dead templates are in leaderboard.json and listed on the methodology page."""
    index = page(site, "index.html")
    data = json.loads(page(site, "downloads/leaderboard.json"))
    by_key = {b["key"]: b for b in data["boards"]}
    (pooled,) = data["pooled"]  # MockMed runs on the web alone, and is an anchor: never pooled
    assert pooled["substrate"] == "api" and pooled["packs"] == {"clinic": "clinic"}
    assert f'<a href="{pooled["page"]}">api</a>' in index
    assert pooled["incomplete"] == []
    clinic = by_key[CLINIC_API]
    ranked = {e["system"]: e for e in clinic["entries"] if e["status"] == "ranked"}
    assert [e["system"] for e in pooled["entries"]] == list(ranked)
    for e in pooled["entries"]:
        mine = ranked[e["system"]]
        assert e["entries"] == {"clinic": mine["slug"]}
        assert (e["rank_best"], e["rank_worst"]) == (mine["rank_best"], mine["rank_worst"])
        assert e["value"]["per_100"] == pytest.approx(mine["value"]["per_100"], abs=1e-6)
    assert pooled["dead_units"] == clinic["dead_units"]
    html = page(site, pooled["page"])
    assert "depend on the family of systems ranked together" in html
    assert "<ul data-eb-resolution>" in html and "regression anchor" in html
    for e in pooled["entries"]:
        assert f'href="../submissions/{e["entries"]["clinic"]}.html"' in html
    methodology = page(site, "methodology.html")
    assert 'id="dead-templates"' in methodology and "effectbench:dead-templates" not in methodology
    for b in [*data["boards"], pooled]:
        dead = b["dead_units"]
        if dead is None or dead["share"] is None:
            continue
        assert dead["share"] == pytest.approx(len(dead["dead"]) / dead["units"], abs=1e-6)
        for name in dead["dead"]:
            assert f"<code>{html_escape(name)}</code>" in methodology
    assert clinic["dead_units"]["dead"]  # the shipped clinic's API board has dead tasks


def test_leaderboard_json_shows_the_bootstrap_beside_the_analytic_intervals(
    site: dict[str, Any],
) -> None:
    """Each board carries, under hierarchical_bootstrap, every entry's value with its analytic
    interval (the entry's own) and the bootstrap's, and each adjacent pair's paired difference
    with both."""
    doc = json.loads((site["out"] / "downloads" / "leaderboard.json").read_text())
    for b in doc["boards"]:
        block = b["hierarchical_bootstrap"]
        assert block["levels"] == ["template", "task", "trial"] and block["seed"] == 53
        slugs = [e["slug"] for e in b["entries"]]
        assert [r["slug"] for r in block["rows"]] == slugs
        assert [(p["first"], p["second"]) for p in block["pairs"]] == list(
            zip(slugs, slugs[1:], strict=False)
        )
        for r, e in zip(block["rows"], b["entries"], strict=True):
            value = e["value"]
            assert r["value"] == pytest.approx(value["per_100"], abs=1e-6)
            assert r["analytic_lo"] == pytest.approx(value["lo"], abs=1e-6)
            assert r["analytic_hi"] == pytest.approx(value["hi"], abs=1e-6)
            if r["bootstrap_lo"] is None:
                assert r["note"].startswith("not estimable")
            else:
                assert r["bootstrap_lo"] <= r["bootstrap_hi"]


def _archive_files(path: Path) -> dict[str, bytes]:
    from effectbench.site._exports import members

    return dict(members(path.read_bytes()))


def test_each_submission_page_links_its_three_exports_and_each_board_its_eee_records(
    site: dict[str, Any], tmp_path: Path
) -> None:
    """Every accepted bundle's page links its EEE, ATIF and Inspect exports (files that are
    there); each validates (EEE against the project's schemas, ATIF under ``atif``, Inspect
    read back by inspect_ai); each board's EEE archive holds every entry's record on it; and
    an export made afresh, outside the build and its cache, has the published bytes."""
    import jsonschema
    from atif import Trajectory
    from inspect_ai.log import read_eval_log

    from effectbench.cli._rank import reports_of
    from effectbench.exports import files_of
    from effectbench.site._entries import entry_from_report
    from effectbench.site._exports import archive, source_of

    out: Path = site["out"]
    eee = ROOT / "tests" / "data" / "eee"
    record_schema, instance_schema = (
        jsonschema.Draft7Validator(json.loads((eee / name).read_text(encoding="utf-8")))
        for name in ("eval.schema.json", "instance_level_eval.schema.json")
    )
    pages = sorted(out.glob("submissions/*.html"))
    assert pages and site["summary"].exports == 3 * len(pages)
    for p in pages:
        html = p.read_text(encoding="utf-8")
        for fmt in ("eee", "atif", "inspect"):
            href = f"downloads/exports/{p.stem}.{fmt}.tar.xz"
            assert f'href="../{href}"' in html, (p.name, fmt)
            assert (out / href).is_file()
        assert "export-not-offered" not in html
    slug = slug_of(site, "_screen-only-clinic")
    rows = jsonl_rows(site["subs"] / slug)
    files = {
        fmt: _archive_files(out / f"downloads/exports/{slug}.{fmt}.tar.xz")
        for fmt in ("eee", "atif", "inspect")
    }
    records = {n: d for n, d in files["eee"].items() if n.endswith(".json")}
    assert records and all(
        not list(record_schema.iter_errors(json.loads(d))) for d in records.values()
    )
    samples = [line for n, d in files["eee"].items() if n.endswith(".jsonl")
               for line in d.decode().splitlines()]  # fmt: skip
    assert len(samples) == len(rows)
    assert all(not list(instance_schema.iter_errors(json.loads(s))) for s in samples)
    assert len(files["atif"]) == len(rows)
    for data in files["atif"].values():
        Trajectory.model_validate_json(data)
    ((name, data),) = files["inspect"].items()
    log_path = tmp_path / Path(name).name
    log_path.write_bytes(data)
    log = read_eval_log(str(log_path))
    assert log.samples is not None and len(log.samples) == len(rows)
    # the board's EEE archive: its entries' records on its substrate, nothing else
    downloads = page(site, "downloads.html")
    board = out / f"downloads/boards/{CLINIC_API}.eee.tar.xz"
    assert f'href="downloads/boards/{CLINIC_API}.eee.tar.xz"' in downloads
    on_board = _archive_files(board)
    clinic = {n for n in on_board if n.endswith(".json")}
    assert clinic == {f"{name}.api.json" for name in REFERENCE_BOARD_KEYS[CLINIC_API]}
    assert {n: d for n, d in on_board.items() if n.startswith(slug)} == files["eee"]
    # made afresh, outside the build and its cache: the same bytes
    (report,) = reports_of([site["subs"] / slug], True, True, False, records=RECORDS)
    fresh = source_of(entry_from_report(report, slug))
    for fmt in ("eee", "inspect"):
        published = (out / f"downloads/exports/{slug}.{fmt}.tar.xz").read_bytes()
        assert archive(files_of(fresh, fmt)) == published


def test_a_format_whose_package_is_missing_is_said_not_offered() -> None:
    """Without ``atif`` the ATIF export is not offered, and the downloads page says why (the
    submission pages render the same lines); every other format still is."""
    from effectbench.site._downloads import Tables
    from effectbench.site._exports import Exports, not_offered
    from effectbench.site._pages import downloads_page

    def find(module: str) -> object | None:
        return None if module == "atif" else object()

    missing = not_offered(find)
    assert missing == {
        "atif": "not offered by this build: the export extra (atif) is not installed"
    }
    assert not_offered(lambda module: object()) == {}
    out = Exports(missing=missing)
    assert out.not_offered_text == [
        "ATIF trajectories: not offered by this build: the export extra (atif) is not installed"
    ]
    body = downloads_page(ROOT / "site" / "templates", Tables(), out).body
    assert 'data-eb="export-not-offered">ATIF trajectories: not offered' in body
    assert (
        "export-not-offered"
        not in downloads_page(ROOT / "site" / "templates", Tables(), Exports()).body
    )
