"""The hostile worker's pickled answer (:mod:`.rogue_worker`): loading it leaves a file behind."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def plant(path: str) -> None:
    """What unpickling the rogue answer runs: it writes ``path`` as proof."""
    Path(path).write_text("code from a worker ran here\n")


class Planted:
    """An answer whose unpickling calls :func:`plant`."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (plant, (self.path,))
