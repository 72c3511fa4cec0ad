"""The compare view's data: every board's episodes, one outcome letter per episode and system.

Two systems on one board are compared on the episodes both ran, paired by
(task, trial, seed). With hundreds of systems a board has too many pairs to
render each, so the build publishes one small script per board
(``compare/KEY.js``) and the compare page (``site/assets/compare.js``) counts
the pairs in the browser and applies :func:`effectbench.metrics.paired_difference`'s
formula there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
import pyarrow as pa

from effectbench.metrics import RATE_OUTCOMES
from effectbench.site._pages import OUTCOME_CODES, BoardView
from effectbench.site._tables import BOARD_COLUMNS

MISSING = "."
"""The letter of an episode a system did not run."""
PAIR_KEY = ("task_id", "trial", "seed")
"""What makes two episodes a pair: the same task, trial and seed."""


def _episodes(table: pa.Table) -> list[tuple[tuple[str, int, int], str, str, str]]:
    if table.num_rows == 0:
        return []
    columns = [table.column(c).to_pylist() for c in (*PAIR_KEY, "category", "substrate")]
    outcomes = table.column("outcome").to_pylist()
    return [
        ((str(t), int(tr), int(sd)), str(cat), str(sub), str(o))
        for t, tr, sd, cat, sub, o in zip(*columns, outcomes, strict=True)
    ]


def compare_data(view: BoardView, rows_of: dict[str, pa.Table]) -> dict[str, Any]:
    """Return one board's compare data (systems in the board's default order)."""
    per_system = {row["slug"]: _episodes(rows_of[row["slug"]]) for row in view.rows}
    where: dict[tuple[str, int, int], tuple[str, str]] = {}
    for episodes in per_system.values():
        for key, cat, sub, _ in episodes:
            where.setdefault(key, (cat, sub))
    keys = sorted(where)
    index = {k: i for i, k in enumerate(keys)}
    systems = []
    for row in view.rows:
        letters = [MISSING] * len(keys)
        for key, _, _, outcome in per_system[row["slug"]]:
            letters[index[key]] = OUTCOME_CODES.get(outcome, "?")
        systems.append(
            {
                "slug": row["slug"],
                "name": row["system"],
                "status": row["status"],
                "rank": row["rank_text"] if row["rank_text"] != "—" else "",
                "outcomes": "".join(letters),
            }
        )
    labels = {c.key: c for c in BOARD_COLUMNS}
    return {
        "title": view.title,
        "episodes": [[*k, *where[k]] for k in keys],
        "systems": systems,
        "rates": [
            {"key": key, "label": labels[key].label, "better": labels[key].better or ""}
            for key in RATE_OUTCOMES
        ],
        "events": {key: [OUTCOME_CODES[o.value]] for key, o in RATE_OUTCOMES.items()},
        "legend": " · ".join(f"{code} {name}" for name, code in OUTCOME_CODES.items()),
    }


def compare_script(key: str, data: dict[str, Any]) -> str:
    """Return ``compare/KEY.js``: registers the board's data for the compare page."""
    body = orjson.dumps(data).decode()
    name = orjson.dumps(key).decode()
    return f"window.EB_COMPARE = window.EB_COMPARE || {{}};\nwindow.EB_COMPARE[{name}] = {body};\n"


def compare_scripts(views: Sequence[BoardView], rows_of: dict[str, pa.Table]) -> dict[str, str]:
    """Return every board's compare script, by site path."""
    return {f"compare/{v.key}.js": compare_script(v.key, compare_data(v, rows_of)) for v in views}
