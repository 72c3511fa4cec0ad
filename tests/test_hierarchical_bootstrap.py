"""The hierarchical bootstrap beside the analytic intervals (issue 53, a check of the intervals).

Tables are counted by the production path (:func:`task_table` with templates as clusters) from
episode frames written out here; the bootstrap is held to an explicit, independent resampling
written with plain loops (templates, then tasks, then trials, one ``choice`` at a time).
"""

from __future__ import annotations

import numpy as np
import pytest

from effectbench.metrics import DEFAULT_PRICES, frame_from_columns, net_value, task_table
from effectbench.metrics.bootstrap import (
    HIERARCHICAL_METHOD,
    bootstrap_difference,
    bootstrap_value,
)
from effectbench.metrics.tasks import TaskTable

OUTCOME = {
    "success": ("success", "none", True),
    "phantom": ("silent_wrong_effect", "phantom", True),
    "silent_wrong_write": ("silent_wrong_effect", "wrong_write", True),
    "wrong_action": ("wrong_action", "none", False),
    "over_halt": ("over_halt", "none", False),
    "safe_halt": ("safe_halt", "none", False),
}
P = DEFAULT_PRICES
WORTH = {  # each outcome's worth at the default prices, written out by hand
    "success": P.value,
    "phantom": -P.silent,
    "silent_wrong_write": -P.silent - P.wrong_record,
    "wrong_action": -P.wrong_record,
    "over_halt": -P.over_halt,
    "safe_halt": 0.0,
}

Episodes = dict[str, list[str]]
"""Per task id, its trials' outcomes."""


def _table(episodes: Episodes, templates: dict[str, str], available: dict[str, bool]) -> TaskTable:
    cols: dict[str, list[object]] = {
        c: []
        for c in (
            "arm",
            "task_id",
            "category",
            "substrate",
            "outcome",
            "swer_variant",
            "reported_success",
            "cost_usd",
            "latency_s",
        )
    }
    for task, outcomes in episodes.items():
        for o in outcomes:
            outcome, variant, reported = OUTCOME[o]
            for c, v in zip(
                cols,
                ("a", task, "control", "api", outcome, variant, reported, 0.0, 0.0),
                strict=True,
            ):
                cols[c].append(v)
    return task_table(frame_from_columns(cols), available, templates)


def _board(seed: int, templates: int = 7, trials: int = 3) -> tuple[Episodes, ...]:
    """Two systems' episodes on templates of unequal sizes, and the design."""
    rng = np.random.default_rng(seed)
    names = list(OUTCOME)
    first: Episodes = {}
    second: Episodes = {}
    for g in range(templates):
        lean = rng.dirichlet(np.ones(len(names)))
        for i in range(int(rng.integers(1, 6))):
            task = f"t{g}-{i}"
            first[task] = list(rng.choice(names, trials, p=lean))
            second[task] = list(rng.choice(names, trials))
    return first, second


def _design(episodes: Episodes) -> tuple[dict[str, str], dict[str, bool]]:
    templates = {t: t.split("-")[0] for t in episodes}
    available = {t: int(t.split("-")[1]) % 2 == 0 for t in episodes}
    return templates, available


def _by_hand(
    systems: list[Episodes], available: dict[str, bool], replicates: int, seed: int
) -> np.ndarray:
    """The first system's value (minus the second's) per 100 tasks in each replicate, by an
    explicit resampling: templates, then tasks within each drawn template, then trials."""
    rng = np.random.default_rng(seed)
    groups: dict[str, list[str]] = {}
    for t in systems[0]:
        groups.setdefault(t.split("-")[0], []).append(t)
    names = sorted(groups)
    out = np.empty(replicates)
    for r in range(replicates):
        tasks = [
            t for g in rng.choice(names, len(names)) for t in rng.choice(groups[g], len(groups[g]))
        ]
        values = []
        for episodes in systems:
            worth = [
                WORTH[o] + (P.over_halt if available[t] else 0.0)
                for t in tasks
                for o in rng.choice(episodes[t], len(episodes[t]))
            ]
            values.append(100 * float(np.mean(worth)))
        out[r] = values[0] - (values[1] if len(values) > 1 else 0.0)
    return out


def test_the_point_is_the_board_value_and_the_tables_carry_their_tasks() -> None:
    first, _ = _board(1)
    templates, available = _design(first)
    table = _table(first, templates, available)
    assert table.unit == "template" and table.instances is not None
    assert table.instances.cluster == [templates[t] for t in table.instances.task_id]
    b = bootstrap_value(table, P)
    assert b.estimate == pytest.approx(net_value(table, P).per_100, abs=1e-9)
    assert b.templates == 7 and b.tasks == len(first) and b.method == HIERARCHICAL_METHOD
    assert b.lo is not None and b.hi is not None and b.lo < b.estimate < b.hi
    # a board's substrate slice keeps each remaining template's tasks
    part = table.select(t != "t0" for t in table.task_id)
    assert part.instances is not None and "t0" not in (part.instances.cluster or [])
    assert part.instances.n_episodes == part.n_episodes


@pytest.mark.slow
@pytest.mark.parametrize("seed", [2, 3])
def test_the_intervals_match_an_explicit_resampling(seed: int) -> None:
    first, second = _board(seed)
    templates, available = _design(first)
    a, b = _table(first, templates, available), _table(second, templates, available)
    reps = 3000
    for got, systems in (
        (bootstrap_value(a, P, replicates=reps, seed=seed), [first]),
        (bootstrap_difference(a, b, P, replicates=reps, seed=seed), [first, second]),
    ):
        hand = _by_hand(systems, available, reps, seed + 100)
        lo, hi = np.quantile(hand, [0.025, 0.975])
        width = hi - lo
        assert got.lo is not None and got.hi is not None
        # two independent Monte Carlo runs of one distribution: limits within 8% of the width
        assert abs(got.lo - lo) < 0.08 * width and abs(got.hi - hi) < 0.08 * width, (
            got.lo,
            got.hi,
            lo,
            hi,
        )


def test_seeded_and_deterministic() -> None:
    first, second = _board(4)
    templates, available = _design(first)
    a, b = _table(first, templates, available), _table(second, templates, available)
    assert bootstrap_difference(a, b, P) == bootstrap_difference(a, b, P)
    other = bootstrap_difference(a, b, P, seed=7)
    assert other.lo != bootstrap_difference(a, b, P).lo and other.seed == 7


def test_identical_systems_differ_by_exactly_0_and_doing_nothing_has_no_spread() -> None:
    first, _ = _board(5)
    templates, available = _design(first)
    a = _table(first, templates, available)
    same = bootstrap_difference(a, a.model_copy(), P)
    assert (same.estimate, same.lo, same.hi) == (0.0, 0.0, 0.0)
    # always halting: an over-halt where the correct action was available, a safe halt
    # elsewhere; against doing nothing every episode is worth exactly 0
    halt = {t: ["over_halt" if available[t] else "safe_halt"] * 3 for t in first}
    idle = bootstrap_value(_table(halt, templates, available), P)
    assert (idle.estimate, idle.lo, idle.hi) == (0.0, 0.0, 0.0)


def test_one_template_is_not_estimable() -> None:
    episodes = {"t0-0": ["success", "phantom"], "t0-1": ["success", "success"]}
    templates, available = _design(episodes)
    b = bootstrap_value(_table(episodes, templates, available), P)
    assert b.lo is None and b.hi is None and b.note.startswith("not estimable: 1 shared template")
