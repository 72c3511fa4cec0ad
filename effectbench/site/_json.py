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
from effectbench.site._bootstrap import adjacent_pairs, bootstrap_block
from effectbench.site._contamination import Contamination
from effectbench.site._entries import Entry
from effectbench.site._pooled import PooledBoard
from effectbench.site._sensitivity import BoardAcross, SystemAcross
from effectbench.site._tables import (
    DEFAULT_ORDER,
    DROP_BOUNDED,
    NO_MEASURED_COST,
    RATES,
    WITHHELD,
    Board,
    PairResolution,
    ViewFacts,
    by_axis,
    frontier,
    frontier_points,
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


class HarnessJSON(_Model):
    """The harness (scaffold) that drove the model, as the bundle records it."""

    name: str
    version: str = Field(description="'' when not known")
    config_digest: str | None = Field(
        description="sha256:<hex> of its configuration; null when not recorded"
    )


class ModelJSON(_Model):
    """The model the harness called, as the bundle records it."""

    provider: str = Field(description="who serves it; 'scripted' for a system that calls none")
    id: str


class FirstTryJSON(_Model):
    """Task success at the first attempt: of the entry's cells on the board's substrate (its
    rows and its drops), those whose first attempt counted and succeeded."""

    k: int = Field(ge=0)
    n: int = Field(ge=0)
    rate: float | None = Field(ge=0, le=1, description="k / n; null when n is 0")


class RetriesJSON(_Model):
    """How often the entry's cells ran again after a re-runnable drop."""

    mean_attempts: float | None = Field(
        description="attempts per cell (1: none ran again); null without cells"
    )
    earlier_attempts: int = Field(ge=0, description="attempts that did not count")


class CostJSON(_Model):
    """The measured model cost per episode (``model_calls``' ``cost_usd``, summed per row)."""

    per_episode_usd: float | None = Field(
        ge=0,
        description="mean cost of an episode in US dollars; null when not measured (no row made "
        "a model call, or the bundle's costs are not its signer's word), never 0 for want of one",
    )


class EntryHeadJSON(_Model):
    """The fields of :class:`EntryJSON` before its rates and cells: what a build makes
    afresh (its rank and net value move as submissions join); the rest may be kept."""

    system: str
    harness: HarnessJSON | None = Field(
        description="the harness the bundle records; null: not recorded (a bundle made before "
        "bundles recorded it)"
    )
    model: ModelJSON | None = Field(description="the model the bundle records; null: not recorded")
    substrate: str = Field(description="the substrate every number of the entry comes from")
    label: str = Field(description="the system's name with its substrate, as the site shows it")
    slug: str = Field(description="the submission's id on the site (its folder, sanitised)")
    status: Literal["ranked", "preview", "withheld"] = Field(
        description="ranked; preview (a local build's unsigned bundle, never ranked: the board's "
        "page shows it in a marked section of its own after the ranked rows); or "
        "withheld (on a board of a pack whose blindness record names a leak: not ranked "
        "until the pack is fixed)"
    )
    rank_best: int | None = Field(default=None, ge=1)
    rank_worst: int | None = Field(default=None, ge=1)
    page: str = Field(description="its page, relative to the site's root")
    badge: str | None = Field(default=None, description="its SVG badge (ranked entries only)")
    signer: SignerJSON | None = None
    reproduced: bool
    tier: Literal["reproduced", "fresh", "signed", "preview"] = Field(
        description="its trust tier: reproduced by the board's CI; signed and measured on a "
        "committed fresh instance; signed on public seeds; or an unsigned preview (never ranked)"
    )
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
    first_try: FirstTryJSON | None = Field(
        description="first-try task success; null when the verifier's report does not say"
    )
    retries: RetriesJSON
    cost: CostJSON


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


class DeadUnitsJSON(_Model):
    """The units of a board on which every ranked system has the same outcome: they add to
    the units a paired figure counts and to nothing it reads."""

    systems: int = Field(ge=0, description="the ranked systems compared")
    units: int = Field(ge=0, description="the units (tasks or templates) every one of them ran")
    unit: str = Field(description="task, template, or cluster (a pooled board's mix)")
    share: float | None = Field(
        description="dead units over shared units; null with fewer than 2 ranked systems"
    )
    dead: list[str] = Field(
        description="the dead units' ids: the same share of task success, SWER, record-wrong "
        "and over-halt for every ranked system"
    )


def dead_units_json(facts: ViewFacts | None) -> DeadUnitsJSON | None:
    """Return a board's dead units as JSON (None: the board has none counted)."""
    d = facts.dead if facts is not None else None
    if d is None:
        return None
    share = d.share
    return DeadUnitsJSON(
        systems=d.systems,
        units=d.units,
        unit=d.unit,
        share=None if share is None else _r(share),
        dead=list(d.dead),
    )


def pair_resolution_json(p: PairResolution) -> PairResolutionJSON:
    """Return two systems' paired resolution of SWER and of net value as JSON."""
    return PairResolutionJSON(
        first=p.first,
        second=p.second,
        swer=ResolutionJSON(**p.swer.model_dump(exclude={"power", "alpha"})),
        value=ResolutionJSON(**p.value.model_dump(exclude={"power", "alpha"})),
    )


class BootstrapRowJSON(_Model):
    """One row's net value per 100 tasks with its analytic and its bootstrap 95% interval."""

    slug: str
    value: float = Field(description="net value per 100 tasks against doing nothing")
    analytic_lo: float | None = Field(description="the board's interval (paired CR1, t on G-1)")
    analytic_hi: float | None
    bootstrap_lo: float | None = Field(
        description="the hierarchical bootstrap's percentile interval; null when not estimable"
    )
    bootstrap_hi: float | None
    templates: int = Field(ge=0, description="templates (units) resampled")
    tasks: int = Field(ge=0, description="tasks (instances) within them")
    note: str = Field(description="why there is no bootstrap interval ('' when there is one)")


class BootstrapPairJSON(_Model):
    """Two systems next to each other: their paired difference of net value per 100 tasks."""

    first: str = Field(description="the slug of the system above")
    second: str
    difference: float = Field(description="first minus second over the units both ran")
    analytic_lo: float | None
    analytic_hi: float | None
    bootstrap_lo: float | None
    bootstrap_hi: float | None
    templates: int = Field(ge=0)
    tasks: int = Field(ge=0)
    note: str


class HierarchicalBootstrapJSON(_Model):
    """The check of the board's analytic intervals: a bootstrap that resamples templates, then
    tasks within a template, then trials within a task (seeded, deterministic)."""

    method: str
    levels: list[str] = Field(description="what is resampled, outermost first")
    replicates: int = Field(ge=1)
    seed: int
    confidence: float
    rows: list[BootstrapRowJSON]
    pairs: list[BootstrapPairJSON] = Field(
        description="each two systems next to each other in the default order"
    )


class FrontierJSON(_Model):
    """Measured cost per episode against net value per 100 tasks: the ranked systems no other
    beats on both."""

    entries: list[str] = Field(
        description="the slugs on the frontier, cheapest first: no other ranked system with a "
        "measured cost costs no more and is worth no less, better on one"
    )
    unmeasured: list[str] = Field(
        description="ranked entries without a measured cost: left off the frontier, never "
        "placed at zero"
    )
    note: str = Field(description="one sentence when no ranked system has a measured cost")


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
    dead_units: DeadUnitsJSON | None = Field(
        default=None, description="the units on which every ranked system has the same outcome"
    )
    hierarchical_bootstrap: HierarchicalBootstrapJSON | None = Field(
        default=None,
        description="the analytic intervals of each row's value and of each adjacent pair's "
        "paired difference beside a hierarchical bootstrap's (template, task, trial)",
    )
    entries: list[EntryJSON] = Field(
        description="every entry of the board in its default order, previews placed by the same "
        "rules (the page shows them apart, never among the ranked rows)"
    )
    frontier: FrontierJSON
    by_model: dict[str, list[str]] = Field(
        description="each model ('provider/id', or 'not recorded') with the slugs of its entries "
        "across harnesses, in the default order"
    )
    by_harness: dict[str, list[str]] = Field(
        description="each harness ('name version', or 'not recorded') with the slugs of its "
        "entries across models, in the default order"
    )
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


class PooledEntryJSON(_Model):
    """One system on a board pooling packs: its every catalogue's units joined."""

    key: str = Field(description="the system's id on the pooled board (its name, and signer)")
    system: str
    label: str = Field(description="the system's name with its substrate")
    signer: SignerJSON | None = None
    status: Literal["ranked", "preview"] = Field(
        description="ranked when every entry pooled is ranked, else preview (never ranked)"
    )
    rank_best: int | None = Field(default=None, ge=1)
    rank_worst: int | None = Field(default=None, ge=1)
    entries: dict[str, str] = Field(description="the slug of its entry on each pooled pack")
    units: int = Field(ge=0, description="its units (clusters) over every pooled pack")
    n_episodes: int = Field(ge=0)
    value: ValueJSON = Field(
        description="net value per 100 tasks against doing nothing on the same tasks, over "
        "every pooled pack's episodes, its interval clustered by unit"
    )
    swer: float = Field(ge=0, le=1)
    over_halt: float = Field(ge=0, le=1)
    record_wrong: float = Field(ge=0, le=1)
    task_success: float = Field(ge=0, le=1)


class IncompleteJSON(_Model):
    """A system that ran only some of a pooled board's packs: listed, not ranked."""

    system: str
    signer: str = Field(description="its signer's identity ('' when unsigned)")
    ran: list[str] = Field(description="the pooled packs it ran in full")
    missing: list[str] = Field(description="each pooled pack it did not run in full, and why")


class PooledBoardJSON(_Model):
    """One substrate's board pooling one catalogue of each system of record, ranked as the
    per-pack boards are."""

    key: str
    spec_major: str
    split: str
    substrate: str
    rule: str = Field(description="which catalogues are pooled, in words")
    packs: dict[str, str] = Field(description="the pooled pack of each system of record")
    unit: str = Field(description="template, task, or cluster: each pack's templates or tasks")
    prices: dict[str, float]
    doing_nothing: DoingNothingJSON | None = None
    family: FamilyJSON
    paired_resolution: list[PairResolutionJSON] = Field(
        default_factory=list,
        description="each two systems next to each other in the default order: the paired, "
        "unit-clustered minimum detectable difference of SWER and of net value per 100 tasks",
    )
    dead_units: DeadUnitsJSON | None = None
    entries: list[PooledEntryJSON]
    incomplete: list[IncompleteJSON] = Field(
        default_factory=list, description="systems on some of the pooled packs only: not ranked"
    )
    page: str = Field(description="its page, relative to the site's root")


def _pooled_entry(b: PooledBoard, row: dict[str, Any]) -> PooledEntryJSON:
    even = row["break_even"]
    return PooledEntryJSON(
        key=row["slug"],
        system=row["system"],
        label=named(row["system"], b.substrate),
        signer=SignerJSON(identity=row["signer"], issuer=row["signer_issuer"])
        if row["signer"]
        else None,
        status="ranked" if row["status"] == "ranked" else "preview",
        rank_best=_int_or_none(row["rank_best"]),
        rank_worst=_int_or_none(row["rank_worst"]),
        entries=dict(zip(b.packs, b.members[row["slug"]], strict=True)),
        units=int(row["n_tasks"]),
        n_episodes=int(row["n_episodes"]),
        value=ValueJSON(
            per_100=_r(row["value"]),
            lo=_r(row["value_lo"]),
            hi=_r(row["value_hi"]),
            tasks=int(row["n_tasks"]),
            break_even=_finite(even),
            never_beats_doing_nothing=bool(not pd.isna(even) and math.isinf(even)),
        ),
        **{r: _r(row[r]) for r in ("swer", "over_halt", "record_wrong", "task_success")},
    )


def pooled_board_json(b: PooledBoard) -> PooledBoardJSON:
    """Return a board pooling packs as JSON (the pairs: adjacent ones)."""
    facts = b.facts
    return PooledBoardJSON(
        key=b.key,
        spec_major=b.spec_major,
        split=b.split,
        substrate=b.substrate,
        rule=b.rule,
        packs=dict(b.catalogues),
        unit=facts.unit,
        prices=b.prices.model_dump(),
        doing_nothing=None
        if facts.idle is None or facts.idle_value is None
        else DoingNothingJSON(over_halt=_r(facts.idle), value_per_100=_r(facts.idle_value)),
        family=FamilyJSON(
            confidence=0.95,
            pair_confidence=_r(facts.confidence),
            ranked=facts.ranked,
            min_shared_tasks=facts.min_tasks,
        ),
        paired_resolution=[pair_resolution_json(p) for p in facts.adjacent],
        dead_units=dead_units_json(facts),
        entries=[_pooled_entry(b, row) for row in b.frame.to_dict("records")],
        incomplete=[
            IncompleteJSON(
                system=i.system, signer=i.signer, ran=list(i.ran), missing=list(i.missing)
            )
            for i in b.incomplete
        ],
        page=b.page,
    )


class LeaderboardJSON(_Model):
    """Every board of the site."""

    format: int = Field(description="the document's format version")
    build_date: str = Field(pattern=DATE, description="the day the site was built (YYYY-MM-DD)")
    boards: list[BoardJSON]
    groups: list[GroupJSON] = Field(
        description="the boards of each pack, and its systems across substrates"
    )
    pooled: list[PooledBoardJSON] = Field(
        default_factory=list,
        description="per substrate, the board pooling one catalogue of each system of record",
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
    pooled: Sequence[PooledBoard] = (),
) -> bytes:
    """Return the whole leaderboard as compact JSON (keys in model order, byte-stable;
    ``badges``: slugs that have a badge; ``across``: each pack's systems that ran more than
    one substrate; ``pooled``: the boards pooling packs, one per substrate).

    With ``keep``, each entry's rates (:func:`entry_tail`) come from
    ``keep(slug, board key, make)``, which returns them as kept or as ``make`` makes them.
    """
    out: list[BoardJSON] = []
    items_of: list[list[orjson.Fragment]] = []
    for b in boards:
        rows = b.frame.to_dict("records")
        items_of.append([_entry_item(entries[r["slug"]], b, r, badges, keep) for r in rows])
        out.append(_board_json(b))
    groups = _groups_json(boards, entries, across)
    doc = LeaderboardJSON(
        format=FORMAT,
        build_date=build_date,
        boards=out,
        groups=groups,
        pooled=[pooled_board_json(p) for p in pooled],
    )
    data = doc.model_dump(mode="json")
    for board, items in zip(data["boards"], items_of, strict=True):
        board["entries"] = items
    return orjson.dumps(data) + b"\n"


def _entry_item(
    e: Entry,
    b: Board,
    row: dict[str, Any],
    badges: set[str],
    keep: Callable[[str, str, Callable[[], bytes]], bytes] | None,
) -> orjson.Fragment:
    """One entry of a board: its head, then its rates (:func:`entry_tail`, kept or made)."""
    head = _entry_head(e, b, row, badges)
    make = partial(entry_tail, e, b, row)
    tail = keep(e.slug, b.key, make) if keep is not None else make()
    own = orjson.dumps(head.model_dump(mode="json"))
    return orjson.Fragment(own[:-1] + b"," + tail + b"}")


def _entry_head(e: Entry, b: Board, row: dict[str, Any], badges: set[str]) -> EntryHeadJSON:
    """What an entry of a board says before its rates."""
    tasks = b.tables[e.slug]
    assert e.status != "refused"
    even = row["break_even"]
    return EntryHeadJSON(
        system=e.name,
        harness=_harness_json(e.harness),
        model=None if e.model is None else ModelJSON(**e.model),
        substrate=b.substrate,
        label=named(e.name, b.substrate),
        slug=e.slug,
        status=_status(e, row),
        rank_best=_int_or_none(row["rank_best"]),
        rank_worst=_int_or_none(row["rank_worst"]),
        page=f"submissions/{e.slug}.html",
        badge=f"badges/{e.slug}.svg" if e.slug in badges else None,
        signer=SignerJSON(identity=e.signer.identity, issuer=e.signer.issuer) if e.signer else None,
        reproduced=bool(e.reproduced),
        tier=row["tier"],
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
        **usage_fields(row),
    )


def _harness_json(harness: dict[str, Any] | None) -> HarnessJSON | None:
    if harness is None:
        return None
    return HarnessJSON(
        name=harness["name"],
        version=harness.get("version", ""),
        config_digest=harness.get("config_digest"),
    )


def _board_json(b: Board) -> BoardJSON:
    """A board's own part of the leaderboard (its entries are put in afterwards)."""
    facts = b.facts
    return BoardJSON(
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
        doing_nothing=_doing_nothing_json(facts),
        family=FamilyJSON(
            confidence=0.95,
            pair_confidence=_r(facts.confidence) if facts else 0.95,
            ranked=facts.ranked if facts else 0,
            min_shared_tasks=facts.min_tasks if facts else 0,
        ),
        minimum_detectable_difference=_r(facts.mdd) if facts else 1.0,
        effective_tasks=_r(facts.n_effective) if facts else 0.0,
        paired_resolution=[pair_resolution_json(p) for p in (facts.adjacent if facts else ())],
        dead_units=dead_units_json(facts),
        hierarchical_bootstrap=HierarchicalBootstrapJSON.model_validate(
            bootstrap_block(b, adjacent_pairs(b))
        ),
        entries=[],
        frontier=frontier_json(b),
        by_model=by_axis(b.frame, "model"),
        by_harness=by_axis(b.frame, "harness"),
        contamination=[_contamination_json(b, c) for c in b.contamination],
    )


def _doing_nothing_json(facts: ViewFacts | None) -> DoingNothingJSON | None:
    """What doing nothing scores on a board (None where it is not known)."""
    if facts is None or facts.idle is None or facts.idle_value is None:
        return None
    return DoingNothingJSON(over_halt=_r(facts.idle), value_per_100=_r(facts.idle_value))


def _contamination_json(b: Board, c: Contamination) -> ContaminationJSON:
    """One system's public and fresh rows of a board, compared."""
    return ContaminationJSON(
        system=c.system,
        public=list(c.public),
        fresh=list(c.fresh),
        swer_public=_r(c.delta.second),
        swer_fresh=_r(c.delta.first),
        delta=_difference(c.delta),
        value=ValueDifferenceJSON(**_difference_fields(c.value)),
        **_fresh_rank(b, c.public[0]),
    )


def _groups_json(
    boards: Sequence[Board], entries: dict[str, Entry], across: Sequence[BoardAcross]
) -> list[GroupJSON]:
    """The boards by group, each group with its systems that ran more than one substrate."""
    across_of = {a.key: a for a in across}
    keys: dict[str, list[Board]] = {}
    for b in boards:
        keys.setdefault(b.group, []).append(b)
    return [
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


def frontier_json(b: Board) -> FrontierJSON:
    """Return a board's cost-value frontier (:func:`~effectbench.site._tables.frontier`)."""
    points = frontier_points(b.frame)
    ranked = b.frame[(b.frame["status"] == "ranked") & b.frame["cost"].isna()]
    return FrontierJSON(
        entries=frontier(points),
        unmeasured=[str(s) for s in ranked["slug"]],
        note="" if points else NO_MEASURED_COST,
    )


def usage_fields(row: dict[str, Any]) -> dict[str, Any]:
    """Return an entry's ``first_try``, ``retries`` and ``cost`` from its board row."""
    k, n = row["first_try_k"], int(row["first_try_n"])
    return {
        "first_try": None
        if pd.isna(k)
        else FirstTryJSON(k=int(k), n=n, rate=_r(int(k) / n) if n else None),
        "retries": RetriesJSON(
            mean_attempts=_finite(row["attempts"]), earlier_attempts=int(row["earlier_attempts"])
        ),
        "cost": CostJSON(per_episode_usd=_finite(row["cost"])),
    }


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
