"""What a build makes of one submission alone, kept between local builds.

Kept are: a submission page's body
(:func:`effectbench.site._pages.submission_body`), the end of its entry in
``leaderboard.json`` on each board (its rates, :func:`effectbench.site._json.entry_tail`), its
cells for ``cells.parquet`` on each board (:class:`effectbench.site._tables.KeptCells`) and its
board row's counts (:class:`effectbench.site._tables.KeptCounts`). Each depends on the
bundle, its verifier report and the code that makes it; what moves when another submission
joins (a page's place on the boards, an entry's rank and net value) is made afresh on every
build. A build keeps each part in the cache folder under a key that hashes everything it was
made from (:func:`page_code` and the caller's parts: the report, the slug, and so on), sealed
by this machine's key like every other cache entry (:mod:`effectbench.site._cache`): a planted
or damaged file is never published. At 10,000 submissions rendering every body again took
about 80 s of a rebuild.
"""

from __future__ import annotations

import hashlib
import platform
from collections.abc import Callable, Iterable
from pathlib import Path

import effectbench
from effectbench.site._cache import CacheSeal, add_versions

KEPT_FORMAT = "site-kept-1"
"""Version of the kept parts (bump when what a key covers changes)."""
RENDER_DEPENDENCIES = ("jinja2", "markupsafe", "numpy", "pandas", "scipy")
"""Installed packages whose version is part of every body's key (templates and numbers)."""


def page_code(templates: Path) -> str:
    """Return the digest of everything that makes a kept part besides its inputs: the
    engine's every Python file (the site's code and the metrics it calls), the templates,
    and the versions of Python and of the libraries they lean on. Computed once per build."""
    digest = hashlib.sha256(f"{KEPT_FORMAT}\0python {platform.python_version()}\0".encode())
    add_versions(digest, RENDER_DEPENDENCIES)
    package = Path(next(iter(effectbench.__path__))).resolve()
    for name, base, suffixes in (
        ("effectbench", package, (".py", ".json")),
        ("templates", templates.resolve(), (".j2",)),
    ):
        for f in sorted(base.rglob("*")):
            if f.suffix in suffixes and f.is_file():
                digest.update(f"{name}/{f.relative_to(base)}".encode() + b"\0" + f.read_bytes())
    return digest.hexdigest()


class Kept:
    """The kept parts of one kind (``suffix``) in ``folder`` (None: keep none), one sealed
    file each.

    :meth:`key` names a part by what it was made from; :meth:`get_or_make` returns the part
    this machine stored under that key, or makes and stores it. A folder that cannot be
    written (read-only, full) stops the keeping for the build, with :attr:`problem` saying
    why once; the build goes on making every part.
    """

    def __init__(self, folder: Path | None, seal: CacheSeal, code: str, suffix: str) -> None:
        self.folder = folder
        self.seal = seal
        self.code = code
        self.suffix = suffix
        self.problem = ""
        self.hits = 0
        self.made = 0
        self._used: set[str] = set()

    def key(self, parts: Iterable[str]) -> str:
        """Return the key of a part made from ``parts`` under this build's code."""
        digest = hashlib.sha256(f"{self.code}\0{self.suffix}".encode())
        for part in parts:
            digest.update(b"\0" + hashlib.sha256(part.encode()).digest())
        return digest.hexdigest()

    def _path(self, key: str) -> Path:
        assert self.folder is not None
        return self.folder / key[:2] / f"{key}.{self.suffix}"

    def get(self, key: str) -> bytes | None:
        """Return the part kept under ``key``, or None (none kept, or not sealed here)."""
        if self.folder is None:
            return None
        data = self.seal.read(key, self._path(key))
        if data is not None:
            self.hits += 1
            self._used.add(key)
        return data

    def get_or_make(self, key: str, make: Callable[[], bytes]) -> bytes:
        """Return the part kept under ``key``, or make it with ``make`` and keep it."""
        data = self.get(key)
        if data is None:
            data = make()
            self.put(key, data)
        return data

    def put(self, key: str, data: bytes) -> None:
        """Keep ``data`` under ``key`` (nothing when keeping stopped)."""
        self.made += 1
        if self.folder is None or self.problem:
            return
        try:
            self.seal.write(key, self._path(key), data)
            self._used.add(key)
        except OSError as exc:
            self.problem = (
                f"cannot keep what a build makes of each submission in {self.folder}: "
                f"{exc.strerror or exc}; it is made again on each build"
            )

    def prune(self) -> int:
        """Remove the parts of this kind that this build neither read nor kept (those of
        earlier code, of gone submissions, of other places on the boards), so the folder holds
        one build's parts; return how many were removed. Nothing is removed when keeping
        stopped; a file that cannot be removed stays."""
        if self.folder is None or self.problem or not self.folder.is_dir():
            return 0
        removed = 0
        suffix = f".{self.suffix}"
        for sub in self.folder.iterdir():
            if not sub.is_dir() or sub.is_symlink():
                continue
            for f in sub.iterdir():
                if f.name.endswith(suffix) and f.name[: -len(suffix)] not in self._used:
                    try:
                        f.unlink()
                        removed += 1
                    except OSError:
                        continue
        return removed
