"""Paired, task-clustered comparisons of two systems, and of one system across substrates.

Every comparison pairs the two systems' episodes by task and counts tasks, not repeats: each
rate's task-clustered Wilson interval (:func:`~effectbench.metrics.clustered.components`),
combined by square-and-add and corrected by the rates' correlations across the common tasks.
A difference is *beyond noise* when its interval excludes 0 and it rests on at least
:func:`min_shared_tasks` common tasks. A board states its rank ranges at a family-wise level
(:func:`family_confidence`): every difference between two of its ranked systems holds at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import NormalDist
from typing import TYPE_CHECKING

from effectbench.metrics.paired import CLUSTER_METHOD, cluster_difference
from effectbench.metrics.rates import _Model
from effectbench.metrics.tasks import TaskTable, task_table
from effectbench.metrics.value import (
    PER,
    Prices,
    net_per_episode,
    value_bounds,
    value_sums,
)
from effectbench.schema import Substrate

if TYPE_CHECKING:
    import pandas as pd

CONFIDENCE = 0.95
"""The level of one comparison (the compare view, the substrates page)."""


def z_of(confidence: float) -> float:
    """Return the standard normal quantile of a two-sided interval at ``confidence``."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"a confidence level is between 0 and 1, got {confidence}")
    return NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)


def family_confidence(systems: int, confidence: float = CONFIDENCE) -> float:
    """Return the level of each comparison so that every comparison of ``systems`` systems
    with one another holds at once with probability ``confidence`` (Bonferroni: the error
    ``1 - confidence`` shared among the ``systems * (systems - 1) / 2`` pairs)."""
    pairs = max(1, systems * (systems - 1) // 2)
    return 1.0 - (1.0 - confidence) / pairs


def min_shared_tasks(confidence: float = CONFIDENCE) -> int:
    """Return the fewest common tasks a difference at ``confidence`` must rest on to be beyond
    noise: the fewest on which a two-sided exact sign test at that level could reject when
    every task favours the same system (``2 * 0.5^g`` at most ``1 - confidence``). Fewer tasks
    cannot tell two systems apart whatever they show: 6 at 95%, 7 for the three pairs of a
    board of three at a family-wise 95%."""
    alpha = 1.0 - confidence
    g = 1
    while 2.0 * 0.5**g > alpha:
        g += 1
    return g


class Difference(_Model):
    """The first system minus the second on the tasks both ran, with a paired interval."""

    measure: str
    """What is compared: an event of :data:`EVENTS` (a rate) or ``value`` (net value per 100
    tasks)."""
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
    confidence: float = CONFIDENCE
    """The interval's level."""

    @property
    def min_tasks(self) -> int:
        """The fewest common tasks that can put a difference at this level beyond noise."""
        return min_shared_tasks(self.confidence)

    @property
    def beyond_noise(self) -> bool:
        """Whether the data resolve the difference: the interval excludes 0 and it rests on
        at least :attr:`min_tasks` common tasks."""
        return self.tasks >= self.min_tasks and (self.lo > 0 or self.hi < 0)


PAIRED_TASK_METHOD = CLUSTER_METHOD
"""The difference of two rates over the same units: per-unit paired, cluster-robust (CR1) with
Student's t on G - 1 degrees of freedom (:func:`~effectbench.metrics.paired.cluster_difference`)."""
PAIRED_VALUE_METHOD = CLUSTER_METHOD
"""The difference of two net values over the same units, by the same estimator."""


def _nothing_common(measure: str, bound: float, method: str, confidence: float) -> Difference:
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
        confidence=confidence,
    )


def _common(first: TaskTable, second: TaskTable) -> tuple[TaskTable, TaskTable]:
    shared = set(first.task_id) & set(second.task_id)
    a = first.select(t in shared for t in first.task_id)
    b = second.select(t in shared for t in second.task_id)
    return a, b


def rate_difference(
    first: TaskTable, second: TaskTable, event: str, confidence: float = CONFIDENCE
) -> Difference:
    """Return the paired, cluster-robust difference of one rate between two systems.

    Over the units (tasks, or templates) both ran: the difference of the pooled rates, with
    :func:`~effectbench.metrics.paired.cluster_difference`'s interval (per-unit paired, CR1,
    Student's t with G - 1 degrees of freedom), clipped to [-1, 1]. Two systems with the same
    counts on every unit differ by exactly 0 in [0, 0]. No common unit gives 0 in [-1, 1]
    and ``tasks`` 0.
    """
    a, b = _common(first, second)
    if a.n_tasks == 0:
        return _nothing_common(event, 1.0, PAIRED_TASK_METHOD, confidence)
    d = cluster_difference(a.k(event), a.m(), b.k(event), b.m(), confidence)
    return Difference(
        measure=event,
        tasks=a.n_tasks,
        n_first=a.n_episodes,
        n_second=b.n_episodes,
        first=d.first,
        second=d.second,
        difference=d.difference,
        lo=max(-1.0, d.difference - d.half),
        hi=min(1.0, d.difference + d.half),
        method=PAIRED_TASK_METHOD,
        confidence=confidence,
    )


def value_difference(
    first: TaskTable, second: TaskTable, p: Prices, confidence: float = CONFIDENCE
) -> Difference:
    """Return the paired, cluster-robust difference of net value per 100 tasks at prices ``p``.

    Over the units both ran: the first system's :func:`net_per_episode` minus the second's
    (each against doing nothing on its own episodes where that is known), times 100, with
    :func:`~effectbench.metrics.paired.cluster_difference`'s interval over the per-unit sums
    of :func:`value_sums`; clipped to what two episodes can differ by. No common unit gives 0
    in the whole range.
    """
    least, most = value_bounds(p)
    span = PER * (most - least)
    a, b = _common(first, second)
    if a.n_tasks == 0:
        return _nothing_common("value", span, PAIRED_VALUE_METHOD, confidence)
    va, vb = net_per_episode(a, p), net_per_episode(b, p)
    diff = va - vb
    c = cluster_difference(value_sums(a, p), a.m(), value_sums(b, p), b.m(), confidence)
    return Difference(
        measure="value",
        tasks=a.n_tasks,
        n_first=a.n_episodes,
        n_second=b.n_episodes,
        first=PER * va,
        second=PER * vb,
        difference=PER * diff,
        lo=max(-span, PER * (diff - c.half)),
        hi=min(span, PER * (diff + c.half)),
        method=PAIRED_VALUE_METHOD,
        confidence=confidence,
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


def _relabelled(table: TaskTable, names: Mapping[str, str]) -> TaskTable:
    """Return ``table`` with each task id renamed by ``names`` (others kept), sorted again."""
    ids = [names.get(t, t) for t in table.task_id]
    order = sorted(range(len(ids)), key=ids.__getitem__)
    return table.reordered(order, [ids[i] for i in order])


def contamination_delta(
    public: TaskTable,
    fresh: TaskTable,
    slots: Mapping[str, str],
    confidence: float = CONFIDENCE,
    event: str = "swer",
    prices: Prices | None = None,
) -> Difference:
    """Return one system's contamination delta: its rate of ``event`` (or, given ``prices``,
    its net value per 100 tasks) on a fresh instance minus on the public dev seed, paired by
    template slot, with the paired, cluster-robust interval of :func:`rate_difference` (of
    :func:`value_difference`).

    ``slots`` maps each fresh task id to the public task drawn from the same template and
    index (``effectbench.packs.clinic.generated.instance_slots``): the pairs the interval
    counts. A unit it does not name pairs as it is: a board that counts templates
    (:class:`~effectbench.seam.ClustersTasks`) has the same units on both seeds. A positive
    SWER delta means the system does worse on tasks it could not have seen.
    """
    relabelled = _relabelled(fresh, slots)
    if prices is not None:
        return value_difference(relabelled, public, prices, confidence)
    return rate_difference(relabelled, public, event, confidence)
