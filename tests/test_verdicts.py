"""The board's default order: dominance, no reward for inaction, cost, and tie groups.

Property tests over generated boards (hypothesis): every system runs the same tasks, and
each outcome is one the truth table allows on that task (a correct effect or an over-halt
only where the correct action is available, a safe halt only where it is not).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.outcomes import outcome_counts

from effectbench.metrics import (
    DEFAULT_COSTS,
    EVENTS,
    CostWeights,
    TaskTable,
    cost_difference,
    episode_frame,
    expected_cost,
    idle_cost,
    rate_difference,
    task_table,
)
from effectbench.verdicts import (
    Standing,
    board_order,
    dominates,
    inaction_below,
    rank_ranges,
    separation,
    standing,
)

ROOT = Path(__file__).resolve().parents[1]

ACTING = ("success", "false_abort", "phantom", "silent_wrong_write", "wrong_action")
"""Outcomes of a system that acts (any task)."""


def table_of(per_task: list[list[str]], available: list[bool]) -> TaskTable:
    """Return the TaskTable of one system's outcomes, task by task."""
    counts = [outcome_counts(o) for o in per_task]
    return TaskTable(
        task_id=[f"t{i:02d}" for i in range(len(per_task))],
        category=["control"] * len(per_task),
        substrate=["api"] * len(per_task),
        trials=[len(o) for o in per_task],
        events={e: [c[e] for c in counts] for e in EVENTS},
        correct_action_available=available,
    )


@st.composite
def boards(draw: st.DrawFn) -> tuple[list[TaskTable], list[bool]]:
    """A board: 1 to 7 systems on 1 to 8 shared tasks, 1 to 4 trials, some never acting."""
    n_tasks = draw(st.integers(1, 8))
    trials = draw(st.integers(1, 4))
    available = draw(st.lists(st.booleans(), min_size=n_tasks, max_size=n_tasks))
    tables = []
    for _ in range(draw(st.integers(1, 7))):
        idle = draw(st.booleans())
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
                [first] * trials
                if repeat
                else [draw(st.sampled_from(allowed)) for _ in range(trials)]
            )
        tables.append(table_of(per_task, available))
    return tables, available


weights_st = st.builds(
    CostWeights,
    silent=st.floats(0.01, 100),
    wrong_record=st.floats(0.01, 100),
    over_halt=st.floats(0.01, 100),
)


def _standings(tables: list[TaskTable], weights: CostWeights) -> list[Standing]:
    return [standing(f"s{i}", f"system {i}", t, weights) for i, t in enumerate(tables)]


@settings(max_examples=300, deadline=None)
@given(boards(), st.one_of(st.just(DEFAULT_COSTS), weights_st))
def test_order_respects_dominance_and_never_rewards_inaction(
    board: tuple[list[TaskTable], list[bool]], weights: CostWeights
) -> None:
    tables, _ = board
    s = _standings(tables, weights)
    order = board_order(s)
    assert sorted(order) == list(range(len(s)))
    for p, i in enumerate(order):
        for j in order[p + 1 :]:  # i is above j
            assert not dominates(s[j], s[i]), (s[i], s[j])
            assert not inaction_below(s[i], s[j]), (s[i], s[j])
            # the plain statement of the rule: a system that never acts is never above one
            # with more correct effects at equal or lower SWER
            if s[i].idle and not s[j].idle:
                assert not (s[j].swer <= s[i].swer and s[j].correct_effect > s[i].correct_effect)


@settings(max_examples=200, deadline=None)
@given(boards(), weights_st)
def test_order_is_by_cost_where_no_rule_binds(
    board: tuple[list[TaskTable], list[bool]], weights: CostWeights
) -> None:
    tables, _ = board
    s = _standings(tables, weights)
    order = board_order(s)
    for p, i in enumerate(order):
        for j in order[p + 1 :]:
            if s[j].cost < s[i].cost - 1e-9:  # a cheaper system below: only a rule does that
                bound = any(
                    dominates(s[k], s[j]) or inaction_below(s[j], s[k])
                    for k in order[: order.index(j)]
                    if k != j
                )
                assert bound, (s[i], s[j])
    for t, x in zip(tables, s, strict=True):
        assert x.cost == pytest.approx(expected_cost(t, weights).per_100)


@settings(max_examples=150, deadline=None)
@given(boards())
def test_rank_ranges_hold_the_order_and_count_separated_systems(
    board: tuple[list[TaskTable], list[bool]],
) -> None:
    tables, _ = board
    s = _standings(tables, DEFAULT_COSTS)
    order = board_order(s)
    beyond = separation(tables, DEFAULT_COSTS)
    best, worst = rank_ranges(s, order, beyond)
    for p in range(len(order)):
        assert 1 <= best[p] <= p + 1 <= worst[p] <= len(order)
    for i in range(len(tables)):
        for j in range(len(tables)):
            if i != j:
                d = cost_difference(tables[i], tables[j], DEFAULT_COSTS)
                assert beyond[i, j] == d.beyond_noise


def test_a_board_of_one_system_ranks_it_first() -> None:
    t = table_of([["success"]], [True])
    s = _standings([t], DEFAULT_COSTS)
    assert board_order(s) == [0]
    assert rank_ranges(s, [0], separation([t], DEFAULT_COSTS)) == ([1], [1])


def _shipped(folder: str) -> TaskTable:
    rows = [
        json.loads(line)
        for line in (ROOT / "submissions" / folder / "episodes.jsonl").read_text().splitlines()
    ]
    available = {r["task_id"]: r["correct_action_available"] for r in rows}
    return task_table(episode_frame(rows), available)


def test_shipped_mockmed_board_puts_the_halting_baseline_below_the_acting_one() -> None:
    folders = ["always-halt", "effect-verified", "retry-on-error", "screen-only"]
    tables = [_shipped(f"2026-12-01_{f}") for f in folders]
    s = [standing(f, f, t, DEFAULT_COSTS) for f, t in zip(folders, tables, strict=True)]
    order = [folders[i] for i in board_order(s)]
    assert order[:2] == ["effect-verified", "always-halt"]
    # always_halt is cheaper at the default prices (it is the doing-nothing line itself)
    assert s[0].cost == pytest.approx(idle_cost(tables[0], DEFAULT_COSTS))
    assert s[0].cost < s[1].cost


def test_shipped_clinic_first_two_share_a_tie_group() -> None:
    folders = ["effect-verified-all-clinic", "effect-verified-clinic", "screen-only-clinic"]
    tables = [_shipped(f"2026-12-01_{f}") for f in folders]
    s = [standing(f, f, t, DEFAULT_COSTS) for f, t in zip(folders, tables, strict=True)]
    order = board_order(s)
    assert [folders[i] for i in order] == folders
    best, worst = rank_ranges(s, order, separation(tables, DEFAULT_COSTS))
    assert (best, worst) == ([1, 1, 3], [2, 2, 3])
    # their SWER difference rests on 3 tasks: not beyond noise once tasks are counted
    assert not rate_difference(tables[1], tables[0], "swer").beyond_noise
    # nor is the over-halt difference the issue names
    oh = rate_difference(tables[0], tables[2], "over_halt")
    assert not oh.beyond_noise
    assert (round(100 * oh.lo, 1), round(100 * oh.hi, 1)) == (-6.1, 23.4)


def test_dropped_trials_bound_the_rates_as_the_worst_outcome() -> None:
    from effectbench.metrics import worst_case_rate

    assert worst_case_rate(30, 270, 0) == pytest.approx(30 / 270)
    assert worst_case_rate(30, 270, 3) == pytest.approx(33 / 273)
    assert worst_case_rate(0, 0, 0) == 0.0 and worst_case_rate(0, 0, 2) == 1.0


def test_all_zero_and_all_one_cells_give_finite_numbers() -> None:
    import math

    from effectbench.metrics import task_rate

    for outcome in ("success", "over_halt", "phantom", "silent_wrong_write"):
        t = table_of([[outcome] * 3, [outcome] * 3], [True, True])
        for event in ("swer", "record_wrong", "over_halt", "task_success"):
            r = task_rate(t, event)
            values = (r.rate, r.ci.lo, r.ci.hi, r.clustered.lo, r.clustered.hi)
            assert all(math.isfinite(v) and 0 <= v <= 1 for v in values)
            assert r.clustered.design_effect == pytest.approx(3.0)  # full agreement assumed
        c = expected_cost(t, DEFAULT_COSTS)
        assert all(math.isfinite(v) for v in (c.per_100, c.lo, c.hi)) and c.lo <= c.per_100
