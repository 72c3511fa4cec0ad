"""Submission page bodies kept between local builds.

A submission page's body (:func:`effectbench.site._pages.submission_body`) depends on its
bundle, its verifier report and the code that renders it; only its place on the boards
changes when another submission joins, and that is filled into slots on every build. So a
build keeps each body in the cache folder under a key that hashes everything it was made
from (:func:`page_code`, the report, the slug, the rows' outcomes, the downloads, the
badge, the trust note, the first board and its prices), sealed by this machine's key like
every other cache entry (:mod:`effectbench.site._cache`): a planted or damaged file is
never published. At 10,000 submissions rendering every body again took about 80 s of a
rebuild.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import effectbench
from effectbench.site._cache import CacheSeal

KEPT_FORMAT = "site-page-body-1"
"""Version of the kept bodies (bump when what a key covers changes)."""
RENDER_DEPENDENCIES = ("jinja2", "markupsafe", "numpy", "pandas", "scipy")
"""Installed packages whose version is part of every body's key (templates and numbers)."""


def page_code(templates: Path) -> str:
    """Return the digest of everything that renders a body besides its inputs: the
    engine's every Python file (the site's code and the metrics it calls), the templates,
    and the versions of the libraries they lean on. Computed once per build."""
    digest = hashlib.sha256(f"{KEPT_FORMAT}\0".encode())
    for dist in RENDER_DEPENDENCIES:
        try:
            digest.update(f"{dist} {version(dist)}\0".encode())
        except PackageNotFoundError:
            digest.update(f"{dist} absent\0".encode())
    package = Path(next(iter(effectbench.__path__))).resolve()
    for name, base, suffixes in (
        ("effectbench", package, (".py", ".json")),
        ("templates", templates.resolve(), (".j2",)),
    ):
        for f in sorted(base.rglob("*")):
            if f.suffix in suffixes and f.is_file():
                digest.update(f"{name}/{f.relative_to(base)}".encode() + b"\0" + f.read_bytes())
    return digest.hexdigest()


class KeptBodies:
    """The kept bodies in ``folder`` (None: keep none), one sealed file each.

    :meth:`key` names a body by what it was made from; :meth:`get` returns it when this
    machine stored it under that key; :meth:`put` stores one. A folder that cannot be
    written (read-only, full) stops the keeping for the build, with :attr:`problem` saying
    why once; the build goes on rendering every body.
    """

    def __init__(self, folder: Path | None, seal: CacheSeal, code: str) -> None:
        self.folder = folder
        self.seal = seal
        self.code = code
        self.problem = ""
        self.hits = 0
        self.made = 0

    def key(self, parts: Iterable[str]) -> str:
        """Return the key of a body made from ``parts`` under this build's code."""
        digest = hashlib.sha256(self.code.encode())
        for part in parts:
            digest.update(b"\0" + hashlib.sha256(part.encode()).digest())
        return digest.hexdigest()

    def _path(self, key: str) -> Path:
        assert self.folder is not None
        return self.folder / key[:2] / f"{key}.html"

    def get(self, key: str) -> str | None:
        """Return the body kept under ``key``, or None (none kept, or not sealed here)."""
        if self.folder is None:
            return None
        data = self.seal.read(key, self._path(key))
        if data is None:
            return None
        try:
            body = data.decode("utf-8")
        except UnicodeDecodeError:
            return None
        self.hits += 1
        return body

    def put(self, key: str, body: str) -> None:
        """Keep ``body`` under ``key`` (nothing when keeping stopped)."""
        self.made += 1
        if self.folder is None or self.problem:
            return
        try:
            self.seal.write(key, self._path(key), body.encode("utf-8"))
        except OSError as exc:
            self.problem = (
                f"cannot keep submission pages in {self.folder}: {exc.strerror or exc}; "
                "every page is rendered again on each build"
            )
