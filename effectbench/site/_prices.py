"""The board scripts: what the browser needs to re-rank a board at a reader's prices.

For every pack's table (one board per substrate) the build publishes each system's rows
counted per task (``boards/KEY.js``, KEY the pack's anchor); ``site/assets/leaderboard.js``
recomputes the net values, their intervals, the break-even values, the default order
(:mod:`effectbench.verdicts`) and the rank ranges from them when the prices in the page's
address differ from the board's. Each board's family-wise level (its normal quantile) and
the fewest tasks a difference needs are computed here and shipped with the data (they do not
depend on the prices), so the browser needs no statistics library.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from effectbench.metrics import MAX_PRICE, PRICE_PRESETS, Prices, z_of
from effectbench.site._pages import BoardView, board_groups

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
                    "t": [index[t] for t in table.task_id],
                    "m": table.trials,
                    **{short: table.events[event] for short, event in EVENT_KEYS.items()},
                }
            )
        out[view.substrate] = {
            "board": view.key,
            "tasks": ids,
            "idle": None if facts is None else facts.idle,
            "z": z_of(facts.confidence) if facts is not None else z_of(0.95),
            "min_tasks": facts.min_tasks if facts is not None else 0,
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
    body = orjson.dumps(data).decode()
    name = orjson.dumps(key).decode()
    return f"window.EB_BOARD = window.EB_BOARD || {{}};\nwindow.EB_BOARD[{name}] = {body};\n"


def board_scripts(views: Sequence[BoardView]) -> dict[str, str]:
    """Return every pack's board script, by site path."""
    return {
        f"boards/{g.key}.js": board_script(g.key, board_data(g.views)) for g in board_groups(views)
    }
