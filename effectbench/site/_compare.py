"""The compare view's data: every board's episodes, one outcome letter per episode and system.

Two systems on one board (one substrate of a pack) are compared on the episodes both ran,
paired by (task, trial, seed) and clustered by task. With hundreds of systems a board has too
many pairs to render each, so the build publishes one small script per board
(``compare/KEY.js``) and the compare page (``site/assets/compare.js``) counts each
task's episodes in the browser and applies the formulas of
:func:`effectbench.metrics.rate_difference` and :func:`effectbench.metrics.value_difference`
there (with the leaderboard script's statistics). Every system is named with its substrate.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any

import pyarrow as pa

from effectbench.metrics import (
    CONFIDENCE,
    MAX_PRICE,
    PRICE_PRESETS,
    VALUE_EVENTS,
    min_shared_tasks,
    t_table,
)
from effectbench.schema import Outcome, SwerVariant
from effectbench.site._pages import OUTCOME_CODES, ROWS_INLINE, BoardView
from effectbench.site._prices import chunked, price_list
from effectbench.site._scripts import part_scripts, registering
from effectbench.site._tables import BOARD_COLUMNS, named

MISSING = "."
"""The letter of an episode a system did not run."""
PAIR_KEY = ("task_id", "trial", "seed")
"""What makes two episodes a pair: the same task, trial and seed."""
PHANTOM = "P"
"""The compare letter of a silent wrong effect that wrote nothing (``W`` is a wrong write)."""
COMPARE_RATES = ("swer", "over_halt", "record_wrong", "task_success")
"""The rates the compare view differences, in order."""
EVENT_LETTERS = {
    "swer": [OUTCOME_CODES[Outcome.SILENT_WRONG_EFFECT.value], PHANTOM],
    "over_halt": [OUTCOME_CODES[Outcome.OVER_HALT.value]],
    "record_wrong": [
        OUTCOME_CODES[Outcome.SILENT_WRONG_EFFECT.value],
        OUTCOME_CODES[Outcome.WRONG_ACTION.value],
    ],
    "task_success": [OUTCOME_CODES[Outcome.SUCCESS.value]],
}
"""The letters each rate counts (the same events as :func:`effectbench.metrics.episode_events`;
a test holds them equal)."""


def outcome_letter(outcome: str, variant: str) -> str:
    """Return an episode's letter: the outcome's (:data:`OUTCOME_CODES`), a phantom's ``P``."""
    if outcome == Outcome.SILENT_WRONG_EFFECT.value and variant == SwerVariant.PHANTOM.value:
        return PHANTOM
    return OUTCOME_CODES.get(outcome, "?")


def _episodes(table: pa.Table) -> list[tuple[tuple[str, int, int], str, str, str]]:
    if table.num_rows == 0:
        return []
    columns = [table.column(c).to_pylist() for c in (*PAIR_KEY, "category", "substrate")]
    outcomes = table.column("outcome").to_pylist()
    variants = table.column("swer_variant").to_pylist()
    return [
        ((str(t), int(tr), int(sd)), str(cat), str(sub), outcome_letter(str(o), str(v)))
        for t, tr, sd, cat, sub, o, v in zip(*columns, outcomes, variants, strict=True)
    ]


def compare_data(
    view: BoardView, rows_of: dict[str, pa.Table], receipts: Collection[str] = ()
) -> dict[str, Any]:
    """Return one board's compare data (systems in the board's default order; ``receipts``:
    the systems whose receipts the site publishes, whose episodes the view links side by side).

    The episodes are those at least two systems ran; each system has one letter per episode
    (:data:`MISSING` where it did not run it) and the number of episodes it ran (``ran``), from
    which the view tells how many episodes of a pair only one of them ran.
    """
    per_system = {row["slug"]: _episodes(rows_of[row["slug"]]) for row in view.rows}
    where = _shared_episodes(per_system.values())
    keys = sorted(where)
    index = {k: i for i, k in enumerate(keys)}
    systems = [
        _compare_system(row, per_system[row["slug"]], index, row["slug"] in receipts)
        for row in view.rows
    ]
    labels = {c.key: c for c in BOARD_COLUMNS}
    return {
        "title": view.title,
        "episodes": [[*k, *where[k]] for k in keys],
        "systems": systems,
        "rates": [
            {"key": key, "label": labels[key].label, "better": labels[key].better or ""}
            for key in COMPARE_RATES
        ],
        "events": EVENT_LETTERS,
        "value_events": list(VALUE_EVENTS),
        "prices": price_list(view.prices),
        "price_rules": {
            "defaults": price_list(view.prices),
            "max": MAX_PRICE,
            "presets": {k: price_list(w) for k, (_, w) in PRICE_PRESETS.items()},
        },
        "min_tasks": min_shared_tasks(CONFIDENCE),
        "t95": t_table(CONFIDENCE, len({k[0] for k in keys})),
        "legend": " · ".join(_legend()),
    }


def _shared_episodes(
    per_system: Iterable[list[tuple[tuple[str, int, int], str, str, str]]],
) -> dict[tuple[str, int, int], tuple[str, str]]:
    """The (category, substrate) of each episode at least two systems ran.

    An episode one system alone ran pairs with nothing: a fresh instance's (its tasks are
    drawn for that submission) would otherwise lengthen every system's letters, so the data
    would grow with the square of the fresh submissions. Each system says how many it ran.
    """
    where: dict[tuple[str, int, int], tuple[str, str]] = {}
    runs: dict[tuple[str, int, int], int] = {}
    for episodes in per_system:
        for key, cat, sub, _ in episodes:
            where.setdefault(key, (cat, sub))
            runs[key] = runs.get(key, 0) + 1
    return {k: v for k, v in where.items() if runs[k] > 1}


def _compare_system(
    row: dict[str, Any],
    episodes: list[tuple[tuple[str, int, int], str, str, str]],
    index: dict[tuple[str, int, int], int],
    receipts: bool,
) -> dict[str, Any]:
    """One system's part of the compare data: its letter on each shared episode."""
    letters = [MISSING] * len(index)
    for key, _, _, letter in episodes:
        at = index.get(key)
        if at is not None:
            letters[at] = letter
    return {
        "slug": row["slug"],
        "name": row["system"],
        "label": named(row["system"], row["substrate"]),
        "status": row["status"],
        "rank": row["rank_text"] if row["rank_text"] != "—" else "",
        "outcomes": "".join(letters),
        "ran": len(episodes),
        "receipts": receipts,
    }


def _legend() -> list[str]:
    """Each outcome's letter and name (a silent wrong write's with the phantom's)."""
    return [
        f"{code} {name}"
        if name != Outcome.SILENT_WRONG_EFFECT.value
        else f"{code} silent wrong write · {PHANTOM} phantom"
        for name, code in OUTCOME_CODES.items()
    ]


def compare_script(key: str, data: dict[str, Any]) -> str:
    """Return ``compare/KEY.js``: registers the board's data for the compare page."""
    return registering("EB_COMPARE", key, data)


def compare_scripts(
    views: Sequence[BoardView],
    rows_of: dict[str, pa.Table],
    receipts: Collection[str] = (),
    rows_inline: int = ROWS_INLINE,
) -> dict[str, str]:
    """Return every board's compare script, and its parts where a board has more systems than
    ``rows_inline``, by site path.

    The board's script holds its first ``rows_inline`` systems and says how many parts hold
    the rest (``parts``); each part (``compare/KEY-N.js``, registered as
    ``EB_COMPARE_MORE["KEY/N"]``) holds the next systems, at most
    :data:`~effectbench.site._prices.SHARD_BYTES` of them. The page loads a board's parts
    when it shows that board.
    """
    out: dict[str, str] = {}
    for v in views:
        data = compare_data(v, rows_of, receipts)
        systems = data["systems"]
        parts = chunked(systems[rows_inline:])
        data["systems"] = systems[:rows_inline]
        data["parts"] = len(parts)
        out[f"compare/{v.key}.js"] = compare_script(v.key, data)
        out |= part_scripts("compare", "EB_COMPARE_MORE", v.key, [{"systems": p} for p in parts])
    return out
