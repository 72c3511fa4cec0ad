"""Files committed but generated from code (a JSON Schema, a docs table): write or check them."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path


def write_or_check(path: Path, text: str, argv: Sequence[str] | None, command: str) -> int:
    """Write ``text`` to ``path``; with ``--check`` in ``argv`` only compare (1 when stale).

    ``argv`` defaults to the process's arguments; ``command`` is how to regenerate
    the file, named in the stale message.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if "--check" in args:
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current != text:
            print(f"{path} is stale; run {command}", file=sys.stderr)
            return 1
        return 0
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}")
    return 0
