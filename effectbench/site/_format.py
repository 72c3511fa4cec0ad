"""How a net value and a break-even value are written, on the pages and by ``effectbench rank``.

Kept apart from the page and chart modules so the command line prints them without importing
a template engine or a chart library; ``site/assets/leaderboard.js`` writes them the same way.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from effectbench.metrics import Difference, Resolution


def signed(x: Any) -> str:
    """Return a net value per 100 tasks with its sign and one decimal (``+111.1``, ``-4.0``,
    ``0.0``), as the board script writes it; ``—`` for none."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    text = to_fixed(float(x), 1)
    if text in ("-0.0", "0.0"):
        return "0.0"
    return text if text.startswith("-") else f"+{text}"


def break_even_text(x: Any) -> str:
    """Return what a break-even value says (as the board script writes it): the value of a
    correct effect above which the system beats doing nothing; empty when not known."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    x = float(x)
    if math.isinf(x):
        return "never beats doing nothing"
    if x == 0:
        return "beats doing nothing at any value"
    return f"break-even {to_fixed(x, 2)}" if x < 1 else f"break-even {to_fixed(x, 1)}"


def to_fixed(x: float, digits: int) -> str:
    """Return ``x`` with ``digits`` decimals as JavaScript's ``Number.toFixed`` writes it: the
    float's exact value rounded, a tie going up (Python's ``format`` sends a tie to even, so
    1.25 would read 1.2 here and 1.3 in the browser)."""
    exact = Decimal(x).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return f"{exact:f}"


def against_nothing(lo: Any, hi: Any) -> str:
    """Return, in words, whether a net value's interval (``lo``, ``hi``: against doing nothing,
    which is 0) clears doing nothing: the verdict a reader of a board card needs first."""
    if lo > 0:
        return "above doing nothing"
    if hi < 0:
        return "below doing nothing"
    return "within noise of doing nothing"


def verdict(d: Difference, first: str, second: str) -> tuple[str, str]:
    """Return what a difference says in words (every rate here is lower-is-better), and the
    class the page marks it with."""
    if d.tasks == 0:
        return f"no task ran on both {first} and {second}", "eb-cmp-tie"
    if d.tasks < d.min_tasks:
        return f"too few common tasks to tell ({d.tasks} of the {d.min_tasks} needed)", "eb-cmp-tie"
    if d.lo > 0:
        return f"higher on {first} (worse)", "eb-cmp-first"
    if d.hi < 0:
        return f"lower on {first} (better)", "eb-cmp-second"
    return "no difference beyond noise", "eb-cmp-tie"


def resolution_text(r: Resolution) -> str:
    """Return a pair's resolution of one measure in words (the board and ``effectbench rank``):
    the paired figure with G, s_d and its method, or why there is none, and the figure with the
    units held fixed, labelled as holding for these units only."""
    what = "points" if r.measure == "swer" else "per 100 tasks"
    fixed = (
        f"{r.fixed_mdd:.1f} {what} with the {r.unit}s held fixed ({r.fixed_note})"
        if r.fixed_mdd is not None
        else f"with the {r.unit}s held fixed {r.fixed_note}"
    )
    if r.paired_mdd is None:
        return f"{r.paired_note}; {fixed}"
    return (
        f"{r.paired_mdd:.1f} {what} paired ({r.paired_units} {r.unit}s, s_d {r.paired_sd:.1f}, "
        f"{r.paired_method}); {fixed}"
    )
