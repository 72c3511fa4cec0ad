"""Task-clustered intervals, paired comparisons, net value and rank ranges against SciPy and
statsmodels.

Every interval method of :mod:`effectbench.metrics` that SPEC 1.2 and 1.3 add is checked here
against an independent implementation from a well-kept statistics library, to 1e-6, on
generated tables (random ones and the edge cases: one task, one trial per task, all-zero
and all-one cells, unequal trials). Our code works on per-task counts; the references
work on the expanded per-episode data (statsmodels' cluster-robust covariance with its
small-sample correction, its Wilson interval, SciPy's normal and binomial distributions), so
the two computations share nothing but the formulas' definitions.
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import proportion_confint
from statsmodels.stats.sandwich_covariance import cov_cluster
from support.outcomes import outcome_counts

from effectbench.metrics import (
    DEFAULT_PRICES,
    EVENTS,
    Prices,
    TaskTable,
    clustered_wilson,
    design_effect,
    family_confidence,
    min_shared_tasks,
    minimum_detectable_difference,
    net_value,
    rate_difference,
    task_table,
    value_difference,
    wilson,
    z_of,
    zero_upper_bound,
)
from effectbench.verdicts import board_order, rank_ranges, separation, standing

TOL = 1e-6
N_TABLES = 1200
"""Generated tables per method (the requirement is at least 1,000)."""

OUTCOMES = ("success", "phantom", "silent_wrong_write", "wrong_action", "over_halt", "safe_halt")
"""Per-episode outcomes the generator draws (the SWE variants apart)."""


@dataclass
class Episodes:
    """One system's generated episodes: task index and outcome of each."""

    tasks: np.ndarray
    outcomes: list[str]

    def table(self, task_names: list[str]) -> TaskTable:
        """Return the per-task counts of these episodes (what our code reads)."""
        ids = sorted(set(self.tasks.tolist()))
        events: dict[str, list[int]] = {e: [] for e in EVENTS}
        trials = []
        for t in ids:
            mine = [o for task, o in zip(self.tasks, self.outcomes, strict=True) if task == t]
            trials.append(len(mine))
            flags = outcome_counts(mine)
            for e in EVENTS:
                events[e].append(flags[e])
        return TaskTable(
            task_id=[task_names[t] for t in ids],
            category=["control"] * len(ids),
            substrate=["api"] * len(ids),
            trials=trials,
            events=events,
        )

    def flag(self, event: str) -> np.ndarray:
        """Return the per-episode 0/1 indicator of an event (what the references read)."""
        hits = {
            "swer": ("phantom", "silent_wrong_write"),
            "record_wrong": ("silent_wrong_write", "wrong_action"),
            "over_halt": ("over_halt",),
            "task_success": ("success",),
        }[event]
        return np.array([o in hits for o in self.outcomes], dtype=float)

    def worth(self, w: Prices) -> np.ndarray:
        """Return each episode's net value, written out per outcome (not via our formula)."""
        price = {
            "success": w.value,
            "phantom": -w.silent,
            "silent_wrong_write": -(w.silent + w.wrong_record),
            "wrong_action": -w.wrong_record,
            "over_halt": -w.over_halt,
            "safe_halt": 0.0,
        }
        return np.array([price[o] for o in self.outcomes])


def _draw_outcomes(rng: random.Random, n: int, style: str, mix: list[float]) -> list[str]:
    if style == "constant":
        return [rng.choices(OUTCOMES, mix)[0]] * n
    return rng.choices(OUTCOMES, mix, k=n)


def generate(rng: random.Random, n_tasks: int, trials: list[int], style: str) -> Episodes:
    """Return one system's episodes over ``n_tasks`` tasks with the given trials per task."""
    tasks: list[int] = []
    outcomes: list[str] = []
    for t in range(n_tasks):
        mix = [rng.random() ** 2 for _ in OUTCOMES]
        if style == "all-success":
            drawn = ["success"] * trials[t]
        elif style == "all-halt":
            drawn = ["over_halt"] * trials[t]
        else:
            drawn = _draw_outcomes(rng, trials[t], style, mix)
        tasks += [t] * trials[t]
        outcomes += drawn
    return Episodes(np.array(tasks), outcomes)


def trial_counts(rng: random.Random, n_tasks: int) -> list[int]:
    """Trials per task: equal, one each, or unequal."""
    kind = rng.choice(["equal", "one", "unequal"])
    if kind == "one":
        return [1] * n_tasks
    if kind == "equal":
        return [rng.randint(2, 10)] * n_tasks
    return [rng.randint(1, 12) for _ in range(n_tasks)]


def systems(seed: int) -> tuple[Episodes, Episodes, list[str]]:
    """Return two systems' episodes on the same tasks (a generated board of two)."""
    rng = random.Random(seed)
    n_tasks = rng.choice([1, 2, 3, rng.randint(4, 40)])
    names = [f"t{i:03d}" for i in range(n_tasks)]
    styles = ["mixed", "constant", "all-success", "all-halt"]
    first_trials = trial_counts(rng, n_tasks)
    second_trials = first_trials if rng.random() < 0.7 else trial_counts(rng, n_tasks)
    a = generate(rng, n_tasks, first_trials, rng.choices(styles, [5, 4, 1, 1])[0])
    b = generate(rng, n_tasks, second_trials, rng.choices(styles, [5, 4, 1, 1])[0])
    return a, b, names


def _reference_deff(y: np.ndarray, groups: np.ndarray) -> float | None:
    """statsmodels: cluster-robust variance of the mean of y with its small-sample correction
    (Rao and Scott's g / (g - 1)) over the HC0 (binomial) variance."""
    if y.min() == y.max() or len(set(groups.tolist())) < 2:
        return None  # no spread, or one cluster: full agreement within a task is assumed
    fit = sm.OLS(y, np.ones((len(y), 1))).fit()
    clustered = float(cov_cluster(fit, groups, use_correction=True)[0, 0])
    hc0 = float(fit.get_robustcov_results("HC0").cov_params()[0, 0])
    if hc0 <= 1e-15:
        return None
    return clustered / hc0


def reference_deff(y: np.ndarray, groups: np.ndarray) -> float:
    """The design effect our code must give: statsmodels' where the data show a spread, else
    that of trials that always agree within a task; 1 with one trial per task."""
    trials = np.bincount(groups)
    trials = trials[trials > 0]
    if int(np.max(trials)) <= 1:
        return 1.0
    ref = _reference_deff(y, groups)
    if ref is None:
        return max(1.0, float((trials**2).sum()) / len(y))
    return max(1.0, ref)


def test_t_quantiles_equal_scipy() -> None:
    """Student's t of every degrees of freedom a board can have, at the levels it uses (95%,
    80% power's one side, a family's Bonferroni share), equals SciPy's."""
    from effectbench.metrics import t_quantile, t_table

    for df in [*range(1, 60), 79, 100, 295, 887, 2000]:
        for p in (0.5, 0.6, 0.8, 0.9, 0.975, 0.995, 1 - 0.05 / 2 / 66):
            assert t_quantile(p, df) == pytest.approx(
                float(stats.t.ppf(p, df)), rel=1e-12, abs=1e-12
            )
    table = t_table(0.95, 30)
    assert table[0] is None and table[29] == pytest.approx(float(stats.t.ppf(0.975, 29)), rel=1e-12)
    for bad in ((0.4, 5), (1.0, 5), (0.9, 0)):
        with pytest.raises(ValueError):
            t_quantile(*bad)


@pytest.mark.parametrize("event", ["swer", "record_wrong", "over_halt"])
def test_clustered_wilson_equals_statsmodels_on_generated_tables(event: str) -> None:
    checked = degenerate = 0
    for seed in range(N_TABLES):
        episodes, _, names = systems(seed)
        table = episodes.table(names)
        y = episodes.flag(event)
        k, n = float(y.sum()), len(y)
        ours = clustered_wilson(table.k(event), table.m())
        # SPEC's raw interval first: Wilson on k/n.
        lo, hi = wilson(k, n)
        ref_lo, ref_hi = proportion_confint(k, n, method="wilson")
        assert float(lo) == pytest.approx(ref_lo, abs=TOL) and float(hi) == pytest.approx(
            ref_hi, abs=TOL
        )
        trials = np.bincount(episodes.tasks)
        trials = trials[trials > 0]
        expected = reference_deff(y, episodes.tasks)
        if _reference_deff(y, episodes.tasks) is None:
            degenerate += 1
        assert ours.design_effect == pytest.approx(expected, rel=TOL, abs=TOL), seed
        ref_lo, ref_hi = proportion_confint(k / expected, n / expected, method="wilson")
        assert ours.lo == pytest.approx(max(0.0, ref_lo), abs=TOL), seed
        assert ours.hi == pytest.approx(min(1.0, ref_hi), abs=TOL), seed
        assert ours.n_effective == pytest.approx(n / expected, rel=TOL)
        assert ours.tasks == len(trials)
        checked += 1
    assert checked >= 1000 and degenerate > 50  # the edge cases are among them


_AS_ROW = {
    "success": ("success", "none"),
    "phantom": ("silent_wrong_effect", "phantom"),
    "silent_wrong_write": ("silent_wrong_effect", "wrong_write"),
    "wrong_action": ("wrong_action", "none"),
    "over_halt": ("over_halt", "none"),
    "safe_halt": ("safe_halt", "none"),
}


def test_a_table_clustered_by_template_equals_statsmodels_by_template() -> None:
    """``task_table(..., clusters)`` (a generated pack's templates) counts the clusters: its
    design effect is statsmodels' cluster-robust one with the episodes grouped by cluster."""
    import pandas as pd

    checked = 0
    for seed in range(300):
        episodes, _, names = systems(seed)
        rng = random.Random(seed)
        groups = max(1, len(names) // rng.randint(1, 4))
        clusters = {n: f"template-{rng.randrange(groups)}" for n in names}
        frame = pd.DataFrame(
            {
                "arm": "a",
                "task_id": [names[t] for t in episodes.tasks],
                "category": "C1_partial_save",
                "substrate": "api",
                "outcome": [_AS_ROW[o][0] for o in episodes.outcomes],
                "swer_variant": [_AS_ROW[o][1] for o in episodes.outcomes],
                "reported_success": [o in ("success", "phantom", "silent_wrong_write")
                                     for o in episodes.outcomes],
                "cost_usd": 0.0,
                "latency_s": 0.0,
            }
        )  # fmt: skip
        table = task_table(frame, {n: True for n in names}, clusters)
        assert table.task_id == sorted(set(clusters[names[t]] for t in episodes.tasks))
        assert table.correct_action_available == [True] * table.n_tasks
        assert table.n_episodes == len(episodes.outcomes)
        units = sorted(set(clusters.values()))
        group = np.array([units.index(clusters[names[t]]) for t in episodes.tasks])
        y = episodes.flag("swer")
        ours = design_effect(table.k("swer"), table.m())
        assert ours == pytest.approx(reference_deff(y, group), rel=TOL, abs=TOL), seed
        checked += 1
    assert checked == 300
    two = frame.iloc[:0].reindex(range(2))
    two = two.assign(arm="a", task_id=["t0", "t1"], category="control", substrate="api",
                     outcome="success", swer_variant="none", reported_success=True,
                     cost_usd=0.0, latency_s=0.0)  # fmt: skip
    mixed = task_table(two, {"t0": True, "t1": False}, {"t0": "g", "t1": "g"})
    assert mixed.task_id == ["g"] and mixed.trials == [2]
    assert mixed.correct_action_available is None  # the tasks of "g" disagree: not known
    partial = task_table(two, None, {"t0": "g"})
    assert partial.task_id == ["t0", "t1"]  # a map that misses a task is not used


def test_design_effect_of_identical_repeats_is_the_trial_count() -> None:
    # 27 tasks of 10 identical trials, 2 tasks all over-halt: 270 episodes are 27 observations,
    # 26 once Rao and Scott's small-sample factor 27/26 is applied.
    k = [10, 10] + [0] * 25
    m = [10] * 27
    assert design_effect(k, m) == pytest.approx(10.0 * 27 / 26)
    assert clustered_wilson(k, m).n_effective == pytest.approx(26.0)
    assert design_effect([0] * 27, m) == pytest.approx(10.0)  # 0/270: full agreement assumed
    assert design_effect([1, 0, 1], [1, 1, 1]) == 1.0  # one trial per task: no clustering
    assert design_effect([3], [10]) == pytest.approx(10.0)  # one task: one observation
    # tasks that each split their trials alike agree with one another: the binomial floor
    assert design_effect([5, 5], [10, 10]) == 1.0


def test_zero_upper_bound_equals_scipy() -> None:
    rng = random.Random(3)
    for n in list(range(1, 600)) + [rng.uniform(0.5, 400) for _ in range(600)]:
        if float(n).is_integer():
            exact = stats.binomtest(0, int(n), alternative="less").proportion_ci(0.95).high
            assert zero_upper_bound(n) == pytest.approx(exact, abs=TOL)
        assert zero_upper_bound(n) == pytest.approx(stats.beta.ppf(0.95, 1, n), abs=TOL)
    assert zero_upper_bound(0) == 1.0
    assert zero_upper_bound(300) == pytest.approx(3 / 300, rel=0.01)  # the rule of three


def test_family_level_and_fewest_tasks_equal_scipy() -> None:
    for systems_on_board in range(1, 300):
        level = family_confidence(systems_on_board)
        pairs = max(1, systems_on_board * (systems_on_board - 1) // 2)
        assert level == pytest.approx(1 - 0.05 / pairs, abs=1e-15)
        assert z_of(level) == pytest.approx(stats.norm.ppf(1 - 0.05 / pairs / 2), abs=TOL)
        g = min_shared_tasks(level)
        # the fewest tasks on which an exact two-sided sign test, every task favouring one
        # system, rejects at that level
        assert stats.binomtest(g, g, 0.5).pvalue <= 1 - level + 1e-15
        assert stats.binomtest(g - 1, g - 1, 0.5).pvalue > 1 - level
    assert min_shared_tasks(0.95) == 6


PRICES = [DEFAULT_PRICES, Prices(value=50, silent=50, wrong_record=10, over_halt=1)]


def paired_reference(
    y_first: np.ndarray,
    g_first: np.ndarray,
    y_second: np.ndarray,
    g_second: np.ndarray,
    confidence: float = 0.95,
) -> tuple[float, float, float]:
    """(difference, lower, upper) of two means of per-episode values over the same clusters,
    from statsmodels and SciPy alone: one regression of both systems' episodes on their two
    indicators, its cluster-robust covariance (the sandwich without correction) times
    G / (G - 1), and Student's t with G - 1 degrees of freedom."""
    y = np.r_[y_first, y_second]
    first = np.r_[np.ones(len(y_first)), np.zeros(len(y_second))]
    groups = np.r_[g_first, g_second]
    fit = sm.OLS(y, np.c_[first, 1 - first]).fit()
    g = len(set(groups.tolist()))
    d = float(fit.params[0] - fit.params[1])
    if g < 2:  # one cluster: nothing to measure a spread by, unless both are the same
        same = len(y_first) == len(y_second) and y_first.sum() == y_second.sum()
        return (d, d, d) if same else (d, -math.inf, math.inf)
    cov = cov_cluster(fit, groups, use_correction=False)
    var = float(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1]) * g / (g - 1)
    half = float(stats.t.ppf(1 - (1 - confidence) / 2, g - 1)) * math.sqrt(max(var, 0.0))
    return d, d - half, d + half


def mean_reference(y: np.ndarray, groups: np.ndarray) -> tuple[float, float, float]:
    """(mean, lower, upper) of one system's per-episode values: an intercept-only regression's
    cluster-robust variance times G / (G - 1), Student's t with G - 1 degrees (statsmodels,
    SciPy)."""
    fit = sm.OLS(y, np.ones((len(y), 1))).fit()
    g = len(set(groups.tolist()))
    m = float(fit.params[0])
    if g < 2:
        return m, -math.inf, math.inf
    var = float(cov_cluster(fit, groups, use_correction=False)[0, 0]) * g / (g - 1)
    half = float(stats.t.ppf(0.975, g - 1)) * math.sqrt(max(var, 0.0))
    return m, m - half, m + half


def _close(ours: float, ref: float, scale: float = 1.0) -> bool:
    """Equal to 1e-6, or both rounding noise around a point (a spread of 0 either way)."""
    return ours == pytest.approx(ref, abs=TOL * scale)


def test_net_value_equals_a_statsmodels_assembly() -> None:
    """Net value per 100 tasks is the mean of the episodes' worth (written out per outcome);
    its interval is the cluster-robust one of that mean (CR1, Student's t with G - 1 degrees of
    freedom), from statsmodels and SciPy; clipped to what an episode can be worth."""
    for seed in range(N_TABLES):
        episodes, _, names = systems(seed)
        table = episodes.table(names)
        for prices in PRICES:
            ours = net_value(table, prices)
            worth = episodes.worth(prices)
            m, lo, hi = mean_reference(worth, episodes.tasks)
            assert ours.per_100 == pytest.approx(100 * m, abs=TOL), seed
            least, most = -prices.worst, prices.value
            assert ours.lo == pytest.approx(100 * max(least, min(lo, m)), abs=TOL), seed
            assert ours.hi == pytest.approx(100 * min(most, max(hi, m)), abs=TOL), seed
            if worth.min() == worth.max() and len(set(episodes.tasks.tolist())) > 1:  # no spread
                assert ours.lo == ours.hi == ours.per_100


def test_value_difference_equals_a_statsmodels_assembly() -> None:
    """The paired difference of two systems' net values: the two means' difference with the
    cluster-robust covariance of one stacked regression clustered by task (CR1, t on G - 1)."""
    for seed in range(N_TABLES):
        a, b, names = systems(seed)
        ours = value_difference(a.table(names), b.table(names), DEFAULT_PRICES)
        d, lo, hi = paired_reference(
            a.worth(DEFAULT_PRICES), a.tasks, b.worth(DEFAULT_PRICES), b.tasks
        )
        span = DEFAULT_PRICES.value + DEFAULT_PRICES.worst
        assert ours.difference == pytest.approx(100 * d, abs=TOL)
        assert ours.lo == pytest.approx(100 * max(-span, min(lo, d)), abs=TOL), seed
        assert ours.hi == pytest.approx(100 * min(span, max(hi, d)), abs=TOL), seed
        g = len(set(a.tasks.tolist()))
        assert ours.beyond_noise == (g >= 6 and (ours.lo > 0 or ours.hi < 0))


@pytest.mark.parametrize("event", ["swer", "record_wrong", "over_halt"])
def test_rate_difference_equals_a_statsmodels_assembly(event: str) -> None:
    """The paired difference of two rates: the two indicators' means from one stacked
    regression, its cluster-robust covariance times G / (G - 1) and Student's t with G - 1
    degrees of freedom (statsmodels, SciPy), clipped to [-1, 1]."""
    for seed in range(N_TABLES):
        a, b, names = systems(seed)
        ours = rate_difference(a.table(names), b.table(names), event)
        d, lo, hi = paired_reference(a.flag(event), a.tasks, b.flag(event), b.tasks)
        assert ours.difference == pytest.approx(d, abs=TOL)
        assert ours.lo == pytest.approx(max(-1, min(lo, d)), abs=TOL), seed
        assert ours.hi == pytest.approx(min(1, max(hi, d)), abs=TOL), seed


def test_identical_systems_differ_by_exactly_0_in_a_zero_width_interval() -> None:
    """Two systems with the same counts on every unit: value and every rate differ by 0.0
    exactly, in [0.0, 0.0]; so does a system against itself with other trial counts scaled."""
    for seed in range(200):
        a, _, names = systems(seed)
        t = a.table(names)
        v = value_difference(t, t, DEFAULT_PRICES)
        assert (v.difference, v.lo, v.hi) == (0.0, 0.0, 0.0), seed
        for event in ("swer", "over_halt", "record_wrong"):
            r = rate_difference(t, t, event)
            assert (r.difference, r.lo, r.hi) == (0.0, 0.0, 0.0), seed
            assert not r.beyond_noise


def test_minimum_detectable_difference_has_80_percent_power_in_statsmodels() -> None:
    """At our difference statsmodels' power of the two-sided z-test is 0.8 (to 1e-9).

    statsmodels' own solve_power stops its root search about 1e-6 early, so its answer
    is checked more loosely.
    """
    solver = NormalIndPower()
    sizes = [2, 3, 5, 9, 27, 50, 90, 270, 1000] + [
        random.Random(n).uniform(2, 2000) for n in range(40)
    ]
    for n in sizes:
        mdd = minimum_detectable_difference(n)
        # effect size = difference / sd of one observation (0.5 at p = 0.5)
        power = solver.power(effect_size=mdd / 0.5, nobs1=n, alpha=0.05, ratio=1.0)
        if mdd == 1.0:  # the board cannot resolve even the largest difference: capped
            assert power <= 0.8
            continue
        assert power == pytest.approx(0.8, abs=1e-9)
        loose = solver.solve_power(nobs1=n, alpha=0.05, power=0.8, ratio=1.0)
        assert mdd == pytest.approx(0.5 * loose, abs=1e-5)
    assert minimum_detectable_difference(0) == 1.0
    assert minimum_detectable_difference(1) == 1.0


N_BOARDS = 400
"""Generated boards of several systems for the family-wise rank ranges (each kind of board
below, separated, together and with ranges apart, comes up more than 50 times in 400)."""


def board(seed: int) -> tuple[list[Episodes], list[str]]:
    """Return 2 to 5 systems' episodes on one board's tasks; on about one board in five one
    system skips some tasks (its pairs are then judged on the tasks both ran)."""
    rng = random.Random(seed)
    n_tasks = rng.choice([1, 2, 3, 6, 7, 8, rng.randint(9, 40), rng.randint(9, 40)])
    names = [f"t{i:03d}" for i in range(n_tasks)]
    styles = ["mixed", "constant", "all-success", "all-halt"]
    shared = trial_counts(rng, n_tasks)
    episodes = []
    for _ in range(rng.randint(2, 5)):
        trials = shared if rng.random() < 0.7 else trial_counts(rng, n_tasks)
        episodes.append(generate(rng, n_tasks, trials, rng.choices(styles, [3, 3, 1, 1])[0]))
    if n_tasks > 1 and rng.random() < 0.2:
        kept = set(rng.sample(range(n_tasks), rng.randint(1, n_tasks - 1)))
        one = episodes[0]
        mask = np.array([t in kept for t in one.tasks.tolist()])
        outcomes = [o for o, keep in zip(one.outcomes, mask, strict=True) if keep]
        episodes[0] = Episodes(one.tasks[mask], outcomes)
    return episodes, names


def _on(ep: Episodes, tasks: set[int]) -> Episodes:
    """The episodes of ``ep`` on ``tasks`` only."""
    mask = np.array([t in tasks for t in ep.tasks.tolist()])
    return Episodes(ep.tasks[mask], [o for o, keep in zip(ep.outcomes, mask, strict=True) if keep])


@pytest.mark.slow  # about 12 s of CPU: 400 boards, a regression each
def test_family_wise_rank_ranges_equal_a_statsmodels_assembly() -> None:
    """Which systems of a board are worth more than which beyond noise, and so every rank
    range, from references alone: each pair's net-value difference on the tasks both ran,
    the two means of the episodes' worth with statsmodels' clustered covariance times
    G / (G - 1) and SciPy's t on G - 1 degrees of freedom at the Bonferroni level of the
    board's pairs; a pair on fewer
    tasks than SciPy's exact sign test needs at that level is never told apart. A rank range
    counts, above a system in the order, those worth more than it beyond noise, and below it
    those it is worth more than. Boards of 1 to 40 tasks, of 2 to 5 systems, some of whose
    pairs share only some tasks."""
    seen = {"boards": 0, "separated": 0, "together": 0, "apart_ranges": 0, "on_the_edge": 0}
    for seed in range(N_BOARDS):
        episodes, names = board(seed)
        n = len(episodes)
        pairs = n * (n - 1) // 2
        alpha = 0.05 / pairs
        fewest = next(g for g in range(1, 64) if stats.binomtest(g, g, 0.5).pvalue <= alpha)
        tables = [e.table(names) for e in episodes]
        s = [standing(f"s{i}", f"s{i}", t, DEFAULT_PRICES) for i, t in enumerate(tables)]
        order = board_order(s)
        worth = [float(e.worth(DEFAULT_PRICES).mean()) for e in episodes]
        ordered_worth = [worth[i] for i in order]
        assert all(a >= b - 1e-8 for a, b in itertools.pairwise(ordered_worth)), seed
        ours = separation([tables[i] for i in order], DEFAULT_PRICES)
        assert ours.confidence == pytest.approx(1 - alpha, abs=1e-15)
        assert ours.min_tasks == fewest
        ref = np.zeros((n, n), dtype=bool)
        edge = False
        ranked = [episodes[i] for i in order]
        level = 1 - alpha
        for p in range(n):
            for q in range(p + 1, n):
                a, b = ranked[p], ranked[q]
                common = set(a.tasks.tolist()) & set(b.tasks.tolist())
                a, b = _on(a, common), _on(b, common)
                theta, lo, hi = paired_reference(
                    a.worth(DEFAULT_PRICES), a.tasks, b.worth(DEFAULT_PRICES), b.tasks, level
                )
                # p over q from below, q over p from the same interval's top
                for x, y, lower in ((p, q, min(lo, theta)), (q, p, -max(hi, theta))):
                    ref[x, y] = len(common) >= fewest and lower > 0
                    if abs(lower) < 1e-9 and bool(ours.beyond[x, y]) != ref[x, y]:
                        edge = True  # on the edge: rounding decides, either is right
                        continue
                    assert bool(ours.beyond[x, y]) == ref[x, y], (seed, x, y, lower)
        seen["boards"] += 1
        if edge:
            seen["on_the_edge"] += 1
            continue
        best = [1 + sum(bool(ref[q, p]) for q in range(p)) for p in range(n)]
        worst = [n - sum(bool(ref[p, q]) for q in range(p + 1, n)) for p in range(n)]
        assert rank_ranges(range(n), ours.beyond) == (best, worst), seed
        seen["separated"] += int(ref.any())
        seen["together"] += int(not ref.any())
        seen["apart_ranges"] += int(any(w < b for w in worst for b in best))
    assert seen["boards"] == N_BOARDS and seen["on_the_edge"] < N_BOARDS // 20, seen
    assert seen["separated"] > 50 and seen["together"] > 50 and seen["apart_ranges"] > 50, seen


def test_no_common_task_is_said_not_guessed() -> None:
    a, b, names = systems(11)
    first = a.table(names)
    other = b.table([f"other-{n}" for n in names])
    for event in ("swer", "over_halt"):
        d = rate_difference(first, other, event)
        assert d.tasks == 0 and not d.beyond_noise and (d.lo, d.hi) == (-1.0, 1.0)
    c = value_difference(first, other, DEFAULT_PRICES)
    assert c.tasks == 0 and not c.beyond_noise and all(math.isfinite(x) for x in (c.lo, c.hi))
