"""A board's hierarchical bootstrap intervals beside its analytic ones: the check of the
intervals ``rank --json`` and ``leaderboard.json`` carry under ``hierarchical_bootstrap``.

Per row, the system's net value per 100 tasks against doing nothing with its analytic interval
(the board's) and the bootstrap's (:func:`~effectbench.metrics.bootstrap.bootstrap_value`);
per pair, the paired difference with both (:func:`~effectbench.metrics.value_difference`,
:func:`~effectbench.metrics.bootstrap.bootstrap_difference`). One function makes the block for
both outputs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from effectbench.metrics import value_difference
from effectbench.metrics.bootstrap import (
    HIERARCHICAL_LEVELS,
    HIERARCHICAL_METHOD,
    HIERARCHICAL_REPLICATES,
    HIERARCHICAL_SEED,
    BootstrapInterval,
    bootstrap_difference,
    bootstrap_value,
)

if TYPE_CHECKING:
    from effectbench.site._tables import Board

BOOTSTRAP_KEY = "hierarchical_bootstrap"
"""The key of the block in a board's JSON."""


def _finite(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) or math.isinf(x) else float(x)


def _boot(b: BootstrapInterval) -> dict[str, Any]:
    return {
        "bootstrap_lo": _finite(b.lo),
        "bootstrap_hi": _finite(b.hi),
        "templates": b.templates,
        "tasks": b.tasks,
        "note": b.note,
    }


def adjacent_pairs(board: Board) -> list[tuple[str, str]]:
    """Each two systems next to each other in the board's default order (by slug)."""
    slugs = [str(s) for s in board.frame["slug"]]
    return list(zip(slugs, slugs[1:], strict=False))


def all_pairs(board: Board) -> list[tuple[str, str]]:
    """Every two systems of the board, in the default order (by slug)."""
    slugs = [str(s) for s in board.frame["slug"]]
    return [(x, y) for i, x in enumerate(slugs) for y in slugs[i + 1 :]]


def bootstrap_block(
    board: Board,
    pairs: Sequence[tuple[str, str]],
    replicates: int = HIERARCHICAL_REPLICATES,
) -> dict[str, Any]:
    """Return the board's :data:`BOOTSTRAP_KEY` block: every row's value and each of
    ``pairs``' paired difference of value per 100 tasks, each with its analytic 95% interval
    and its hierarchical bootstrap one (no NaN, no infinity: a limit that is not estimable is
    null, with the note saying why)."""
    rows = []
    for row in board.frame.to_dict("records"):
        table = board.tables[row["slug"]]
        rows.append(
            {
                "slug": row["slug"],
                "value": float(row["value"]),
                "analytic_lo": _finite(float(row["value_lo"])),
                "analytic_hi": _finite(float(row["value_hi"])),
                **_boot(bootstrap_value(table, board.prices, replicates)),
            }
        )
    out_pairs = []
    for first, second in pairs:
        a, b = board.tables[first], board.tables[second]
        d = value_difference(a, b, board.prices)
        out_pairs.append(
            {
                "first": first,
                "second": second,
                "difference": d.difference,
                "analytic_lo": _finite(d.lo),
                "analytic_hi": _finite(d.hi),
                **_boot(bootstrap_difference(a, b, board.prices, replicates)),
            }
        )
    return {
        "method": HIERARCHICAL_METHOD,
        "levels": list(HIERARCHICAL_LEVELS),
        "replicates": replicates,
        "seed": HIERARCHICAL_SEED,
        "confidence": 0.95,
        "rows": rows,
        "pairs": out_pairs,
    }
