"""Task packs: each one a :class:`~effectbench.seam.BenchmarkProvider`."""

from __future__ import annotations

from collections.abc import Callable

from effectbench.errors import UsageError
from effectbench.packs.clinic import ClinicProvider
from effectbench.packs.mockmed import MockMedProvider
from effectbench.seam import BenchmarkProvider

PACKS: dict[str, Callable[[], BenchmarkProvider]] = {
    "mockmed": MockMedProvider,
    "clinic": ClinicProvider,
}
"""Packs by their command-line name."""

ALIASES = {"mockmed-anchor": "mockmed"}
"""Manifest suite names that differ from the command-line name."""


def get_pack(name: str) -> BenchmarkProvider:
    """Return a fresh provider for pack ``name`` (a CLI name or a suite name)."""
    key = ALIASES.get(name, name)
    if key not in PACKS:
        raise UsageError(f"unknown pack {name!r}; known packs: {', '.join(sorted(PACKS))}")
    return PACKS[key]()
