"""Coverage of the board's analytic paired intervals on simulated boards with a known difference.

Each simulated board is drawn as a generated pack's board is: templates of unequal sizes
(tasks per template), a template-level random effect on the difference between the two
systems and a template-level baseline both share, a task-level difficulty both share within
a template, and several trials per task, each an independent draw. Every episode is a task
success or an over-halt and every task had its correct action available, so an episode is
worth ``value + over_halt`` against doing nothing when it succeeds and 0 when it halts: the
true difference of net value per 100 tasks is ``100 (value + over_halt) DELTA``, exactly
(every random effect has mean 0 and none depends on a template's size).

The analytic interval is the board's own: :func:`effectbench.metrics.value_difference` on the
two systems' tables counted per template. Over :data:`REPLICATIONS` boards its 95% intervals
must cover the truth in 92% to 98% of them (the binomial spread of the count at 95% is about
+-1 point at this many). Seeded: the same boards, the same count, every run.
"""

from __future__ import annotations

import numpy as np
import pytest

from effectbench.metrics import DEFAULT_PRICES, EVENTS, TaskTable, value_difference
from effectbench.metrics.bootstrap import bootstrap_difference

pytestmark = pytest.mark.slow

DELTA = 0.10
"""The true difference of success rates between the two systems (so of value, scaled)."""
TRIALS = 3
REPLICATIONS = 2000
SEED = 20261207


def _table(
    success: np.ndarray,
    trials: np.ndarray,
    names: list[str],
    unit: str = "template",
    instances: TaskTable | None = None,
) -> TaskTable:
    """Return a table of episodes that are each a success or an over-halt (per template, with
    its tasks' table as ``instances``; or per task)."""
    events = {e: [0] * len(names) for e in EVENTS}
    events["task_success"] = [int(x) for x in success]
    events["correct_effect"] = [int(x) for x in success]
    events["screen_success"] = [int(x) for x in success]
    events["over_halt"] = [int(t - x) for t, x in zip(trials, success, strict=True)]
    return TaskTable(
        task_id=names,
        category=["control"] * len(names),
        substrate=["api"] * len(names),
        trials=[int(t) for t in trials],
        events=events,
        correct_action_available=[True] * len(names),
        unit=unit,
        instances=instances,
    )


def _board(rng: np.random.Generator, sizes: np.ndarray) -> tuple[TaskTable, TaskTable]:
    """Draw one board of two systems on templates of ``sizes`` tasks each."""
    g = len(sizes)
    base = rng.uniform(0.25, 0.55, g)  # the template's baseline, both systems
    effect = rng.uniform(-0.15, 0.15, g)  # the template's own departure from DELTA
    template = np.repeat(np.arange(g), sizes)
    task = rng.uniform(-0.1, 0.1, len(template))  # a task's difficulty, both systems
    p_second = base[template] + task
    p_first = p_second + DELTA + effect[template]
    first = rng.binomial(TRIALS, p_first)
    second = rng.binomial(TRIALS, p_second)
    trials = sizes * TRIALS
    names = [f"t{i:02d}" for i in range(g)]
    tasks = [f"t{t:02d}-{i:03d}" for i, t in enumerate(template)]
    cluster = [names[t] for t in template]
    out = []
    for drawn in (first, second):
        inner = _table(drawn, np.full(len(template), TRIALS), tasks, "task")
        inner = inner.model_copy(update={"cluster": cluster})
        per = np.bincount(template, weights=drawn, minlength=g)
        out.append(_table(per, trials, names, instances=inner))
    return out[0], out[1]


TRUTH = 100 * (DEFAULT_PRICES.value + DEFAULT_PRICES.over_halt) * DELTA


@pytest.mark.parametrize(
    "templates,smallest,largest",
    [(26, 1, 24), (12, 2, 40)],
    ids=["26-templates", "12-templates"],
)
def test_analytic_paired_intervals_cover_the_true_difference(
    templates: int, smallest: int, largest: int
) -> None:
    rng = np.random.default_rng([SEED, templates])
    covered = 0
    for _ in range(REPLICATIONS):
        sizes = rng.integers(smallest, largest + 1, templates)
        first, second = _board(rng, sizes)
        d = value_difference(first, second, DEFAULT_PRICES)
        assert d.tasks == templates
        covered += d.lo <= TRUTH <= d.hi
    share = covered / REPLICATIONS
    assert 0.92 <= share <= 0.98, f"{templates} templates: the 95% intervals covered {share:.3f}"


def test_the_simulated_truth_is_what_the_estimator_targets() -> None:
    """The mean of the estimates over many boards sits on the stated truth (so coverage is
    measured against the estimator's own target, not a biased one)."""
    rng = np.random.default_rng([SEED, 0])
    estimates = []
    for _ in range(400):
        first, second = _board(rng, rng.integers(1, 25, 26))
        estimates.append(value_difference(first, second, DEFAULT_PRICES).difference)
    mean, se = float(np.mean(estimates)), float(np.std(estimates, ddof=1)) / 20.0
    assert abs(mean - TRUTH) < 4 * se, (mean, TRUTH, se)


def test_bootstrap_intervals_cover_as_the_analytic_ones_do() -> None:
    """The hierarchical bootstrap (at 200 replicates, on 200 boards: a coarse check) covers
    the truth about as often as its nominal 95%: within 88% to 99%."""
    rng = np.random.default_rng([SEED, 1])
    covered = 0
    boards = 200
    for _ in range(boards):
        first, second = _board(rng, rng.integers(1, 25, 26))
        b = bootstrap_difference(first, second, DEFAULT_PRICES, replicates=200)
        assert b.lo is not None and b.hi is not None
        covered += b.lo <= TRUTH <= b.hi
    assert 0.88 <= covered / boards <= 0.99, covered / boards
