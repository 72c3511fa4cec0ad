"""The site's tables, as pandas frames: boards, rank ranges, cells, downloads.

Every number comes from the verifier's recomputation (its :class:`~effectbench.metrics.Results`
and the rows counted per task, :class:`~effectbench.metrics.TaskTable`); this module only
arranges them. The order of a board and its rank ranges are
:mod:`effectbench.verdicts`': expected cost per 100 tasks under the default prices, with
dominance and no reward for inaction; ranks are ranges from paired, task-clustered cost
differences (systems not separated beyond noise share ranks).
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
from effectbench.metrics import (
    DEFAULT_COSTS,
    CostWeights,
    TaskRate,
    TaskTable,
    expected_cost,
    idle_cost,
    idle_over_halt,
    minimum_detectable_difference,
    never_acts,
    task_rate,
    worst_case_rate,
)
from effectbench.schema import Substrate
from effectbench.site._entries import Entry
from effectbench.verdicts import board_order, rank_ranges, separation, standing

RATES = (
    "swer",
    "over_halt",
    "record_wrong",
    "collateral_write",
    "task_success",
    "screen_success",
    "swer_wrong_write",
    "swer_phantom",
)
"""The rate columns of a board, in display order."""
DROP_BOUNDED = ("swer", "record_wrong")
"""Rates shown with their bound when every dropped trial counts as the worst outcome."""

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
        "Rank range in the default order: systems whose paired, task-clustered cost "
        "difference is not beyond noise share ranks. Previews are not ranked.",
        numeric=True,
        default_sort=True,
    ),
    BoardColumn(
        "system", "System", "The system under test; badges say why its numbers are believed"
    ),
    BoardColumn(
        "cost",
        "Cost",
        "Expected cost per 100 tasks at the board's prices (silent wrong effect, wrong "
        "record, over-halt), with its task-clustered 95% interval. Lower is better.",
        "lower",
        numeric=True,
    ),
    BoardColumn(
        "swer",
        "SWER",
        "Silent wrong-effect rate: reported success, but the record is wrong or absent. "
        "Lower is better.",
        "lower",
        numeric=True,
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
        "record_wrong",
        "Record-wrong",
        "Record-wrong rate: the episode left a wrong record, whatever the report said "
        "(SWER's wrong-write part plus wrong writes reported as failures). Lower is better.",
        "lower",
        numeric=True,
    ),
    BoardColumn(
        "collateral_write",
        "Collateral",
        "Collateral-write rate: the episode changed the record outside what its task allows "
        "(a homonym's chart touched, a second table changed, a row deleted), whatever the outcome "
        "and the report, read from each episode's receipt. Lower is better. Not measured (—) for "
        "a bundle without receipts.",
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
class ViewFacts:
    """What one view of a board states beside its rows."""

    idle_cost: float | None
    """Expected cost per 100 tasks of doing nothing (halting on every task) on the view's
    tasks, at the board's prices; None when the pack does not say where the correct
    action was available."""
    idle_over_halt: float | None
    """The over-halt rate doing nothing scores there."""
    line_after: int
    """Rows above the doing-nothing line: the line follows the last row (in the default
    order) that costs no more than doing nothing."""
    mdd: float
    """Minimum detectable difference of a rate at 80% power (a fraction)."""
    n_effective: float
    """The effective number of tasks it rests on (median over the ranked systems)."""
    tasks: int
    """Distinct tasks of the view."""


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
    facts: dict[str, ViewFacts] = field(default_factory=dict)
    """Per view (``all`` and each substrate of :attr:`views`): its doing-nothing line and
    minimum detectable difference."""
    tables: dict[str, dict[str, TaskTable]] = field(default_factory=dict)
    """Per view: each entry's rows counted per task (by slug), what the order read."""
    costs: CostWeights = DEFAULT_COSTS
    """The prices the default order is computed at."""

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


def _rate_columns(prefix: str, r: TaskRate, dropped: int) -> dict[str, Any]:
    """Return a rate's board columns: raw k/n with SPEC's Wilson interval, the task-clustered
    interval with its design effect, the 0/n one-sided bounds, and (SWER, record-wrong) the
    bound with every dropped trial counted as the event."""
    row = {
        f"{prefix}": r.rate,
        f"{prefix}_k": r.numerator,
        f"{prefix}_n": r.denominator,
        f"{prefix}_lo": r.ci.lo,
        f"{prefix}_hi": r.ci.hi,
        f"{prefix}_tasks_lo": r.clustered.lo,
        f"{prefix}_tasks_hi": r.clustered.hi,
        f"{prefix}_deff": r.clustered.design_effect,
        f"{prefix}_neff": r.clustered.n_effective,
        f"{prefix}_upper": np.nan if r.upper is None else r.upper,
        f"{prefix}_tasks_upper": np.nan if r.clustered_upper is None else r.clustered_upper,
    }
    if prefix in DROP_BOUNDED:
        row[f"{prefix}_worst"] = worst_case_rate(r.numerator, r.denominator, dropped)
    return row


_SUFFIXES = (
    "",
    "_k",
    "_n",
    "_lo",
    "_hi",
    "_tasks_lo",
    "_tasks_hi",
    "_deff",
    "_neff",
    "_upper",
    "_tasks_upper",
)


def _rate_or_not_measured(
    prefix: str, tasks: TaskTable, dropped: int, counted: TaskRate | None = None
) -> dict[str, Any]:
    """Return a rate's board columns (``counted``: the rate, when already counted), or every
    one empty (NaN) when its events were not measured (the collateral-write rate of a bundle
    without receipts)."""
    if prefix not in tasks.events:
        empty: dict[str, Any] = {f"{prefix}{s}": np.nan for s in _SUFFIXES}
        if prefix in DROP_BOUNDED:
            empty[f"{prefix}_worst"] = np.nan
        return empty
    rate = counted if counted is not None else task_rate(tasks, prefix)
    return _rate_columns(prefix, rate, dropped)


def _dropped_in(entry: Entry, tasks: TaskTable) -> int:
    """Return the dropped trials of ``entry`` that belong to the tasks of ``tasks``' view."""
    if tasks.n_tasks == len(entry.tasks.task_id if entry.tasks else ()):
        return entry.n_dropped
    ids = set(tasks.task_id)
    dropped = entry.run.get("dropped") or ()
    return sum(1 for d in dropped if isinstance(d, dict) and d.get("task_id") in ids)


def entry_row(
    entry: Entry, tasks: TaskTable | None = None, costs: CostWeights = DEFAULT_COSTS
) -> dict[str, Any]:
    """Return the flat board row of an accepted entry over ``tasks`` (default: all of them)."""
    res = entry.results
    assert res is not None, "only accepted entries have a board row"
    tasks = tasks if tasks is not None else _tasks(entry)
    whole = tasks.n_tasks == _tasks(entry).n_tasks
    dropped = _dropped_in(entry, tasks)
    cost = expected_cost(tasks, costs)
    idle = idle_cost(tasks, costs)
    row: dict[str, Any] = {
        "slug": entry.slug,
        "system": entry.name,
        "status": entry.status,
        "baseline": entry.baseline or "",
        "signer": entry.signer.identity if entry.signer else "",
        "signer_issuer": entry.signer.issuer if entry.signer else "",
        "reproduced": bool(entry.reproduced),
        "reproduced_rows": entry.reproduced_rows,
        "same_as": entry.same_as,
        "spec_version": entry.spec_version,
        "pack": entry.pack,
        "fingerprint": entry.fingerprint,
        "trials": entry.trials if entry.trials is not None else 0,
        "max_trials": max(tasks.trials, default=0),
        "seeds_default": entry.default_seeds,
        "seeds": " ".join(str(s) for s in entry.seeds),
        "n_episodes": tasks.n_episodes,
        "n_tasks": tasks.n_tasks,
        "n_dropped": dropped,
        "drop_reasons": "; ".join(f"{reason} {n}" for reason, n in entry.drop_reasons)
        if dropped
        else "",
        "split": entry.split,
        "measured": entry.measured,
        "date": entry.date,
        "cost": cost.per_100,
        "cost_lo": cost.lo,
        "cost_hi": cost.hi,
        "idle_cost": np.nan if idle is None else idle,
        "never_acts": never_acts(tasks),
    }
    for name in RATES:
        row.update(_rate_or_not_measured(name, tasks, dropped))
    gap = row["screen_success"] - row["task_success"]
    ci = res.success_effect_gap_ci if whole else None
    row.update(
        gap=res.success_effect_gap if whole else gap,
        gap_lo=ci.lo if ci else np.nan,
        gap_hi=ci.hi if ci else np.nan,
    )
    return row


DEFAULT_ORDER = ("cost", "swer", "record_wrong", "over_halt", "system", "slug")
"""The sort keys of every board's default order, under its rules (:mod:`effectbench.verdicts`:
a system never ranks above one that dominates it, and a system that never acts never ranks
above one with more correct effects at no higher SWER). The browser breaks every tie of a
later sort by this order too."""


def order_and_rank(
    rows: Sequence[dict[str, Any]],
    tables: Sequence[TaskTable],
    costs: CostWeights = DEFAULT_COSTS,
) -> tuple[pd.DataFrame, ViewFacts]:
    """Return ``rows`` as a frame in the default order, rank ranges filled in, and the
    view's facts (doing-nothing line, minimum detectable difference).

    ``tables[i]`` holds the per-task counts of ``rows[i]``. Ranks cover ``ranked`` rows
    only; a ``preview`` row is placed by the same rules and shown unranked.
    """
    standings = [
        standing(r["slug"], r["system"], t, costs) for r, t in zip(rows, tables, strict=True)
    ]
    order = board_order(standings)
    frame = pd.DataFrame([rows[i] for i in order]).reset_index(drop=True)
    frame["rank_best"] = pd.array([pd.NA] * len(frame), dtype="Int64")
    frame["rank_worst"] = pd.array([pd.NA] * len(frame), dtype="Int64")
    ranked = [i for i in order if rows[i]["status"] == "ranked"]
    if ranked:
        beyond = separation([tables[i] for i in ranked], costs)
        best, worst = rank_ranges([standings[i] for i in ranked], range(len(ranked)), beyond)
        positions = [order.index(i) for i in ranked]
        frame.loc[positions, "rank_best"] = best
        frame.loc[positions, "rank_worst"] = worst
    return frame, view_facts(frame, [tables[i] for i in order], costs)


def view_facts(frame: pd.DataFrame, tables: Sequence[TaskTable], costs: CostWeights) -> ViewFacts:
    """Return a view's doing-nothing line and minimum detectable difference."""
    idle_k = idle_n = 0
    known = True
    for t in tables:
        r = idle_over_halt(t)
        if r is None:
            known = False
            break
        idle_k += r.numerator
        idle_n += r.denominator
    idle_rate = idle_k / idle_n if known and idle_n else None
    idle = None if idle_rate is None else 100 * costs.over_halt * idle_rate
    line_after = 0
    if idle is not None:
        for p, c in enumerate(frame["cost"]):
            if c <= idle + 1e-9:
                line_after = p + 1
    ranked = frame["status"] == "ranked"
    neff = frame.loc[ranked, "swer_neff"] if ranked.any() else frame["swer_neff"]
    n_effective = float(np.median(neff)) if len(neff) else 0.0
    return ViewFacts(
        idle_cost=idle,
        idle_over_halt=idle_rate,
        line_after=line_after,
        mdd=minimum_detectable_difference(n_effective),
        n_effective=n_effective,
        tasks=len({tid for t in tables for tid in t.task_id}),
    )


def boards(entries: Iterable[Entry], costs: CostWeights = DEFAULT_COSTS) -> list[Board]:
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
        every = {e.slug: _tasks(e) for e in members}
        frame, facts = order_and_rank(
            [entry_row(e, every[e.slug], costs) for e in members],
            [every[e.slug] for e in members],
            costs,
        )
        substrates = substrate_order(s for t in every.values() for s in t.substrate)
        views: dict[str, pd.DataFrame] = {}
        all_facts = {"all": facts}
        tables = {"all": every}
        if len(substrates) > 1:
            for sub in substrates:
                mine = {e.slug: every[e.slug].of_substrate(sub) for e in members}
                ran = [e for e in members if mine[e.slug].n_tasks]
                views[sub], all_facts[sub] = order_and_rank(
                    [entry_row(e, mine[e.slug], costs) for e in ran],
                    [mine[e.slug] for e in ran],
                    costs,
                )
                tables[sub] = {e.slug: mine[e.slug] for e in ran}
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
                facts=all_facts,
                tables=tables,
                costs=costs,
            )
        )
    return out


def _tasks(entry: Entry) -> TaskTable:
    assert entry.tasks is not None, "only accepted entries are on a board"
    return entry.tasks


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
    "seeds_default",
    "seeds",
    "n_episodes",
    "n_tasks",
    "n_dropped",
    "drop_reasons",
    "split",
    "date",
    "cost",
    "cost_lo",
    "cost_hi",
    "idle_cost",
    "never_acts",
    *[f"{r}{s}" for r in RATES for s in (*_SUFFIXES, *(("_worst",) if r in DROP_BOUNDED else ()))],
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


CELL_RATES = tuple(r for r in RATES if r not in ("swer_wrong_write", "swer_phantom"))
"""The rates of each (category x substrate) cell on a submission's page and chart."""


def cells_rows(entry: Entry) -> list[dict[str, Any]]:
    """Return the per (category x substrate) cells of an entry, one plain dict per cell."""
    assert entry.results is not None
    rows = []
    for i, (c, _) in enumerate(entry.cells):
        row: dict[str, Any] = {"category": c.category, "substrate": c.substrate, "n": c.n}
        for name in CELL_RATES:
            cell = entry.cells[i][1]
            counted = entry.cell_rate(i, name) if name in cell.events else None
            row.update(_rate_or_not_measured(name, cell, 0, counted))
        row["gap"] = c.success_effect_gap
        rows.append(row)
    return rows


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
