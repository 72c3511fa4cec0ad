"""The board scripts: what the browser needs to re-rank a board at a reader's prices.

For every pack's table (one board per substrate) the build publishes each system's rows
counted per task (``boards/KEY.js``, KEY the pack's anchor); ``site/assets/leaderboard.js``
recomputes the net values, their intervals, the break-even values, the default order
(:mod:`effectbench.verdicts`) and the rank ranges from them when the prices in the page's
address differ from the board's. Student's t of each board's family-wise level and of 95%,
for every degrees of freedom its units allow, and the fewest tasks a difference needs are
computed here and shipped with the data (they do not depend on the prices), so the browser
needs no statistics library.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import orjson

from effectbench.metrics import (
    MAX_PRICE,
    PRICE_PRESETS,
    Prices,
    TaskTable,
    family_confidence,
    min_shared_tasks,
    t_table,
)
from effectbench.site._pages import ROWS_INLINE, BoardView, board_groups, board_rows_html
from effectbench.site._scripts import part_scripts, registering

EVENT_KEYS = {
    "y": "task_success",
    "s": "swer",
    "r": "record_wrong",
    "o": "over_halt",
}
"""Short keys of the per-task counts in a board script, in the order of
:data:`effectbench.metrics.VALUE_EVENTS`."""


def price_list(p: Prices) -> list[float]:
    """Return prices as the board script reads them: ``[value, silent, wrong_record,
    over_halt]``."""
    return [p.value, *p.harms()]


def _available(table: TaskTable) -> list[int] | None:
    """Each unit's episodes whose correct action was available, as the board script reads
    them (None when not known)."""
    a = table.a()
    return None if a is None else [int(round(float(x))) for x in a]


def tier_families(rows: Sequence[dict[str, Any]], units: int) -> dict[str, dict[str, Any]]:
    """Return, per trust tier of a board's ranked ``rows``, the level its rows are ranked at
    when the board is filtered to it (the tier's rows are the family): Student's t at that
    family-wise level for every degrees of freedom its ``units`` allow, and the fewest common
    tasks a difference at that level needs."""
    sizes: dict[str, int] = {}
    for row in rows:
        sizes[row["tier"]] = sizes.get(row["tier"], 0) + 1
    out = {}
    for tier, n in sizes.items():
        level = family_confidence(n)
        out[tier] = {"t": t_table(level, units), "min_tasks": min_shared_tasks(level)}
    return out


def board_data(views: Sequence[BoardView]) -> dict[str, Any]:
    """Return the re-ranking data of one pack's boards (``views``: one per substrate)."""
    out: dict[str, Any] = {}
    for view in views:
        ids = sorted({t for table in view.tables.values() for t in table.task_id})
        index = {t: i for i, t in enumerate(ids)}
        facts = view.facts
        systems = []
        for row in view.rows:
            table = view.tables[row["slug"]]
            systems.append(
                {
                    "slug": row["slug"],
                    "name": row["system"],
                    "status": row["status"],
                    "tier": row["tier"],
                    "t": [index[t] for t in table.task_id],
                    "m": table.trials,
                    **{short: table.events[event] for short, event in EVENT_KEYS.items()},
                    "a": _available(table),
                }
            )
        out[view.substrate] = {
            "board": view.key,
            "tasks": ids,
            "idle": None if facts is None else facts.idle,
            "t": t_table(facts.confidence if facts is not None else 0.95, len(ids)),
            "t95": t_table(0.95, len(ids)),
            "min_tasks": facts.min_tasks if facts is not None else 0,
            "tiers": tier_families(view.ranked_rows, len(ids)),
            "systems": systems,
        }
    first = views[0].prices
    return {
        "defaults": price_list(first),
        "max": MAX_PRICE,
        "presets": {k: price_list(w) for k, (_, w) in PRICE_PRESETS.items()},
        "views": out,
    }


def board_script(key: str, data: dict[str, Any]) -> str:
    """Return ``boards/KEY.js``: registers the board's data for the board script."""
    return registering("EB_BOARD", key, data)


SHARD_BYTES = 512 * 1024
"""The most a shard a page loads on request holds (as JSON): a board's rows, a compare
board's systems."""

T = TypeVar("T")


def chunked(items: Sequence[T], limit: int = SHARD_BYTES) -> list[list[T]]:
    """Return ``items``, in order, in runs of at most ``limit`` bytes of JSON each (an item
    larger than that alone is a run of its own)."""
    out: list[list[T]] = []
    size = limit
    for item in items:
        weight = len(orjson.dumps(item)) + 1
        if size + weight > limit:
            out.append([])
            size = 0
        out[-1].append(item)
        size += weight
    return out


@dataclass(frozen=True)
class BoardScripts:
    """The board scripts of a build: ``files`` by site path; ``shards``, per board with more
    rows than the home page holds, how many row shards it has."""

    files: dict[str, str]
    shards: dict[str, int]


def board_scripts(
    views: Sequence[BoardView], templates: Path, rows_inline: int = ROWS_INLINE
) -> BoardScripts:
    """Return every pack's board script, and each board's row shards where a board has more
    rows than the home page holds (``rows_inline``).

    The pack's script carries the per-task counts of the rows on the page; a shard
    (``boards/BOARD-N.js``, registered as ``EB_MORE["BOARD/N"]``) carries the next rows' HTML
    (:func:`effectbench.site._pages.board_rows_html`) and their counts, so the page re-ranks at
    other prices only once every shard of the board is in.
    """
    files: dict[str, str] = {}
    shards: dict[str, int] = {}
    for g in board_groups(views):
        data = board_data(g.views)
        for view in g.views:
            systems = data["views"][view.substrate]["systems"]
            data["views"][view.substrate]["systems"] = systems[:rows_inline]
            if len(systems) <= rows_inline:
                continue
            rows = board_rows_html(templates, g, view, rows_inline)
            parts = chunked(list(zip(rows, systems[rows_inline:], strict=True)))
            shards[view.key] = len(parts)
            files |= part_scripts(
                "boards",
                "EB_MORE",
                view.key,
                [{"rows": [r for r, _ in p], "systems": [x for _, x in p]} for p in parts],
            )
        files[f"boards/{g.key}.js"] = board_script(g.key, data)
    return BoardScripts(files, shards)
