"""The SPEC v1 vocabulary: enums and the records that cross module boundaries.

Field names are the interop names of the reference implementation, so an
episode row written by it loads here and re-serialises byte for byte.
Everything here is data; the rules live in :mod:`effectbench.judge`,
:mod:`effectbench.classify` and :mod:`effectbench.metrics`.

:class:`EpisodeRecord` is the one contract of an episode row: its fields, their
types and ranges, which may be left out, and that no other field is allowed.
A row read from JSON is valid exactly when :meth:`EpisodeRecord.from_json`
accepts it; the verifier's row table (``verifier/rowschema.py``) is derived
from this model, and a property-based test holds the two to the same verdicts.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PrivateAttr

from effectbench.effects import Effect, EffectKind


def is_iso_time(value: str) -> bool:
    """Return whether ``value`` is empty or an ISO 8601 time (``datetime.fromisoformat``)."""
    if not value:
        return True
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def iso_time(value: str) -> str:
    """Return ``value`` if :func:`is_iso_time`, else raise ``ValueError`` (a field validator)."""
    if not is_iso_time(value):
        raise ValueError("must be an ISO 8601 time string (or empty)")
    return value


Count = Annotated[int, Field(ge=0)]
"""A whole number >= 0 (a trial, a count of records or tokens)."""
Amount = Annotated[float, Field(ge=0, allow_inf_nan=False)]
"""A finite number >= 0 (dollars, seconds); an integer is accepted."""
IsoTime = Annotated[str, AfterValidator(iso_time)]
"""An ISO 8601 time string, or empty when unknown."""


class Substrate(StrEnum):
    """Where the system under test acts."""

    API = "api"
    """The agent calls the application's own actions; no screen (SPEC 1.1)."""
    WEB = "web"
    DESKTOP = "desktop"
    REMOTE_DISPLAY = "remote_display"

    @property
    def is_screen(self) -> bool:
        """Whether the agent perceives this substrate as a screen (every one but ``api``)."""
        return self is not Substrate.API

    def variant_id(self, base: str, primary: Substrate | None = None) -> str:
        """Return the id of task ``base``'s variant on this substrate: ``base`` itself on the
        pack's ``primary`` substrate (default ``api``), else ``base@substrate``."""
        return base if self is (primary or Substrate.API) else f"{base}@{self.value}"

    @staticmethod
    def base_of(task_id: str) -> str:
        """Return the task a variant id names, without its ``@substrate`` suffix."""
        return task_id.split("@", 1)[0]


class Category(StrEnum):
    """The divergence category: how a green screen hides a wrong record (SPEC 2)."""

    C1_PARTIAL_SAVE = "C1_partial_save"
    C2_DUPLICATE_SUBMISSION = "C2_duplicate_submission"
    C3_OPTIMISTIC_THEN_REJECT = "C3_optimistic_then_reject"
    C4_STALE_OVERWRITE = "C4_stale_overwrite"
    C5_DOUBLE_DELIVERED_INPUT = "C5_double_delivered_input"
    C6_WRONG_RECORD_HOMONYM = "C6_wrong_record_homonym"
    C7_SILENT_NOOP_WRONG_TARGET = "C7_silent_noop_wrong_target"
    CONTROL = "control"


class Outcome(StrEnum):
    """The one label each scored episode gets (SPEC 3)."""

    SUCCESS = "success"
    SAFE_HALT = "safe_halt"
    OVER_HALT = "over_halt"
    SILENT_WRONG_EFFECT = "silent_wrong_effect"
    FALSE_ABORT = "false_abort"
    WRONG_ACTION = "wrong_action"


class SwerVariant(StrEnum):
    """Which harm a silent wrong effect is; ``none`` for every other outcome."""

    WRONG_WRITE = "wrong_write"
    PHANTOM = "phantom"
    NONE = "none"


class TrueState(StrEnum):
    """The oracle's reading of the system of record, reduced to one state."""

    CORRECT = "correct"
    WRONG_PERSISTED = "wrong_persisted"
    ABSENT = "absent"
    UNREADABLE = "unreadable"


class Verdict(StrEnum):
    """What the independent oracle concluded about the declared effect."""

    CONFIRMED = "confirmed"
    REFUTED = "refuted"
    INDETERMINATE = "indeterminate"


class OracleChannel(StrEnum):
    """How a task's oracle reads the system of record."""

    SNAPSHOT = "snapshot"
    SQL_READONLY = "sql_readonly"
    REST = "rest"


class DropReason(StrEnum):
    """Why a (task, trial) has no scored row; every dropped pair names one."""

    ORACLE_UNREADABLE = "oracle_unreadable"
    """The oracle could not read the system of record (SPEC 3: never guessed)."""
    INFRASTRUCTURE = "infrastructure"
    """The benchmark's harness or its infrastructure failed (service, browser, display, worker)."""
    AGENT_ERROR = "agent_error"
    """The harness around the agent failed (a model API outage, the agent's own crash, a client
    that left before reporting): the submitter's failure, never the agent's halt."""
    UNKNOWN = "unknown"
    """Imported from a document that dropped the pair without saying why."""


class Split(StrEnum):
    """Which part of a pack a task belongs to; ``test`` is sequestered."""

    DEV = "dev"
    TEST = "test"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class OracleSpec(_Frozen):
    """How a task's oracle reads the record, with its non-gameability attestations."""

    channel: OracleChannel
    isolated_from_agent: bool
    """The oracle's read path is separate from the agent's action channel."""
    trial_unique_payload: bool
    """Each trial writes a value no other trial writes."""
    refusal_controls: bool
    """The task is (or ships) a control where any write is wrong."""
    adversarially_audited: bool
    """A red-team pass failed to satisfy the oracle without the true effect."""


class TaskSpec(_Frozen):
    """One agent-agnostic task: the goal, the declared effect and how it is judged."""

    task_id: str
    title: str
    category: Category
    substrate: Substrate
    goal: str
    expected_effect: tuple[Effect, ...]
    """The declared effect contract; the first entry is the primary effect."""
    oracle: OracleSpec
    correct_action_available: bool
    split: Split = Split.DEV
    reversible: bool = False
    effect_declared: bool = True
    initial_state: dict[str, Any] = Field(default_factory=dict)
    """Provider-specific description of the state seeded before each trial."""


class AgentReport(_Frozen):
    """What the system under test says happened; never trusted for success."""

    reported_success: bool
    halted: bool
    message: str = ""


class OracleVerdict(_Frozen):
    """The independent oracle's reading, as stored in an episode row."""

    verdict: Verdict
    kind: EffectKind
    channel: str
    reason: str
    observed_count: Count | None
    expected_count: Count | None
    before_reachable: bool
    effect_correct: bool
    effect_wrong_persisted: bool
    effect_absent: bool


class ModelCall(_Frozen):
    """One model call the system under test made (for cost and latency)."""

    index: Count
    model: str
    input_tokens: Count
    output_tokens: Count
    cost_usd: Amount
    latency_s: Amount
    note: str = ""


COST_REPORTED_KEY = "cost_reported_by"
"""The ``env_fingerprint`` entry of a row whose model calls (and so its cost) the agent's
own harness reported (an MCP ``report``), not a harness of ours that metered them."""
COST_REPORTED_VALUE = "submitter"
HARNESS_KEY = "harness"
"""The ``env_fingerprint`` entry of a row an MCP episode recorded: the client that drove the
episode, ``{"name": ..., "version": ...}`` as its ``initialize`` named it."""
"""Its value: the submitter's word, as the bundle's signature vouches for it."""


class EpisodeRecord(_Frozen):
    """One scored (task x arm x trial) episode: the row every metric aggregates.

    Exactly the interop fields of SPEC v1 plus optional fields of ours (each
    with a default, so a row of the reference implementation is valid); an
    unknown field is refused, here and by the verifier alike. A field added
    later must be optional, and a newer SPEC minor is refused by the verifier
    until it is updated, so no valid row ever carries a field we do not know.
    """

    episode_id: str
    task_id: str
    arm: str
    trial: Count
    substrate: Substrate
    category: Category
    seed: int | None
    expected_effect_hash: str
    correct_action_available: bool
    agent: AgentReport
    oracle: OracleVerdict
    outcome: Outcome
    swer_variant: SwerVariant
    reason: str
    model_calls: list[ModelCall] = Field(default_factory=list)
    cost_usd: Amount = 0.0
    latency_s: Amount = 0.0
    env_fingerprint: dict[str, Any] = Field(default_factory=dict)
    started_at: IsoTime = ""
    finished_at: IsoTime = ""
    _evidence: Any = PrivateAttr(default=None)
    """The episode's receipt, when the harness wrote one: it travels with the row (to a
    worker's driver, a journal, a bundle) and is never part of it
    (:mod:`effectbench.receipts`)."""

    @classmethod
    def from_json(cls, data: bytes | str) -> EpisodeRecord:
        """Parse one row from JSON text, strictly: the one definition of a valid row.

        Strict means JSON types as written: ``1`` is not ``true``, ``"1"`` is not
        a number, ``1.0`` is not a count. Raises :class:`pydantic.ValidationError`.
        """
        return cls.model_validate_json(data, strict=True)

    def to_row(self) -> dict[str, Any]:
        """Return the row as a JSON-ready dict in interop field order."""
        return self.model_dump(mode="json")
