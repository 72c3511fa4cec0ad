"""The site's tables, as pandas frames: boards, rank ranges, cells, downloads.

Every number comes from the verifier's recomputation (its :class:`~effectbench.metrics.Results`
and the rows counted per task, :class:`~effectbench.metrics.TaskTable`); this module only
arranges them. A board is one substrate of one pack, split and SPEC major: a system is always
named with the substrate its numbers come from, and the same system across substrates is a
comparison (the substrates page), never several rows of one board. The order of a board and
its rank ranges are :mod:`effectbench.verdicts`': net value per 100 tasks at the default
prices, drawn against doing nothing; ranks are ranges from paired, task-clustered value
differences at a family-wise level (systems not separated beyond noise share ranks).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa

from effectbench.bundle import slugify
from effectbench.metrics import (
    DEFAULT_PRICES,
    DeadUnits,
    Prices,
    Resolution,
    TaskRate,
    TaskTable,
    break_even,
    dead_units,
    idle_of,
    idle_share,
    idle_value,
    minimum_detectable_difference,
    net_value,
    never_acts,
    resolution,
    task_rate,
    worst_case_rate,
)
from effectbench.schema import Substrate
from effectbench.site._contamination import (
    UNPAIRED,
    Contamination,
    companions,
    contamination,
    is_fresh,
)
from effectbench.site._entries import Entry
from effectbench.site._kept import Kept
from effectbench.verdicts import board_order, grain, rank_ranges, separation, standing
from verifier.blindness import Leak, leaks_of

WITHHELD = "withheld"
"""The status of every row of a board whose pack's blindness record names a leak on its
substrate: placed by the default order, never ranked."""

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
        "Rank range in the default order, at a family-wise 95% level: systems whose paired, "
        "task-clustered difference in net value is not beyond noise share ranks, every pair "
        "of the board judged at once. Previews are not ranked.",
        numeric=True,
        default_sort=True,
    ),
    BoardColumn(
        "system",
        "System",
        "The system under test and the substrate its numbers come from; badges say why its "
        "numbers are believed",
    ),
    BoardColumn(
        "value",
        "Net value",
        "Net value per 100 tasks at the board's prices, drawn against doing nothing (0): the "
        "value of its correct effects minus the costs of its silent wrong effects, wrong "
        "records and over-halts, with its task-clustered 95% interval; below, the value of a "
        "correct effect at which it breaks even with doing nothing. Higher is better.",
        "higher",
        numeric=True,
        first="desc",
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
    """What one board states beside its rows."""

    idle: float | None
    """The share of the board's episodes (so of its tasks, each run equally often) whose
    correct action was available: the over-halt rate of doing nothing there, whatever the
    units (None when the pack does not say)."""
    idle_value: float | None
    """What doing nothing is worth per 100 tasks at the board's prices (0 or less); each net
    value is drawn against doing nothing on its own episodes, so doing nothing is the line at
    0."""
    line_after: int
    """Rows above the doing-nothing line: the line follows the last row (in the default
    order) worth at least as much as doing nothing."""
    mdd: float
    """Minimum detectable difference of a rate at 80% power (a fraction)."""
    n_effective: float
    """The effective number of tasks it rests on (median over the ranked systems)."""
    tasks: int
    """Distinct units (tasks, or templates) of the board."""
    unit: str = "task"
    """What the board's units are: ``task``, or ``template`` (a generated pack's)."""
    confidence: float = 0.95
    """The level of each difference behind the rank ranges (the family's shared out)."""
    min_tasks: int = 0
    """The fewest common tasks that put a difference at that level beyond noise."""
    ranked: int = 0
    """Ranked systems (the family: their pairs share the error)."""
    adjacent: tuple[PairResolution, ...] = ()
    """The paired resolution of each two systems next to each other in the default order."""
    dead: DeadUnits | None = None
    """The units on which every ranked system has the same outcome
    (:func:`~effectbench.metrics.dead_units`)."""


@dataclass(frozen=True)
class PairResolution:
    """What a board can tell apart between two of its systems: the paired minimum detectable
    difference of SWER and of net value per 100 tasks (:func:`~effectbench.metrics.resolution`)."""

    first: str
    """The slug of the system above (in the default order)."""
    second: str
    swer: Resolution
    value: Resolution


def pair_resolution(
    first: str, second: str, tables: Mapping[str, TaskTable], prices: Prices
) -> PairResolution:
    """Return the resolution of two systems of a board (by slug; ``tables``: the board's)."""
    a, b = tables[first], tables[second]
    return PairResolution(
        first, second, resolution(a, b, "swer", prices), resolution(a, b, "value", prices)
    )


class RankedBoard(Protocol):
    """What :func:`every_pair` reads of a board (a per-pack board, or one pooling packs)."""

    @property
    def frame(self) -> pd.DataFrame: ...

    @property
    def tables(self) -> dict[str, TaskTable]: ...

    @property
    def prices(self) -> Prices: ...


def every_pair(b: RankedBoard) -> list[PairResolution]:
    """Return the resolution of every two systems of a board, in the default order."""
    slugs = list(b.frame["slug"])
    return [
        pair_resolution(x, y, b.tables, b.prices)
        for i, x in enumerate(slugs)
        for y in slugs[i + 1 :]
    ]


@dataclass(frozen=True)
class Board:
    """One leaderboard: the accepted bundles of one SPEC major on one pack, split and substrate."""

    spec_major: str
    pack: str
    fingerprints: tuple[str, ...]
    frame: pd.DataFrame
    """One row per entry that ran the substrate, in the default order (:func:`order_and_rank`),
    with its numbers over its episodes on that substrate."""
    substrate: str
    """The substrate every number of the board comes from."""
    split: str = "dev"
    """The pack split every entry of the board ran (a test run never shares a dev board)."""
    facts: ViewFacts | None = None
    """Its doing-nothing line, minimum detectable difference and family-wise level."""
    tables: dict[str, TaskTable] = field(default_factory=dict)
    """Each entry's rows on the substrate counted per task (by slug): what the order read."""
    prices: Prices = DEFAULT_PRICES
    """The prices the default order is computed at."""
    contamination: tuple[Contamination, ...] = ()
    """Each system's fresh-instance SWER against its public-seed SWER, where it has both."""
    withheld: tuple[Leak, ...] = ()
    """The blindness findings of the pack's published record on this substrate
    (:func:`verifier.blindness.leaks_of`): while there are any, no row is ranked (each row's
    status is ``withheld``) and the board says why."""

    @property
    def group(self) -> str:
        """Return the anchor of the board's pack (``spec1-clinic``; ``-test`` for a test
        split): the page shows one substrate of it at a time."""
        suffix = "" if self.split == "dev" else f"-{self.split}"
        return slugify(f"spec{self.spec_major}-{self.pack}{suffix}")

    @property
    def key(self) -> str:
        """Return the board's id: its group and substrate (``spec1-clinic-web``)."""
        return slugify(f"{self.group}-{self.substrate}")

    @property
    def group_title(self) -> str:
        """Return the heading of the board's pack (the split always said)."""
        return f"{self.pack} · {self.split} split · SPEC {self.spec_major}.x"

    @property
    def title(self) -> str:
        """Return the board's own title: its pack's, with the substrate."""
        return f"{self.pack} · {self.substrate} · {self.split} split · SPEC {self.spec_major}.x"


SUBSTRATE_ORDER = tuple(s.value for s in Substrate)


def substrate_order(names: Iterable[str]) -> tuple[str, ...]:
    """Return substrate names in SPEC order (unknown names after, alphabetically)."""
    known = {name: i for i, name in enumerate(SUBSTRATE_ORDER)}
    return tuple(sorted(set(names), key=lambda n: (known.get(n, len(known)), n)))


def named(system: str, substrate: str) -> str:
    """Return a system's name with the substrate its numbers come from (``screen_only ·
    web``): how the command line, the downloads and the compare view name a board's row."""
    return f"{system} · {substrate}"


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


TIERS = (
    ("reproduced", "reproduced by the board's CI"),
    ("fresh", "signed, measured on committed fresh instances"),
    ("signed", "signed, on public seeds"),
)
"""The trust tiers of a ranked row, strongest first, with what each says: its rows re-run
and matched by the verifier; signed and drawn on a fresh instance committed before the run;
signed on tasks anyone could see (a pack's public seed or its fixed tasks)."""


def trust_tier(entry: Entry) -> str:
    """Return the trust tier of an entry (one of :data:`TIERS`' keys), or ``preview`` for one
    that is not ranked (never in a tier)."""
    if entry.status != "ranked":
        return "preview"
    if entry.reproduced:
        return "reproduced"
    return "fresh" if entry.instance == "fresh" else "signed"


def usage_columns(entry: Entry, tasks: TaskTable, substrate: str, dropped: int) -> dict[str, Any]:
    """Return a row's first-try task success (``first_try_k`` of ``first_try_n`` cells: its
    rows and its drops), the mean attempts per cell (``attempts``) and the measured cost per
    episode in US dollars (``cost``: NaN when not measured: no row made a model call, or the
    bundle's costs are not the submitter's signed word; never 0 for want of one)."""
    usage = (entry.usage or {}).get(substrate)
    cells = tasks.n_episodes + dropped
    ids = set(tasks.task_id)
    earlier = sum(
        1
        for a in entry.run.get("attempts") or ()
        if isinstance(a, dict) and a.get("task_id") in ids
    )
    measured = usage is not None and entry.measured and usage.with_calls > 0 and usage.episodes
    return {
        "first_try_k": usage.first_try if usage is not None else np.nan,
        "first_try_n": cells if usage is not None else 0,
        "attempts": (cells + earlier) / cells if cells else np.nan,
        "earlier_attempts": earlier,
        "cost": usage.cost_usd / usage.episodes if measured and usage is not None else np.nan,
    }


def value_columns(tasks: TaskTable, prices: Prices) -> dict[str, Any]:
    """Return a row's net value per 100 tasks against doing nothing on the same episodes (the
    paired difference, :func:`~effectbench.metrics.net_value`), its interval, doing nothing's
    over-halt rate there and its break-even value (``inf``: none; NaN: doing nothing is not
    known)."""
    nv = net_value(tasks, prices)
    idle = idle_of(tasks)
    even = break_even(tasks, prices, idle)
    return {
        "value": nv.per_100,
        "value_lo": nv.lo,
        "value_hi": nv.hi,
        "idle": np.nan if idle is None else idle,
        "break_even": np.nan if even is None else even,
    }


def counted_columns(tasks: TaskTable, prices: Prices, dropped: int) -> dict[str, Any]:
    """Return the columns of a board row counted from its tasks (``dropped``: the trials
    dropped from them): net value against doing nothing on the same episodes, every rate with
    its intervals, and whether the system never acts. They depend on these arguments alone,
    so a build keeps them between builds (:class:`KeptCounts`)."""
    row = {**value_columns(tasks, prices), "never_acts": never_acts(tasks)}
    for name in RATES:
        row.update(_rate_or_not_measured(name, tasks, dropped))
    return row


class KeptCounts:
    """:func:`counted_columns`, kept between builds in ``kept`` (a board row's counting is
    most of what tabulating 10,000 submissions costs, and a new submission leaves the other
    rows' counts as they were). Kept as JSON, with NaN and infinity spelt as Python's
    ``json`` spells them, so every number comes back as it was counted."""

    def __init__(self, kept: Kept) -> None:
        self.kept = kept

    def __call__(self, tasks: TaskTable, prices: Prices, dropped: int) -> dict[str, Any]:
        key = self.kept.key((tasks.model_dump_json(), repr(prices), str(dropped)))
        made = self.kept.get_or_make(
            key, lambda: json.dumps(counted_columns(tasks, prices, dropped)).encode()
        )
        found: dict[str, Any] = json.loads(made)
        return found


Counter = Callable[[TaskTable, Prices, int], dict[str, Any]]
"""How a board row's counted columns are had: :func:`counted_columns`, or kept ones."""


def entry_row(
    entry: Entry,
    tasks: TaskTable,
    substrate: str,
    prices: Prices = DEFAULT_PRICES,
    counted: Counter = counted_columns,
) -> dict[str, Any]:
    """Return the flat board row of an accepted entry over its episodes on ``substrate``
    (``tasks``), its net value drawn against doing nothing on the same episodes."""
    res = entry.results
    assert res is not None, "only accepted entries have a board row"
    whole = tasks.n_tasks == _tasks(entry).n_tasks
    dropped = _dropped_in(entry, tasks)
    row: dict[str, Any] = {
        "slug": entry.slug,
        "system": entry.name,
        "harness": entry.harness_text,
        "model": entry.model_text,
        "substrate": substrate,
        "status": entry.status,
        "unranked": entry.unranked,
        "baseline": entry.baseline or "",
        "signer": entry.signer.identity if entry.signer else "",
        "signer_issuer": entry.signer.issuer if entry.signer else "",
        "reproduced": bool(entry.reproduced),
        "reproduced_rows": entry.reproduced_rows,
        "tier": trust_tier(entry),
        "instance": entry.instance,
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
        "unit": tasks.unit,
        **counted(tasks, prices, dropped),
        **usage_columns(entry, tasks, substrate, dropped),
    }
    gap = row["screen_success"] - row["task_success"]
    ci = res.success_effect_gap_ci if whole else None
    row.update(
        gap=res.success_effect_gap if whole else gap,
        gap_lo=ci.lo if ci else np.nan,
        gap_hi=ci.hi if ci else np.nan,
    )
    return row


NO_MEASURED_COST = "No ranked system on this board has a measured cost: there is no frontier."
"""What a board with no measured cost says in place of its frontier."""


def frontier(points: Sequence[tuple[str, float, float]]) -> list[str]:
    """Return the systems no other beats on both cost and value: of ``points`` (slug, cost per
    episode, net value), each that no other point costs no more than and is worth no less
    than, better on one of the two; by cost, then by value (highest first). Points with equal
    cost and value are on it together or not at all."""
    out = []
    for slug, cost, value in points:
        beaten = any(c <= cost and v >= value and (c < cost or v > value) for _, c, v in points)
        if not beaten:
            out.append((cost, -value, slug))
    return [slug for _, _, slug in sorted(out)]


def frontier_points(frame: pd.DataFrame) -> list[tuple[str, float, float]]:
    """Return the (slug, cost per episode, net value) of a board's ranked rows whose cost is
    measured: what its frontier is drawn over."""
    ranked = frame[(frame["status"] == "ranked") & frame["cost"].notna()]
    return [
        (str(s), float(c), float(v))
        for s, c, v in zip(ranked["slug"], ranked["cost"], ranked["value"], strict=True)
    ]


AXES = ("model", "harness")
"""What a board can be viewed by besides its rows: the model (across harnesses), the harness
(across models), each as its board row says it (:attr:`Entry.model_text`)."""


def by_axis(frame: pd.DataFrame, axis: str) -> dict[str, list[str]]:
    """Return a board's entries (``frame``, in the default order) grouped by ``axis`` (one of
    :data:`AXES`): each group's slugs in the default order, the groups in the order of their
    first entry."""
    out: dict[str, list[str]] = {}
    for key, slug in zip(frame[axis], frame["slug"], strict=True):
        out.setdefault(str(key), []).append(str(slug))
    return out


DEFAULT_ORDER = ("-value", "-task_success", "swer", "record_wrong", "over_halt", "slug")
"""The sort keys of every board's default order (:func:`effectbench.verdicts.order_key`: more
net value first, then more task success, less SWER, record-wrong and over-halt, then the slug);
the browser breaks every tie of a later sort by this order too."""


def order_and_rank(
    rows: Sequence[dict[str, Any]],
    tables: Sequence[TaskTable],
    prices: Prices = DEFAULT_PRICES,
) -> tuple[pd.DataFrame, ViewFacts]:
    """Return ``rows`` as a frame in the default order, rank ranges filled in, and the
    board's facts (doing-nothing line, minimum detectable difference, family-wise level).

    ``tables[i]`` holds the per-task counts of ``rows[i]``. Ranks cover ``ranked`` rows
    only; a ``preview`` row is placed by the same rules and shown unranked.
    """
    standings = [
        standing(r["slug"], r["system"], t, prices) for r, t in zip(rows, tables, strict=True)
    ]
    order = board_order(standings)
    frame = pd.DataFrame([rows[i] for i in order]).reset_index(drop=True)
    frame["rank_best"] = pd.array([pd.NA] * len(frame), dtype="Int64")
    frame["rank_worst"] = pd.array([pd.NA] * len(frame), dtype="Int64")
    ranked = [i for i in order if rows[i]["status"] == "ranked"]
    apart = separation([tables[i] for i in ranked], prices)
    if ranked:
        best, worst = rank_ranges(range(len(ranked)), apart.beyond)
        positions = [order.index(i) for i in ranked]
        frame.loc[positions, "rank_best"] = best
        frame.loc[positions, "rank_worst"] = worst
    facts = view_facts(frame, [tables[i] for i in order], prices)
    by_slug = {rows[i]["slug"]: tables[i] for i in order}
    slugs = [rows[i]["slug"] for i in order]
    adjacent = tuple(
        pair_resolution(x, y, by_slug, prices) for x, y in zip(slugs, slugs[1:], strict=False)
    )
    line = 0
    if facts.idle_value is not None:  # every value is against doing nothing: its line is 0
        line = sum(1 for s in standings if grain(s.value) >= 0)
    return frame, replace(
        facts,
        line_after=line,
        confidence=apart.confidence,
        min_tasks=apart.min_tasks,
        ranked=len(ranked),
        adjacent=adjacent,
        dead=dead_units([tables[i] for i in ranked]),
    )


def view_facts(frame: pd.DataFrame, tables: Sequence[TaskTable], prices: Prices) -> ViewFacts:
    """Return a board's doing-nothing line (placed by :func:`order_and_rank`) and minimum
    detectable difference."""
    idle = idle_share(tables)
    ranked = frame["status"] == "ranked"
    neff = frame.loc[ranked, "swer_neff"] if ranked.any() else frame["swer_neff"]
    n_effective = float(np.median(neff)) if len(neff) else 0.0
    return ViewFacts(
        idle=idle,
        idle_value=None if idle is None else idle_value(prices, idle),
        line_after=0,
        mdd=minimum_detectable_difference(n_effective),
        n_effective=n_effective,
        tasks=len({tid for t in tables for tid in t.task_id}),
        unit=tables[0].unit if tables else "task",
    )


def boards(
    entries: Iterable[Entry], prices: Prices = DEFAULT_PRICES, counted: Counter = counted_columns
) -> list[Board]:
    """Group accepted entries into one board per (SPEC major, pack, split, substrate), each
    entry on every substrate it ran, ranks filled in (boards of one pack in SPEC order of
    their substrates; ``counted`` counts each row, :class:`KeptCounts` from kept counts)."""
    groups: dict[tuple[str, str, str], list[Entry]] = {}
    for e in entries:
        if e.accepted:
            groups.setdefault(e.board_key, []).append(e)
    out = []
    for (major, pack, split), members in sorted(groups.items()):
        every = {e.slug: _tasks(e) for e in members}
        for sub in substrate_order(s for t in every.values() for s in t.substrate):
            mine = {e.slug: every[e.slug].of_substrate(sub) for e in members}
            ran = [e for e in members if mine[e.slug].n_tasks]
            by_slug = {e.slug: e for e in ran}
            rows = {e.slug: entry_row(e, mine[e.slug], sub, prices, counted) for e in ran}
            withheld = tuple(leak for leak in leaks_of(pack) if leak.substrate == sub)
            if withheld:  # nothing ranked from a leaking pack's board (SPEC 5.3)
                for row in rows.values():
                    row["status"] = WITHHELD
            first = [rows[e.slug]["slug"] for e in ran]
            standings = [standing(x, rows[x]["system"], mine[x], prices) for x in first]
            pairs = companions([first[i] for i in board_order(standings)], by_slug)
            deltas = contamination(pairs, by_slug, mine, prices)
            shown = [e for e in ran if e.slug not in pairs]
            fresh_ranks = _fresh_ranks([e for e in ran if is_fresh(e)], rows, mine, prices)
            for e in shown:
                rows[e.slug].update(fresh_columns(e, pairs, deltas, fresh_ranks))
            frame, facts = order_and_rank(
                [rows[e.slug] for e in shown], [mine[e.slug] for e in shown], prices
            )
            out.append(
                Board(
                    spec_major=major,
                    pack=pack,
                    fingerprints=tuple(sorted(set(frame["fingerprint"]))),
                    frame=frame,
                    substrate=sub,
                    split=split,
                    facts=facts,
                    tables={e.slug: mine[e.slug] for e in ran},
                    prices=prices,
                    contamination=deltas,
                    withheld=withheld,
                )
            )
    return out


FRESH_COLUMNS = (
    "fresh_slug",
    "contamination",
    "contamination_swer",
    "contamination_swer_lo",
    "contamination_swer_hi",
    "contamination_value",
    "contamination_value_lo",
    "contamination_value_hi",
    "fresh_rank_best",
    "fresh_rank_worst",
)
"""A row's columns of its fresh-instance rows: the fresh entry, the contamination delta (fresh
minus public, SWER and net value, with their paired intervals) and the rank the system has on
the board's fresh rows alone."""


def _fresh_ranks(
    fresh: Sequence[Entry],
    rows: Mapping[str, dict[str, Any]],
    tables: Mapping[str, TaskTable],
    prices: Prices,
) -> dict[str, tuple[int, int]]:
    """Return the rank range of each ranked fresh-instance entry among the board's fresh rows
    alone (by slug), by the board's own rules."""
    if not fresh:
        return {}
    frame, _ = order_and_rank(
        [rows[e.slug] for e in fresh], [tables[e.slug] for e in fresh], prices
    )
    return {
        str(r["slug"]): (int(r["rank_best"]), int(r["rank_worst"]))
        for r in frame.to_dict("records")
        if r["status"] == "ranked"
    }


def fresh_columns(
    entry: Entry,
    pairs: Mapping[str, str],
    deltas: Sequence[Contamination],
    fresh_ranks: Mapping[str, tuple[int, int]],
) -> dict[str, Any]:
    """Return a board row's :data:`FRESH_COLUMNS`: its system's fresh-instance run (``pairs``:
    :func:`~effectbench.site._contamination.companions`), the contamination delta of its
    committed runs and the fresh rank where it has both kinds of rows; ``contamination`` says
    ``committed`` (a delta), ``uncommitted`` (fresh runs, none committed: no delta),
    ``unpaired`` for a fresh-instance row without a public-seed row, and is empty for a row
    with no fresh runs."""
    runs = [fresh for fresh, public in pairs.items() if public == entry.slug]
    mine = next((c for c in deltas if c.public == (entry.slug,)), None)
    out: dict[str, Any] = dict.fromkeys(FRESH_COLUMNS, np.nan)
    out["fresh_slug"] = ""
    out["contamination"] = ""
    fresh = mine.fresh[0] if mine is not None else runs[0] if runs else ""
    if fresh:
        out["fresh_slug"] = fresh
        out["contamination"] = "committed" if mine is not None else "uncommitted"
    if mine is not None:
        for key, d in (("swer", mine.delta), ("value", mine.value)):
            scale = 100.0 if key == "swer" else 1.0
            out[f"contamination_{key}"] = scale * d.difference
            out[f"contamination_{key}_lo"] = scale * d.lo
            out[f"contamination_{key}_hi"] = scale * d.hi
    elif is_fresh(entry):
        out["contamination"] = UNPAIRED
        fresh = entry.slug
    if fresh in fresh_ranks:
        out["fresh_rank_best"], out["fresh_rank_worst"] = fresh_ranks[fresh]
    return out


def _tasks(entry: Entry) -> TaskTable:
    assert entry.tasks is not None, "only accepted entries are on a board"
    return entry.tasks


DOWNLOAD_COLUMNS = [
    "spec_major",
    "pack",
    "substrate",
    "board",
    "rank_best",
    "rank_worst",
    "system",
    "harness",
    "model",
    "slug",
    "status",
    "reproduced",
    "tier",
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
    "value",
    "value_lo",
    "value_hi",
    "break_even",
    "doing_nothing",
    "never_acts",
    *[f"{r}{s}" for r in RATES for s in (*_SUFFIXES, *(("_worst",) if r in DROP_BOUNDED else ()))],
    "gap",
    "gap_lo",
    "gap_hi",
    "first_try_k",
    "first_try_n",
    "attempts",
    "earlier_attempts",
    "cost",
    *FRESH_COLUMNS,
]
"""Columns of the downloadable leaderboard, in order."""


def leaderboard_download(all_boards: Sequence[Board]) -> pd.DataFrame:
    """Return every board stacked into one frame with stable columns (a system on two
    substrates has a row on each board; ``value`` is net value per 100 tasks against doing
    nothing, whose own value, 0 or less before the shift, is ``doing_nothing``)."""
    parts = []
    for b in all_boards:
        part = b.frame.copy()
        part.insert(0, "spec_major", b.spec_major)
        part.insert(1, "board", b.key)
        idle = b.facts.idle_value if b.facts is not None else None
        part["doing_nothing"] = np.nan if idle is None else idle
        parts.append(part)
    if not parts:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in DOWNLOAD_COLUMNS})
    return pd.concat(parts, ignore_index=True)[DOWNLOAD_COLUMNS]


CELL_RATES = tuple(r for r in RATES if r not in ("swer_wrong_write", "swer_phantom"))
"""The rates of each (category x substrate) cell on a submission's page and chart."""


def cells_rows(
    entry: Entry, rates: Sequence[str] = CELL_RATES, substrate: str | None = None
) -> list[dict[str, Any]]:
    """Return the per (category x substrate) cells of an entry, one plain dict per cell, with
    the board columns of ``rates`` (``substrate``: its cells on that substrate alone)."""
    assert entry.results is not None
    rows = []
    for i, (c, cell) in enumerate(entry.cells):
        if substrate is not None and c.substrate != substrate:
            continue
        row: dict[str, Any] = {"category": c.category, "substrate": c.substrate, "n": c.n}
        for name in rates:
            counted = entry.cell_rate(i, name) if name in cell.events else None
            row.update(_rate_or_not_measured(name, cell, 0, counted))
        row["gap"] = c.success_effect_gap
        rows.append(row)
    return rows


@dataclass(frozen=True)
class CellBlock:
    """One entry's cells on one board for the cells download: each cell's category and
    substrate, and its numbers (``values``: one row per cell, one column per ``columns``)."""

    columns: tuple[str, ...]
    labels: tuple[tuple[str, str], ...]
    values: np.ndarray

    def to_bytes(self) -> bytes:
        """Return the block as kept: its names as JSON, a newline, its numbers as float64."""
        head = orjson.dumps({"columns": self.columns, "labels": self.labels})
        return head + b"\n" + np.ascontiguousarray(self.values, dtype="<f8").tobytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> CellBlock:
        """Return the block :meth:`to_bytes` kept."""
        head, _, numbers = data.partition(b"\n")
        names = orjson.loads(head)
        columns = tuple(names["columns"])
        values = np.frombuffer(numbers, dtype="<f8").reshape(-1, len(columns))
        return cls(columns, tuple((c, s) for c, s in names["labels"]), values)


def board_cells(entry: Entry, board: Board) -> CellBlock:
    """Return ``entry``'s cells on ``board``'s substrate with every rate's board columns."""
    rows = cells_rows(entry, RATES, board.substrate)
    columns = tuple(k for k in rows[0] if k not in ("category", "substrate")) if rows else ()
    return CellBlock(
        columns,
        tuple((r["category"], r["substrate"]) for r in rows),
        np.array([[r[c] for c in columns] for r in rows], dtype=float).reshape(-1, len(columns)),
    )


CellsOf = Callable[[Entry, Board], CellBlock]
"""How an entry's cells on a board are had for the download: :func:`board_cells`, or kept."""


class KeptCells:
    """:func:`board_cells`, kept between builds in ``kept`` under the entry's report, its
    slug and the board: on a rebuild, what :func:`cells_download` reads of every entry is
    one small file each, its numbers as they were counted (float64, NaN included)."""

    def __init__(self, kept: Kept, report_digest: Callable[[str], str]) -> None:
        self.kept = kept
        self.report_digest = report_digest

    def __call__(self, entry: Entry, board: Board) -> CellBlock:
        key = self.kept.key((self.report_digest(entry.slug), entry.slug, board.key))
        made = self.kept.get_or_make(key, lambda: board_cells(entry, board).to_bytes())
        return CellBlock.from_bytes(made)


CELLS_LEAD = ("spec_major", "board", "slug", "system", "category", "substrate")
"""The columns that say whose and which cell each row of the cells download is."""


def cells_download(
    all_boards: Sequence[Board], entries: dict[str, Entry], cells_of: CellsOf = board_cells
) -> pa.Table:
    """Return every entry's (category x substrate) cells on every board, one row per cell,
    with each rate's board columns (k/n, Wilson and task-clustered intervals, bounds; counts
    as integers, what was not measured null): what ``leaderboard.json`` carried per entry
    until its format 4."""
    lead: dict[str, list[str]] = {c: [] for c in CELLS_LEAD}
    blocks: list[np.ndarray] = []
    columns: tuple[str, ...] = ()
    for b in all_boards:
        for slug in b.frame["slug"].tolist():
            e = entries[slug]
            block = cells_of(e, b)
            n = len(block.labels)
            if not n:
                continue
            if columns and block.columns != columns:
                raise ValueError(f"the cells of {slug} on {b.key} have other columns")
            columns = block.columns
            lead["spec_major"] += [b.spec_major] * n
            lead["board"] += [b.key] * n
            lead["slug"] += [slug] * n
            lead["system"] += [e.name] * n
            lead["category"] += [c for c, _ in block.labels]
            lead["substrate"] += [s for _, s in block.labels]
            blocks.append(block.values)
    arrays = {name: pa.array(values, pa.string()) for name, values in lead.items()}
    numbers = np.concatenate(blocks) if blocks else np.empty((0, 0))
    for j, name in enumerate(columns):
        column = numbers[:, j]
        missing = np.isnan(column)
        if name == "n" or name.endswith(("_k", "_n")):
            arrays[name] = pa.array(np.where(missing, 0, column).astype(np.int64), mask=missing)
        else:
            arrays[name] = pa.array(column, mask=missing)
    return pa.table(arrays)


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
