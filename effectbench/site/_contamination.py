"""The contamination delta of a board: each system's SWER and net value on committed fresh
instances of a generated pack minus on the public dev seed (SPEC 8.1), where the board holds
both.

A system is the entries of one board with the same name and signer, as on the substrates page;
its public-seed and fresh-instance entries are one row of the board (the public one's), its
fresh runs and the delta columns of that row (:func:`companions`). Only *committed* fresh
instances count towards the delta (a seed derived from a commitment logged before the run and
its one beacon round: :mod:`verifier.commitment`); an uncommitted seed was the submitter's to
choose, so its run is shown in the row but measures nothing. Every committed fresh run of the
system counts, pooled per unit (:func:`pooled`), not the first or the best: a submitter who
runs many fresh instances cannot show the one that suits them. The difference is
:func:`effectbench.metrics.contamination_delta`'s, paired by the board's units (a generated
pack's template: every seed draws every template). A positive SWER delta means the system
does worse on tasks it could not have seen before it ran.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from effectbench.metrics import Difference, Prices, TaskTable, contamination_delta
from effectbench.site._entries import Entry

FRESH_KINDS = ("fresh", "fresh-uncommitted")
"""The :attr:`Entry.instance` values of a bundle drawn from a seed other than the public one."""
COMMITTED = "fresh"
"""The :attr:`Entry.instance` of a fresh run whose seed was committed to (the delta counts it)."""
UNPAIRED = "unpaired"
"""What a fresh-instance row without a public-seed row of its system says of its delta."""


@dataclass(frozen=True)
class Contamination:
    """One system's committed fresh-instance runs against its public-seed row, on one board."""

    system: str
    public: tuple[str, ...]
    """The slug of the system's public-seed entry (its row on the board)."""
    fresh: tuple[str, ...]
    """The slugs of the system's committed fresh-instance entries, pooled (columns of the row)."""
    committed: bool
    """Whether the fresh runs counted were committed before they ran (always, for a delta)."""
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
    """Return, for each system with both kinds of rows on a board, each of its fresh entries'
    slugs mapped to its public entry's slug (``order``: the board's slugs in the default order;
    the first public entry is the system's row; a system is its name and signer, and a ranked
    row pairs with a ranked one, a preview with a preview)."""
    public: dict[tuple[str, str, str], str] = {}
    fresh: dict[tuple[str, str, str], list[str]] = {}
    for slug in order:
        e = entries[slug]
        if not e.instance:
            continue
        key = (*_system(e), e.status)
        if is_fresh(e):
            fresh.setdefault(key, []).append(slug)
        else:
            public.setdefault(key, slug)
    return {run: public[key] for key, runs in fresh.items() if key in public for run in runs}


def pooled(tables: Sequence[TaskTable]) -> TaskTable:
    """Return ``tables`` as one: each unit's trials and events summed over them (a unit takes
    its category, substrate and correct-action availability from the first table holding it)."""
    if len(tables) == 1:
        return tables[0]
    events = sorted({e for t in tables for e in t.events})
    first, trials, counts = _summed(tables, events)
    order = sorted(range(len(first)), key=lambda k: first[k][0].task_id[first[k][1]])
    picked = [first[k] for k in order]
    known = all(t.correct_action_available is not None for t in tables)
    return TaskTable(
        task_id=_of_first(picked, "task_id"),
        category=_of_first(picked, "category"),
        substrate=_of_first(picked, "substrate"),
        trials=[trials[k] for k in order],
        events={e: [counts[e][k] for k in order] for e in events},
        correct_action_available=[bool(v) for v in _of_first(picked, "correct_action_available")]
        if known
        else None,
    )


def _summed(
    tables: Sequence[TaskTable], events: list[str]
) -> tuple[list[tuple[TaskTable, int]], list[int], dict[str, list[int]]]:
    """Each unit's first (table, index), and its trials and ``events`` summed over
    ``tables``, units in the order they are first met."""
    units: dict[str, int] = {}
    first: list[tuple[TaskTable, int]] = []
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
    return first, trials, counts


def _of_first(picked: list[tuple[TaskTable, int]], column: str) -> list[Any]:
    """``column`` of each unit, from the table it was first met in."""
    return [getattr(table, column)[i] for table, i in picked]


def contamination(
    pairs: Mapping[str, str],
    entries: Mapping[str, Entry],
    tables: Mapping[str, TaskTable],
    prices: Prices,
) -> tuple[Contamination, ...]:
    """Return the board's contamination deltas, SWER and net value (``pairs``:
    :func:`companions`; ``tables``: each entry's rows on the board's substrate counted per
    unit): one per system with at least one committed fresh run, every committed run pooled."""
    runs: dict[str, list[str]] = {}
    for fresh, public in pairs.items():
        if entries[fresh].instance == COMMITTED:
            runs.setdefault(public, []).append(fresh)
    out = []
    for public, counted in runs.items():
        mine = pooled([tables[s] for s in counted])
        out.append(
            Contamination(
                system=entries[public].name,
                public=(public,),
                fresh=tuple(counted),
                committed=True,
                delta=contamination_delta(tables[public], mine, {}),
                value=contamination_delta(tables[public], mine, {}, prices=prices),
            )
        )
    return tuple(out)
