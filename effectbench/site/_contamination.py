"""The contamination delta of a board: each system's SWER on fresh instances of a generated
pack minus its SWER on the public dev seed (SPEC's issue 30), where the board holds both.

A system is the entries of one board with the same name and signer, as on the substrates page.
Only *committed* fresh instances count (a seed derived from a commitment logged before the run
and its one beacon round: :mod:`verifier.commitment`); an uncommitted seed was the submitter's
to choose, so its entry is shown but measures nothing here. Every ranked entry of the system on
each side counts, pooled per unit (:func:`pooled`), not the first or the best: a submitter who
runs many fresh instances cannot show the one that suits them. The difference is
:func:`effectbench.metrics.contamination_delta`'s, paired by the board's units (a generated
pack's template: every seed draws every template). A positive delta means the system does worse
on tasks it could not have seen before it ran.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from effectbench.metrics import Difference, TaskTable, contamination_delta
from effectbench.site._entries import Entry

FRESH_KINDS = ("fresh", "fresh-uncommitted")
"""The :attr:`Entry.instance` values of a bundle drawn from a seed other than the public one."""
COUNTED = {"public": "public", "fresh": "fresh"}
"""The :attr:`Entry.instance` values the delta counts, by side (an uncommitted fresh seed is
left out)."""


@dataclass(frozen=True)
class Contamination:
    """One system's SWER on committed fresh instances against the public dev seed, on one
    board."""

    system: str
    public: tuple[str, ...]
    """The slugs of the system's ranked public-seed entries, pooled."""
    fresh: tuple[str, ...]
    """The slugs of the system's ranked committed fresh-instance entries, pooled."""
    delta: Difference
    """Fresh SWER minus public SWER, paired by unit, with its task-clustered interval."""


def pooled(tables: Sequence[TaskTable]) -> TaskTable:
    """Return ``tables`` as one: each unit's trials and events summed over them (a unit takes
    its category, substrate and correct-action availability from the first table holding it)."""
    if len(tables) == 1:
        return tables[0]
    units: dict[str, int] = {}
    first: list[tuple[TaskTable, int]] = []
    events = sorted({e for t in tables for e in t.events})
    trials: list[int] = []
    counts: dict[str, list[int]] = {e: [] for e in events}
    for table in tables:
        for i, unit in enumerate(table.task_id):
            at = units.get(unit)
            if at is None:
                at = units[unit] = len(first)
                first.append((table, i))
                trials.append(0)
                for e in events:
                    counts[e].append(0)
            trials[at] += table.trials[i]
            for e in events:
                counts[e][at] += table.events.get(e, [0] * table.n_tasks)[i]
    order = sorted(range(len(first)), key=lambda k: first[k][0].task_id[first[k][1]])
    known = all(t.correct_action_available is not None for t in tables)
    return TaskTable(
        task_id=[first[k][0].task_id[first[k][1]] for k in order],
        category=[first[k][0].category[first[k][1]] for k in order],
        substrate=[first[k][0].substrate[first[k][1]] for k in order],
        trials=[trials[k] for k in order],
        events={e: [counts[e][k] for k in order] for e in events},
        correct_action_available=[
            bool(first[k][0].correct_action_available[first[k][1]])  # type: ignore[index]
            for k in order
        ]
        if known
        else None,
    )


def contamination(
    order: Sequence[str], entries: Mapping[str, Entry], tables: Mapping[str, TaskTable]
) -> tuple[Contamination, ...]:
    """Return the board's contamination deltas (``order``: its entries' slugs in the default
    order; ``tables``: each one's rows on the board's substrate counted per unit)."""
    sides: dict[tuple[str, str], dict[str, list[str]]] = {}
    for slug in order:
        e = entries[slug]
        side = COUNTED.get(e.instance)
        if e.status != "ranked" or side is None:
            continue
        signer = "" if e.signer is None else f"{e.signer.identity} {e.signer.issuer}"
        sides.setdefault((e.name, signer), {}).setdefault(side, []).append(slug)
    return tuple(
        Contamination(
            system=name,
            public=tuple(pair["public"]),
            fresh=tuple(pair["fresh"]),
            delta=contamination_delta(
                pooled([tables[s] for s in pair["public"]]),
                pooled([tables[s] for s in pair["fresh"]]),
                {},
            ),
        )
        for (name, _), pair in sides.items()
        if len(pair) == 2
    )
