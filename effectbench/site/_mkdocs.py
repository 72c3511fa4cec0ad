"""Run mkdocs in-process with the generated pages injected as a plugin object.

Generated pages reach mkdocs as tiny markdown files (front matter, a title and
one marker comment); :class:`SitePages` swaps the marker for the HTML that the
jinja2 templates rendered, and sets the page's table of contents from the
headings it was given. Python-Markdown therefore never parses the big tables
(it dominated the build time), and everything a submitter wrote stays exactly
as the autoescaping templates escaped it.
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Collection, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import yaml
from markupsafe import escape
from mkdocs.commands.build import build as mkdocs_build
from mkdocs.config import load_config
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import Abort, MkDocsException
from mkdocs.plugins import BasePlugin, CombinedEvent, event_priority
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page
from mkdocs.structure.toc import AnchorLink, TableOfContents

from effectbench.environment import variable
from effectbench.errors import SiteBuildError

MARKER = "<!--effectbench-page-->"
H1_ID = "title"
UNSAFE_TITLE = re.compile(r"[<>&\"'`\x00-\x1f]")
log = logging.getLogger("mkdocs.plugins.effectbench")


@dataclass(frozen=True)
class GeneratedPage:
    """A page whose body is pre-rendered HTML."""

    title: str
    body: str
    headings: tuple[tuple[str, str], ...] = ()
    """``(anchor id, text)`` of the page's second-level headings, for the TOC."""
    search: bool = True
    """Whether the page goes into the search index."""
    search_lead: str | None = None
    """When set, the search index holds only the page's title and this HTML (its lead), not
    the body: the page is found by its title, and the theme's search indexer never parses
    the big tables (it costs tens of milliseconds a page)."""
    hide: tuple[str, ...] = ()
    """Material sidebars to hide (``navigation``, ``toc``) to give wide tables room."""

    @property
    def safe_title(self) -> str:
        """Return the title with markup characters removed.

        Material prints ``page.title`` unescaped (and ``striptags`` unescapes
        entities), so the title mkdocs sees must hold no markup at all; the
        page's own ``<h1>`` shows the exact, escaped text.
        """
        return UNSAFE_TITLE.sub("", self.title).strip() or "Untitled"

    def markdown(self) -> str:
        """Return the stand-in markdown mkdocs reads for this page."""
        front: dict[str, object] = {"title": self.safe_title}
        if not self.search:
            front["search"] = {"exclude": True}
        if self.hide:
            front["hide"] = list(self.hide)
        header: str = yaml.safe_dump(front, allow_unicode=True)
        return "---\n" + header + "---\n\n" + MARKER + "\n"


class SitePages(BasePlugin):  # type: ignore[type-arg,no-untyped-call]
    """The mkdocs plugin that adds the generated pages and files of one build.

    ``pages`` are pre-rendered pages by source path (``index.md``,
    ``submissions/x.md``); ``texts`` are in-memory files mkdocs should convert (markdown);
    ``published`` are the paths of the files the build writes itself once mkdocs has run
    (:mod:`effectbench.site._publish`): a hand-written file of such a path is left out.
    ``compiled`` keeps the theme's compiled templates between builds
    (:mod:`effectbench.site._compiled`).
    """

    def __init__(
        self,
        pages: Mapping[str, GeneratedPage],
        texts: Mapping[str, str | bytes] | None = None,
        published: Collection[str] = (),
        compiled: jinja2.BytecodeCache | None = None,
    ) -> None:
        super().__init__()
        self.pages = pages
        self.texts = texts or {}
        self.published = published
        self.compiled = compiled
        self._bodies: dict[str, str] = {}

    def on_env(
        self, env: jinja2.Environment, *, config: MkDocsConfig, files: Files
    ) -> jinja2.Environment:
        """Load the theme's templates through the kept compiled code (before any is loaded)."""
        env.bytecode_cache = self.compiled
        return env

    def on_files(self, files: Files, *, config: MkDocsConfig) -> Files:
        """Add every generated page and file, replacing a hand-written file of the same path;
        leave out the theme's files the site never loads (:func:`unused_theme_file`)."""
        from mkdocs.structure.files import File

        languages = search_languages(config)
        for file in [f for f in files if unused_theme_file(f.src_uri, languages)]:
            files.remove(file)
        ours = {*self.pages, *self.texts, *self.published}
        for file in [f for f in files if f.src_uri in ours]:
            files.remove(file)
        for uri, page in self.pages.items():
            files.append(File.generated(config, uri, content=page.markdown()))
        for uri, content in self.texts.items():
            files.append(File.generated(config, uri, content=content))
        return files

    @event_priority(100)  # before the search plugin indexes the page
    def _index_the_lead_only(
        self, context: dict[str, Any], *, page: Page, config: MkDocsConfig, nav: Any
    ) -> dict[str, Any]:
        generated = self.pages.get(page.file.src_uri)
        if generated is not None and generated.search_lead is not None and page.content:
            self._bodies[page.file.src_uri] = page.content
            heading = f'<h1 id="{H1_ID}">{escape(generated.title)}</h1>\n'
            page.content = heading + generated.search_lead
        return context

    @event_priority(-100)  # after it: the page is rendered with its whole body
    def _restore_the_body(
        self, context: dict[str, Any], *, page: Page, config: MkDocsConfig, nav: Any
    ) -> dict[str, Any]:
        body = self._bodies.pop(page.file.src_uri, None)
        if body is not None:
            page.content = body
        return context

    on_page_context = CombinedEvent(_index_the_lead_only, _restore_the_body)

    def on_post_page(self, output: str, *, page: Page, config: MkDocsConfig) -> str:
        """Return the page without the theme's indentation (:func:`compact_html`)."""
        return compact_html(output)

    def on_post_template(
        self, output_content: str, *, template_name: str, config: MkDocsConfig
    ) -> str:
        """Return a theme page (404) without its indentation too."""
        return compact_html(output_content) if template_name.endswith(".html") else output_content

    def on_post_build(self, *, config: MkDocsConfig) -> None:
        """Drop the theme's pointers to the source maps it no longer ships."""
        site = Path(config.site_dir)
        for folder in THEME_CODE:
            for path in sorted((site / folder).rglob("*")):
                if path.suffix in (".js", ".css") and path.is_file():
                    data = path.read_bytes()
                    kept = SOURCE_MAP.sub(b"", data)
                    if kept != data:
                        path.write_bytes(kept)

    def on_page_content(self, html: str, *, page: Page, config: MkDocsConfig, files: Files) -> str:
        """Put the pre-rendered body in place of the marker and set the TOC."""
        generated = self.pages.get(page.file.src_uri)
        if generated is None:
            return html
        if MARKER not in html:
            raise SiteBuildError(f"generated page {page.file.src_uri} lost its marker")
        top = AnchorLink(generated.safe_title, "", 1)
        top.children = [AnchorLink(text, anchor, 2) for anchor, text in generated.headings]
        page.toc = TableOfContents([top])
        heading = f'<h1 id="{H1_ID}">{escape(generated.title)}</h1>\n'
        return html.replace(MARKER, heading + generated.body, 1)


KEPT_AS_WRITTEN = re.compile(r"(<(pre|textarea)\b.*?</\2\s*>)|\n[ \t\r\n]+", re.S | re.I)
"""A block whose white space is its content, or a line break with the indentation after it."""
HOLDS_KEPT = re.compile(r"<(?:pre|textarea)\b", re.I)
"""Where a page may hold a block :data:`KEPT_AS_WRITTEN` keeps."""
LINE_BREAK_RUN = re.compile(r"\n[ \t\r\n]+")
"""A line break with the indentation (and blank lines) after it."""


def compact_html(html: str) -> str:
    """Return ``html`` with every line break's following indentation and blank lines removed.

    A run of white space that holds a line break renders as one space wherever white space
    collapses, so it becomes one line break; ``pre`` and ``textarea`` blocks, where white
    space is content, are kept as written. (A third of a themed page was indentation.) A page
    without such a block (every submission page) takes a plain replacement, with no Python
    call per line break.
    """
    if HOLDS_KEPT.search(html) is None:
        return LINE_BREAK_RUN.sub("\n", html)
    return KEPT_AS_WRITTEN.sub(lambda m: m.group(1) or "\n", html)


THEME_CODE = ("assets/javascripts", "assets/stylesheets")
"""Where the theme's scripts and style sheets are copied."""
SOURCE_MAP = re.compile(rb"\n?(?://# sourceMappingURL=[^\n]*|/\*# sourceMappingURL=[^*]*\*/)\s*\Z")
"""A script's or style sheet's last line naming its source map."""
LUNR = "assets/javascripts/lunr/"
"""Where the theme keeps its search-language files (the search worker loads them by name)."""


def search_languages(config: MkDocsConfig) -> tuple[str, ...]:
    """Return the languages the theme's search indexes (its ``lang``; the site's language
    when unset)."""
    search = config.plugins.get("material/search") or config.plugins.get("search")
    lang = getattr(getattr(search, "config", None), "lang", None) if search else None
    if not lang:
        lang = [str(config.theme.get("language") or "en")]
    return tuple(str(x) for x in lang)


def search_language_files(languages: tuple[str, ...]) -> frozenset[str]:
    """Return the files under :data:`LUNR` the search worker loads for ``languages``.

    English needs none; every other language its stemmer (and the shared support), several
    languages ``lunr.multi``, Japanese its segmenter, Hindi and Thai theirs.
    """
    needed: set[str] = set()
    for lang in languages:
        if lang == "ja":
            needed.add("tinyseg.js")
        if lang in ("hi", "th"):
            needed.add("wordcut.js")
        if lang != "en":
            needed.add(f"min/lunr.{lang}.min.js")
    if len(languages) > 1:
        needed.add("min/lunr.multi.min.js")
    if needed:
        needed.add("min/lunr.stemmer.support.min.js")
    return frozenset(needed)


def unused_theme_file(uri: str, languages: tuple[str, ...]) -> bool:
    """Whether the site never loads ``uri``: a source map, or a search-language file of a
    language the search does not index."""
    if uri.endswith(".map"):
        return True
    return uri.startswith(LUNR) and uri.removeprefix(LUNR) not in search_language_files(languages)


def _source_date(epoch: int) -> AbstractContextManager[None]:
    # mkdocs stamps sitemap.xml(.gz) with SOURCE_DATE_EPOCH when set: pin it to the
    # build date so two builds on one day are byte-identical.
    return variable("SOURCE_DATE_EPOCH", str(epoch))


def load_site_config(
    config_file: Path, site_dir: Path, extra: Mapping[str, Any] | None = None
) -> MkDocsConfig:
    """Load ``mkdocs.yml`` with the build's output folder (strict mode always on)."""
    try:
        text = config_file.read_text(encoding="utf-8")
    except OSError as exc:
        raise SiteBuildError(f"{config_file}: cannot read the site configuration: {exc}") from None
    try:
        cfg = load_config(
            io.StringIO(text),
            config_file_path=str(config_file),
            site_dir=str(site_dir),
            strict=True,
        )
    except (Abort, MkDocsException) as exc:
        raise SiteBuildError(f"{config_file}: {exc}") from None
    for key, value in (extra or {}).items():
        cfg.extra[key] = value
    return cfg


def run_mkdocs(cfg: MkDocsConfig, plugin: SitePages, epoch: int) -> None:
    """Build the site described by ``cfg`` with ``plugin`` injected; raise SiteBuildError."""
    cfg.plugins["effectbench"] = plugin
    with _source_date(epoch):
        try:
            cfg.plugins.on_startup(command="build", dirty=False)
            try:
                mkdocs_build(cfg)
            finally:
                cfg.plugins.on_shutdown()
        except Abort as exc:
            # Abort is a SystemExit: left alone it would end the process silently.
            raise SiteBuildError(f"mkdocs refused to build the site: {exc}") from None
        except MkDocsException as exc:
            raise SiteBuildError(f"mkdocs failed: {exc}") from None
