"""Task-clustered intervals, paired comparisons and expected cost against SciPy and statsmodels.

Every interval method of :mod:`effectbench.metrics` that SPEC 1.2 adds is checked here
against an independent implementation from a well-kept statistics library, to 1e-6, on
generated tables (random ones and the edge cases: one task, one trial per task, all-zero
and all-one cells, unequal trials). Our code works on per-task counts; the references
work on the expanded per-episode data, so the two computations share nothing.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint
from statsmodels.stats.sandwich_covariance import cov_cluster
from support.outcomes import outcome_counts

from effectbench.metrics import (
    DEFAULT_COSTS,
    EVENTS,
    CostWeights,
    TaskTable,
    clustered_wilson,
    cost_difference,
    design_effect,
    expected_cost,
    minimum_detectable_difference,
    rate_difference,
    student_t_quantile,
    wilson,
    zero_upper_bound,
)

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
        }[event]
        return np.array([o in hits for o in self.outcomes], dtype=float)

    def cost(self, w: CostWeights) -> np.ndarray:
        """Return each episode's cost, written out per outcome (not via our task formula)."""
        price = {
            "success": 0.0,
            "phantom": w.silent,
            "silent_wrong_write": w.silent + w.wrong_record,
            "wrong_action": w.wrong_record,
            "over_halt": w.over_halt,
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
    """statsmodels: cluster-robust (uncorrected) over HC0 variance of the mean of y."""
    if y.min() == y.max():
        return None  # no spread (statsmodels cannot take a single observation either)
    fit = sm.OLS(y, np.ones((len(y), 1))).fit()
    clustered = float(cov_cluster(fit, groups, use_correction=False)[0, 0])
    hc0 = float(fit.get_robustcov_results("HC0").cov_params()[0, 0])
    if hc0 <= 1e-15:
        return None
    return clustered / hc0


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
        ref = _reference_deff(y, episodes.tasks)
        trials = np.bincount(episodes.tasks)
        trials = trials[trials > 0]
        if ref is None:  # 0/n or n/n: full agreement within a task is assumed
            degenerate += 1
            expected = max(1.0, float((trials**2).sum()) / n) if int(np.max(trials)) > 1 else 1.0
        else:
            expected = max(1.0, ref) if int(np.max(trials)) > 1 else 1.0
        assert ours.design_effect == pytest.approx(expected, rel=TOL, abs=TOL), seed
        ref_lo, ref_hi = proportion_confint(k / expected, n / expected, method="wilson")
        assert ours.lo == pytest.approx(max(0.0, ref_lo), abs=TOL), seed
        assert ours.hi == pytest.approx(min(1.0, ref_hi), abs=TOL), seed
        assert ours.n_effective == pytest.approx(n / expected, rel=TOL)
        assert ours.tasks == len(trials)
        checked += 1
    assert checked >= 1000 and degenerate > 50  # the edge cases are among them


def test_design_effect_of_identical_repeats_is_the_trial_count() -> None:
    # 27 tasks of 10 identical trials, 2 tasks all over-halt: 270 episodes are 27 observations.
    k = [10, 10] + [0] * 25
    m = [10] * 27
    assert design_effect(k, m) == pytest.approx(10.0)
    assert clustered_wilson(k, m).n_effective == pytest.approx(27.0)
    assert design_effect([0] * 27, m) == pytest.approx(10.0)  # 0/270: full agreement assumed
    assert design_effect([1, 0, 1], [1, 1, 1]) == 1.0  # one trial per task: no clustering


def test_zero_upper_bound_equals_scipy() -> None:
    rng = random.Random(3)
    for n in list(range(1, 600)) + [rng.uniform(0.5, 400) for _ in range(600)]:
        if float(n).is_integer():
            exact = stats.binomtest(0, int(n), alternative="less").proportion_ci(0.95).high
            assert zero_upper_bound(n) == pytest.approx(exact, abs=TOL)
        assert zero_upper_bound(n) == pytest.approx(stats.beta.ppf(0.95, 1, n), abs=TOL)
    assert zero_upper_bound(0) == 1.0
    assert zero_upper_bound(300) == pytest.approx(3 / 300, rel=0.01)  # the rule of three


def test_student_t_quantile_equals_scipy() -> None:
    for df in list(range(1, 400)) + [500, 1000, 5000]:
        for q in (0.975, 0.95, 0.9, 0.6, 0.025):
            assert student_t_quantile(q, df) == pytest.approx(stats.t.ppf(q, df), abs=TOL)


@pytest.mark.parametrize(
    "weights", [DEFAULT_COSTS, CostWeights(silent=50, wrong_record=10, over_halt=1)]
)
def test_expected_cost_equals_statsmodels_cluster_robust_t(weights: CostWeights) -> None:
    for seed in range(N_TABLES):
        episodes, _, names = systems(seed)
        ours = expected_cost(episodes.table(names), weights)
        y = episodes.cost(weights)
        g = len(set(episodes.tasks.tolist()))
        assert ours.per_100 == pytest.approx(100 * y.mean(), abs=TOL)
        if g < 2:
            assert ours.lo == 0.0 and ours.hi == pytest.approx(100 * weights.worst)
            continue
        fit = sm.OLS(y, np.ones((len(y), 1))).fit(
            cov_type="cluster", cov_kwds={"groups": episodes.tasks}, use_t=True
        )
        lo, hi = fit.conf_int(alpha=0.05)[0]
        assert ours.lo == pytest.approx(100 * max(0.0, lo), abs=TOL), seed
        assert ours.hi == pytest.approx(100 * min(weights.worst, hi), abs=TOL), seed


def _stacked(a: Episodes, b: Episodes) -> tuple[np.ndarray, np.ndarray]:
    """Both systems' episodes stacked, with a first-system indicator and task clusters."""
    first = np.r_[np.ones(len(a.outcomes)), np.zeros(len(b.outcomes))]
    return first, np.r_[a.tasks, b.tasks]


def test_cost_difference_equals_statsmodels_paired_cluster_robust() -> None:
    for seed in range(N_TABLES):
        a, b, names = systems(seed)
        ours = cost_difference(a.table(names), b.table(names), DEFAULT_COSTS)
        y = np.r_[a.cost(DEFAULT_COSTS), b.cost(DEFAULT_COSTS)]
        first, groups = _stacked(a, b)
        g = len(set(groups.tolist()))
        assert ours.difference == pytest.approx(
            100 * (a.cost(DEFAULT_COSTS).mean() - b.cost(DEFAULT_COSTS).mean()), abs=TOL
        )
        if g < 2:
            assert not ours.beyond_noise
            continue
        # y = const + first: the coefficient on `first` is the difference of the means, and
        # its cluster-robust variance pairs the two systems within each task.
        x = np.c_[np.ones(len(y)), first]
        fit = sm.OLS(y, x).fit()
        var = float(cov_cluster(fit, groups, use_correction=False)[1, 1]) * g / (g - 1)
        half = stats.t.ppf(0.975, g - 1) * math.sqrt(max(var, 0.0))
        worst = DEFAULT_COSTS.worst
        assert fit.params[1] == pytest.approx(ours.difference / 100, abs=TOL)
        assert ours.lo == pytest.approx(100 * max(-worst, fit.params[1] - half), abs=TOL), seed
        assert ours.hi == pytest.approx(100 * min(worst, fit.params[1] + half), abs=TOL), seed


@pytest.mark.parametrize("event", ["swer", "record_wrong", "over_halt"])
def test_rate_difference_equals_a_statsmodels_assembly(event: str) -> None:
    """MOVER with clustered Wilson limits and the cluster-robust correlation of the two rates.

    Every ingredient comes from statsmodels (each rate's design effect, Wilson on the
    effective counts, the covariance of the two rates from a clustered regression on two
    indicators); where that correlation is 0 the result must equal statsmodels' own
    Newcombe hybrid score interval for two proportions on the effective counts.
    """
    independent_checked = 0
    for seed in range(N_TABLES):
        a, b, names = systems(seed)
        ours = rate_difference(a.table(names), b.table(names), event)
        ya, yb = a.flag(event), b.flag(event)
        y = np.r_[ya, yb]
        first, groups = _stacked(a, b)
        fit = sm.OLS(y, np.c_[first, 1 - first]).fit()
        cov = cov_cluster(fit, groups, use_correction=False)
        pa, pb = float(fit.params[0]), float(fit.params[1])
        assert ours.difference == pytest.approx(pa - pb, abs=TOL)
        limits = []
        for ep, yy in ((a, ya), (b, yb)):
            deff = _reference_deff(yy, ep.tasks)
            trials = np.bincount(ep.tasks)
            trials = trials[trials > 0]
            if int(np.max(trials)) <= 1:
                deff = 1.0
            elif deff is None:
                deff = max(1.0, float((trials**2).sum()) / len(yy))
            else:
                deff = max(1.0, deff)
            limits.append(
                (deff, proportion_confint(yy.sum() / deff, len(yy) / deff, method="wilson"))
            )
        (da, (la, ua)), (db, (lb, ub)) = limits
        la, ua, lb, ub = max(0, la), min(1, ua), max(0, lb), min(1, ub)
        var_a, var_b = float(cov[0, 0]), float(cov[1, 1])
        r = float(cov[0, 1]) / math.sqrt(var_a * var_b) if var_a > 1e-15 and var_b > 1e-15 else 0
        d = pa - pb
        lo = d - math.sqrt(max(0, (pa - la) ** 2 + (ub - pb) ** 2 - 2 * r * (pa - la) * (ub - pb)))
        hi = d + math.sqrt(max(0, (ua - pa) ** 2 + (pb - lb) ** 2 - 2 * r * (ua - pa) * (pb - lb)))
        assert ours.lo == pytest.approx(max(-1, lo), abs=TOL), seed
        assert ours.hi == pytest.approx(min(1, hi), abs=TOL), seed
        if r == 0 and 0 < ya.sum() < len(ya) and 0 < yb.sum() < len(yb):
            ref = confint_proportions_2indep(
                ya.sum() / da, len(ya) / da, yb.sum() / db, len(yb) / db, method="newcomb"
            )
            assert ours.lo == pytest.approx(ref[0], abs=TOL) and ours.hi == pytest.approx(
                ref[1], abs=TOL
            )
            independent_checked += 1
    assert independent_checked > 0


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


def test_no_common_task_is_said_not_guessed() -> None:
    a, b, names = systems(11)
    first = a.table(names)
    other = b.table([f"other-{n}" for n in names])
    for event in ("swer", "over_halt"):
        d = rate_difference(first, other, event)
        assert d.tasks == 0 and not d.beyond_noise and (d.lo, d.hi) == (-1.0, 1.0)
    c = cost_difference(first, other, DEFAULT_COSTS)
    assert c.tasks == 0 and not c.beyond_noise and all(math.isfinite(x) for x in (c.lo, c.hi))
