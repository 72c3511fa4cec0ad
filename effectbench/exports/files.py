"""Writing an export: deterministic bytes, into a folder that was empty, all or nothing.

Files are first written into a hidden sibling of the output folder and the whole set is moved
into place at the end, so a refusal or an error part-way leaves nothing behind, and a folder
that already holds something is never written into.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from effectbench.errors import UsageError


def json_bytes(data: Any) -> bytes:
    """Return ``data`` as indented JSON with a final newline (keys in the order given, no NaN:
    the same data always gives the same bytes)."""
    return (json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode()


def jsonl_bytes(items: Iterable[Any]) -> bytes:
    """Return one compact JSON object per line, each line ended by ``\\n``."""
    return b"".join(
        (json.dumps(i, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n").encode()
        for i in items
    )


def sha256(data: bytes) -> str:
    """Return the hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def check_out(out: Path) -> None:
    """Refuse (one line, exit 2) an output folder that exists and is not empty, or is a file."""
    if os.path.lexists(out) and (not out.is_dir() or out.is_symlink()):
        raise UsageError(f"--out {out}: exists and is not a folder; choose another --out")
    if out.is_dir() and any(out.iterdir()):
        raise UsageError(
            f"--out {out}: exists and is not empty (nothing is overwritten); choose another "
            "--out or empty it"
        )


class Staging:
    """A hidden folder beside ``out`` that becomes ``out`` on :meth:`commit`."""

    def __init__(self, out: Path) -> None:
        check_out(out)
        self.out = out
        self.root = out.parent / f".{out.name}.export-partial"
        if os.path.lexists(self.root):
            shutil.rmtree(self.root)
        self.root.mkdir(parents=True)

    def write(self, relative: str, data: bytes) -> Path:
        """Write ``data`` at ``relative`` inside the staged export; return the staged path."""
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return path

    def commit(self) -> None:
        """Move the staged export into place (``out`` must still be empty or absent)."""
        check_out(self.out)
        if self.out.is_dir():
            self.out.rmdir()
        os.replace(self.root, self.out)

    def discard(self) -> None:
        """Remove whatever was staged."""
        shutil.rmtree(self.root, ignore_errors=True)


__all__ = ["Staging", "check_out", "json_bytes", "jsonl_bytes", "sha256"]
