"""Bundle files' sha256, kept between local builds by what ``stat`` says of each file.

A rebuild after one new submission must not read every bundle file again to learn that it has
not changed: the verifier's report cache, the rows cache and the gzip copies are all keyed by
the bytes of bundle files (:mod:`effectbench.site._reports`, :mod:`effectbench.site._rows`,
:mod:`effectbench.site._downloads`).
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import orjson

from effectbench.hashing import hash_file
from effectbench.site._cache import CacheSeal, default_seal

SETTLED_NS = 2_000_000_000
"""How long a file must have been left alone before its digest is kept by its stat data
(:class:`FileDigests`): a later write sets its change time to a moment the kept one is not."""
DIGESTS_FILE = "file-digests.memo"
"""The kept file digests (sealed, in the report cache's folder)."""


def _where(path: Path | str) -> str:
    """Return the key of ``path``: an absolute path string as it is (a rebuild looks up
    about 600,000 of them at 10,000 submissions, and normalising each took 2 s; the same file
    under two spellings is only hashed twice), anything else made absolute."""
    if isinstance(path, str) and os.path.isabs(path):
        return path
    return os.path.abspath(path)


class FileDigests:
    """The sha256 of files, kept between builds by what ``stat`` says of each file.

    As git's index does, a file whose device, inode, size, modification and change times
    (nanoseconds) are those it had when it was hashed is not read again. The change time is
    set by the kernel on every write, rename or permission change and cannot be set back by a
    user, so a file edited in place, replaced or copied over is hashed again. A digest is kept
    only when the file's times were at least :data:`SETTLED_NS` old when it was hashed, so a
    write in the same clock tick as the hashing is never missed (git's "racily clean" files).
    The kept digests live in one sealed file (:class:`CacheSeal`: an entry planted by someone
    else is never read); they hold only the files seen by the last build. Without a folder
    (CI's fresh clones, ``--no-cache``) nothing is kept and every file is read.
    """

    def __init__(self, folder: Path | None = None, seal: CacheSeal | None = None) -> None:
        """Read the digests kept in ``folder`` (sealed by ``seal``: this machine's by
        default); without a folder, keep none."""
        self._path = folder / DIGESTS_FILE if folder is not None else None
        self._seal = seal if seal is not None else default_seal()
        self._known: dict[str, list[int | str]] = {}
        self._seen: dict[str, list[int | str]] = {}
        self.hashed = 0
        """Files read and hashed through this object (the rest were known)."""
        if self._path is not None:
            self._known = self._seal.read_object(DIGESTS_FILE, self._path) or {}

    @staticmethod
    def _mark(st: os.stat_result) -> list[int | str]:
        return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]

    def known(self, path: Path | str, st: os.stat_result) -> str | None:
        """Return the kept sha256 of the file at ``path`` whose stat is ``st`` (kept by an
        earlier build, or learnt by this one), if its stat data are those it was hashed with;
        else None (read it, then :meth:`learn`)."""
        where = _where(path)
        kept = self._seen.get(where) or self._known.get(where)
        if kept is None or kept[:-1] != self._mark(st) or not isinstance(kept[-1], str):
            return None
        self._seen[where] = kept
        return kept[-1]

    def learn(self, path: Path | str, st: os.stat_result, digest: str, started_ns: int) -> None:
        """Keep ``digest``, read from ``path`` (whose stat was ``st`` before the read began at
        ``started_ns``), if the file had been left alone for :data:`SETTLED_NS` by then."""
        self.hashed += 1
        if max(st.st_mtime_ns, st.st_ctime_ns) < started_ns - SETTLED_NS:
            self._seen[_where(path)] = [*self._mark(st), digest]

    def digest(self, path: Path | str, st: os.stat_result | None = None) -> str:
        """Return the sha256 hex digest of the file at ``path`` (``st``: its stat, when known):
        kept, or read now. (A path may be a string: a bundle's folders hold many files, and
        a ``Path`` for each cost more than looking the file up.)"""
        st = st if st is not None else os.stat(path)
        found = self.known(path, st)
        if found is None:
            started = time.time_ns()
            found = hash_file(path)
            self.learn(path, st, found, started)
        return found

    def read(self, path: Path, st: os.stat_result | None = None) -> tuple[bytes, str]:
        """Return the bytes of the file at ``path`` (``st``: its stat, taken before) and their
        sha256 (read once), and keep the digest."""
        st = st if st is not None else os.stat(path)
        started = time.time_ns()
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        self.learn(path, st, digest, started)
        return data, digest

    def save(self) -> None:
        """Keep the digests of the files seen since this object was made (if there is a
        folder; one that cannot be written keeps nothing, and costs a re-read later)."""
        if self._path is None or self._seen == self._known:
            return
        try:
            self._seal.write(DIGESTS_FILE, self._path, orjson.dumps(self._seen))
        except OSError:
            pass
