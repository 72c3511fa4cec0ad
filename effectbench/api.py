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

A pack with a real system of record (a database behind an HTTP service) is built on the
pack kit (:mod:`effectbench.kit`), also re-exported here, and keeps only its domain:
:class:`RecordPack` (the provider), :class:`TableOracle` and :func:`judge_tables` (the oracle
on :mod:`effectbench.changes`), :class:`HttpEnv`, :class:`Action` and :class:`RestReadback`
(the agent's actions and the product's readback), :class:`RecordService` and :class:`Route`
(routes and pages on the episode service), :class:`FrontEnds`, :class:`ApiFrontEnd` and
:class:`WebFrontEnd` (the front-end registry), :class:`FaultCatalogue` and :mod:`faults`
(fault injection), :class:`AuditPlan`, :func:`run_audit` and :class:`Attestation` (the audit
harness), :mod:`draws` (the generic pieces a template's draw is composed of: names,
identifiers, dates, a task's scene and the template grid), :mod:`generate` with
:class:`Template`, :class:`Draw`, :func:`distinct_key`, :func:`sequestered_seed` and
:class:`GenerationError` (task definitions drawn from templates and a seed),
:class:`Catalogue`, :class:`GeneratedCatalogue`, :class:`CatalogueVariant` and
:func:`situation_template` (a pack's generated splits and its provider's part, derived from one
declaration), :class:`InstanceMark` and :func:`marked` (what a
fresh instance's payload carries of its seed), and :mod:`pages`, :mod:`pixels` and
:mod:`sqlite` (web pages in a fixed frame, the pixel bot, an SQLite record).
"""

from __future__ import annotations

from effectbench.baselines import EffectVerifiedAll, baseline_names, get_baseline
from effectbench.changes import AllowedChange, ChangeSet, RowChange, Table, allowed_by_contract
from effectbench.computer import ComputerEnv, Display
from effectbench.effects import Effect, EffectKind, Param, contract_hash
from effectbench.episode_http import (
    Channel,
    EpisodeHandler,
    EpisodeService,
    Page,
    RecordService,
    Reply,
    Request,
    Route,
    default_read_handler,
)
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
from effectbench.kit import draws, faults, forms, generate, pages, pixels, sqlite
from effectbench.kit.audit import (
    ATTACKS,
    POSITIVE,
    SHADOW,
    Attestation,
    AuditHandoff,
    AuditPlan,
    AuditResult,
    Db,
    Write,
    attacks,
    iter_tasks,
    run_audit,
)
from effectbench.kit.catalogue import (
    Catalogue,
    CatalogueVariant,
    GeneratedCatalogue,
    InstanceMark,
    marked,
    situation_template,
)
from effectbench.kit.faults import FaultCatalogue
from effectbench.kit.frontends import ApiFrontEnd, FrontEnds, WebFrontEnd
from effectbench.kit.generate import (
    Draw,
    GenerationError,
    Template,
    distinct_key,
    sequestered_seed,
)
from effectbench.kit.http import Action, HttpEnv, RestReadback, ServiceClient, screen_of
from effectbench.kit.provider import CatalogueTask, Record, RecordPack, TaskDefinition
from effectbench.kit.tables import Reading, TableOracle, judge_tables
from effectbench.manifest import SEQUESTERED, fingerprint, manifest_of
from effectbench.packs import ENTRY_POINT_GROUP, get_pack, register
from effectbench.reachability import ANY_STATE, Reachable
from effectbench.run.runner import RunResult, evaluate
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
    ClustersTasks,
    DeclaresChanges,
    DeclaresInitialState,
    DescribesActions,
    DrawsInstances,
    EnvHandle,
    Episode,
    ExplainsAbsentSplit,
    HandsOffToWorkers,
    Look,
    LooksBeforeWrite,
    NotApplicable,
    OffersChangeSet,
    OffersRedTeam,
    OffersSubstrates,
    Oracle,
    OwnBaselines,
    ProductReading,
    ProductVerifier,
    ReadsAllSurfaces,
    ReadsSurfaces,
    Reproducible,
    Screen,
    ScriptedPack,
    StatesMechanism,
    SystemUnderTest,
    WorkerHandoff,
)

__all__ = [
    "ATTACKS",
    "POSITIVE",
    "SHADOW",
    "CatalogueTask",
    "Action",
    "ApiFrontEnd",
    "Attestation",
    "AuditHandoff",
    "AuditPlan",
    "AuditResult",
    "Db",
    "Catalogue",
    "CatalogueVariant",
    "Draw",
    "FaultCatalogue",
    "GeneratedCatalogue",
    "GenerationError",
    "InstanceMark",
    "FrontEnds",
    "HttpEnv",
    "Page",
    "Reading",
    "Record",
    "RecordPack",
    "RecordService",
    "Request",
    "RestReadback",
    "Route",
    "ServiceClient",
    "TableOracle",
    "TaskDefinition",
    "Template",
    "WebFrontEnd",
    "Write",
    "attacks",
    "default_read_handler",
    "distinct_key",
    "draws",
    "faults",
    "generate",
    "marked",
    "sequestered_seed",
    "situation_template",
    "iter_tasks",
    "judge_tables",
    "forms",
    "pages",
    "pixels",
    "run_audit",
    "screen_of",
    "sqlite",
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
    "ClustersTasks",
    "DrawsInstances",
    "ExplainsAbsentSplit",
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
    "Look",
    "LooksBeforeWrite",
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
    "ReadsSurfaces",
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
