"""EffectBench: score the true effect an automation agent leaves in the system of record.

The public surface is small: the SPEC v1 vocabulary, the judge, the truth
table, the metrics, the provider seam and the runner.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from effectbench.classify import Label, classify, true_state
from effectbench.effects import Effect, EffectKind, Param, contract_hash
from effectbench.judge import judge, judge_contract
from effectbench.metrics import Results, episode_frame, summarize, wilson
from effectbench.runner import RunResult, evaluate
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

SPEC_VERSION = "1.1.0"
"""The SPEC this engine implements (the VERSION file at the repository root)."""

try:
    __version__ = version("effectbench")
except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
    __version__ = SPEC_VERSION

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
