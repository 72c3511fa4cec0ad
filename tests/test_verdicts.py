"""The board's default order: value for work done, dominance, independence, and rank ranges.

Property tests over generated boards (hypothesis): every system runs the same tasks (a board
is one substrate of one pack), and each outcome is one the truth table allows on that task (a
correct effect or an over-halt only where the correct action is available, a safe halt only
where it is not). Then the four cases the issue found on main, on the clinic's own tasks, and
the shipped clinic boards.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.outcomes import outcome_counts

from effectbench.metrics import (
    DEFAULT_PRICES,
    EVENTS,
    Prices,
    TaskTable,
    break_even,
    episode_frame,
    family_confidence,
    idle_share,
    idle_value,
    min_shared_tasks,
    net_value,
    over_doing_nothing,
    rate_difference,
    task_rate,
    task_table,
    value_difference,
    value_per_episode,
)
from effectbench.verdicts import (
    Standing,
    board_order,
    dominates,
    grain,
    rank_ranges,
    separation,
    standing,
)

ROOT = Path(__file__).resolve().parents[1]

ACTING = ("success", "false_abort", "phantom", "silent_wrong_write", "wrong_action")
"""Outcomes of a system that acts (any task)."""


def table_of(per_task: list[list[str]], available: list[bool], prefix: str = "t") -> TaskTable:
    """Return the TaskTable of one system's outcomes, task by task."""
    counts = [outcome_counts(o) for o in per_task]
    return TaskTable(
        task_id=[f"{prefix}{i:02d}" for i in range(len(per_task))],
        category=["control"] * len(per_task),
        substrate=["api"] * len(per_task),
        trials=[len(o) for o in per_task],
        events={e: [c[e] for c in counts] for e in EVENTS},
        correct_action_available=available,
    )


def system_on(
    draw: Callable[..., Any], available: list[bool], trials: int, idle: bool = False
) -> list[list[str]]:
    """One system's outcomes on tasks with ``available`` correct actions."""
    per_task = []
    for avail in available:
        halt = "over_halt" if avail else "safe_halt"
        if idle:
            per_task.append([halt] * trials)
            continue
        allowed = [o for o in ACTING if avail or o not in ("success", "false_abort")]
        allowed.append(halt)
        repeat = draw(st.booleans())  # identical trials, as in a deterministic pack
        first = draw(st.sampled_from(allowed))
        per_task.append(
            [first] * trials if repeat else [draw(st.sampled_from(allowed)) for _ in range(trials)]
        )
    return per_task


@st.composite
def boards(draw: st.DrawFn, most: int = 7) -> tuple[list[TaskTable], list[bool]]:
    """A board: 1 to ``most`` systems on 1 to 12 shared tasks, 1 to 4 trials, some never
    acting."""
    n_tasks = draw(st.integers(1, 12))
    trials = draw(st.integers(1, 4))
    available = draw(st.lists(st.booleans(), min_size=n_tasks, max_size=n_tasks))
    tables = [
        table_of(system_on(draw, available, trials, draw(st.booleans())), available)
        for _ in range(draw(st.integers(1, most)))
    ]
    return tables, available


prices_st = st.builds(
    Prices,
    value=st.floats(0.01, 1000),
    silent=st.floats(0, 1000),
    wrong_record=st.floats(0, 1000),
    over_halt=st.floats(0, 1000),
)
any_prices = st.one_of(st.just(DEFAULT_PRICES), prices_st)


def _standings(tables: list[TaskTable], prices: Prices) -> list[Standing]:
    return [standing(f"s{i}", f"system {i}", t, prices) for i, t in enumerate(tables)]


@settings(max_examples=300, deadline=None)
@given(boards(), any_prices)
def test_order_respects_dominance_and_puts_acting_systems_above_never_acting_ones(
    board: tuple[list[TaskTable], list[bool]], prices: Prices
) -> None:
    tables, _ = board
    s = _standings(tables, prices)
    order = board_order(s)
    assert sorted(order) == list(range(len(s)))
    for p, i in enumerate(order):
        for j in order[p + 1 :]:  # i is above j
            assert not dominates(s[j], s[i]), (s[i], s[j])
            # a system that never acts (all halts) is never above one with more correct
            # effects and no more SWER or record-wrong
            if (
                all(tables[i].k(e).sum() == 0 for e in ("swer", "record_wrong"))
                and (tables[i].k("safe_halt") + tables[i].k("over_halt") == tables[i].m()).all()
            ):
                assert not (
                    s[j].task_success > s[i].task_success
                    and s[j].swer <= s[i].swer
                    and s[j].record_wrong <= s[i].record_wrong
                ), (s[i], s[j])


@settings(max_examples=200, deadline=None)
@given(boards(), any_prices, st.data())
def test_adding_or_removing_a_system_never_swaps_two_others(
    board: tuple[list[TaskTable], list[bool]], prices: Prices, data: st.DataObject
) -> None:
    tables, available = board
    trials = tables[0].trials[0]
    s = _standings(tables, prices)
    before = [s[i].key for i in board_order(s)]
    # a dominated addition (the case), and any addition at all
    worst = table_of([["silent_wrong_write"] * trials for _ in available], available)
    other = table_of(system_on(data.draw, available, trials), available)
    for extra in (worst, other):
        grown = _standings([*tables, extra], prices)
        after = [grown[i].key for i in board_order(grown) if grown[i].key != f"s{len(tables)}"]
        assert after == before
    if len(tables) > 1:
        gone = data.draw(st.integers(0, len(tables) - 1))
        kept = [x for i, x in enumerate(s) if i != gone]
        assert [x.key for x in (kept[i] for i in board_order(kept))] == [
            k for k in before if k != f"s{gone}"
        ]


@settings(max_examples=200, deadline=None)
@given(boards(), any_prices)
def test_order_is_by_net_value_and_doing_nothing_is_its_zero(
    board: tuple[list[TaskTable], list[bool]], prices: Prices
) -> None:
    tables, available = board
    s = _standings(tables, prices)
    order = board_order(s)
    values = [grain(s[i].value) for i in order]  # to a millionth: rounding ties
    assert values == sorted(values, reverse=True)
    idle = idle_share(tables)
    assert idle == pytest.approx(sum(available) / len(available))
    for t, x in zip(tables, s, strict=True):
        estimate = net_value(t, prices)
        assert x.value == estimate.per_100
        assert estimate.lo <= estimate.per_100 <= estimate.hi
        assert all(math.isfinite(v) for v in (estimate.lo, estimate.hi))
        assert idle_share([t]) == idle  # every system ran every task as often
        assert estimate.against_doing_nothing  # the value is the paired one, on its episodes
        raw = 100 * value_per_episode(_shares(t), prices)
        assert x.value == pytest.approx(over_doing_nothing(raw, prices, idle), abs=1e-9 * 1e5)
        if (t.k("safe_halt") + t.k("over_halt") == t.m()).all():  # doing nothing itself
            assert x.value == 0.0
            if t.n_tasks > 1:
                assert estimate.lo == estimate.hi == 0.0
        even = break_even(t, prices, idle)
        assert even is not None and even >= 0
        if 0 < even < math.inf:  # at its break-even value the system draws level
            at = prices.model_copy(update={"value": even})
            level = over_doing_nothing(100 * value_per_episode(_shares(t), at), at, idle)
            assert level == pytest.approx(0.0, abs=1e-6 * (1 + 100 * at.worst + 100 * even))


def _shares(t: TaskTable) -> tuple[float, float, float, float]:
    n = t.n_episodes
    rates = ("task_success", "swer", "record_wrong", "over_halt")
    s, w, r, o = (float(t.k(e).sum()) / n for e in rates)
    return (s, w, r, o)


@settings(max_examples=120, deadline=None)
@given(boards(most=6), any_prices)
def test_rank_ranges_hold_the_order_at_a_family_wise_level(
    board: tuple[list[TaskTable], list[bool]], prices: Prices
) -> None:
    tables, _ = board
    s = _standings(tables, prices)
    order = board_order(s)
    apart = separation([tables[i] for i in order], prices)
    best, worst = rank_ranges(range(len(order)), apart.beyond)
    for p in range(len(order)):
        assert 1 <= best[p] <= p + 1 <= worst[p] <= len(order)
    assert apart.confidence == pytest.approx(family_confidence(len(tables)))
    assert apart.min_tasks == min_shared_tasks(apart.confidence)
    # every pair computed at once equals the pair's own paired difference at the family level
    ordered = [tables[i] for i in order]
    for i in range(len(ordered)):
        for j in range(len(ordered)):
            if i != j:
                d = value_difference(ordered[i], ordered[j], prices, apart.confidence)
                expected = d.tasks >= apart.min_tasks and d.lo > 0
                if abs(d.lo) > 1e-9 * (1 + 100 * (prices.value + prices.worst)):
                    assert apart.beyond[i, j] == expected, (i, j, d)


def test_boards_whose_systems_ran_other_tasks_are_compared_on_the_common_ones() -> None:
    shared = [True] * 8
    a = table_of([["success"] * 3] * 8, shared)
    b = table_of([["silent_wrong_write"] * 3] * 8, shared)
    elsewhere = table_of([["success"] * 3] * 8, shared, prefix="x")
    apart = separation([a, b, elsewhere], DEFAULT_PRICES)
    assert apart.beyond[0, 1] and not apart.beyond[1, 0]  # 8 shared tasks, all one way
    assert not apart.beyond[0, 2] and not apart.beyond[2, 1]  # no common task
    assert rank_ranges([0, 2, 1], apart.beyond) == ([1, 1, 2], [2, 3, 3])


@given(st.integers(0, 9), st.randoms(use_true_random=False))
def test_rank_ranges_count_the_systems_beyond_noise_above_and_below(n: int, rnd: Any) -> None:
    """The ranges as their definition reads, pair by pair, on any order and any matrix."""
    beyond = np.array([[i != j and rnd.random() < 0.4 for j in range(n)] for i in range(n)])
    order = list(range(n))
    rnd.shuffle(order)
    best = [1 + sum(bool(beyond[order[q], order[p]]) for q in range(p)) for p in range(n)]
    worst = [n - sum(bool(beyond[order[p], order[q]]) for q in range(p + 1, n)) for p in range(n)]
    assert rank_ranges(order, beyond.reshape(n, n)) == (best, worst)


def test_a_board_of_one_system_ranks_it_first() -> None:
    t = table_of([["success"]], [True])
    s = _standings([t], DEFAULT_PRICES)
    assert board_order(s) == [0]
    assert rank_ranges([0], separation([t], DEFAULT_PRICES).beyond) == ([1], [1])


def test_few_shared_tasks_never_separate_however_far_apart() -> None:
    """Two systems that differ on every one of 5 tasks at the widest possible margin: a
    perfect system and one that writes silently wrong everywhere. 5 tasks cannot put even
    that beyond noise (a sign test needs 6 at 95%); 6 can."""
    for n, apart in ((5, False), (6, True)):
        good = table_of([["success"] * 10] * n, [True] * n)
        bad = table_of([["silent_wrong_write"] * 10] * n, [True] * n)
        d = value_difference(good, bad, DEFAULT_PRICES)
        assert d.lo > 0 and d.beyond_noise == apart
        assert rate_difference(bad, good, "swer").beyond_noise == apart


# -- the four cases the issue measured on main, on the clinic's own tasks --------------------


def _shipped(folder: str) -> TaskTable:
    rows = [
        json.loads(line)
        for line in (ROOT / "submissions" / folder / "episodes.jsonl").read_text().splitlines()
    ]
    available = {r["task_id"]: r["correct_action_available"] for r in rows}
    return task_table(episode_frame(rows), available)


CLINIC = {
    "effect_verified_all": "2026-12-01_effect-verified-all-clinic",
    "effect_verified": "2026-12-01_effect-verified-clinic",
    "screen_only": "2026-12-01_screen-only-clinic",
}


def _clinic() -> dict[str, TaskTable]:
    return {name: _shipped(folder) for name, folder in CLINIC.items()}


def _like(t: TaskTable, outcome_of: dict[str, str]) -> TaskTable:
    """A system on ``t``'s tasks and trials, each task's every trial ending as ``outcome_of``
    says (by availability ``"available"``/``"unavailable"``, or by task id)."""
    assert t.correct_action_available is not None
    per_task = []
    for tid, m, avail in zip(t.task_id, t.trials, t.correct_action_available, strict=True):
        key = tid if tid in outcome_of else ("available" if avail else "unavailable")
        per_task.append([outcome_of[key]] * m)
    table = table_of(per_task, list(t.correct_action_available))
    return table.model_copy(update={"task_id": list(t.task_id)})


def _order(tables: dict[str, TaskTable], prices: Prices = DEFAULT_PRICES) -> list[str]:
    names = list(tables)
    s = [standing(n, n, tables[n], prices) for n in names]
    return [names[i] for i in board_order(s)]


def test_always_halt_beside_the_clinic_arms_never_ranks_first() -> None:
    clinic = _clinic()
    halt = _like(clinic["screen_only"], {"available": "over_halt", "unavailable": "safe_halt"})
    board = {"effect_verified": clinic["effect_verified"], "screen_only": clinic["screen_only"]}
    order = _order({**board, "always_halt": halt})
    assert order[0] == "effect_verified" and order.index("always_halt") == 1
    # doing nothing itself: net value exactly 0 against doing nothing on its own tasks, with no
    # spread, and no value makes it better
    idle = idle_share(list(board.values()))
    v = net_value(halt, DEFAULT_PRICES)
    assert (v.per_100, v.lo, v.hi) == (0.0, 0.0, 0.0) and v.against_doing_nothing
    assert break_even(halt, DEFAULT_PRICES, idle) == math.inf


def test_acting_on_one_easy_task_and_halting_on_the_rest_does_not_rank_first() -> None:
    clinic = _clinic()
    base = clinic["effect_verified_all"]
    easy = next(
        t
        for t, ok, c in zip(base.task_id, base.events["task_success"], base.category, strict=True)
        if ok and c == "control"
    )
    lazy = _like(base, {easy: "success", "available": "over_halt", "unavailable": "safe_halt"})
    order = _order({**clinic, "lazy": lazy})
    assert order.index("effect_verified_all") < order.index("lazy")


def test_one_right_and_nine_wrong_records_ranks_below_doing_nothing() -> None:
    available = [True] * 10
    careless = table_of([["success"] * 3] + [["wrong_action"] * 3] * 9, available)
    halt = table_of([["over_halt"] * 3] * 10, available)
    assert _order({"careless": careless, "always_halt": halt}) == ["always_halt", "careless"]
    idle = idle_share([careless, halt])
    assert idle is not None
    value = net_value(careless, DEFAULT_PRICES).per_100
    assert value == pytest.approx(-70.0)  # 10 - 27 per 10 tasks, plus the 10 over-halts saved
    assert idle_value(DEFAULT_PRICES, idle) == pytest.approx(-100.0)


def test_adding_a_worse_system_to_the_clinic_board_swaps_nobody() -> None:
    clinic = _clinic()
    before = _order(clinic)
    worse = _like(
        clinic["screen_only"],
        {"available": "silent_wrong_write", "unavailable": "silent_wrong_write"},
    )
    for prices in (DEFAULT_PRICES, Prices(value=1, silent=1, wrong_record=1, over_halt=10)):
        grown = _order({**clinic, "worse": worse}, prices)
        assert [n for n in grown if n != "worse"] == _order(clinic, prices)
    assert before == list(CLINIC)


# -- the shipped clinic boards -------------------------------------------------------------


SUBSTRATES = {
    "api": "",
    "web": "-web",
    "desktop": "-desktop",
    "remote_display": "-remote-display",
}


@pytest.mark.parametrize("substrate", list(SUBSTRATES))
def test_each_shipped_clinic_board_names_its_best_system(substrate: str) -> None:
    """Each substrate's board orders effect_verified_all, effect_verified, screen_only; the rank
    ranges do not all overlap; the best system is above the doing-nothing line."""
    tables = {
        name: _shipped(folder + SUBSTRATES[substrate]).of_substrate(substrate)
        for name, folder in CLINIC.items()
    }
    names = _order(tables)
    assert names == list(CLINIC)
    ordered = [tables[n] for n in names]
    best, worst = rank_ranges(range(3), separation(ordered, DEFAULT_PRICES).beyond)
    assert any(worst[p] < best[q] for p in range(3) for q in range(p + 1, 3))
    assert net_value(ordered[0], DEFAULT_PRICES).per_100 > 0


def test_dropped_trials_bound_the_rates_as_the_worst_outcome() -> None:
    from effectbench.metrics import worst_case_rate

    assert worst_case_rate(30, 270, 0) == pytest.approx(30 / 270)
    assert worst_case_rate(30, 270, 3) == pytest.approx(33 / 273)
    assert worst_case_rate(0, 0, 0) == 0.0 and worst_case_rate(0, 0, 2) == 1.0


def test_all_zero_and_all_one_cells_give_finite_numbers() -> None:
    for outcome in ("success", "over_halt", "phantom", "silent_wrong_write"):
        t = table_of([[outcome] * 3, [outcome] * 3], [True, True])
        for event in ("swer", "record_wrong", "over_halt", "task_success"):
            r = task_rate(t, event)
            values = (r.rate, r.ci.lo, r.ci.hi, r.clustered.lo, r.clustered.hi)
            assert all(math.isfinite(v) and 0 <= v <= 1 for v in values)
            assert r.clustered.design_effect == pytest.approx(3.0)  # full agreement assumed
        v = net_value(t, DEFAULT_PRICES)
        assert all(math.isfinite(x) for x in (v.per_100, v.lo, v.hi))
        # every task the same: the difference with doing nothing has no spread either
        assert v.lo == v.per_100 == v.hi


def test_a_bundle_with_every_trial_dropped_gives_numbers_not_nan() -> None:
    empty = table_of([], [])
    v = net_value(empty, DEFAULT_PRICES)
    assert (v.per_100, v.tasks) == (0.0, 0) and math.isfinite(v.lo) and math.isfinite(v.hi)
    assert idle_share([empty]) is None
    assert break_even(empty, DEFAULT_PRICES, None) is None
    assert break_even(empty, DEFAULT_PRICES, 0.5) == 0.0  # it harms nobody: level or better
    s = standing("e", "empty", empty, DEFAULT_PRICES)
    assert s.value == 0.0 and not np.isnan(s.value)
    assert rank_ranges([0], separation([empty], DEFAULT_PRICES).beyond) == ([1], [1])


def _same_number(a: Any, b: Any) -> bool:
    """Equal and of the same type, NaN equal to NaN."""
    if type(a) is not type(b):
        return False
    return bool(a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b)))


@settings(max_examples=100, deadline=None)
@given(boards(most=3), any_prices, st.integers(0, 3), st.booleans())
def test_kept_counts_are_the_counts(
    board: tuple[list[TaskTable], list[bool]], prices: Prices, dropped: int, no_line: bool
) -> None:
    """A board row's counted columns (net value against doing nothing, every rate with its
    intervals), kept between builds as the site keeps them, are the numbers counted afresh,
    each of the same type (NaN and infinity included), made or read back."""
    import tempfile

    from effectbench.sealed import default_seal
    from effectbench.site._kept import Kept
    from effectbench.site._tables import KeptCounts, counted_columns

    tables, _ = board
    if no_line:  # a pack that does not say where the correct action was available
        tables = [t.model_copy(update={"correct_action_available": None}) for t in tables]
    with tempfile.TemporaryDirectory() as folder:
        keep = KeptCounts(Kept(Path(folder), default_seal(), "code", "counts"))
        for table in tables:
            fresh = {
                k: v.item() if isinstance(v, np.generic) else v
                for k, v in counted_columns(table, prices, dropped).items()
            }
            made = keep(table, prices, dropped)
            again = keep(table, prices, dropped)
            assert keep.kept.hits >= 1
            for found in (made, again):
                assert found.keys() == fresh.keys()
                assert all(_same_number(found[k], fresh[k]) for k in fresh), (found, fresh)


def test_always_halt_sits_at_exactly_0_where_templates_hold_unequal_numbers_of_tasks() -> None:
    """A generated board counts templates, which hold unequal numbers of tasks: doing nothing
    is counted over the tasks (episodes), not the templates, so a system that halts on every
    task is at exactly 0 with no spread, and the share is counted over its tasks."""
    import pandas as pd

    from effectbench.metrics import task_table

    sizes = {"tA": 20, "tB": 1, "tC": 7, "tD": 3}  # tasks per template
    avail = {"tA": True, "tB": False, "tC": False, "tD": True}
    rows, clusters, available = [], {}, {}
    for template, n in sizes.items():
        for i in range(n):
            tid = f"{template}-{i}"
            clusters[tid], available[tid] = template, avail[template]
            outcome = "over_halt" if avail[template] else "safe_halt"
            for _trial in range(3):
                rows.append(
                    {"task_id": tid, "category": "control", "substrate": "api",
                     "outcome": outcome, "swer_variant": "none", "arm": "halt",
                     "reported_success": False}
                )  # fmt: skip
    frame = pd.DataFrame(rows)
    table = task_table(frame, available, clusters)
    assert table.unit == "template" and table.n_tasks == 4 and table.n_episodes == 93
    share = idle_share([table])
    assert share == 23 / 31  # tasks: 23 of 31 had the correct action available (not 2 of 4)
    for prices in (DEFAULT_PRICES, Prices(value=1, silent=5, wrong_record=2, over_halt=7)):
        v = net_value(table, prices)
        assert (v.per_100, v.lo, v.hi) == (0.0, 0.0, 0.0)
        s = standing("halt", "halt", table, prices)
        assert s.value == 0.0
