"""What the generated catalogues' tests share: the minimum detectable SWER difference of a
board's rows, clustered at each level where outcomes may correlate."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from effectbench.metrics.clustered import design_effect
from effectbench.metrics.power import minimum_detectable_difference

SWER = "silent_wrong_effect"


def mdd_by_level(pack: Any, rows: list[Any]) -> dict[str, tuple[int, float]]:
    """The minimum detectable SWER difference at 80% power, clustering the rows by task, by
    situation family and by template: (clusters, points). ``pack`` serves a generated
    catalogue (its definitions have ``family()`` and ``template``)."""
    out: dict[str, tuple[int, float]] = {}
    by_id = {t.task_id: t for t in pack.tasks()}
    for level in ("task", "family", "template"):
        k: Counter[str] = Counter()
        m: Counter[str] = Counter()
        for r in rows:
            d = pack.definition(by_id[r.task_id])
            key = {"task": r.task_id, "family": d.family(), "template": d.template}[level]
            k[key] += r.outcome.value == SWER
            m[key] += 1
        keys = list(m)
        effect = design_effect([k[x] for x in keys], [m[x] for x in keys])
        n_eff = len(rows) / effect
        out[level] = (len(keys), round(100 * minimum_detectable_difference(n_eff), 1))
    return out


def pooled(
    tasks: Iterable[Any], values: Callable[[Any], dict[str, set[Any]]]
) -> dict[str, set[Any]]:
    """Every kind of payload value (``values`` of one task: kind -> its values) of ``tasks``,
    pooled over them."""
    out: dict[str, set[Any]] = {}
    for t in tasks:
        for kind, found in values(t).items():
            out.setdefault(kind, set()).update(found)
    return out
