"""Environment variables set for the length of a block."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["variable"]


@contextmanager
def variable(name: str, value: str) -> Iterator[None]:
    """Set ``$name`` to ``value`` while the block runs (for this process and the processes it
    starts), then put back what it was before (unset when it was unset)."""
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before
