"""Task packs: each one a :class:`~effectbench.seam.BenchmarkProvider`, imported when named.

A pack's modules are imported the first time it is used: :func:`get_pack` imports
only the pack it builds (verifying a MockMed bundle never imports the clinic's
web app or record service). :data:`PACKS`, every pack's class by command-line
name, imports them all the first time it is read.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from effectbench.errors import UsageError

if TYPE_CHECKING:
    from effectbench.seam import BenchmarkProvider

    PACKS: dict[str, Callable[[], BenchmarkProvider]]

CLASSES: dict[str, str] = {
    "mockmed": "effectbench.packs.mockmed:MockMedProvider",
    "clinic": "effectbench.packs.clinic:ClinicProvider",
}
"""Where each pack's class lives (``module:Class``), by command-line name."""

ALIASES = {"mockmed-anchor": "mockmed"}
"""Manifest suite names that differ from the command-line name."""
SUITE_NAMES = {"mockmed": "mockmed-anchor", "clinic": "clinic"}
"""Each pack's manifest suite name (its class's ``name``: the name its bundles declare)."""


def canonical_pack(name: str) -> str:
    """Return the one name of pack ``name`` (its suite name), whichever alias it is given by.

    ``mockmed`` and ``mockmed-anchor`` are one pack: the site forms one board for it.
    A name no pack has is returned as it is.
    """
    return SUITE_NAMES.get(ALIASES.get(name, name), name)


def _load(key: str) -> Callable[[], BenchmarkProvider]:
    module, _, attr = CLASSES[key].partition(":")
    factory: Callable[[], BenchmarkProvider] = getattr(importlib.import_module(module), attr)
    return factory


def __getattr__(name: str) -> Any:
    """``PACKS``: every pack's class, imported on first read (then an ordinary dict)."""
    if name == "PACKS":
        packs = {key: _load(key) for key in CLASSES}
        globals()["PACKS"] = packs
        return packs
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def get_pack(name: str) -> BenchmarkProvider:
    """Return a fresh provider for pack ``name`` (a CLI name or a suite name)."""
    key = ALIASES.get(name, name)
    packs: dict[str, Callable[[], BenchmarkProvider]] | None = globals().get("PACKS")
    if packs is not None:  # read already (and perhaps extended): it is the registry
        if key not in packs:
            raise UsageError(f"unknown pack {name!r}; known packs: {', '.join(sorted(packs))}")
        return packs[key]()
    if key not in CLASSES:
        raise UsageError(f"unknown pack {name!r}; known packs: {', '.join(sorted(CLASSES))}")
    return _load(key)()
