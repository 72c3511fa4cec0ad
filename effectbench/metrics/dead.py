"""Dead units of a board: the templates (or tasks) on which every ranked system has the same
outcome, so no comparison between them can read anything there.

A unit is dead when, on it, every ranked system has the same share of its episodes with each
outcome net value weighs (:data:`~effectbench.metrics.value.VALUE_EVENTS`: task success, SWER,
record-wrong, over-halt). Every pair of systems then differs there by exactly 0 in each of
those rates and in net value at any prices: the unit adds to G, and to nothing else a paired
comparison reads. A board whose units are mostly dead resolves less than its unit count says.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from effectbench.metrics.rates import _Model
from effectbench.metrics.tasks import TaskTable
from effectbench.metrics.value import VALUE_EVENTS

DEAD_EVENTS = VALUE_EVENTS
"""The outcomes a dead unit's systems agree on (each as a share of the unit's episodes)."""


class DeadUnits(_Model):
    """Which units of a board every ranked system scores the same on."""

    systems: int
    """The ranked systems compared (fewer than 2: nothing to agree on, no share)."""
    units: int
    """The units every one of them ran (the shared units)."""
    dead: list[str]
    """The ids of the shared units on which they all have the same outcome, sorted."""
    unit: str = "task"

    @property
    def share(self) -> float | None:
        """The dead units' share of the shared units (None: fewer than 2 systems, or no
        shared unit)."""
        if self.systems < 2 or not self.units:
            return None
        return len(self.dead) / self.units


def dead_units(tables: Sequence[TaskTable]) -> DeadUnits:
    """Return the units every table of ``tables`` (one per ranked system) ran on which all have
    the same share of episodes with each of :data:`DEAD_EVENTS`.

    Shares are compared exactly, as fractions of whole counts (``k_a m_b == k_b m_a``): a
    system that ran a template three times agrees with one that ran it once when their
    outcomes match in proportion."""
    unit = tables[0].unit if tables else "task"
    if len(tables) < 2:
        shared = sorted(tables[0].task_id) if tables else []
        return DeadUnits(systems=len(tables), units=len(shared), dead=[], unit=unit)
    common = set(tables[0].task_id).intersection(*(t.task_id for t in tables[1:]))
    ids = sorted(common)
    kept = []
    for t in tables:
        at = {u: i for i, u in enumerate(t.task_id)}
        kept.append(t.reordered([at[u] for u in ids]))
    first = kept[0]
    same = np.ones(len(ids), dtype=bool)
    for other in kept[1:]:
        for event in DEAD_EVENTS:
            same &= first.k(event) * other.m() == other.k(event) * first.m()
    dead = [u for u, s in zip(ids, same.tolist(), strict=True) if s]
    return DeadUnits(systems=len(tables), units=len(ids), dead=dead, unit=unit)
