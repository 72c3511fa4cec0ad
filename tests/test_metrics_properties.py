"""Property tests of the metrics over arbitrary labelled episodes."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from effectbench.classify import classify
from effectbench.metrics import FRAME_COLUMNS, frame_from_columns, pass_hat_k, summarize, wilson
from effectbench.schema import Category, Substrate, TrueState

STATES = [TrueState.CORRECT, TrueState.WRONG_PERSISTED, TrueState.ABSENT]

episode = st.tuples(
    st.sampled_from(["t1", "t2", "t3"]),
    st.sampled_from(list(Category)),
    st.sampled_from(list(Substrate)),
    st.booleans(),
    st.sampled_from(STATES),
    st.booleans(),
)


def _frame(episodes: list[tuple[str, Category, Substrate, bool, TrueState, bool]]) -> pd.DataFrame:
    cols: dict[str, list[object]] = {k: [] for k in FRAME_COLUMNS}
    for task, cat, sub, reported, state, available in episodes:
        label = classify(reported, state, available)
        assert label is not None
        for key, value in (
            ("arm", "a"),
            ("task_id", f"{task}-{cat.value}-{sub.value}"),
            ("category", cat.value),
            ("substrate", sub.value),
            ("outcome", label.outcome.value),
            ("swer_variant", label.swer_variant.value),
            ("reported_success", reported),
            ("cost_usd", 0.01),
            ("latency_s", 0.5),
        ):
            cols[key].append(value)
    return frame_from_columns(cols)


@settings(max_examples=60, deadline=None)
@given(st.lists(episode, min_size=1, max_size=80))
def test_summary_invariants(episodes: list) -> None:  # type: ignore[type-arg]
    res = summarize(_frame(episodes))
    n = len(episodes)
    assert res.n_episodes == n
    assert sum(res.outcome_counts.values()) == n  # outcome counts partition N
    assert res.swer.numerator == res.swer_wrong_write.numerator + res.swer_phantom.numerator
    for r in (res.swer, res.over_halt, res.task_success, res.screen_success):
        assert r.denominator == n
        assert r.ci.lo - 1e-12 <= r.rate <= r.ci.hi + 1e-12  # the rate lies in its interval
        assert 0.0 <= r.ci.lo + 1e-12 and r.ci.hi <= 1.0 + 1e-12
    gap = res.screen_success.rate - res.task_success.rate
    assert abs(res.success_effect_gap - gap) < 1e-12
    assert res.success_effect_gap_ci is not None
    assert res.success_effect_gap_ci.lo <= res.success_effect_gap_ci.hi
    assert sum(c.n for c in res.cells) == n  # cells partition N too
    for c in res.cells:
        assert abs(c.success_effect_gap - (c.screen_success.rate - c.task_success.rate)) < 1e-12
    values = [res.pass_hat_k[k] for k in ("1", "2", "4", "8")]
    assert all(0.0 <= v <= 1.0 for v in values)
    trials = pd.Series([e[0] + e[1].value + e[2].value for e in episodes]).value_counts()
    most = int(trials.max())
    # a k that no task reaches is 0 (the reference's documents), and so is every larger k
    assert all(v == 0.0 for k, v in zip((1, 2, 4, 8), values, strict=True) if k > most)
    if trials.nunique() == 1:  # the same tasks take part at every k: never rises with k
        assert values == sorted(values, reverse=True)


def test_pass_hat_k_matches_its_definition() -> None:
    succ = np.array([3, 2, 0])
    trials = np.array([3, 4, 5])
    # C(3,2)/C(3,2)=1, C(2,2)/C(4,2)=1/6, 0 -> mean
    assert abs(pass_hat_k(succ, trials, 2) - (1 + 1 / 6 + 0) / 3) < 1e-12
    assert abs(pass_hat_k(succ, trials, 1) - (1 + 0.5 + 0) / 3) < 1e-12
    # the reference's convention: a task with fewer than k trials takes no part
    assert pass_hat_k(succ, trials, 4) == 0.0  # only the 4- and 5-trial tasks: 0 and 0
    assert pass_hat_k(np.array([3, 4]), np.array([3, 4]), 4) == 1.0  # not (0 + 1) / 2
    assert pass_hat_k(succ, trials, 8) == 0.0  # no task has 8 trials: 0, as the reference claims


def test_wilson_bounds_stay_within_zero_and_one() -> None:
    for n in range(1, 400):
        for k in (0, n):
            lo, hi = wilson(k, n)
            assert 0.0 <= float(lo) <= float(hi) <= 1.0  # never -1.4e-17 nor 1.0000000000000002
