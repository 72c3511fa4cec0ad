"""The site's exports: each accepted bundle as EEE records, ATIF trajectories and an Inspect
log, and each board's entries as EEE records (:mod:`effectbench.exports`, docs/exports.md).

Each export is one ``.tar.xz`` archive (an ATIF export is a file per episode, and their text
repeats: xz over the whole archive takes about a tenth of what a zip of the files does):

* ``downloads/exports/<slug>.<format>.tar.xz``: one bundle's export, linked from its page;
* ``downloads/boards/<board>.eee.tar.xz``: the EEE records of every entry of one board (one
  pack, split and substrate), listed on the downloads page.

The archives are deterministic (members sorted, no time, owner or mode of the machine; the
export's own bytes are: every date from the bundle, every handle a published one,
:mod:`effectbench.exports.handles`), so two builds publish the same bytes. Each bundle's are
kept between local builds (:mod:`effectbench.site._kept`) under its report and the installed
versions of the packages that write them. A format whose package is not installed is not
offered: the page says so, and so does the build's summary.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import io
import lzma
import tarfile
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from functools import partial

from effectbench.exports import FORMATS, files_of
from effectbench.exports.source import BundleSource, Verified, read_source
from effectbench.site._entries import Entry
from effectbench.site._kept import Kept
from effectbench.site._tables import Board

EXPORTS_FOLDER = "downloads/exports"
BOARDS_FOLDER = "downloads/boards"
SUFFIX = ".tar.xz"
XZ_PRESET = 3
"""xz's preset: within a sixth of its best on an export, at a fifth of preset 6's time."""
LABELS = {
    "eee": "Every Eval Ever records",
    "atif": "ATIF trajectories",
    "inspect": "Inspect log",
}
NEEDS = {"atif": ("export", "atif"), "inspect": ("inspect", "inspect_ai")}
"""Format -> (the extra, the module) a format's writer needs beyond the core."""
DISTRIBUTIONS = ("atif", "inspect_ai")
"""Distributions whose version is part of a kept export's key (they write its bytes)."""


def not_offered(find: Callable[[str], object] = importlib.util.find_spec) -> dict[str, str]:
    """Return each format this installation cannot write, with why (one line each)."""
    return {
        fmt: f"not offered by this build: the {extra} extra ({module}) is not installed"
        for fmt, (extra, module) in NEEDS.items()
        if find(module) is None
    }


def archive(files: Iterable[tuple[str, bytes]]) -> bytes:
    """Return ``files`` (relative path, bytes) as a deterministic ``.tar.xz``: members sorted
    by name, time 0, owner root, mode 0644."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in sorted(files):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            info.mtime = 0
            tar.addfile(info, io.BytesIO(data))
    return lzma.compress(raw.getvalue(), format=lzma.FORMAT_XZ, preset=XZ_PRESET)


def members(data: bytes) -> list[tuple[str, bytes]]:
    """Return the files of an archive made by :func:`archive`, in order."""
    out = []
    with tarfile.open(fileobj=io.BytesIO(lzma.decompress(data)), mode="r:") as tar:
        for info in tar.getmembers():
            handle = tar.extractfile(info)
            if handle is not None:
                out.append((info.name, handle.read()))
    return out


def source_of(entry: Entry) -> BundleSource:
    """Return an accepted entry's bundle read for export, with the verifier's verdict."""
    assert entry.results is not None and entry.tasks is not None  # accepted: counted
    signer = entry.signer
    verified = Verified(
        entry.status,
        f"{signer.identity} ({signer.issuer})" if signer is not None else None,
        entry.reproduced,
        entry.content_hash or None,
    )
    return read_source(entry.path, entry.results, entry.tasks, verified)


def export_href(slug: str, fmt: str) -> str:
    """The site path of a bundle's export."""
    return f"{EXPORTS_FOLDER}/{slug}.{fmt}{SUFFIX}"


def board_href(board: Board) -> str:
    """The site path of a board's EEE records."""
    return f"{BOARDS_FOLDER}/{board.key}.eee{SUFFIX}"


@dataclass
class Exports:
    """What the build publishes of the exports, and what the pages say of them."""

    files: dict[str, bytes] = field(default_factory=dict)
    """Site path -> archive."""
    links: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    """Slug -> (label, site path) of each export offered, in :data:`FORMATS` order."""
    missing: dict[str, str] = field(default_factory=dict)
    """Format -> why it is not offered (the same for every bundle)."""
    eee: dict[str, list[tuple[str, bytes]]] = field(default_factory=dict)
    """Slug -> its EEE files (what the board archives are made of)."""
    boards: list[tuple[str, str, int]] = field(default_factory=list)
    """(board title, site path, entries) of each board's EEE archive."""

    @property
    def not_offered_text(self) -> list[str]:
        """One line per format not offered (what a page says)."""
        return [f"{LABELS[fmt]}: {why}" for fmt, why in self.missing.items()]


def _versions() -> list[str]:
    out = []
    for name in DISTRIBUTIONS:
        try:
            out.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            out.append(f"{name} absent")
    return out


def bundle_exports(
    entries: Sequence[Entry],
    kept: Kept,
    key_of: Callable[[Entry], str],
    guard: Callable[[Entry], AbstractContextManager[None]],
    missing: dict[str, str] | None = None,
) -> Exports:
    """Export every accepted bundle of ``entries`` in every format this installation writes
    (``missing``: the formats it does not, :func:`not_offered` by default).

    ``key_of`` gives the digest of an entry's report (its archives are kept under it, its
    slug, the format and the versions of :data:`DISTRIBUTIONS`); ``guard(entry)`` is a
    context manager an error of one bundle is raised through (the build withholds it).
    """
    out = Exports(missing=not_offered() if missing is None else missing)
    offered = [f for f in FORMATS if f not in out.missing]
    versions = _versions()
    for e in entries:
        if not e.accepted or e.tasks is None or e.kind != "bundle":
            continue
        with guard(e):
            read: list[BundleSource] = []  # read once, only when an export is not kept

            def make(fmt: str, e: Entry = e, read: list[BundleSource] = read) -> bytes:
                if not read:
                    read.append(source_of(e))
                return archive(files_of(read[0], fmt))

            links = []
            for fmt in offered:
                key = kept.key((key_of(e), e.slug, fmt, *versions))
                data = kept.get_or_make(key, partial(make, fmt))
                path = export_href(e.slug, fmt)
                out.files[path] = data
                links.append((LABELS[fmt], path))
                if fmt == "eee":
                    out.eee[e.slug] = members(data)
            out.links[e.slug] = links
    return out


def board_exports(out: Exports, boards: Sequence[Board], entries: dict[str, Entry]) -> None:
    """Add each board's EEE archive to ``out``: the records, on the board's substrate, of every
    entry on it that was exported."""
    if "eee" in out.missing:
        return
    for board in boards:
        files = []
        shown = 0
        for slug in sorted({str(s) for s in board.frame["slug"]} & set(out.eee)):
            stem = f"{entries[slug].path.name}.{board.substrate}."
            mine = [(name, data) for name, data in out.eee[slug] if name.startswith(stem)]
            files += mine
            shown += bool(mine)
        if files:
            path = board_href(board)
            out.files[path] = archive(files)
            out.boards.append((board.title, path, shown))


__all__ = [
    "BOARDS_FOLDER",
    "EXPORTS_FOLDER",
    "LABELS",
    "Exports",
    "archive",
    "board_exports",
    "board_href",
    "bundle_exports",
    "export_href",
    "members",
    "not_offered",
    "source_of",
]
