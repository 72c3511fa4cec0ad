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
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint
from statsmodels.stats.sandwich_covariance import cov_cluster
from support.outcomes import outcome_counts

from effectbench.metrics import (
    DEFAULT_PRICES,
    EVENTS,
    VALUE_EVENTS,
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


@dataclass
class Reference:
    """Several rates over per-episode indicators, from statsmodels alone: each rate's mean, its
    Wilson limits on its Rao-Scott effective counts, and their correlations from one stacked
    regression with a cluster-robust covariance (a rate without spread correlates with
    nothing)."""

    points: list[float]
    limits: list[tuple[float, float]]
    corr: np.ndarray

    @classmethod
    def of(cls, blocks: list[np.ndarray], groups: list[np.ndarray], z: float) -> Reference:
        k = len(blocks)
        x = np.zeros((sum(len(b) for b in blocks), k))
        start = 0
        for e, b in enumerate(blocks):
            x[start : start + len(b), e] = 1.0
            start += len(b)
        fit = sm.OLS(np.concatenate(blocks), x).fit()
        cov = cov_cluster(fit, np.concatenate(groups), use_correction=False)
        var = np.diag(cov)
        corr = np.eye(k)
        for e in range(k):
            for f in range(k):
                if e != f and var[e] > 1e-15 and var[f] > 1e-15:
                    corr[e, f] = cov[e, f] / math.sqrt(var[e] * var[f])
        deff = np.array([reference_deff(b, g) for b, g in zip(blocks, groups, strict=True)])
        sums = np.array([b.sum() for b in blocks])
        sizes = np.array([len(b) for b in blocks], dtype=float)
        alpha = 2 * (1 - stats.norm.cdf(z))
        lo, hi = proportion_confint(sums / deff, sizes / deff, alpha=alpha, method="wilson")
        limits = [(max(0.0, float(a)), min(1.0, float(b))) for a, b in zip(lo, hi, strict=True)]
        return cls([float(b.mean()) for b in blocks], limits, corr)

    def pick(self, rates: list[int]) -> Reference:
        """The same references of some of the rates (a rate's covariance with another, and so
        their correlation, is the same whatever else the regression stacks)."""
        return Reference(
            [self.points[e] for e in rates],
            [self.limits[e] for e in rates],
            self.corr[np.ix_(rates, rates)],
        )

    def mover(self, weights: list[float]) -> tuple[float, float, float]:
        """Square-and-add of ``sum(weights * rates)``: (point, lower, upper)."""
        k = len(weights)
        trip = zip(weights, self.points, self.limits, strict=True)
        theta = sum(w * p for w, p in zip(weights, self.points, strict=True))
        down, up = [], []
        for w, p, (lo, hi) in trip:
            down.append(w * (p - lo) if w >= 0 else -w * (hi - p))
            up.append(w * (hi - p) if w >= 0 else -w * (p - lo))
        sign = np.sign(weights)
        form = sign[:, None] * sign[None, :] * self.corr
        below = sum(form[e, f] * down[e] * down[f] for e in range(k) for f in range(k))
        above = sum(form[e, f] * up[e] * up[f] for e in range(k) for f in range(k))
        return theta, theta - math.sqrt(max(0.0, below)), theta + math.sqrt(max(0.0, above))


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


def test_net_value_equals_a_statsmodels_assembly() -> None:
    """Net value per 100 tasks is the mean of the episodes' worth (written out per outcome);
    its interval is square-and-add of the four rates' clustered Wilson limits, weighted by the
    prices and corrected by the rates' cluster-robust correlations, all from statsmodels."""
    z = z_of(0.95)
    for seed in range(N_TABLES):
        episodes, _, names = systems(seed)
        table = episodes.table(names)
        blocks = [episodes.flag(e) for e in VALUE_EVENTS]
        ref = Reference.of(blocks, [episodes.tasks] * len(blocks), z)
        for prices in PRICES:
            ours = net_value(table, prices)
            worth = episodes.worth(prices).mean()
            assert ours.per_100 == pytest.approx(100 * worth, abs=TOL), seed
            theta, lo, hi = ref.mover(list(prices.weights()))
            assert theta == pytest.approx(worth, abs=TOL)
            least, most = -prices.worst, prices.value
            assert ours.lo == pytest.approx(100 * max(least, min(lo, theta)), abs=TOL), seed
            assert ours.hi == pytest.approx(100 * min(most, max(hi, theta)), abs=TOL), seed
            assert ours.lo < ours.hi  # never a point, even where every task agrees


def test_value_difference_equals_a_statsmodels_assembly() -> None:
    """The paired difference of two systems' net values: square-and-add of all eight rates
    (both systems' four), their correlations from one stacked regression clustered by task."""
    z = z_of(0.95)
    for seed in range(N_TABLES):
        a, b, names = systems(seed)
        ours = value_difference(a.table(names), b.table(names), DEFAULT_PRICES)
        blocks = [a.flag(e) for e in VALUE_EVENTS] + [b.flag(e) for e in VALUE_EVENTS]
        ref = Reference.of(blocks, [a.tasks] * 4 + [b.tasks] * 4, z)
        weights = list(DEFAULT_PRICES.weights())
        theta, lo, hi = ref.mover(weights + [-w for w in weights])
        span = DEFAULT_PRICES.value + DEFAULT_PRICES.worst
        d = a.worth(DEFAULT_PRICES).mean() - b.worth(DEFAULT_PRICES).mean()
        assert ours.difference == pytest.approx(100 * d, abs=TOL) and theta == pytest.approx(d)
        assert ours.lo == pytest.approx(100 * max(-span, min(lo, d)), abs=TOL), seed
        assert ours.hi == pytest.approx(100 * min(span, max(hi, d)), abs=TOL), seed
        g = len(set(a.tasks.tolist()))
        assert ours.beyond_noise == (g >= 6 and (ours.lo > 0 or ours.hi < 0))


def _stacked(a: Episodes, b: Episodes) -> tuple[np.ndarray, np.ndarray]:
    """Both systems' episodes stacked, with a first-system indicator and task clusters."""
    first = np.r_[np.ones(len(a.outcomes)), np.zeros(len(b.outcomes))]
    return first, np.r_[a.tasks, b.tasks]


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
            deff = reference_deff(yy, ep.tasks)
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
    square-and-add of all eight rates at the Bonferroni level of the board's pairs (SciPy's
    normal quantile), from statsmodels' clustered covariance and Wilson limits; a pair on fewer
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
        z = float(stats.norm.ppf(1 - alpha / 2))
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
        weights = list(DEFAULT_PRICES.weights())
        ranked = [episodes[i] for i in order]
        everyone = Reference.of(  # every system's four rates stacked in one regression
            [e.flag(r) for e in ranked for r in VALUE_EVENTS],
            [e.tasks for e in ranked for _ in VALUE_EVENTS],
            z,
        )
        for p in range(n):
            for q in range(p + 1, n):
                a, b = ranked[p], ranked[q]
                common = set(a.tasks.tolist()) & set(b.tasks.tolist())
                if len(common) == len(set(a.tasks.tolist()) | set(b.tasks.tolist())):
                    r = everyone.pick([4 * p + e for e in range(4)] + [4 * q + e for e in range(4)])
                else:  # the pair is judged on the tasks both ran
                    a, b = _on(a, common), _on(b, common)
                    blocks = [a.flag(e) for e in VALUE_EVENTS] + [b.flag(e) for e in VALUE_EVENTS]
                    r = Reference.of(blocks, [a.tasks] * 4 + [b.tasks] * 4, z)
                theta, lo, hi = r.mover(weights + [-w for w in weights])
                # p over q from below, q over p from the same interval's top
                for x, y, lower in ((p, q, min(lo, theta)), (q, p, -max(hi, theta))):
                    if abs(lower) < 1e-9:  # on the edge: rounding decides, either is right
                        edge = True
                        continue
                    ref[x, y] = len(common) >= fewest and lower > 0
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
