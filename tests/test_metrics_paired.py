"""Paired differences (Newcombe's method 10) and per-substrate totals in the metrics layer."""

from __future__ import annotations

import random

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from effectbench.metrics import (
    ALL_CATEGORIES,
    FRAME_COLUMNS,
    across_substrates,
    frame_from_columns,
    paired_difference,
    rate_difference,
    substrate_difference,
    substrate_totals,
    summarize,
)


def test_newcombe_published_example() -> None:
    # Newcombe (1998), Statistics in Medicine 17:2635, Table II, example (a): 36, 12, 2, 0;
    # method 10 gives 0.0569 to 0.3404 around the difference 0.2.
    r = paired_difference(36, 12, 2, 0)
    assert r.difference == pytest.approx(0.2)
    assert (round(r.ci.lo, 4), round(r.ci.hi, 4)) == (0.0569, 0.3404)
    assert r.ci.method == "newcombe-paired" and r.n == 50
    assert (r.first_rate, r.second_rate) == (48 / 50, 38 / 50)


def test_no_pairs_and_no_discordance() -> None:
    empty = paired_difference(0, 0, 0, 0)
    assert (empty.n, empty.difference, empty.ci.lo, empty.ci.hi) == (0, 0.0, -1.0, 1.0)
    same = paired_difference(3, 0, 0, 7)
    assert same.difference == 0.0 and same.ci.lo < 0.0 < same.ci.hi


counts = st.tuples(*(st.integers(0, 60) for _ in range(4))).filter(lambda t: sum(t) > 0)


@given(counts)
def test_interval_brackets_the_difference_and_mirrors(t: tuple[int, int, int, int]) -> None:
    a, b, c, d = t
    r = paired_difference(a, b, c, d)
    assert -1.0 <= r.ci.lo <= r.difference <= r.ci.hi <= 1.0
    assert r.difference == pytest.approx((b - c) / (a + b + c + d))
    swapped = paired_difference(a, c, b, d)  # the other system first: the mirror image
    assert swapped.difference == pytest.approx(-r.difference)
    assert swapped.ci.lo == pytest.approx(-r.ci.hi) and swapped.ci.hi == pytest.approx(-r.ci.lo)


def _frame(rows: list[dict[str, object]]) -> pd.DataFrame:
    return frame_from_columns({c: [r[c] for r in rows] for c in FRAME_COLUMNS})


def test_substrate_totals_equal_a_summary_of_that_substrate_alone() -> None:
    rng = random.Random(7)
    outcomes = ["success", "silent_wrong_effect", "over_halt", "safe_halt", "wrong_action"]
    rows: list[dict[str, object]] = []
    for i in range(400):
        outcome = rng.choice(outcomes)
        rows.append(
            {
                "arm": "x",
                "task_id": f"t{i % 37}",
                "category": rng.choice(["control", "C1_partial_save", "C4_stale_overwrite"]),
                "substrate": rng.choice(["api", "web", "desktop"]),
                "outcome": outcome,
                "swer_variant": rng.choice(["wrong_write", "phantom"])
                if outcome == "silent_wrong_effect"
                else "none",
                "reported_success": outcome in ("success", "silent_wrong_effect")
                or rng.random() < 0.1,
                "cost_usd": 0.0,
                "latency_s": 1.0,
            }
        )
    totals = substrate_totals(summarize(_frame(rows)))
    assert [t.substrate for t in totals] == ["api", "desktop", "web"]
    for t in totals:
        alone = summarize(_frame([r for r in rows if r["substrate"] == t.substrate]))
        assert t.category == ALL_CATEGORIES and t.n == alone.n_episodes
        for name in ("swer", "swer_wrong_write", "swer_phantom", "over_halt", "task_success"):
            assert getattr(t, name) == getattr(alone, name), name
        assert t.screen_success == alone.screen_success
        assert t.success_effect_gap == pytest.approx(alone.success_effect_gap)


def _row(task: str, substrate: str, outcome: str) -> dict[str, object]:
    return {
        "arm": "x",
        "task_id": task,
        "category": "control",
        "substrate": substrate,
        "outcome": outcome,
        "swer_variant": "wrong_write" if outcome == "silent_wrong_effect" else "none",
        "reported_success": outcome in ("success", "silent_wrong_effect"),
        "cost_usd": 0.0,
        "latency_s": 1.0,
    }


def test_substrates_pair_by_base_task_trial_and_seed_only() -> None:
    """``t`` on the api pairs with ``t@web`` of the same trial and seed; an episode one
    substrate lacks (a dropped trial, another seed) leaves its pair out on both sides."""
    rows, trials, seeds = [], [], []
    for task in ("a", "b", "c"):
        for trial in range(4):
            rows.append(_row(task, "api", "success"))
            trials.append(trial)
            seeds.append(trial)
            if (task, trial) == ("c", 3):
                continue  # dropped on the web
            on_web = "silent_wrong_effect" if task == "a" else "success"
            rows.append(_row(f"{task}@web", "web", on_web))
            trials.append(trial)
            seeds.append(trial + 100 if (task, trial) == ("b", 0) else trial)  # another seed
    frame = _frame(rows)
    web, api = across_substrates(frame, trials, seeds, "web", "api")
    assert web.task_id == api.task_id == ["a", "b", "c"]  # named by their base task
    assert web.trials == api.trials == [4, 3, 3]
    assert (web.substrate[0], api.substrate[0]) == ("web", "api")
    d = substrate_difference(frame, trials, seeds, "web", "api", "swer")
    assert d == rate_difference(web, api, "swer")
    assert (d.tasks, d.n_first, d.first, d.second) == (3, 10, 0.4, 0.0)
    nothing = substrate_difference(frame, trials, seeds, "desktop", "api", "swer")
    assert (nothing.tasks, nothing.lo, nothing.hi) == (0, -1.0, 1.0)
