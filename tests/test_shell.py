"""Submission pages written into the frame mkdocs renders once (effectbench.site._shell) are
the pages mkdocs writes for the same GeneratedPage, byte for byte: titles that need care,
bodies with blocks whose white space counts, with and without ``site_url`` (the sitemap)."""

from __future__ import annotations

from pathlib import Path

import pytest

from effectbench.errors import SiteBuildError
from effectbench.site._mkdocs import GeneratedPage, SitePages, load_site_config, run_mkdocs
from effectbench.site._pages import SUBMISSION_HEADINGS
from effectbench.site._shell import SHELL_URI, Shell, shell_page, write_shelled

ROOT = Path(__file__).resolve().parents[1]
EPOCH = 1_764_892_800  # 2025-12-05 00:00 UTC
NAV = ("index", "charts", "compare", "substrates", "packs", "monitors", "downloads", "refused")
HIDE = ("navigation",)
TITLES = {
    "2026-12-01_plain": "plain agent",
    "2026-12-01_spaces": "  two  spaces\tand a tab  ",
    "2026-12-01_markup": "<script>alert(1)</script> & \"quotes\" 'n' `ticks`",
    "2026-12-01_unicode": "Ägent 日本語 — ✓",
    "2026-12-01_empty": "<>",
    "2026-12-01_slot": "EffectBenchShellTitle <!--effectbench-shell-body-->",
}
BODIES = (
    '<p class="eb-lede">lead</p>\n<h2 id="headline">Headline numbers</h2>\n<table>\n'
    "    <tr><td>1</td></tr>\n  </table>",
    "\n\n   <p>starts and ends with white space</p>\n  \n",
    "<pre>  kept\n      as   written\n</pre>\n  <p>after</p>\n<textarea>\n  a\n</textarea>",
    "<p>holds the slots: EffectBenchShellTitle <!--effectbench-shell-body--></p>",
)


def _cases() -> dict[str, GeneratedPage]:
    return {
        slug: GeneratedPage(
            title, BODIES[i % len(BODIES)], SUBMISSION_HEADINGS, search=False, hide=HIDE
        )
        for i, (slug, title) in enumerate(TITLES.items())
    }


def _build(out: Path, pages: dict[str, GeneratedPage], site_url: str) -> None:
    every = {f"{name}.md": GeneratedPage(name.title(), f"<p>{name}</p>") for name in NAV}
    every.update(pages)
    cfg = load_site_config(ROOT / "mkdocs.yml", out, {"build_date": "2025-12-05"})
    if site_url:
        cfg["site_url"] = site_url
    run_mkdocs(cfg, SitePages(every, texts={"spec.md": "# SPEC\n"}), EPOCH)


def _files(site: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(site)): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()
    }


@pytest.mark.parametrize("site_url", ["", "https://board.example.org/effectbench/"])
def test_shelled_pages_are_the_pages_mkdocs_writes(tmp_path: Path, site_url: str) -> None:
    cases = _cases()
    by_mkdocs, shelled = tmp_path / "mkdocs", tmp_path / "shelled"
    _build(by_mkdocs, {f"submissions/{slug}.md": page for slug, page in cases.items()}, site_url)
    _build(shelled, {SHELL_URI: shell_page(SUBMISSION_HEADINGS, HIDE)}, site_url)
    assert (shelled / "submissions" / "shell.html").is_file()
    write_shelled(shelled, cases, EPOCH)

    expected, got = _files(by_mkdocs), _files(shelled)
    assert sorted(got) == sorted(expected)  # the stand-in is gone, every page is there
    for name, data in expected.items():
        assert got[name] == data, name
    sitemap = got["sitemap.xml"].decode()
    for slug in cases:
        page = got[f"submissions/{slug}.html"].decode()
        assert "EffectBenchShellTitle</h1>" not in page or slug == "2026-12-01_slot"
        if site_url:
            assert f"<loc>{site_url}submissions/{slug}.html</loc>" in sitemap
            assert f'<link rel="canonical" href="{site_url}submissions/{slug}.html">' in page
    assert "shell.html" not in sitemap


def test_a_frame_without_its_slots_is_refused() -> None:
    with pytest.raises(SiteBuildError, match="frame"):
        Shell.cut("<html><body><p>a theme that dropped the page's heading</p></body></html>")
    heading = '<h1 id="title">EffectBenchShellTitle</h1>'
    with pytest.raises(SiteBuildError, match="frame"):
        Shell.cut(f"{heading}<!--effectbench-shell-body--><!--effectbench-shell-body-->")


def test_no_frame_is_a_build_error(tmp_path: Path) -> None:
    (tmp_path / "submissions").mkdir()
    with pytest.raises(SiteBuildError, match="no frame"):
        write_shelled(tmp_path, _cases(), EPOCH)
