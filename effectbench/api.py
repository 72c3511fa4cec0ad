"""EffectBench's public API: what a pack author or a system-under-test author imports.

A pack that lives in its own distribution imports from here only (a test holds the
built-in packs' and the example packs' imports to it where they can), registers its
provider under the ``effectbench.packs`` entry-point group, and passes
``effectbench pack check`` before its board is published. A minimal pack::

    from effectbench.api import BenchmarkProvider, Episode, TaskSpec, manifest_of

    class MyPack:                       # a BenchmarkProvider
        name = "my-pack"
        def tasks(self) -> list[TaskSpec]: ...
        def manifest(self) -> dict: return manifest_of(self.name, self.tasks())
        def trial_params(self, task, trial): ...
        def provision(self, task, trial, params): ...   # a context manager of an Episode

Everything here is re-exported from the module that defines it; the names and their
meaning follow SPEC.md. Optional capabilities of a pack are the protocols of
:mod:`effectbench.seam` (re-exported here), asked with ``isinstance``.
"""

from __future__ import annotations

from effectbench.baselines import EffectVerifiedAll, baseline_names, get_baseline
from effectbench.changes import AllowedChange, ChangeSet, RowChange, Table, allowed_by_contract
from effectbench.computer import ComputerEnv, Display
from effectbench.effects import Effect, EffectKind, Param, contract_hash
from effectbench.episode_http import Channel, EpisodeHandler, EpisodeService, Reply
from effectbench.errors import InfrastructureError, UsageError
from effectbench.frontends import (
    ALL_SURFACES,
    PRODUCT,
    FrontEnd,
    FrontEndSession,
    browser_pids,
    close_browser,
    dominant_colour,
    require_substrate,
    screenshot_colour,
    screenshot_size,
    web_session,
    x_session,
)
from effectbench.hashing import canonical_hash, trial_tag
from effectbench.judge import judge_contract, matches
from effectbench.manifest import SEQUESTERED, fingerprint, manifest_of
from effectbench.packs import ENTRY_POINT_GROUP, get_pack, register
from effectbench.reachability import ANY_STATE, Reachable
from effectbench.runner import RunResult, evaluate
from effectbench.schema import (
    AgentReport,
    Category,
    DropReason,
    ModelCall,
    OracleChannel,
    OracleSpec,
    OracleVerdict,
    Split,
    Substrate,
    TaskSpec,
    TrueState,
    Verdict,
)
from effectbench.seam import (
    RED_TEAM_MOVES,
    TRUE_EFFECT,
    ActionParam,
    Adversary,
    AgentError,
    AgentTask,
    Attempt,
    BenchmarkProvider,
    ChecksFrontEnds,
    ClaimsReachable,
    Closable,
    DeclaresChanges,
    DeclaresInitialState,
    DescribesActions,
    EnvHandle,
    Episode,
    HandsOffToWorkers,
    NotApplicable,
    OffersChangeSet,
    OffersRedTeam,
    OffersSubstrates,
    Oracle,
    OwnBaselines,
    ProductReading,
    ProductVerifier,
    ReadsAllSurfaces,
    Reproducible,
    Screen,
    ScriptedPack,
    StatesMechanism,
    SystemUnderTest,
    WorkerHandoff,
)

__all__ = [
    "ALL_SURFACES",
    "PRODUCT",
    "Channel",
    "EpisodeHandler",
    "EpisodeService",
    "Reply",
    "ComputerEnv",
    "Display",
    "FrontEnd",
    "FrontEndSession",
    "browser_pids",
    "close_browser",
    "dominant_colour",
    "require_substrate",
    "screenshot_colour",
    "screenshot_size",
    "web_session",
    "x_session",
    "ANY_STATE",
    "ENTRY_POINT_GROUP",
    "RED_TEAM_MOVES",
    "SEQUESTERED",
    "TRUE_EFFECT",
    "ActionParam",
    "Adversary",
    "AgentError",
    "AgentReport",
    "AgentTask",
    "AllowedChange",
    "Attempt",
    "BenchmarkProvider",
    "Category",
    "ChangeSet",
    "ChecksFrontEnds",
    "ClaimsReachable",
    "Closable",
    "DescribesActions",
    "DeclaresChanges",
    "DeclaresInitialState",
    "DropReason",
    "Effect",
    "EffectVerifiedAll",
    "EffectKind",
    "EnvHandle",
    "Episode",
    "HandsOffToWorkers",
    "InfrastructureError",
    "ModelCall",
    "NotApplicable",
    "OffersChangeSet",
    "OffersRedTeam",
    "OffersSubstrates",
    "Oracle",
    "OracleChannel",
    "OracleSpec",
    "OracleVerdict",
    "OwnBaselines",
    "Param",
    "ProductReading",
    "ProductVerifier",
    "Reachable",
    "ReadsAllSurfaces",
    "Reproducible",
    "RowChange",
    "RunResult",
    "Screen",
    "ScriptedPack",
    "Split",
    "StatesMechanism",
    "Substrate",
    "SystemUnderTest",
    "Table",
    "TaskSpec",
    "TrueState",
    "UsageError",
    "Verdict",
    "WorkerHandoff",
    "allowed_by_contract",
    "baseline_names",
    "canonical_hash",
    "contract_hash",
    "evaluate",
    "fingerprint",
    "get_baseline",
    "get_pack",
    "judge_contract",
    "manifest_of",
    "matches",
    "register",
    "trial_tag",
]
