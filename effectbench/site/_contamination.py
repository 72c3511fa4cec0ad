"""The contamination delta of a board: each system's SWER and net value on a fresh instance of
a generated pack minus on the public dev seed (SPEC's issue 30), where the board holds both.

A system is the entries of one board with the same name and signer, as on the substrates page;
its public-seed and fresh-instance entries are one row of the board (the public one), the delta
and the rank on fresh rows alone its columns. The first ranked entry in the board's default
order on each kind of instance speaks for it;
the difference is :func:`effectbench.metrics.contamination_delta`'s, paired by the board's
units (a generated pack's template: both seeds draw every template). A positive delta means
the system does worse on tasks it could not have seen before it ran.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from effectbench.metrics import Difference, Prices, TaskTable, contamination_delta
from effectbench.site._entries import Entry

FRESH_KINDS = ("fresh", "fresh-uncommitted")
"""The :attr:`Entry.instance` values of a bundle drawn from a seed other than the public one."""
UNPAIRED = "unpaired"
"""What a fresh-instance row without a public-seed row of its system says of its delta."""


@dataclass(frozen=True)
class Contamination:
    """One system's fresh-instance rows against its public-seed rows, on one board."""

    system: str
    public: str
    """The slug of the public-seed entry (the system's row on the board)."""
    fresh: str
    """The slug of the fresh-instance entry (a column of that row, not a row of its own)."""
    committed: bool
    """Whether the fresh seed was derived from a commitment logged before the run."""
    delta: Difference
    """Fresh SWER minus public SWER, paired by unit, with its paired interval."""
    value: Difference
    """Fresh net value per 100 tasks minus public, paired by unit, with its paired interval."""


def is_fresh(e: Entry) -> bool:
    """Whether an entry ran a fresh instance of a generated pack."""
    return e.instance in FRESH_KINDS


def _system(e: Entry) -> tuple[str, str]:
    signer = "" if e.signer is None else f"{e.signer.identity} {e.signer.issuer}"
    return e.name, signer


def companions(order: Sequence[str], entries: Mapping[str, Entry]) -> dict[str, str]:
    """Return, for each system with both kinds of rows on a board, its fresh entry's slug
    mapped to its public entry's slug (``order``: the board's slugs in the default order; the
    first of each kind speaks for the system; a system is its name and signer, and a ranked
    row pairs with a ranked one, a preview with a preview)."""
    sides: dict[tuple[str, str, str], dict[str, str]] = {}
    for slug in order:
        e = entries[slug]
        if not e.instance:
            continue
        side = "fresh" if is_fresh(e) else "public"
        sides.setdefault((*_system(e), e.status), {}).setdefault(side, slug)
    return {pair["fresh"]: pair["public"] for pair in sides.values() if len(pair) == 2}


def contamination(
    pairs: Mapping[str, str],
    entries: Mapping[str, Entry],
    tables: Mapping[str, TaskTable],
    prices: Prices,
) -> tuple[Contamination, ...]:
    """Return the board's contamination deltas (``pairs``: :func:`companions`; ``tables``:
    each entry's rows on the board's substrate counted per unit), SWER and net value."""
    return tuple(
        Contamination(
            system=entries[public].name,
            public=public,
            fresh=fresh,
            committed=entries[fresh].instance == "fresh",
            delta=contamination_delta(tables[public], tables[fresh], {}),
            value=contamination_delta(tables[public], tables[fresh], {}, prices=prices),
        )
        for fresh, public in pairs.items()
    )
