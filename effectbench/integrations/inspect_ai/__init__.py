"""EffectBench packs as inspect_ai tasks, and inspect logs as EffectBench bundles.

Install with ``pip install 'effectbench[inspect]'``. The tasks are registered
with inspect under the package's name, so ``inspect eval effectbench/clinic
--model PROVIDER/MODEL --epochs 10`` runs the clinic pack: each sample is one
task of the split, each epoch one trial; the sample's ``setup`` provisions a
fresh episode through the pack's own provider, the tools are the pack's
actions, the scorer is the independent oracle read through EffectBench's one
truth table, and ``cleanup`` tears the episode down. ``effectbench
import-inspect LOG.eval --out DIR`` turns the log into a submission bundle. The
scripted models ``effectbench-mock/halt`` and ``effectbench-mock/outage`` (:mod:`.mock`)
run the tasks offline.
"""

from __future__ import annotations

from effectbench.extras import install_hint

EXTRA = install_hint("inspect")
"""How to install what this integration needs."""

try:
    import inspect_ai as _inspect_ai  # noqa: F401
except ModuleNotFoundError as exc:  # an install without the extra
    if exc.name != "inspect_ai":
        raise
    raise ModuleNotFoundError(
        f"effectbench.integrations.inspect_ai needs the optional extra 'inspect' "
        f"(inspect-ai is not installed): {EXTRA}",
        name="inspect_ai",
    ) from None

from effectbench.integrations.inspect_ai.mock import ScriptedModel  # noqa: E402 (registers it)
from effectbench.integrations.inspect_ai.tasks import (  # noqa: E402
    PACK_TASKS,
    SCORER_NAME,
    TASK_VERSION,
    effect_metrics,
    effect_scorer,
    effectbench_task,
)

__all__ = [
    "EXTRA",
    "SCORER_NAME",
    "TASK_VERSION",
    "PACK_TASKS",
    "ScriptedModel",
    "effect_metrics",
    "effect_scorer",
    "effectbench_task",
]
