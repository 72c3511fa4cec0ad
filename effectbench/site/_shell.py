"""Submission pages written beside mkdocs, into one frame it renders (the shell).

Every submission page sits in the same frame: the theme's header, tabs, footer and table of
contents (the same headings on each), around the page's own title and body; the pages share
a folder, so every relative link in the frame is the same too. mkdocs therefore renders the
frame once, as a stand-in page whose title and body are slots (:func:`shell_page`), and
:func:`write_shelled` writes each submission page as that frame with its title and body put
in, then drops the stand-in. Rendering every submission page through mkdocs took about 5 ms
a page (50 s of a build at 10,000 submissions); the frame costs the same once.

A test holds pages written this way to the pages mkdocs writes for the same
:class:`~effectbench.site._mkdocs.GeneratedPage`, byte for byte.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from markupsafe import escape

from effectbench.errors import SiteBuildError
from effectbench.site._mkdocs import H1_ID, GeneratedPage, compact_html

SHELL_SLUG = "shell"
"""The stand-in's page name: no submission's (each starts with a date or ``refused-``)."""
SHELL_URI = f"submissions/{SHELL_SLUG}.md"
TITLE_SLOT = "EffectBenchShellTitle"
"""The stand-in's title: letters only, so the theme prints it as it is wherever it goes."""
BODY_SLOT = "<!--effectbench-shell-body-->"


def shell_page(headings: tuple[tuple[str, str], ...], hide: tuple[str, ...]) -> GeneratedPage:
    """Return the stand-in page mkdocs renders the frame from (out of the search index, as
    every submission page)."""
    return GeneratedPage(TITLE_SLOT, BODY_SLOT, headings, search=False, hide=hide)


@dataclass(frozen=True)
class Shell:
    """The frame, cut at the stand-in's heading and body: ``head`` runs up to the heading,
    ``between`` from it to the body, ``tail`` after the body. The title slot may stand in
    ``head`` and ``tail`` (the window title, the header, the table of contents)."""

    head: str
    between: str
    tail: str

    @classmethod
    def cut(cls, html: str) -> Shell:
        """Return the frame of the stand-in page mkdocs wrote (``html``)."""
        heading = f'<h1 id="{H1_ID}">{TITLE_SLOT}</h1>'
        if html.count(heading) != 1 or html.count(BODY_SLOT) != 1:
            raise SiteBuildError("the theme did not render the submission pages' frame once")
        head, rest = html.split(heading)
        between, tail = rest.split(BODY_SLOT)
        if TITLE_SLOT in between:
            raise SiteBuildError("the theme put a page's title between its heading and body")
        return cls(head, between, tail)

    def page(self, slug: str, page: GeneratedPage) -> str:
        """Return submission ``slug``'s page: the frame with its title and body put in."""
        title = page.safe_title
        own = f"submissions/{slug}.html"
        head = self.head.replace(TITLE_SLOT, title).replace(SHELL_HTML, own)
        tail = self.tail.replace(TITLE_SLOT, title).replace(SHELL_HTML, own)
        heading = f'<h1 id="{H1_ID}">{escape(page.title)}</h1>'
        return head + heading + compact_html(self.between + page.body + tail)


SHELL_HTML = f"submissions/{SHELL_SLUG}.html"
SITEMAP_URL = re.compile(r"<url>\s*<loc>([^<]*)</loc>.*?</url>", re.S)


def write_shelled(site: Path, pages: Mapping[str, GeneratedPage], epoch: int) -> None:
    """Write every page of ``pages`` (slug -> page) into the built ``site`` from the frame
    mkdocs rendered for :func:`shell_page`, drop the stand-in, and list the pages in the
    sitemap where it listed the stand-in (``epoch``: the build's timestamp, as mkdocs
    stamps the sitemap's gzip copy)."""
    for where, html in shelled_pages(site, pages):
        (site / where).write_text(html, encoding="utf-8")
    list_in_sitemap(site, list(pages), epoch)


def shelled_pages(site: Path, pages: Mapping[str, GeneratedPage]) -> Iterator[tuple[str, str]]:
    """Drop the stand-in mkdocs rendered into ``site`` and yield each page of ``pages``
    (site path, HTML) in its frame, one at a time (a build hands them to
    :func:`effectbench.site._publish.publish_files`)."""
    stand_in = site / SHELL_HTML
    try:
        shell = Shell.cut(stand_in.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SiteBuildError("mkdocs wrote no frame for the submission pages") from None
    stand_in.unlink()
    for slug, page in pages.items():
        yield f"submissions/{slug}.html", shell.page(slug, page)


def list_in_sitemap(site: Path, slugs: list[str], epoch: int) -> None:
    """List ``slugs``' pages in ``sitemap.xml`` (and its gzip copy) in place of the
    stand-in's entry; a sitemap without one (no ``site_url``: mkdocs lists no page) is left
    as it is."""
    path = site / "sitemap.xml"
    if not path.is_file():
        return
    text = path.read_text(encoding="utf-8")
    entry = next((m for m in SITEMAP_URL.finditer(text) if m[1].endswith(SHELL_HTML)), None)
    if entry is None:
        return
    block = entry[0]
    before = text[: entry.start()]
    between = before[len(before.rstrip()) :]  # what separates two entries (theme's layout)
    own = between.join(block.replace(SHELL_HTML, f"submissions/{slug}.html") for slug in slugs)
    text = text[: entry.start()] + own + text[entry.end() :]
    data = text.encode("utf-8")
    path.write_bytes(data)
    with open(site / "sitemap.xml.gz", "wb") as fh:
        with gzip.GzipFile(fileobj=fh, filename="sitemap.xml.gz", mode="wb", mtime=epoch) as gz:
            gz.write(data)
