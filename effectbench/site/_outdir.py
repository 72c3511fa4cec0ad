"""The build's output folder: never lose a user's files, never publish half a site.

* :func:`check_out` refuses (exit status 2, one line) an output that is not
  ours to replace: an existing file, a non-empty folder without the marker a
  build writes (:data:`MARKER`), or a folder that holds the repository, the
  submissions, the cache or the working directory (whatever it holds).
* :func:`locked` holds an exclusive lock on the output for the whole build (a
  lock file in the user's cache home), so a second build into the same folder
  is refused instead of racing.
* :func:`swap_in` replaces the output with the finished staging folder in one
  atomic exchange of the two names where the platform allows (Linux
  ``renameat2(RENAME_EXCHANGE)``), else by two renames.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import fcntl
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

from effectbench.errors import UsageError
from effectbench.site._cache import cache_home

__all__ = ["MARKER", "check_out", "lock_path", "locked", "staging_folder", "swap_in"]

MARKER = ".effectbench-site"
"""The file every build writes at the top of its output: only such a folder is replaced."""
MARKER_TEXT = "This folder is the output of `effectbench site build`; a build replaces it.\n"
_RENAME_EXCHANGE = 2


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def check_out(out: Path, protected: Sequence[Path]) -> Path:
    """Return ``out`` resolved, or refuse it when replacing it could lose a user's files.

    ``protected`` are folders no output may be or hold (the repository root, the
    submissions, the cache). A symbolic link is refused too: the build would
    replace the link's target's contents.
    """
    shown = str(out)
    if out.is_symlink():
        raise UsageError(f"--out {shown} is a symbolic link; give a real folder")
    resolved = out.resolve()
    for folder in (*protected, Path.cwd()):
        if _inside(folder.resolve(), resolved):
            raise UsageError(
                f"--out {shown} holds {folder}; the build replaces its output folder whole, "
                "so give a folder of its own (default: public)"
            )
    if not os.path.lexists(resolved):
        return resolved
    if not resolved.is_dir():
        raise UsageError(f"--out {shown} is a file, not a folder; give a folder for the site")
    if (resolved / MARKER).is_file() or not any(resolved.iterdir()):
        return resolved
    raise UsageError(
        f"--out {shown} is a folder that is not a previous site build (no {MARKER} in it); "
        "the build would replace everything in it: give a new or empty folder"
    )


def lock_path(out: Path) -> Path:
    """Return the lock file of output folder ``out``: in this user's cache home, named after
    the folder's absolute path, so nothing is left beside the user's own files."""
    digest = hashlib.sha256(os.fsencode(out.resolve())).hexdigest()[:32]
    return cache_home() / "locks" / f"{digest}.lock"


@contextmanager
def locked(out: Path) -> Iterator[None]:
    """Hold the build lock of output folder ``out`` (refuse when another build holds it)."""
    path = lock_path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise UsageError(
                    f"another build is writing {out} right now; wait for it, or build "
                    "into another --out"
                ) from None
            raise
        yield
    finally:
        os.close(fd)  # releases the lock


def _staging_prefix(out: Path) -> str:
    return f".{out.name}.building-"


def stale_staging(out: Path) -> list[Path]:
    """Return the staging folders of ``out`` that a killed build left (only a build that
    holds ``out``'s lock makes one, so under the lock every one is stale)."""
    pattern = re.compile(re.escape(_staging_prefix(out)) + r"[a-z0-9_]{8}(\.previous)?")
    return sorted(
        p
        for p in out.parent.iterdir()
        if pattern.fullmatch(p.name) and p.is_dir() and not p.is_symlink()
    )


def staging_folder(out: Path) -> Path:
    """Return a new, private, hidden sibling folder of ``out`` to build into (removing the
    staging folders killed builds of ``out`` left; call it holding :func:`locked`)."""
    for stale in stale_staging(out):
        shutil.rmtree(stale, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=_staging_prefix(out), dir=out.parent))


@lru_cache(maxsize=1)
def _renameat2() -> Any:
    name = ctypes.util.find_library("c")
    if name is None:  # pragma: no cover - not glibc/musl
        return None
    libc = ctypes.CDLL(name, use_errno=True)
    return getattr(libc, "renameat2", None)


def _exchange(a: Path, b: Path) -> bool:
    """Swap the names ``a`` and ``b`` atomically; False when the platform cannot."""
    fn = _renameat2()
    if fn is None:  # pragma: no cover - not Linux
        return False
    at_fdcwd = -100
    done = fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE)
    if done == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):  # pragma: no cover - old kernel / fs
        return False
    raise OSError(err, os.strerror(err), str(b))


def swap_in(staging: Path, out: Path) -> None:
    """Make the finished ``staging`` folder the output ``out`` (the marker written first).

    An existing output is exchanged with the staging folder in one atomic step
    (readers see the old site or the new one, never none), then removed.
    """
    (staging / MARKER).write_text(MARKER_TEXT, encoding="utf-8")
    staging.chmod(0o755)  # mkdtemp makes it private
    if not os.path.lexists(out):
        os.rename(staging, out)
        return
    if _exchange(staging, out):
        shutil.rmtree(staging)  # the previous site, now under the staging name
        return
    old = staging.with_name(staging.name + ".previous")  # pragma: no cover - not Linux
    os.rename(out, old)  # pragma: no cover
    os.rename(staging, out)  # pragma: no cover
    shutil.rmtree(old)  # pragma: no cover
