"""Boards pooling packs: one board per substrate over every system of record a system ran.

A per-pack board rests on one catalogue's templates (or tasks); telling two systems apart
needs more of them. A pooled board sets, per substrate, one catalogue of each system of record
side by side (:func:`pooled_catalogues`, the one rule of which) and ranks every system that ran
all of them in full by the per-pack boards' own rules (:func:`~effectbench.site._tables.
order_and_rank`): net value per 100 tasks against doing nothing on the same tasks, rank ranges
at a family-wise level, the paired resolution of adjacent systems. Its clusters are each
catalogue's units (templates, or tasks where a catalogue has none), kept apart across
catalogues (:func:`~effectbench.metrics.joined`). A system that ran only some of them is listed
as incomplete, with what it is missing, and not ranked.

A system is, as on the per-pack boards' contamination columns, its name and signer; on each
per-pack board its row (the first in that board's default order) speaks for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from markupsafe import escape

from effectbench.bundle import slugify
from effectbench.errors import SiteBuildError
from effectbench.metrics import DEFAULT_PRICES, Prices, TaskTable, joined
from effectbench.packs import system_of_record
from effectbench.site._format import break_even_text
from effectbench.site._mkdocs import GeneratedPage
from effectbench.site._pages import environment, lede, rank_text
from effectbench.site._sensitivity import unique_anchor
from effectbench.site._tables import (
    BOARD_COLUMNS,
    Board,
    ViewFacts,
    counted_columns,
    order_and_rank,
)

POOLING_RULE = (
    "One catalogue per system of record: a pack named NAME-generated is a second catalogue of "
    "the system of record NAME, so the board pools one of them, the one with templates where "
    "both are on the substrate's boards; a regression anchor (a pinned fixture, its pack named "
    "NAME-anchor) is left out."
)
"""What :func:`pooled_catalogues` does, in the words the pooled board says it in."""


def pooled_catalogues(boards: Sequence[Board]) -> list[Board]:
    """Return the per-pack boards (of one substrate) a pooled board pools: :data:`POOLING_RULE`.

    One per system of record (:func:`system_of_record`; anchors left out): the catalogue whose
    units are templates over one whose units are tasks, then the catalogue more systems are
    ranked on, then the pack's name. In order of the systems of record's names."""
    by_record: dict[str, list[Board]] = {}
    for b in boards:
        record = system_of_record(b.pack)
        if record is not None:
            by_record.setdefault(record, []).append(b)

    def preference(b: Board) -> tuple[bool, int, str]:
        ranked = b.facts.ranked if b.facts is not None else 0
        templates = b.facts is not None and b.facts.unit == "template"
        return (not templates, -ranked, b.pack)

    return [min(by_record[r], key=preference) for r in sorted(by_record)]


NO_FACTS = ViewFacts(idle=None, idle_value=None, line_after=0, mdd=1.0, n_effective=0.0, tasks=0)
"""The facts of a pooled board with no system that ran every catalogue."""


@dataclass(frozen=True)
class Incomplete:
    """A system on some of a pooled board's catalogues only: listed, not ranked."""

    system: str
    signer: str
    ran: tuple[str, ...]
    """The pooled packs it ran in full."""
    missing: tuple[str, ...]
    """Each pooled pack it did not run in full, with why (``ticketing: not run``,
    ``clinic-generated: 20 of 26 templates``)."""


@dataclass(frozen=True)
class PooledBoard:
    """One substrate's board pooling one catalogue of each system of record."""

    spec_major: str
    split: str
    substrate: str
    catalogues: tuple[tuple[str, str], ...]
    """(system of record, pack) of each pooled catalogue."""
    frame: pd.DataFrame
    """One row per system that ran every catalogue in full, in the default order (``slug``:
    the system's key on this board; ``entries``: its per-pack slugs, in catalogue order)."""
    facts: ViewFacts
    tables: dict[str, TaskTable] = field(default_factory=dict)
    """Each ranked row's units of every catalogue, joined (by its key)."""
    members: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Each row's per-pack entries (slugs), in catalogue order (by its key)."""
    incomplete: tuple[Incomplete, ...] = ()
    prices: Prices = DEFAULT_PRICES
    rule: str = POOLING_RULE

    @property
    def packs(self) -> tuple[str, ...]:
        """The pooled packs, in catalogue order."""
        return tuple(p for _, p in self.catalogues)

    @property
    def key(self) -> str:
        """The board's id (``spec1-pooled-api``; ``-test`` before the substrate for a test
        split)."""
        suffix = "" if self.split == "dev" else f"-{self.split}"
        return slugify(f"spec{self.spec_major}-pooled{suffix}-{self.substrate}")

    @property
    def title(self) -> str:
        """The board's title."""
        where = f"{self.substrate} · {self.split} split · SPEC {self.spec_major}.x"
        return f"every system of record · {where}"

    @property
    def page(self) -> str:
        """The board's page, from the site's root."""
        return f"pooled/{self.key}.html"


@dataclass
class _System:
    name: str
    signer: str
    issuer: str
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Its row on each pooled pack's board (by pack)."""


def _units(b: Board) -> set[str]:
    """The units of a per-pack board: every unit any of its rows ran."""
    return {u for slug in b.frame["slug"] for u in b.tables[slug].task_id}


def _systems(catalogues: Sequence[Board]) -> list[_System]:
    """Each system on any of ``catalogues`` with its first row on each, in order of first
    appearance."""
    found: dict[tuple[str, str, str], _System] = {}
    for b in catalogues:
        for row in b.frame.to_dict("records"):
            key = (str(row["system"]), str(row["signer"]), str(row["signer_issuer"]))
            s = found.setdefault(key, _System(*key))
            s.rows.setdefault(b.pack, row)
    return list(found.values())


def _missing(s: _System, catalogues: Sequence[Board]) -> tuple[list[str], list[str]]:
    """The pooled packs ``s`` ran in full, and each it did not with why."""
    ran: list[str] = []
    missing: list[str] = []
    for b in catalogues:
        row = s.rows.get(b.pack)
        if row is None:
            missing.append(f"{b.pack}: not run")
            continue
        units = _units(b)
        have = units & set(b.tables[row["slug"]].task_id)
        if have == units:
            ran.append(b.pack)
        else:
            unit = b.tables[row["slug"]].unit
            missing.append(f"{b.pack}: {len(have)} of {len(units)} {unit}s")
    return ran, missing


def _key(s: _System, taken: set[str]) -> str:
    """A key for ``s`` unique on its board (its name, with its signer when it has one)."""
    return unique_anchor(slugify(f"{s.name}-{s.signer}" if s.signer else s.name), taken)


def _row(
    key: str, s: _System, catalogues: Sequence[Board], table: TaskTable, prices: Prices
) -> dict[str, Any]:
    """The pooled board's row of ``s`` (over ``table``, its joined units)."""
    rows = [s.rows[b.pack] for b in catalogues]
    previews = [
        f"{b.pack}" for b, r in zip(catalogues, rows, strict=True) if r["status"] != "ranked"
    ]
    dropped = sum(int(r["n_dropped"]) for r in rows)
    return {
        "slug": key,
        "system": s.name,
        "substrate": catalogues[0].substrate,
        "status": "preview" if previews else "ranked",
        "unranked": f"a preview on {', '.join(previews)}" if previews else "",
        "signer": s.signer,
        "signer_issuer": s.issuer,
        "entries": " ".join(str(r["slug"]) for r in rows),
        "n_tasks": table.n_tasks,
        "n_episodes": table.n_episodes,
        "n_dropped": dropped,
        "unit": table.unit,
        "max_trials": max(table.trials, default=0),
        **counted_columns(table, prices, dropped),
    }


def pooled_board(boards: Sequence[Board], prices: Prices = DEFAULT_PRICES) -> PooledBoard | None:
    """Return the pooled board of per-pack ``boards`` of one SPEC major, split and substrate
    (None when no catalogue is pooled: every board an anchor)."""
    catalogues = pooled_catalogues(boards)
    if not catalogues:
        return None
    rows: list[dict[str, Any]] = []
    tables: list[TaskTable] = []
    members: dict[str, tuple[str, ...]] = {}
    incomplete: list[Incomplete] = []
    taken: set[str] = set()
    for s in _systems(catalogues):
        ran, missing = _missing(s, catalogues)
        if missing:
            incomplete.append(Incomplete(s.name, s.signer, tuple(ran), tuple(missing)))
            continue
        key = _key(s, taken)
        parts = [(b.pack, b.tables[s.rows[b.pack]["slug"]]) for b in catalogues]
        table = joined(parts)
        tables.append(table)
        rows.append(_row(key, s, catalogues, table, prices))
        members[key] = tuple(str(s.rows[b.pack]["slug"]) for b in catalogues)
    first = catalogues[0]
    frame, facts = order_and_rank(rows, tables, prices) if rows else (pd.DataFrame(), None)
    if facts is None:
        facts = ViewFacts(
            idle=None, idle_value=None, line_after=0, mdd=1.0, n_effective=0.0, tasks=0
        )
    return PooledBoard(
        spec_major=first.spec_major,
        split=first.split,
        substrate=first.substrate,
        catalogues=tuple((str(system_of_record(b.pack)), b.pack) for b in catalogues),
        frame=frame,
        facts=facts,
        tables={r["slug"]: t for r, t in zip(rows, tables, strict=True)},
        members=members,
        incomplete=tuple(incomplete),
        prices=prices,
    )


def pooled_boards(boards: Sequence[Board], prices: Prices = DEFAULT_PRICES) -> list[PooledBoard]:
    """Return one pooled board per (SPEC major, split, substrate) of the per-pack ``boards``
    that has a catalogue to pool, in the order of the boards' first appearance."""
    groups: dict[tuple[str, str, str], list[Board]] = {}
    for b in boards:
        groups.setdefault((b.spec_major, b.split, b.substrate), []).append(b)
    out = []
    for members in groups.values():
        board = pooled_board(members, prices)
        if board is not None:
            out.append(board)
    return out


POOLED_RATES = tuple(
    (c.key, c.label, c.better)
    for c in BOARD_COLUMNS
    if c.key in ("swer", "over_halt", "record_wrong", "task_success")
)
"""The rates a pooled board's page shows beside net value: (key, label, better direction)."""


def pooled_page(templates: Path, b: PooledBoard) -> GeneratedPage:
    """Return the page of a board pooling packs (at ``pooled/<key>.md``)."""
    rows = []
    for row in b.frame.to_dict("records"):
        row["rank_text"] = rank_text(row["rank_best"], row["rank_worst"])
        row["break_even_text"] = break_even_text(row["break_even"])
        row["members"] = list(zip(b.packs, b.members[row["slug"]], strict=True))
        rows.append(row)
    names = {str(r["slug"]): str(r["system"]) for r in rows}
    # Ranked rows in the table; unsigned previews in a marked section of their own after them.
    # The default order puts more net value first, so the doing-nothing line's place among the
    # ranked rows is how many of them are among the rows at or above it.
    above = rows[: b.facts.line_after]
    template = environment(templates).get_template("pooled.html.j2")
    body = template.render(
        b=b,
        ranked_rows=[r for r in rows if r["status"] != "preview"],
        preview_rows=[r for r in rows if r["status"] == "preview"],
        line_after=sum(1 for r in above if r["status"] != "preview"),
        names=names,
        rates=POOLED_RATES,
    )
    headings = (("incomplete", "Incomplete: listed, not ranked"),) if b.incomplete else ()
    return GeneratedPage(
        f"Every system of record · {b.substrate}",
        body,
        (*headings, ("resolution", "What it can tell apart")),
        hide=("navigation",),
        search_lead=lede(body),
    )


DEAD_MARKER = "<!-- effectbench:dead-templates -->"
"""Where the methodology page lists each board's dead templates (replaced at build time)."""


def dead_section(titled: Sequence[tuple[str, ViewFacts | None]]) -> str:
    """Return the markdown listing each board's dead units (``titled``: each board's title and
    facts, per-pack boards then pooled ones)."""
    lines = []
    for title, facts in titled:
        dead = facts.dead if facts is not None else None
        if dead is None or dead.share is None:
            continue
        names = ", ".join(f"<code>{escape(u)}</code>" for u in dead.dead) or "none"
        lines.append(
            f"- **{escape(title)}**: {len(dead.dead)} of {dead.units} {dead.unit}s "
            f"({100 * dead.share:.1f}%) across its {dead.systems} ranked systems: {names}"
        )
    return "\n".join(lines) if lines else "No board has two ranked systems yet."


def methodology_text(source: str, titled: Sequence[tuple[str, ViewFacts | None]]) -> str:
    """Return the methodology page's markdown with its dead-templates list filled in
    (:func:`dead_section`); ``source`` must hold :data:`DEAD_MARKER` once."""
    if source.count(DEAD_MARKER) != 1:
        raise SiteBuildError(
            f"the methodology page must hold the line {DEAD_MARKER} once (found "
            f"{source.count(DEAD_MARKER)}): its dead-templates list goes there"
        )
    return source.replace(DEAD_MARKER, dead_section(titled))
