"""``downloads/leaderboard.json`` and its JSON Schema: the boards for other tools to consume.

The document is built from the same board frames as the pages and the CSV (one
entry per accepted submission, each board in its default order), and its schema
is generated from the pydantic models below, so the two cannot drift apart.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, Literal

import orjson
import pandas as pd
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from effectbench.metrics import (
    SUBSTRATE_RATES,
    Difference,
    Interval,
    TaskRate,
    TaskTable,
    never_acts,
    task_rate,
    worst_case_rate,
)
from effectbench.site._entries import Entry
from effectbench.site._sensitivity import BoardAcross, SystemAcross
from effectbench.site._tables import (
    DEFAULT_ORDER,
    DROP_BOUNDED,
    RATES,
    WITHHELD,
    Board,
    named,
)

FORMAT = 4
"""Bumped when a field changes meaning or disappears (new fields may be added freely).
2: entries in the joint default order (expected cost, dominance, no reward for inaction);
rank ranges from paired, task-clustered cost differences; record-wrong, task-clustered
intervals, costs and drop bounds added.
3: one board per substrate (an entry is on the board of every substrate it ran, with its
numbers there, named with it); ordered by net value per 100 tasks against doing nothing
(``value`` replaces ``cost``), with break-even values; rank ranges at a family-wise level;
the same system across substrates under ``groups``.
4: an entry's ``cells`` left out (they were nine tenths of the document, 142 MB at 10,000
entries); every entry's cells are in ``cells.parquet`` beside it, one row per cell."""
SCHEMA_FILE = "leaderboard.schema.json"
DATE = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
DATE_OR_EMPTY = r"^([0-9]{4}-[0-9]{2}-[0-9]{2})?$"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


ONLY_WHERE_THEY_APPLY = ("upper", "worst_with_dropped")
"""Fields of a rate that hold a value only where they apply (0/n; SWER and record-wrong): left
out elsewhere rather than written as null (the schema does not require them), which makes the
document a sixth smaller."""


class _Bounded(_Model):
    @model_serializer(mode="wrap")
    def _bounds_where_they_apply(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        for name in ONLY_WHERE_THEY_APPLY:
            if name in data and data[name] is None:
                del data[name]
        return data


class ClusteredJSON(_Bounded):
    """A rate's 95% interval counting tasks, not repeats (Wilson on the Rao-Scott effective
    sample), with its design effect."""

    lo: float
    hi: float
    design_effect: float = Field(ge=1, description="task-clustered over binomial variance")
    n_effective: float = Field(ge=0, description="episodes divided by the design effect")
    tasks: int = Field(ge=0, description="tasks (clusters) the episodes fall into")
    upper: float | None = Field(
        default=None, description="for 0/n: one-sided 95% upper bound on the effective n"
    )


class RateJSON(_Bounded):
    """A rate with its counts, 95% Wilson interval and the interval that counts tasks."""

    k: int = Field(ge=0, description="numerator")
    n: int = Field(ge=0, description="denominator")
    rate: float = Field(ge=0, le=1)
    lo: float = Field(description="95% Wilson interval, lower end")
    hi: float = Field(description="95% Wilson interval, upper end")
    upper: float | None = Field(
        default=None, description="for 0/n: the one-sided 95% upper bound, 1 - 0.05^(1/n)"
    )
    tasks: ClusteredJSON
    worst_with_dropped: float | None = Field(
        default=None,
        description="SWER and record-wrong: the rate with every dropped trial counted as the "
        "event, (k + dropped) / (n + dropped)",
    )


class GapJSON(_Model):
    """The success-effect gap: screen success minus task success (a fraction, not points)."""

    value: float = Field(ge=-1, le=1)
    lo: float | None = Field(default=None, description="95% percentile-bootstrap interval")
    hi: float | None = None


class RatesJSON(_Model):
    """Every rate of one set of episodes (all of them, or a substrate's)."""

    n_episodes: int = Field(ge=0)
    n_tasks: int = Field(ge=0)
    swer: RateJSON
    over_halt: RateJSON
    record_wrong: RateJSON = Field(
        description="episodes that left a wrong record whatever the report said: SWER's "
        "wrong-write part plus wrong writes reported as failures (wrong_action)"
    )
    collateral_write: RateJSON | None = Field(
        default=None,
        description="episodes whose receipt shows a change outside what the task allows, "
        "whatever the outcome; null when the bundle carries no receipts (not measured)",
    )
    task_success: RateJSON
    screen_success: RateJSON
    swer_wrong_write: RateJSON
    swer_phantom: RateJSON
    gap: GapJSON


class SignerJSON(_Model):
    """The verified Sigstore signer."""

    identity: str
    issuer: str


class ValueJSON(_Model):
    """Net value per 100 tasks at the board's prices, drawn against doing nothing (0), with its
    task-clustered 95% interval, and the value of a correct effect at which it breaks even."""

    per_100: float = Field(description="net value per 100 tasks minus doing nothing's")
    lo: float
    hi: float
    tasks: int = Field(ge=0)
    break_even: float | None = Field(
        default=None,
        description="the value of a correct effect above which the system is worth more than "
        "doing nothing, the harms' prices kept (0: at any value); null when no value makes it so "
        "(see never_beats_doing_nothing) or doing nothing is not known",
    )
    never_beats_doing_nothing: bool = Field(
        default=False, description="no value of a correct effect makes it worth doing nothing's"
    )


class DroppedJSON(_Model):
    """The trials of the run with no scored row."""

    n: int = Field(ge=0)
    reasons: dict[str, int] = Field(description="how many were dropped for each reason")


class EntryHeadJSON(_Model):
    """The fields of :class:`EntryJSON` before its rates and cells: what a build makes
    afresh (its rank and net value move as submissions join); the rest may be kept."""

    system: str
    substrate: str = Field(description="the substrate every number of the entry comes from")
    label: str = Field(description="the system's name with its substrate, as the site shows it")
    slug: str = Field(description="the submission's id on the site (its folder, sanitised)")
    status: Literal["ranked", "preview", "withheld"] = Field(
        description="ranked; preview (a local build's unsigned bundle, never ranked); or "
        "withheld (on a board of a pack whose blindness record names a leak: not ranked "
        "until the pack is fixed)"
    )
    rank_best: int | None = Field(default=None, ge=1)
    rank_worst: int | None = Field(default=None, ge=1)
    page: str = Field(description="its page, relative to the site's root")
    badge: str | None = Field(default=None, description="its SVG badge (ranked entries only)")
    signer: SignerJSON | None = None
    reproduced: bool
    instance: Literal["public", "fresh", "fresh-uncommitted"] | None = Field(
        default=None,
        description="a generated pack's instance: its public dev seed, a fresh committed "
        "seed, or a fresh seed without a commitment (None: the pack draws none)",
    )
    spec_version: str
    fingerprint: str
    trials: int
    seeds: list[int]
    seeds_default: bool = Field(description="the seeds are SPEC's default 0 .. trials - 1")
    n_tasks: int
    date: str = Field(
        pattern=DATE_OR_EMPTY,
        description="the date verified (YYYY-MM-DD), or empty when not known",
    )
    never_acts: bool = Field(description="every episode on the substrate is a halt")
    value: ValueJSON
    dropped: DroppedJSON


class EntryJSON(EntryHeadJSON):
    """One accepted submission on a board, with its numbers on the board's substrate."""

    rates: RatesJSON = Field(
        description="over its episodes on the board's substrate (its cells' rates are in "
        "cells.parquet beside this file)"
    )


class DoingNothingJSON(_Model):
    """What halting on every task of the board scores: the zero line of net value."""

    over_halt: float = Field(
        ge=0, le=1, description="the share of the board's tasks whose correct action was available"
    )
    value_per_100: float = Field(
        le=0, description="its own net value per 100 tasks at the prices (before the shift to 0)"
    )


class FamilyJSON(_Model):
    """The level the rank ranges are stated at: every pair of ranked systems at once."""

    confidence: float = Field(description="the family-wise level (0.95)")
    pair_confidence: float = Field(description="the level of each pair's difference (Bonferroni)")
    ranked: int = Field(ge=0, description="ranked systems (the family)")
    min_shared_tasks: int = Field(
        ge=0, description="the fewest common tasks that can put a pair beyond noise at that level"
    )


class ResolutionJSON(_Model):
    """The smallest difference of one measure between two systems the board detects (80%
    power, 5% two-sided): paired and clustered by unit, and with the units held fixed."""

    measure: str = Field(description="swer (points: 100 x a rate) or value (per 100 tasks)")
    paired_mdd: float | None = Field(
        description="(t(0.975, G-1) + t(0.8, G-1)) x s_d / sqrt(G); null when not estimable or "
        "without spread (paired_note says which)"
    )
    paired_units: int = Field(ge=0, description="G: the units (tasks or templates) both ran")
    paired_sd: float | None = Field(
        description="s_d: the sd across those units of the per-unit difference"
    )
    paired_method: str
    paired_note: str = Field(description="why there is no paired figure ('' when there is one)")
    fixed_mdd: float | None = Field(
        description="the figure with the units held fixed: it holds for these units only"
    )
    fixed_method: str
    fixed_note: str
    unit: str = Field(description="task, or template")


class PairResolutionJSON(_Model):
    """Two systems next to each other in the board's default order, and what it resolves."""

    first: str = Field(description="the slug of the system above")
    second: str
    swer: ResolutionJSON
    value: ResolutionJSON


class BoardJSON(_Model):
    """One board: one SPEC major version on one pack, split and substrate, entries in the
    default order."""

    key: str
    group: str = Field(description="the key of the pack's boards (one per substrate)")
    spec_major: str
    pack: str
    split: str
    substrate: str
    fingerprints: list[str]
    default_order: list[str] = Field(
        description="the sort keys of the entries' order ('-' first: descending): net value, "
        "then task success, SWER, record-wrong, over-halt, then the slug; a system at least as "
        "good on the four rates ranks above the other, and no other system changes the order of "
        "two"
    )
    prices: dict[str, float] = Field(
        description="the prices net value and the order use: value (of a correct effect), "
        "silent, wrong_record, over_halt"
    )
    doing_nothing: DoingNothingJSON | None = Field(
        default=None, description="null when the pack does not say where the action was available"
    )
    family: FamilyJSON
    minimum_detectable_difference: float = Field(
        description="the single-rate figure (methodology page): smallest difference in a rate "
        "resolved at 80% power with every unit one observation (fraction); what a board resolves "
        "between two systems is paired_resolution"
    )
    effective_tasks: float = Field(description="the effective number of tasks it rests on")
    paired_resolution: list[PairResolutionJSON] = Field(
        default_factory=list,
        description="each two systems next to each other in the default order: the paired, "
        "unit-clustered minimum detectable difference of SWER and of net value per 100 tasks, "
        "and the figure with the units held fixed",
    )
    entries: list[EntryJSON]
    withheld: list[str] = Field(
        default_factory=list,
        description="the blindness findings of the pack's published record on this substrate "
        "(target, AUROC, model, top features): while any is listed, no entry is ranked",
    )
    contamination: list[ContaminationJSON] = Field(
        default_factory=list,
        description="each system with entries on both a fresh instance and the public dev seed "
        "of a generated pack: its contamination delta",
    )


class GroupJSON(_Model):
    """One pack's boards (one per substrate), and its systems across substrates."""

    key: str
    title: str
    boards: list[str] = Field(description="the keys of its boards, in SPEC order of substrates")
    across_substrates: list[SystemAcrossJSON] = Field(
        default_factory=list,
        description="every system that ran more than one substrate: its rates per substrate "
        "and their differences between substrates",
    )


class DifferenceJSON(_Model):
    """A rate on one substrate minus on another, paired by task, trial and seed."""

    difference: float = Field(ge=-1, le=1)
    lo: float = Field(ge=-1, le=1, description="95% paired, task-clustered interval, lower end")
    hi: float = Field(ge=-1, le=1)
    tasks: int = Field(ge=0, description="tasks run on both substrates (the clusters)")
    episodes: int = Field(ge=0, description="paired episodes on each substrate")
    method: str
    beyond_noise: bool = Field(
        description="the interval excludes 0 and rests on enough common tasks to tell"
    )


class ValueDifferenceJSON(_Model):
    """A net value per 100 tasks minus another, paired by unit."""

    difference: float
    lo: float = Field(description="95% paired, cluster-robust interval, lower end")
    hi: float
    tasks: int = Field(ge=0, description="units both ran (the clusters)")
    episodes: int = Field(ge=0, description="episodes of the first on those units")
    method: str
    beyond_noise: bool = Field(
        description="the interval excludes 0 and rests on enough common units to tell"
    )


class ContaminationJSON(_Model):
    """One system's SWER on a fresh instance of a generated pack minus on its public dev seed."""

    system: str
    public: list[str] = Field(description="the slugs of the system's ranked public-seed entries")
    fresh: list[str] = Field(
        description="the slugs of the system's ranked committed fresh-instance entries (a seed "
        "derived from a commitment and its one beacon round; uncommitted ones do not count)"
    )
    swer_public: float = Field(
        ge=0, le=1, description="SWER on the public seed (every public entry, paired units)"
    )
    swer_fresh: float = Field(
        ge=0, le=1, description="SWER on the fresh instances (every committed one, paired units)"
    )
    delta: DifferenceJSON = Field(
        description="SWER, fresh minus public, paired by the board's unit (a template), with its "
        "paired cluster-robust interval; positive: worse on tasks it could not have seen"
    )
    value: ValueDifferenceJSON = Field(
        description="net value per 100 tasks, fresh minus public, paired the same way; "
        "negative: worth less on tasks it could not have seen"
    )
    fresh_rank_best: int | None = Field(
        default=None, description="the best rank it has on the board's fresh rows alone"
    )
    fresh_rank_worst: int | None = Field(
        default=None, description="the worst rank it has on the board's fresh rows alone"
    )


class SubstratePairJSON(_Model):
    """The differences of one system's rates on ``first`` minus on ``second``."""

    first: str
    second: str
    swer: DifferenceJSON
    over_halt: DifferenceJSON
    record_wrong: DifferenceJSON


class OnSubstrateJSON(_Model):
    """One system's rates over its episodes on one substrate."""

    entry: str = Field(description="the slug of the entry whose episodes these are")
    n_episodes: int = Field(ge=0)
    n_tasks: int = Field(ge=0)
    swer: RateJSON
    over_halt: RateJSON
    record_wrong: RateJSON


class SystemAcrossJSON(_Model):
    """One system (the entries of a board with one name and signer) on every substrate it ran."""

    system: str
    signer: SignerJSON | None = None
    substrates: dict[str, OnSubstrateJSON]
    differences: list[SubstratePairJSON] = Field(
        description="for every two substrates (the later in SPEC order first), the rates' "
        "paired, task-clustered differences over the same tasks, trials and seeds"
    )
    left_out: list[str] = Field(
        default_factory=list,
        description="'slug on substrate' of episodes not used: an earlier entry ran it too",
    )


class LeaderboardJSON(_Model):
    """Every board of the site."""

    format: int = Field(description="the document's format version")
    build_date: str = Field(pattern=DATE, description="the day the site was built (YYYY-MM-DD)")
    boards: list[BoardJSON]
    groups: list[GroupJSON] = Field(
        description="the boards of each pack, and its systems across substrates"
    )


DIGITS = 6
"""Decimals kept of every fraction (as in the CSV): a millionth is far below any interval."""


def _r(x: float) -> float:
    return round(float(x), DIGITS)


def _rate_of(r: TaskRate, name: str, dropped: int = 0) -> RateJSON:
    # Built without validation (model_construct): every field is already of its declared type
    # (ints, rounded floats, None), and a board of 10,000 entries holds 1.5 million of these,
    # whose validation was a sixth of a rebuild. The tests check the written document against
    # the published schema (tests/test_site.py).
    c = r.clustered
    return RateJSON.model_construct(
        k=r.numerator,
        n=r.denominator,
        rate=_r(r.rate),
        lo=_r(r.ci.lo),
        hi=_r(r.ci.hi),
        upper=None if r.upper is None else _r(r.upper),
        tasks=ClusteredJSON.model_construct(
            lo=_r(c.lo),
            hi=_r(c.hi),
            design_effect=_r(c.design_effect),
            n_effective=_r(c.n_effective),
            tasks=c.tasks,
            upper=None if r.clustered_upper is None else _r(r.clustered_upper),
        ),
        worst_with_dropped=_r(worst_case_rate(r.numerator, r.denominator, dropped))
        if name in DROP_BOUNDED
        else None,
    )


def _rates(
    table: TaskTable,
    gap: float,
    gap_ci: Interval | None,
    dropped: int = 0,
    counted: dict[str, TaskRate] | None = None,
) -> dict[str, Any]:
    """Return the fields of :class:`RatesJSON` (``counted``: the table's rates, when known)."""
    out: dict[str, Any] = {"n_episodes": table.n_episodes, "n_tasks": table.n_tasks}
    for name in RATES:
        if name not in table.events:  # not measured (the collateral-write rate without receipts)
            out[name] = None
            continue
        r = counted[name] if counted is not None else task_rate(table, name)
        out[name] = _rate_of(r, name, dropped)
    out["gap"] = GapJSON(
        value=_r(gap),
        lo=_r(gap_ci.lo) if gap_ci is not None else None,
        hi=_r(gap_ci.hi) if gap_ci is not None else None,
    )
    return out


def _difference_fields(d: Difference) -> dict[str, Any]:
    return {
        "difference": _r(d.difference),
        "lo": _r(d.lo),
        "hi": _r(d.hi),
        "tasks": d.tasks,
        "episodes": d.n_first,
        "method": d.method,
        "beyond_noise": d.beyond_noise,
    }


def _difference(d: Difference) -> DifferenceJSON:
    return DifferenceJSON(**_difference_fields(d))


def _across(system: SystemAcross, entries: dict[str, Entry]) -> SystemAcrossJSON:
    signer = next((entries[o.slug].signer for o in system.substrates), None)
    return SystemAcrossJSON(
        system=system.name,
        signer=SignerJSON(identity=signer.identity, issuer=signer.issuer) if signer else None,
        substrates={
            o.substrate: OnSubstrateJSON(
                entry=o.slug,
                n_episodes=o.episodes,
                n_tasks=o.tasks,
                **{r: _rate_of(o.rates[r], r) for r in SUBSTRATE_RATES},
            )
            for o in system.substrates
        },
        differences=[
            SubstratePairJSON(
                first=p.first,
                second=p.second,
                **{r: _difference(p.differences[r]) for r in SUBSTRATE_RATES},
            )
            for p in system.pairs
        ],
        left_out=[f"{slug} on {sub}" for slug, sub in system.left_out],
    )


def _int_or_none(x: Any) -> int | None:
    return None if x is None or pd.isna(x) else int(x)


def _status(entry: Entry, row: Mapping[str, Any]) -> Literal["ranked", "preview", "withheld"]:
    """An entry's status on one board: withheld on a leaking pack's board, else its own."""
    if row["status"] == WITHHELD:
        return "withheld"
    return "ranked" if entry.status == "ranked" else "preview"


def _finite(x: Any) -> float | None:
    return None if x is None or pd.isna(x) or math.isinf(float(x)) else _r(float(x))


def entry_tail(entry: Entry, board: Board, row: dict[str, Any]) -> bytes:
    """Return the end of ``entry``'s object on ``board`` (``row``: its board row): the
    ``rates`` field as JSON, without braces. It depends on the entry and the board's
    substrate alone, so a build may keep it (:func:`leaderboard_json`)."""
    res = entry.results
    tasks = board.tables[entry.slug]
    assert res is not None and entry.status != "refused"
    rates = {name: task_rate(tasks, name) for name in RATES if name in tasks.events}
    gap_ci = (
        None
        if pd.isna(row["gap_lo"])
        else Interval(lo=row["gap_lo"], hi=row["gap_hi"], method="bootstrap")
    )
    whole = RatesJSON(**_rates(tasks, row["gap"], gap_ci, int(row["n_dropped"]), rates))
    return orjson.dumps({"rates": whole.model_dump(mode="json")})[1:-1]


def leaderboard_json(
    boards: Sequence[Board],
    entries: dict[str, Entry],
    badges: set[str],
    build_date: str,
    across: Sequence[BoardAcross] = (),
    keep: Callable[[str, str, Callable[[], bytes]], bytes] | None = None,
) -> bytes:
    """Return the whole leaderboard as compact JSON (keys in model order, byte-stable;
    ``badges``: slugs that have a badge; ``across``: each pack's systems that ran more than
    one substrate).

    With ``keep``, each entry's rates (:func:`entry_tail`) come from
    ``keep(slug, board key, make)``, which returns them as kept or as ``make`` makes them.
    """
    out = []
    items_of: list[list[orjson.Fragment]] = []
    for b in boards:
        facts = b.facts
        items = []
        for row in b.frame.to_dict("records"):
            e = entries[row["slug"]]
            tasks = b.tables[e.slug]
            assert e.status != "refused"
            even = row["break_even"]
            head = EntryHeadJSON(
                system=e.name,
                substrate=b.substrate,
                label=named(e.name, b.substrate),
                slug=e.slug,
                status=_status(e, row),
                rank_best=_int_or_none(row["rank_best"]),
                rank_worst=_int_or_none(row["rank_worst"]),
                page=f"submissions/{e.slug}.html",
                badge=f"badges/{e.slug}.svg" if e.slug in badges else None,
                signer=SignerJSON(identity=e.signer.identity, issuer=e.signer.issuer)
                if e.signer
                else None,
                reproduced=bool(e.reproduced),
                instance=e.instance or None,  # type: ignore[arg-type]
                spec_version=e.spec_version,
                fingerprint=e.fingerprint,
                trials=int(row["trials"]),
                seeds=list(e.seeds),
                seeds_default=e.default_seeds,
                n_tasks=tasks.n_tasks,
                date=e.date,
                never_acts=never_acts(tasks),
                value=ValueJSON(
                    per_100=_r(row["value"]),
                    lo=_r(row["value_lo"]),
                    hi=_r(row["value_hi"]),
                    tasks=tasks.n_tasks,
                    break_even=_finite(even),
                    never_beats_doing_nothing=bool(not pd.isna(even) and math.isinf(even)),
                ),
                dropped=DroppedJSON(n=int(row["n_dropped"]), reasons=dict(e.drop_reasons)),
            )
            make = partial(entry_tail, e, b, row)
            tail = keep(e.slug, b.key, make) if keep is not None else make()
            own = orjson.dumps(head.model_dump(mode="json"))
            items.append(orjson.Fragment(own[:-1] + b"," + tail + b"}"))
        items_of.append(items)
        idle = facts.idle if facts is not None else None
        out.append(
            BoardJSON(
                key=b.key,
                group=b.group,
                spec_major=b.spec_major,
                pack=b.pack,
                split=b.split,
                substrate=b.substrate,
                fingerprints=list(b.fingerprints),
                withheld=[leak.text() for leak in b.withheld],
                default_order=list(DEFAULT_ORDER),
                prices=b.prices.model_dump(),
                doing_nothing=None
                if idle is None or facts is None or facts.idle_value is None
                else DoingNothingJSON(over_halt=_r(idle), value_per_100=_r(facts.idle_value)),
                family=FamilyJSON(
                    confidence=0.95,
                    pair_confidence=_r(facts.confidence) if facts else 0.95,
                    ranked=facts.ranked if facts else 0,
                    min_shared_tasks=facts.min_tasks if facts else 0,
                ),
                minimum_detectable_difference=_r(facts.mdd) if facts else 1.0,
                effective_tasks=_r(facts.n_effective) if facts else 0.0,
                paired_resolution=[
                    PairResolutionJSON(
                        first=p.first,
                        second=p.second,
                        swer=ResolutionJSON(**p.swer.model_dump(exclude={"power", "alpha"})),
                        value=ResolutionJSON(**p.value.model_dump(exclude={"power", "alpha"})),
                    )
                    for p in (facts.adjacent if facts else ())
                ],
                entries=[],
                contamination=[
                    ContaminationJSON(
                        system=c.system,
                        public=list(c.public),
                        fresh=list(c.fresh),
                        swer_public=_r(c.delta.second),
                        swer_fresh=_r(c.delta.first),
                        delta=_difference(c.delta),
                        value=ValueDifferenceJSON(**_difference_fields(c.value)),
                        **_fresh_rank(b, c.public[0]),
                    )
                    for c in b.contamination
                ],
            )
        )
    across_of = {a.key: a for a in across}
    keys: dict[str, list[Board]] = {}
    for b in boards:
        keys.setdefault(b.group, []).append(b)
    groups = [
        GroupJSON(
            key=group,
            title=members[0].group_title,
            boards=[b.key for b in members],
            across_substrates=[
                _across(s, entries)
                for s in (across_of[group].systems if group in across_of else [])
            ],
        )
        for group, members in keys.items()
    ]
    doc = LeaderboardJSON(format=FORMAT, build_date=build_date, boards=out, groups=groups)
    data = doc.model_dump(mode="json")
    for board, items in zip(data["boards"], items_of, strict=True):
        board["entries"] = items
    return orjson.dumps(data) + b"\n"


def _fresh_rank(b: Board, public: str) -> dict[str, int | None]:
    """The rank on the board's fresh rows alone of the system whose row is ``public``."""
    row = b.frame[b.frame["slug"] == public]
    if row.empty or "fresh_rank_best" not in row:
        return {"fresh_rank_best": None, "fresh_rank_worst": None}
    best, worst = row["fresh_rank_best"].iloc[0], row["fresh_rank_worst"].iloc[0]
    return {
        "fresh_rank_best": None if pd.isna(best) else int(best),
        "fresh_rank_worst": None if pd.isna(worst) else int(worst),
    }


def schema() -> bytes:
    """Return the JSON Schema (draft 2020-12) of ``leaderboard.json``."""
    body = LeaderboardJSON.model_json_schema()
    body = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_FILE,
        **body,
    }
    return orjson.dumps(body, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
