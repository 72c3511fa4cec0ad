"""Paired, task-clustered comparisons of two systems, and of one system across substrates."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from effectbench.metrics.clustered import clustered_wilson
from effectbench.metrics.cost import COST_PER, CostWeights, task_costs
from effectbench.metrics.newcombe import square_and_add
from effectbench.metrics.rates import _Model
from effectbench.metrics.student_t import student_t_quantile
from effectbench.metrics.tasks import TaskTable, task_table
from effectbench.schema import Substrate

if TYPE_CHECKING:
    import pandas as pd


class Difference(_Model):
    """The first system minus the second on the tasks both ran, with a paired 95% interval."""

    measure: str
    """What is compared: an event of :data:`EVENTS` (a rate) or ``cost``."""
    tasks: int
    """Tasks both systems ran (the pairs, each a cluster of episodes); 0: nothing to compare."""
    n_first: int
    """Episodes of the first system on those tasks."""
    n_second: int
    """Episodes of the second system on those tasks."""
    first: float
    """The first system's value on those tasks."""
    second: float
    """The second system's value on those tasks."""
    difference: float
    """``first - second``."""
    lo: float
    hi: float
    method: str

    @property
    def beyond_noise(self) -> bool:
        """Whether the interval excludes 0 (a difference the data resolve)."""
        return self.tasks > 0 and (self.lo > 0 or self.hi < 0)


PAIRED_TASK_METHOD = "mover-wilson-rao-scott"
"""Newcombe's square-and-add (MOVER) of the two clustered Wilson intervals, corrected by the
task-clustered correlation of the two rates."""
PAIRED_COST_METHOD = "paired-cluster-robust-t"
"""Difference of mean costs with a task-paired CR1 standard error and t on tasks - 1."""


def _nothing_common(measure: str, bound: float, method: str) -> Difference:
    """The difference of two systems without a common task: 0, anywhere in [-bound, bound]."""
    return Difference(
        measure=measure,
        tasks=0,
        n_first=0,
        n_second=0,
        first=0.0,
        second=0.0,
        difference=0.0,
        lo=-bound,
        hi=bound,
        method=method,
    )


def _common(first: TaskTable, second: TaskTable) -> tuple[TaskTable, TaskTable]:
    shared = set(first.task_id) & set(second.task_id)
    a = first.select(t in shared for t in first.task_id)
    b = second.select(t in shared for t in second.task_id)
    return a, b


def rate_difference(first: TaskTable, second: TaskTable, event: str) -> Difference:
    """Return the paired, task-clustered difference of one rate between two systems.

    Over the tasks both ran: the difference of the pooled rates, with Newcombe's
    square-and-add (MOVER) interval built from each rate's :func:`clustered_wilson`
    limits and the correlation of the two rates across tasks (the cluster-robust
    covariance of per-task residuals ``k_i - p m_i``; 0 when either rate has no spread).
    With one trial per task and equal pairs this is Newcombe's (1998) method 10 without
    its continuity adjustment of phi. No common task gives 0 in [-1, 1] and ``tasks`` 0.
    """
    a, b = _common(first, second)
    if a.n_tasks == 0:
        return _nothing_common(event, 1.0, PAIRED_TASK_METHOD)
    ka, ma, kb, mb = a.k(event), a.m(), b.k(event), b.m()
    pa, pb = float(ka.sum()) / float(ma.sum()), float(kb.sum()) / float(mb.sum())
    ca, cb = clustered_wilson(ka, ma), clustered_wilson(kb, mb)
    ra, rb = ka - pa * ma, kb - pb * mb
    va, vb = float((ra * ra).sum()), float((rb * rb).sum())
    r = float((ra * rb).sum()) / math.sqrt(va * vb) if va > 0 and vb > 0 else 0.0
    lo, hi = square_and_add(pa, (ca.lo, ca.hi), pb, (cb.lo, cb.hi), r)
    return Difference(
        measure=event,
        tasks=a.n_tasks,
        n_first=a.n_episodes,
        n_second=b.n_episodes,
        first=pa,
        second=pb,
        difference=pa - pb,
        lo=lo,
        hi=hi,
        method=PAIRED_TASK_METHOD,
    )


def cost_difference(first: TaskTable, second: TaskTable, weights: CostWeights) -> Difference:
    """Return the paired, task-clustered difference of expected cost per 100 tasks.

    Over the tasks both ran: the first system's mean episode cost minus the second's,
    times 100, with mean +- t(0.975, tasks - 1) x SE, where the variance is CR1 over
    tasks of the paired residuals ``e1_i / n1 - e2_i / n2`` (``e_i`` a task's cost sum
    minus the mean times its episodes). Fewer than two common tasks leave the spread
    unknown: the interval is the whole possible range.
    """
    a, b = _common(first, second)
    worst = COST_PER * weights.worst
    if a.n_tasks == 0:
        return _nothing_common("cost", worst, PAIRED_COST_METHOD)
    ca, cb = task_costs(a, weights), task_costs(b, weights)
    ma, mb = a.m(), b.m()
    na, nb = float(ma.sum()), float(mb.sum())
    mean_a, mean_b = float(ca.sum()) / na, float(cb.sum()) / nb
    d = mean_a - mean_b
    g = a.n_tasks
    if g < 2:
        lo, hi = -weights.worst, weights.worst
    else:
        resid = (ca - mean_a * ma) / na - (cb - mean_b * mb) / nb
        se = math.sqrt(g / (g - 1) * float((resid * resid).sum()))
        half = student_t_quantile(0.975, g - 1) * se
        lo, hi = max(-weights.worst, d - half), min(weights.worst, d + half)
    return Difference(
        measure="cost",
        tasks=g,
        n_first=int(na),
        n_second=int(nb),
        first=COST_PER * mean_a,
        second=COST_PER * mean_b,
        difference=COST_PER * d,
        lo=COST_PER * lo,
        hi=COST_PER * hi,
        method=PAIRED_COST_METHOD,
    )


SUBSTRATE_RATES = ("swer", "over_halt", "record_wrong")
"""The rates one system is compared by across the substrates it ran (SWER never alone)."""


def across_substrates(
    frame: pd.DataFrame,
    trials: Sequence[int],
    seeds: Sequence[int | None],
    first: str,
    second: str,
) -> tuple[TaskTable, TaskTable]:
    """Return one system's episodes on substrate ``first`` and on ``second``, paired.

    ``frame`` (:func:`episode_frame`) holds one system's episodes, ``trials[i]`` and
    ``seeds[i]`` the trial and seed of its row i. The same task on two substrates is two
    variants of one base task (``t`` and ``t@web``, :meth:`~effectbench.schema.Substrate.base_of`);
    an episode on ``first`` pairs with the episode of the same base task, trial and seed on
    ``second``. Only paired episodes are counted, each table naming its tasks by their base
    id, so :func:`rate_difference` of the two compares the substrates task by task over the
    same tasks and trials.
    """
    import pandas as pd

    task_ids = [Substrate.base_of(str(t)) for t in frame["task_id"]]
    substrate = [str(s) for s in frame["substrate"]]
    keys = list(zip(task_ids, (int(t) for t in trials), seeds, strict=True))
    on_first = {k: i for i, k in enumerate(keys) if substrate[i] == first}
    on_second = {k: i for i, k in enumerate(keys) if substrate[i] == second}
    both = sorted(set(on_first) & set(on_second), key=lambda k: (k[0], k[1], str(k[2])))

    def table(index: Mapping[tuple[str, int, int | None], int]) -> TaskTable:
        part = frame.iloc[[index[k] for k in both]].copy()
        part["task_id"] = pd.Categorical([k[0] for k in both])
        return task_table(part)

    return table(on_first), table(on_second)


def substrate_difference(
    frame: pd.DataFrame,
    trials: Sequence[int],
    seeds: Sequence[int | None],
    first: str,
    second: str,
    event: str,
) -> Difference:
    """Return one system's rate of ``event`` on substrate ``first`` minus on ``second``.

    The paired, task-clustered difference (:func:`rate_difference`) over the episodes the
    system ran on both substrates with the same base task, trial and seed
    (:func:`across_substrates`): whether an agent that is safe through one front end stays
    safe through another. No common episode gives 0 in [-1, 1] on 0 tasks.
    """
    on_first, on_second = across_substrates(frame, trials, seeds, first, second)
    return rate_difference(on_first, on_second, event)
