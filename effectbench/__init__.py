"""EffectBench: score the true effect an automation agent leaves in the system of record.

The public surface is small: the SPEC v1 vocabulary, the judge, the truth
table, the metrics, the provider seam and the runner. Its names are loaded on
first use (``effectbench.summarize`` imports pandas then, not at ``import
effectbench``), so the command line and the light modules start fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from effectbench.classify import Label, classify, true_state
    from effectbench.effects import Effect, EffectKind, Param, contract_hash
    from effectbench.judge import judge, judge_contract
    from effectbench.metrics import Results, episode_frame, summarize, wilson
    from effectbench.run.runner import RunResult, evaluate
    from effectbench.schema import (
        AgentReport,
        Category,
        EpisodeRecord,
        ModelCall,
        OracleSpec,
        OracleVerdict,
        Outcome,
        Substrate,
        SwerVariant,
        TaskSpec,
        TrueState,
        Verdict,
    )
    from effectbench.seam import AgentTask, Attempt, BenchmarkProvider, EnvHandle, SystemUnderTest

from effectbench._version import SPEC_VERSION, engine_version

__all__ = [
    "SPEC_VERSION",
    "AgentReport",
    "AgentTask",
    "Attempt",
    "BenchmarkProvider",
    "Category",
    "Effect",
    "EffectKind",
    "EnvHandle",
    "EpisodeRecord",
    "Label",
    "ModelCall",
    "OracleSpec",
    "OracleVerdict",
    "Outcome",
    "Param",
    "Results",
    "RunResult",
    "Substrate",
    "SwerVariant",
    "SystemUnderTest",
    "TaskSpec",
    "TrueState",
    "Verdict",
    "classify",
    "contract_hash",
    "episode_frame",
    "evaluate",
    "judge",
    "judge_contract",
    "summarize",
    "true_state",
    "wilson",
]

_HOMES = {
    "__version__": "",
    **dict.fromkeys(("Label", "classify", "true_state"), "effectbench.classify"),
    **dict.fromkeys(("Effect", "EffectKind", "Param", "contract_hash"), "effectbench.effects"),
    **dict.fromkeys(("judge", "judge_contract"), "effectbench.judge"),
    **dict.fromkeys(("Results", "episode_frame", "summarize", "wilson"), "effectbench.metrics"),
    **dict.fromkeys(("RunResult", "evaluate"), "effectbench.run.runner"),
    **dict.fromkeys(
        (
            "AgentReport",
            "Category",
            "EpisodeRecord",
            "ModelCall",
            "OracleSpec",
            "OracleVerdict",
            "Outcome",
            "Substrate",
            "SwerVariant",
            "TaskSpec",
            "TrueState",
            "Verdict",
        ),
        "effectbench.schema",
    ),
    **dict.fromkeys(
        ("AgentTask", "Attempt", "BenchmarkProvider", "EnvHandle", "SystemUnderTest"),
        "effectbench.seam",
    ),
}
"""Public name -> the module that defines it (loaded on first access)."""


def __getattr__(name: str) -> Any:
    """Load a public name from its home module the first time it is used (PEP 562)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'effectbench' has no attribute {name!r}")
    value = (
        engine_version() if name == "__version__" else getattr(importlib.import_module(home), name)
    )
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, "__version__"})
