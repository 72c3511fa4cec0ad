"""The board scripts: what the browser needs to re-rank a board at a reader's prices.

For every view of a board (``all`` and each substrate) the build publishes each system's
rows counted per task (``boards/KEY.js``); ``site/assets/leaderboard.js`` recomputes the
expected costs, their intervals, the default order (:mod:`effectbench.verdicts`) and the
rank ranges from them when the prices in the page's address differ from the board's.
Student's t quantiles are computed here (:func:`effectbench.metrics.student_t_quantile`)
and shipped with the data, so the browser needs no statistics library.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from effectbench.metrics import COST_PRESETS, MAX_COST_WEIGHT, student_t_quantile
from effectbench.site._pages import BoardView

EVENT_KEYS = {
    "s": "swer",
    "r": "record_wrong",
    "o": "over_halt",
    "c": "correct_effect",
    "h": "halt",
}
"""Short keys of the per-task counts in a board script (``h``: safe halts plus over-halts)."""


def board_data(view: BoardView) -> dict[str, Any]:
    """Return one board's re-ranking data."""
    views: dict[str, Any] = {}
    most = 1
    for name, rows, facts in view.bodies:
        tables = view.tables.get(name, {})
        ids = sorted({t for table in tables.values() for t in table.task_id})
        index = {t: i for i, t in enumerate(ids)}
        most = max(most, len(ids))
        systems = []
        for row in rows:
            table = tables[row["slug"]]
            halts = [
                a + b
                for a, b in zip(table.events["safe_halt"], table.events["over_halt"], strict=True)
            ]
            counts = {
                short: halts if event == "halt" else table.events[event]
                for short, event in EVENT_KEYS.items()
            }
            systems.append(
                {
                    "slug": row["slug"],
                    "name": row["system"],
                    "status": row["status"],
                    "t": [index[t] for t in table.task_id],
                    "m": table.trials,
                    **counts,
                }
            )
        views[name] = {
            "tasks": ids,
            "idle": None if facts is None else facts.idle_over_halt,
            "systems": systems,
        }
    return {
        "defaults": list(view.costs.as_tuple()),
        "max": MAX_COST_WEIGHT,
        "presets": {k: list(w.as_tuple()) for k, (_, w) in COST_PRESETS.items()},
        "t975": [student_t_quantile(0.975, df) for df in range(1, most)],
        "views": views,
    }


def board_script(key: str, data: dict[str, Any]) -> str:
    """Return ``boards/KEY.js``: registers the board's data for the board script."""
    body = orjson.dumps(data).decode()
    name = orjson.dumps(key).decode()
    return f"window.EB_BOARD = window.EB_BOARD || {{}};\nwindow.EB_BOARD[{name}] = {body};\n"


def board_scripts(views: Sequence[BoardView]) -> dict[str, str]:
    """Return every board's script, by site path."""
    return {f"boards/{v.key}.js": board_script(v.key, board_data(v)) for v in views}
