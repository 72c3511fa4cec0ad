"""Per substrate: how many episodes succeeded at their cell's first attempt, and what the
episodes' model calls cost.

A cell (task, trial) that ended in a re-runnable drop runs again; its row is then a later
attempt's. First-try task success counts only the rows of cells that ran once, so a system
that needs retries to succeed is told apart from one that succeeds at once. The cost is the
rows' ``cost_usd`` (the sum of their model calls), with how many rows made any call: a row
without calls has no measured cost, which is not a cost of zero.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from effectbench.metrics.events import _codes, _is
from effectbench.schema import Outcome


class SubstrateUsage(BaseModel):
    """One substrate's episodes: first-try successes and measured model cost."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    episodes: int = Field(ge=0)
    """Scored episodes (rows) on the substrate."""
    first_try: int = Field(ge=0)
    """Rows whose task succeeded and whose cell ran once (its first attempt counted)."""
    with_calls: int = Field(ge=0)
    """Rows that made at least one model call."""
    cost_usd: float = Field(ge=0, allow_inf_nan=False)
    """The rows' cost in US dollars, summed."""


def substrate_usage(
    frame: Any,
    trials: Sequence[int],
    calls: Sequence[bool],
    retried: Collection[tuple[str, int]],
) -> dict[str, SubstrateUsage]:
    """Return each substrate's :class:`SubstrateUsage` of the rows of ``frame`` (a
    :class:`~effectbench.metrics.CodedFrame` or a pandas frame); ``trials[i]`` and ``calls[i]``
    are row i's trial and whether it made a model call; ``retried`` are the cells (task,
    trial) with an earlier attempt."""
    sub_codes, sub_labels = _codes(frame["substrate"])
    task_codes, task_labels = _codes(frame["task_id"])
    success = _is(frame["outcome"], Outcome.SUCCESS.value)
    cost = np.asarray(frame["cost_usd"], dtype=float)
    called = np.asarray(calls, dtype=bool)
    again = np.array(
        [(task_labels[t], int(k)) in retried for t, k in zip(task_codes, trials, strict=True)]
        if retried
        else np.zeros(len(task_codes), dtype=bool),
        dtype=bool,
    )
    out = {}
    for code, label in enumerate(sub_labels):
        on = sub_codes == code
        out[label] = SubstrateUsage(
            episodes=int(on.sum()),
            first_try=int((on & success & ~again).sum()),
            with_calls=int((on & called).sum()),
            cost_usd=float(cost[on].sum()),
        )
    return out
