"""The contamination delta of a board: each system's SWER on a fresh instance of a generated
pack minus its SWER on the public dev seed (SPEC's issue 30), where the board holds both.

A system is the entries of one board with the same name and signer, as on the substrates page.
The first ranked entry in the board's default order on each kind of instance speaks for it;
the difference is :func:`effectbench.metrics.contamination_delta`'s, paired by the board's
units (a generated pack's template: both seeds draw every template). A positive delta means
the system does worse on tasks it could not have seen before it ran.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from effectbench.metrics import Difference, TaskTable, contamination_delta
from effectbench.site._entries import Entry

FRESH_KINDS = ("fresh", "fresh-uncommitted")
"""The :attr:`Entry.instance` values of a bundle drawn from a seed other than the public one."""


@dataclass(frozen=True)
class Contamination:
    """One system's SWER on a fresh instance against the public dev seed, on one board."""

    system: str
    public: str
    """The slug of the public-seed entry."""
    fresh: str
    """The slug of the fresh-instance entry."""
    committed: bool
    """Whether the fresh seed was derived from a commitment logged before the run."""
    delta: Difference
    """Fresh SWER minus public SWER, paired by unit, with its task-clustered interval."""


def contamination(
    order: Sequence[str], entries: Mapping[str, Entry], tables: Mapping[str, TaskTable]
) -> tuple[Contamination, ...]:
    """Return the board's contamination deltas (``order``: its entries' slugs in the default
    order; ``tables``: each one's rows on the board's substrate counted per unit)."""
    sides: dict[tuple[str, str], dict[str, Entry]] = {}
    for slug in order:
        e = entries[slug]
        if e.status != "ranked" or not e.instance:
            continue
        side = "fresh" if e.instance in FRESH_KINDS else "public"
        signer = "" if e.signer is None else f"{e.signer.identity} {e.signer.issuer}"
        sides.setdefault((e.name, signer), {}).setdefault(side, e)
    return tuple(
        Contamination(
            system=name,
            public=pair["public"].slug,
            fresh=pair["fresh"].slug,
            committed=pair["fresh"].instance == "fresh",
            delta=contamination_delta(tables[pair["public"].slug], tables[pair["fresh"].slug], {}),
        )
        for (name, _), pair in sides.items()
        if len(pair) == 2
    )
