"""The same system across screens and across packs: one system's rates side by side.

A system is the accepted entries of one board with the same name and signer: one bundle
that ran several substrates, or several bundles (one per substrate, or a few each). For
every substrate it ran, the view states SWER, over-halt and record-wrong over its
episodes there; for every two substrates, the difference of each rate over the episodes
it ran on both with the same base task, trial and seed, paired and clustered by task
(:func:`effectbench.metrics.substrate_difference`), so a reader sees whether an agent that
is safe through an API stays safe through pixels only. When two bundles of one system ran
the same substrate, the first in the board's default order speaks for it and the other is
named as left out.

The same system on several boards (systems of record: the clinic's records, the ticketing
pack's support desk) is set side by side too (:func:`systems_across_packs`): its rates on each
pack and substrate, each with its interval over tasks. Those are different tasks, so nothing
is paired: the page shows whether the ladder a system climbs on one system of record holds on
another. The anchor boards (pinned regression fixtures) are left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from effectbench.bundle import slugify
from effectbench.metrics import (
    FRAME_COLUMNS,
    SUBSTRATE_RATES,
    Difference,
    TaskRate,
    TaskTable,
    frame_from_columns,
    substrate_difference,
    task_rate,
)
from effectbench.site._contamination import FRESH_KINDS
from effectbench.site._format import verdict
from effectbench.site._mkdocs import GeneratedPage
from effectbench.site._pages import BoardGroup, BoardView, board_groups, environment, lede
from effectbench.site._tables import BOARD_COLUMNS, substrate_order

ROW_COLUMN = {c: c for c in FRAME_COLUMNS} | {"reported_success": "agent.reported_success"}
"""Where each column of the metrics' frame is in a bundle's flattened rows."""


@dataclass(frozen=True)
class OnSubstrate:
    """A system's rates over its episodes on one substrate."""

    substrate: str
    slug: str
    """The bundle whose episodes these are."""
    tasks: int
    episodes: int
    rates: dict[str, TaskRate]
    """Per rate of :data:`~effectbench.metrics.SUBSTRATE_RATES`."""


@dataclass(frozen=True)
class BetweenSubstrates:
    """The differences of a system's rates on ``first`` minus on ``second`` (paired)."""

    first: str
    second: str
    differences: dict[str, Difference]
    """Per rate of :data:`~effectbench.metrics.SUBSTRATE_RATES`."""

    @property
    def tasks(self) -> int:
        """Base tasks the system ran on both substrates."""
        return next(iter(self.differences.values())).tasks

    @property
    def episodes(self) -> int:
        """Paired episodes (on each substrate)."""
        return next(iter(self.differences.values())).n_first


@dataclass(frozen=True)
class SystemAcross:
    """One system of a board on every substrate it ran."""

    name: str
    signer: str
    anchor: str
    """The id of its section on the page."""
    substrates: list[OnSubstrate]
    pairs: list[BetweenSubstrates]
    left_out: list[tuple[str, str]] = field(default_factory=list)
    """(slug, substrate) of episodes not used: an earlier bundle of the system ran it too."""


@dataclass(frozen=True)
class BoardAcross:
    """The systems of one board that ran more than one substrate."""

    key: str
    title: str
    substrates: tuple[str, ...]
    systems: list[SystemAcross]


def _frame(rows: pa.Table, substrate: str) -> tuple[pd.DataFrame, list[int], list[Any]]:
    """Return the metrics' frame of a bundle's rows on one substrate, with trials and seeds."""
    keep = [s == substrate for s in rows.column("substrate").to_pylist()]
    part = rows.filter(pa.array(keep, pa.bool_()))
    frame = frame_from_columns({c: part.column(src).to_pylist() for c, src in ROW_COLUMN.items()})
    return frame, part.column("trial").to_pylist(), part.column("seed").to_pylist()


def _on(substrate: str, slug: str, table: TaskTable) -> OnSubstrate:
    """Return a bundle's rates over its episodes on ``substrate``."""
    mine = table.of_substrate(substrate)
    rates = {r: task_rate(mine, r) for r in SUBSTRATE_RATES}
    return OnSubstrate(substrate, slug, mine.n_tasks, mine.n_episodes, rates)


def unique_anchor(base: str, taken: set[str]) -> str:
    """Return ``base``, or ``base-N`` when it is taken already (and take it)."""
    anchor, n = base, 2
    while anchor in taken:
        anchor, n = f"{base}-{n}", n + 1
    taken.add(anchor)
    return anchor


def _system(
    board_key: str,
    name: str,
    signer: str,
    slugs: Sequence[str],
    tables: dict[str, TaskTable],
    rows_of: dict[str, pa.Table],
    taken: set[str],
) -> SystemAcross | None:
    chosen: dict[str, str] = {}
    left_out: list[tuple[str, str]] = []
    for slug in slugs:
        for sub in substrate_order(tables[slug].substrate):
            if sub in chosen:
                left_out.append((slug, sub))
            else:
                chosen[sub] = slug
    subs = substrate_order(chosen)
    if len(subs) < 2:
        return None
    on = [_on(sub, chosen[sub], tables[chosen[sub]]) for sub in subs]
    parts = [_frame(rows_of[chosen[sub]], sub) for sub in subs]
    frame = pd.concat([p[0] for p in parts], ignore_index=True)
    trials = [t for p in parts for t in p[1]]
    seeds = [s for p in parts for s in p[2]]
    pairs = [
        BetweenSubstrates(
            first=later,
            second=earlier,
            differences={
                r: substrate_difference(frame, trials, seeds, later, earlier, r)
                for r in SUBSTRATE_RATES
            },
        )
        for i, earlier in enumerate(subs)
        for later in subs[i + 1 :]
    ]
    return SystemAcross(
        name, signer, unique_anchor(f"{board_key}-{slugify(name)}", taken), on, pairs, left_out
    )


def board_across(
    group: BoardGroup, rows_of: dict[str, pa.Table], tables: dict[str, TaskTable]
) -> BoardAcross:
    """Return the systems of one pack's boards (``group``) that ran more than one substrate, in
    the order they first appear on its boards (``tables``: every entry's rows counted per task,
    on every substrate)."""
    groups: dict[tuple[str, str], list[str]] = {}
    fresh: set[str] = set()
    for view in group.views:
        for row in view.rows:
            slugs = groups.setdefault((row["system"], row["signer"]), [])
            if row["slug"] not in slugs:
                slugs.append(row["slug"])
            if row.get("instance") in FRESH_KINDS:
                fresh.add(row["slug"])
    for slugs in groups.values():  # a fresh instance pairs with no other substrate's tasks
        slugs.sort(key=lambda slug: slug in fresh)
    taken: set[str] = set()
    systems = [
        s
        for (name, signer), slugs in groups.items()
        if (s := _system(group.key, name, signer, slugs, tables, rows_of, taken)) is not None
    ]
    return BoardAcross(group.key, group.title, group.substrates, systems)


def boards_across(
    views: Sequence[BoardView], rows_of: dict[str, pa.Table], tables: dict[str, TaskTable]
) -> list[BoardAcross]:
    """Return, per pack, its systems that ran more than one substrate."""
    return [board_across(g, rows_of, tables) for g in board_groups(views)]


SUBSTRATES_TITLE = "The same system across substrates"


def substrates_page(templates: Path, boards: Sequence[BoardAcross]) -> GeneratedPage:
    """Return the substrate-sensitivity page: every system that ran more than one substrate."""
    labels = {c.key: c.label for c in BOARD_COLUMNS}
    body = (
        environment(templates)
        .get_template("substrates.html.j2")
        .render(
            boards=boards,
            rates=[(r, labels[r]) for r in SUBSTRATE_RATES],
            verdict=verdict,
        )
    )
    return GeneratedPage(
        SUBSTRATES_TITLE,
        body,
        tuple((b.key, b.title) for b in boards if b.systems),
        hide=("navigation",),
        search_lead=lede(body),
    )


@dataclass(frozen=True)
class OnPack:
    """A system's rates on one pack's board and one substrate."""

    board: str
    """The board's key (its pack)."""
    title: str
    on: OnSubstrate
    """Its rates there, over the episodes of the system's first bundle on the board that ran
    the substrate."""


@dataclass(frozen=True)
class SystemAcrossPacks:
    """One system (a name and a signer) on every pack's board it is on."""

    name: str
    signer: str
    anchor: str
    """The id of its section on the page."""
    cells: list[OnPack]
    """Substrate by substrate, each board in the site's order."""


def systems_across_packs(views: Sequence[BoardView]) -> list[SystemAcrossPacks]:
    """Return the systems on more than one board (anchor boards left out), in board order."""
    found: dict[tuple[str, str], list[OnPack]] = {}
    seen: set[tuple[str, str, str, str]] = set()
    for view in views:
        if view.anchor:
            continue
        board = view.group or view.key  # the pack's boards, one substrate each
        title = view.group_title or view.title
        # a fresh instance's entry speaks for a system only where it has no public-seed one
        for row in sorted(view.rows, key=lambda r: r.get("instance") in FRESH_KINDS):
            table = view.tables[row["slug"]]
            for sub in substrate_order(table.substrate):
                if (board, row["system"], row["signer"], sub) in seen:
                    continue  # the system's first bundle in the board's order speaks for it
                seen.add((board, row["system"], row["signer"], sub))
                found.setdefault((row["system"], row["signer"]), []).append(
                    OnPack(board, title, _on(sub, row["slug"], table))
                )
    order = {
        name: i
        for i, name in enumerate(
            substrate_order(c.on.substrate for cs in found.values() for c in cs)
        )
    }
    out: list[SystemAcrossPacks] = []
    taken: set[str] = set()
    for (name, signer), cells in found.items():
        if len({c.board for c in cells}) < 2:
            continue
        cells.sort(key=lambda c: order[c.on.substrate])  # stable: boards keep the site's order
        out.append(
            SystemAcrossPacks(name, signer, unique_anchor(f"packs-{slugify(name)}", taken), cells)
        )
    return out


PACKS_TITLE = "The same system across packs"


def packs_page(templates: Path, systems: Sequence[SystemAcrossPacks]) -> GeneratedPage:
    """Return the page that sets each system on several packs' boards side by side."""
    labels = {c.key: c.label for c in BOARD_COLUMNS}
    body = (
        environment(templates)
        .get_template("packs.html.j2")
        .render(systems=systems, rates=[(r, labels[r]) for r in SUBSTRATE_RATES])
    )
    return GeneratedPage(
        PACKS_TITLE,
        body,
        tuple((s.anchor, s.name) for s in systems),
        hide=("navigation",),
        search_lead=lede(body),
    )
