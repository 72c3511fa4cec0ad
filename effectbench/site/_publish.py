"""The files a build publishes as they are, written by the build and linked when unchanged.

A build publishes two kinds of output: pages (mkdocs renders them, or the submission
pages' frame, :mod:`effectbench.site._shell`) and files published as they are: the bundles'
gzip copies, the receipt shards and indexes, the key frames, the boards' row shards, the
badges and the downloads. The second kind is written here, into the staging folder after
mkdocs has run, not handed to mkdocs: at 10,000 submissions mkdocs spent about 24 s of a
rebuild copying 52,000 of them (1.2 GB), nearly all the bytes the output already held. The
submission pages, each written into the frame mkdocs rendered once, are placed here too.

A file whose bytes the previous build published at the same path, and which is still as that
build left it, is hard-linked from the output into the staging folder instead of written.
"As it left it" is what ``stat`` says, as git's index tells a file unchanged:
:class:`OutputMemo` keeps, per published path, the file's sha256, its device, inode, size and
modification time (nanoseconds) taken when the build placed it in its staging folder (private
to the build until the swap), and its change time taken once the new output is in place and
the previous one removed (placing a link and removing a name both set it). An edit, a
replacement or a ``touch`` of the output's file changes one of these (the kernel sets the
change time; a user cannot set it back), so that file is written afresh; a file changed
between the swap and the memo's writing no longer has the stat data it was placed with, and
is left out of the memo. Linking never changes a file's bytes, and the previous output is
removed once the new one is swapped in, so no two sites share a file for longer than the swap.
The memo is sealed by this machine's key (:mod:`effectbench.sealed`) like every cache entry:
a planted one is never read, and without one (no cache folder, a first build, a damaged memo)
every file is written.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import orjson

from effectbench.sealed import CacheSeal

MEMO_KEY = "site-output-2"
"""The seal's key of an output memo (bump when what an entry holds changes)."""


def _mark(st: os.stat_result) -> list[int]:
    """What ``stat`` says of a file as the build placed it: device, inode, size,
    modification time (ns)."""
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]


class OutputMemo:
    """What the last build published as files into one output folder (path -> stat data and
    sha256), kept in ``folder`` (None: keep nothing; every file is written)."""

    def __init__(self, folder: Path | None, out: Path, seal: CacheSeal) -> None:
        self.out = out
        self._seal = seal
        name = hashlib.sha256(os.fsencode(out)).hexdigest()[:32]
        self._path = folder / f"{name}.memo" if folder is not None else None
        self._known: dict[str, list[int | str]] = {}
        self._placed: dict[str, tuple[list[int], str]] = {}
        known = self._seal.read_object(MEMO_KEY, self._path) if self._path is not None else None
        if known is not None and known.get("out") == str(out):
            files = known.get("files")
            self._known = files if isinstance(files, dict) else {}

    def unchanged(self, rel: str, digest: str) -> Path | None:
        """Return the output's file at ``rel`` when the last build published ``digest``'s
        bytes there and the file is as it left it (its change time too); else None."""
        kept = self._known.get(rel)
        if kept is None or kept[-1] != digest:
            return None
        path = self.out / rel
        try:
            st = os.lstat(path)
        except OSError:
            return None
        if [*_mark(st), st.st_ctime_ns] != kept[:-1]:
            return None
        return path

    def learn(self, rel: str, path: Path, digest: str) -> None:
        """Note what ``stat`` says of the file just placed at ``path`` (site path ``rel``)."""
        self._placed[rel] = (_mark(os.lstat(path)), digest)

    def save(self) -> None:
        """Keep this build's files, once its output is in place and the previous one removed.

        Each file's change time is read now (placing a link and removing the previous
        output's name for a file both set it); a file whose other stat data are no longer
        those it was placed with was changed since, and is not kept. A cache folder that
        cannot be written keeps nothing, and the next build writes every file again."""
        if self._path is None:
            return
        files: dict[str, list[int | str]] = {}
        for rel, (mark, digest) in self._placed.items():
            try:
                st = os.lstat(self.out / rel)
            except OSError:
                continue
            if _mark(st) == mark:
                files[rel] = [*mark, st.st_ctime_ns, digest]
        try:
            data = orjson.dumps({"out": str(self.out), "files": files})
            self._seal.write(MEMO_KEY, self._path, data)
        except OSError:
            pass


@dataclass
class Placed:
    """How a build's files reached the staging folder."""

    linked: int = 0
    """Hard-linked from the previous output (the same bytes, left as that build left them)."""
    written: int = 0


Source = Path | str | bytes
"""A file to publish: a file to copy, or its text or bytes."""


def publish_files(
    staging: Path,
    files: Iterable[tuple[str, Source]],
    memo: OutputMemo,
    digest_of: Callable[[Path], str],
) -> Placed:
    """Write ``files`` (site path, source) into ``staging``: linked from the previous
    output when :meth:`OutputMemo.unchanged` finds it there, else copied or written (a file
    already there is replaced, never written through: it may be another site's link).
    ``digest_of`` returns the sha256 of a file to copy (the build's kept digests)."""
    done = Placed()
    made: set[Path] = set()
    for rel, source in files:
        if isinstance(source, Path):
            data = None
            digest = digest_of(source)
        else:
            data = source.encode("utf-8") if isinstance(source, str) else source
            digest = hashlib.sha256(data).hexdigest()
        target = staging / rel
        folder = target.parent
        if folder not in made:
            folder.mkdir(parents=True, exist_ok=True)
            made.add(folder)
        if os.path.lexists(target):
            target.unlink()  # mkdocs' own file of that path: ours replaces it
        previous = memo.unchanged(rel, digest)
        if previous is not None and _link(previous, target):
            done.linked += 1
        else:
            if data is None:
                assert isinstance(source, Path)
                shutil.copyfile(source, target)
            else:
                target.write_bytes(data)
            done.written += 1
        memo.learn(rel, target, digest)
    return done


def _link(source: Path, target: Path) -> bool:
    """Hard-link ``source`` at ``target``; False where the file system cannot (the caller
    writes the file instead)."""
    try:
        os.link(source, target)
    except OSError as exc:
        if exc.errno in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.ENOENT):
            return False
        raise
    return True


__all__ = ["OutputMemo", "Placed", "Source", "publish_files"]
