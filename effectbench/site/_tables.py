"""The site's tables, as pandas frames: boards, rank ranges, cells, downloads.

Every number comes from a recomputed :class:`~effectbench.metrics.Results`;
this module only arranges them. Ranks are ranges, not points: a system's best
rank counts the systems whose interval lies wholly below its own, its worst
rank the systems whose interval does not lie wholly above it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa

from effectbench.bundle import slugify
from effectbench.metrics import Cell, Rate, Results, substrate_totals
from effectbench.schema import Substrate
from effectbench.site._entries import Entry

RATES = ("swer", "over_halt", "task_success", "screen_success", "swer_wrong_write", "swer_phantom")
"""The rate columns of a board, in display order."""

Better = Literal["lower", "higher"] | None
Direction = Literal["asc", "desc"]


@dataclass(frozen=True)
class BoardColumn:
    """One column of a leaderboard: its header, tooltip, better direction and sorting."""

    key: str
    label: str
    title: str
    better: Better = None
    """The better direction (said in words under the header); None when neither is better."""
    numeric: bool = False
    """Sorted by number (each cell carries ``data-sort``); otherwise by text."""
    default_sort: bool = False
    first: Direction = "asc"
    """The direction of the first click on the column: best first where one is better."""
    collapsible: bool = False
    """Shown in the board's header instead when every row of the board has the same value."""


BOARD_COLUMNS = (
    BoardColumn(
        "rank",
        "Rank",
        "Rank range on SWER from interval overlap: best rank counts systems whose interval "
        "lies wholly below, worst rank those not wholly above. Previews are not ranked.",
        numeric=True,
    ),
    BoardColumn(
        "system", "System", "The system under test; badges say why its numbers are believed"
    ),
    BoardColumn(
        "swer",
        "SWER",
        "Silent wrong-effect rate: reported success, but the record is wrong or absent. "
        "Lower is better.",
        "lower",
        numeric=True,
        default_sort=True,
    ),
    BoardColumn(
        "over_halt",
        "Over-halt",
        "Over-halt rate: halted although the correct action was available. Lower is better. "
        "Always read beside SWER.",
        "lower",
        numeric=True,
    ),
    BoardColumn(
        "task_success",
        "Task success",
        "Task success: the record holds exactly the declared effect. Higher is better.",
        "higher",
        numeric=True,
        first="desc",
    ),
    BoardColumn(
        "screen_success",
        "Screen success",
        "Screen success: the system reported success (what a screen-only grader would score). "
        "Neither direction is better on its own.",
        numeric=True,
        first="desc",
    ),
    BoardColumn(
        "gap",
        "Gap",
        "Success-effect gap: screen success minus task success, in points, with its bootstrap "
        "interval. Lower is better.",
        "lower",
        numeric=True,
    ),
    BoardColumn(
        "trials",
        "Trials",
        "Trials per task; below, n (episodes scored) and the trials dropped",
        numeric=True,
        first="desc",
    ),
    BoardColumn(
        "pack",
        "Pack",
        "The pack and its fingerprint (the full hash on hover)",
        collapsible=True,
    ),
    BoardColumn("spec_version", "Spec", "SPEC version the run was scored under", collapsible=True),
    BoardColumn(
        "date",
        "Date",
        "Date verified: the signature's log time, or the maintainers' list for a reference "
        "bundle (never the folder name)",
        first="desc",
    ),
)
"""The columns of every board, in display order (the template and the tests read this)."""


@dataclass(frozen=True)
class Board:
    """One leaderboard: the accepted bundles of one SPEC major on one pack and split."""

    spec_major: str
    pack: str
    fingerprints: tuple[str, ...]
    frame: pd.DataFrame
    """One row per entry, in the default order (:func:`order_and_rank`)."""
    substrates: tuple[str, ...] = ()
    """The substrates the board's entries ran, in SPEC order."""
    views: dict[str, pd.DataFrame] = field(default_factory=dict)
    """Per substrate (when the board has more than one): the rows of the entries that ran it,
    with that substrate's rates, ordered and ranked on their own."""
    split: str = "dev"
    """The pack split every entry of the board ran (a test run never shares a dev board)."""

    @property
    def key(self) -> str:
        """Return the anchor id of the board (``spec1-mockmed-anchor``; ``-test`` for test)."""
        suffix = "" if self.split == "dev" else f"-{self.split}"
        return slugify(f"spec{self.spec_major}-{self.pack}{suffix}")

    @property
    def title(self) -> str:
        """Return the heading of the board (the split always said)."""
        return f"{self.pack} · {self.split} split · SPEC {self.spec_major}.x"


SUBSTRATE_ORDER = tuple(s.value for s in Substrate)


def substrate_order(names: Iterable[str]) -> tuple[str, ...]:
    """Return substrate names in SPEC order (unknown names after, alphabetically)."""
    known = {name: i for i, name in enumerate(SUBSTRATE_ORDER)}
    return tuple(sorted(set(names), key=lambda n: (known.get(n, len(known)), n)))


def rank_ranges(lo: Sequence[float], hi: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """Return (best, worst) ranks (1-based, lower value ranks first) from interval overlap.

    ``best[i]`` is 1 + the number of intervals wholly below interval i;
    ``worst[i]`` is the number of intervals not wholly above it (itself included).
    """
    lo_a = np.asarray(lo, dtype=float)
    hi_a = np.asarray(hi, dtype=float)
    best = np.searchsorted(np.sort(hi_a), lo_a, side="left") + 1
    worst = np.searchsorted(np.sort(lo_a), hi_a, side="right")
    return best.astype(int), worst.astype(int)


def _rate_columns(prefix: str, r: Rate) -> dict[str, Any]:
    return {
        f"{prefix}": r.rate,
        f"{prefix}_k": r.numerator,
        f"{prefix}_n": r.denominator,
        f"{prefix}_lo": r.ci.lo,
        f"{prefix}_hi": r.ci.hi,
    }


def entry_row(entry: Entry) -> dict[str, Any]:
    """Return the flat board row of an accepted entry."""
    res = entry.results
    assert res is not None, "only accepted entries have a board row"
    row: dict[str, Any] = {
        "slug": entry.slug,
        "system": entry.name,
        "status": entry.status,
        "baseline": entry.baseline or "",
        "signer": entry.signer.identity if entry.signer else "",
        "signer_issuer": entry.signer.issuer if entry.signer else "",
        "reproduced": bool(entry.reproduced),
        "same_as": entry.same_as,
        "spec_version": entry.spec_version,
        "pack": entry.pack,
        "fingerprint": entry.fingerprint,
        "trials": entry.trials if entry.trials is not None else 0,
        "n_episodes": res.n_episodes,
        "n_tasks": res.n_tasks,
        "n_dropped": entry.n_dropped,
        "split": entry.split,
        "measured": entry.measured,
        "date": entry.date,
        "gap": res.success_effect_gap,
        "gap_lo": res.success_effect_gap_ci.lo if res.success_effect_gap_ci else np.nan,
        "gap_hi": res.success_effect_gap_ci.hi if res.success_effect_gap_ci else np.nan,
    }
    for name in RATES:
        row.update(_rate_columns(name, getattr(res, name)))
    return row


def substrate_row(entry: Entry, cell: Cell) -> dict[str, Any]:
    """Return the board row of an entry restricted to one substrate (``cell``: its totals)."""
    row = entry_row(entry)
    row.update(n_episodes=cell.n, gap=cell.success_effect_gap, gap_lo=np.nan, gap_hi=np.nan)
    for name in RATES:
        row.update(_rate_columns(name, getattr(cell, name)))
    return row


DEFAULT_ORDER = ("swer", "over_halt", "system", "slug")
"""The default order of every board: SWER, then over-halt, then system name (then folder).
The browser breaks every tie of a later sort by this order too."""


def order_and_rank(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """Return ``rows`` as a frame in the default order, rank ranges filled in.

    Ranks cover ``ranked`` rows only; a ``preview`` row is shown unranked.
    """
    frame = pd.DataFrame(list(rows))
    frame = frame.sort_values(list(DEFAULT_ORDER), kind="mergesort").reset_index(drop=True)
    frame["rank_best"] = pd.array([pd.NA] * len(frame), dtype="Int64")
    frame["rank_worst"] = pd.array([pd.NA] * len(frame), dtype="Int64")
    ranked = frame["status"] == "ranked"
    if ranked.any():
        best, worst = rank_ranges(frame.loc[ranked, "swer_lo"], frame.loc[ranked, "swer_hi"])
        frame.loc[ranked, "rank_best"] = best
        frame.loc[ranked, "rank_worst"] = worst
    return frame


def boards(entries: Iterable[Entry]) -> list[Board]:
    """Group accepted entries into one board per (SPEC major, pack, split), ranks filled in.

    A board whose entries ran more than one substrate also gets one view per
    substrate (:attr:`Board.views`).
    """
    groups: dict[tuple[str, str, str], list[Entry]] = {}
    for e in entries:
        if e.accepted:
            groups.setdefault(e.board_key, []).append(e)
    out = []
    for (major, pack, split), members in sorted(groups.items()):
        frame = order_and_rank([entry_row(e) for e in members])
        per_entry = {e.slug: substrate_totals(_results(e)) for e in members}
        substrates = substrate_order(c.substrate for cells in per_entry.values() for c in cells)
        views: dict[str, pd.DataFrame] = {}
        if len(substrates) > 1:
            for sub in substrates:
                rows = [
                    substrate_row(e, cell)
                    for e in members
                    for cell in per_entry[e.slug]
                    if cell.substrate == sub
                ]
                views[sub] = order_and_rank(rows)
        fps = tuple(sorted(set(frame["fingerprint"])))
        out.append(
            Board(
                spec_major=major,
                pack=pack,
                fingerprints=fps,
                frame=frame,
                substrates=substrates,
                views=views,
                split=split,
            )
        )
    return out


def _results(entry: Entry) -> Results:
    assert entry.results is not None, "only accepted entries are on a board"
    return entry.results


DOWNLOAD_COLUMNS = [
    "spec_major",
    "pack",
    "rank_best",
    "rank_worst",
    "system",
    "slug",
    "status",
    "reproduced",
    "signer",
    "signer_issuer",
    "spec_version",
    "fingerprint",
    "trials",
    "n_episodes",
    "n_tasks",
    "n_dropped",
    "split",
    "date",
    *[f"{r}{s}" for r in RATES for s in ("", "_k", "_n", "_lo", "_hi")],
    "gap",
    "gap_lo",
    "gap_hi",
]
"""Columns of the downloadable leaderboard, in order."""


def leaderboard_download(all_boards: Sequence[Board]) -> pd.DataFrame:
    """Return every board stacked into one frame with stable columns."""
    parts = []
    for b in all_boards:
        part = b.frame.copy()
        part.insert(0, "spec_major", b.spec_major)
        parts.append(part)
    if not parts:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in DOWNLOAD_COLUMNS})
    return pd.concat(parts, ignore_index=True)[DOWNLOAD_COLUMNS]


def cells_rows(entry: Entry) -> list[dict[str, Any]]:
    """Return the per (category x substrate) cells of an entry, one plain dict per cell."""
    res = entry.results
    assert res is not None
    rows = []
    for c in res.cells:
        row: dict[str, Any] = {"category": c.category, "substrate": c.substrate, "n": c.n}
        for name in ("swer", "over_halt", "task_success", "screen_success"):
            row.update(_rate_columns(name, getattr(c, name)))
        row["gap"] = c.success_effect_gap
        rows.append(row)
    return rows


def outcome_matrix(
    task_ids: Sequence[str], trials: Sequence[int], outcomes: Sequence[str]
) -> tuple[list[int], list[tuple[str, list[str]]]]:
    """Return the task x trial outcome matrix: trial numbers, and per task its outcomes.

    The three sequences are the columns of one submission's rows. Tasks are
    sorted; a missing (task, trial) pair is an empty string.
    """
    numbers = sorted({int(t) for t in trials})
    column = {t: i for i, t in enumerate(numbers)}
    by_task: dict[str, list[str]] = {}
    for task, trial, outcome in zip(task_ids, trials, outcomes, strict=True):
        cells = by_task.setdefault(str(task), [""] * len(numbers))
        cells[column[int(trial)]] = str(outcome)
    return numbers, sorted(by_task.items())


AS_JSON_TEXT = ("model_calls", "env_fingerprint")
"""Row fields published as JSON text in the all-rows Parquet (their shape varies by system)."""


def flat_rows(rows: Sequence[dict[str, Any]]) -> pa.Table:
    """Return episode rows as an Arrow table, nested objects flattened to ``a.b`` columns.

    Columns follow the rows' key order (the union over all rows); the parts in
    :data:`AS_JSON_TEXT` become JSON text columns at the end.
    """
    import orjson

    if not rows:
        return pa.table({})
    plain = [{k: v for k, v in r.items() if k not in AS_JSON_TEXT} for r in rows]
    table = pa.Table.from_struct_array(pa.array(plain))
    while any(pa.types.is_struct(f.type) for f in table.schema):
        table = table.flatten()
    calls = [orjson.dumps(r.get("model_calls", [])).decode() for r in rows]
    env = [
        orjson.dumps(r.get("env_fingerprint", {}), option=orjson.OPT_SORT_KEYS).decode()
        for r in rows
    ]
    table = table.append_column("model_calls", pa.array(calls, pa.string()))
    return table.append_column("env_fingerprint", pa.array(env, pa.string()))


def all_rows(parts: Sequence[tuple[str, pa.Table]]) -> pa.Table:
    """Stack per-submission row tables (``(slug, table)``) under a leading ``submission`` column.

    Columns missing from a part are null there; a column that is null in one
    part and typed in another takes the type.
    """
    tables = []
    for slug, table in parts:
        if table.num_rows:
            column = pa.array([slug] * table.num_rows, pa.string())
            tables.append(table.add_column(0, "submission", column))
    if not tables:
        return pa.table({})
    return pa.concat_tables(tables, promote_options="permissive")


def write_table(frame: pd.DataFrame, path: Path) -> None:
    """Write ``frame`` as CSV or Parquet (by suffix), byte-stable for equal input."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".csv":
        frame.to_csv(path, index=False, lineterminator="\n", float_format="%.6f")
    else:
        frame.to_parquet(path, index=False, compression="zstd")
