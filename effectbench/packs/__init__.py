"""Task packs: each one a :class:`~effectbench.seam.BenchmarkProvider`."""

from __future__ import annotations

from collections.abc import Callable

from effectbench.errors import UsageError
from effectbench.packs.clinic import ClinicProvider
from effectbench.packs.clinic.provider import NAME as CLINIC_SUITE
from effectbench.packs.mockmed import NAME as MOCKMED_SUITE
from effectbench.packs.mockmed import MockMedProvider
from effectbench.seam import BenchmarkProvider

PACKS: dict[str, Callable[[], BenchmarkProvider]] = {
    "mockmed": MockMedProvider,
    "clinic": ClinicProvider,
}
"""Packs by their command-line name."""

ALIASES = {"mockmed-anchor": "mockmed"}
"""Manifest suite names that differ from the command-line name."""
SUITE_NAMES = {"mockmed": MOCKMED_SUITE, "clinic": CLINIC_SUITE}
"""Each pack's manifest suite name (the name its bundles declare), by command-line name."""


def canonical_pack(name: str) -> str:
    """Return the one name of pack ``name`` (its suite name), whichever alias it is given by.

    ``mockmed`` and ``mockmed-anchor`` are one pack: the site forms one board for it.
    A name no pack has is returned as it is.
    """
    return SUITE_NAMES.get(ALIASES.get(name, name), name)


def get_pack(name: str) -> BenchmarkProvider:
    """Return a fresh provider for pack ``name`` (a CLI name or a suite name)."""
    key = ALIASES.get(name, name)
    if key not in PACKS:
        raise UsageError(f"unknown pack {name!r}; known packs: {', '.join(sorted(PACKS))}")
    return PACKS[key]()
