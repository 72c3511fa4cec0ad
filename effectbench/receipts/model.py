"""The receipt of one scored episode: its JSON contract (one line of ``receipts.jsonl``).

A receipt is the evidence behind one episode row, written by the harness: the task and
how its divergence is injected; what the agent did, in order, with times; the key frames
on a screen substrate (first screen, the screen when the agent reported, the last one;
content-addressed files in the bundle's ``frames/``); the agent's report; the oracle's
reading and, per declared effect, what was expected against what the record holds; the
record's change set over every table with each change outside the task's allowance
marked collateral; and the truth table's inputs with the outcome.

:class:`Receipt` is the one definition of a valid receipt: the verifier parses every
line with :meth:`Receipt.from_json` (strict JSON types, no unknown field), exactly as
rows are parsed with :class:`~effectbench.schema.EpisodeRecord`.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from effectbench.effects import EffectKind
from effectbench.schema import (
    AgentReport,
    Category,
    Count,
    OracleVerdict,
    Outcome,
    Substrate,
    SwerVariant,
    TrueState,
    Verdict,
)

RECEIPT_VERSION: Literal[1] = 1
"""The ``receipt_version`` this module writes and reads."""

FRAME_NAME = re.compile(r"[0-9a-f]{64}\.(webp|png)")
"""A frame's file name: the sha256 of its bytes, then its format (nothing else: no path)."""
FRAME_ROLES = ("first", "report", "last")
"""The key frames every receipt on a screen substrate holds, in time order: the first
screen (before the agent acted), the screen when it reported, and the last one (after the
oracle read the record)."""
FrameRole = Literal["first", "report", "last"]

Scalar = str | int | float | bool | None
"""A value of the record as a receipt holds it (a plain JSON scalar)."""
ActionKind = Literal[
    "api",
    "readback",
    "click",
    "move",
    "drag",
    "mouse_down",
    "mouse_up",
    "type",
    "key",
    "key_down",
    "key_up",
    "scroll",
    "wait",
    "a11y_action",
    "a11y_set_text",
]
"""What an agent can do through its env: an API action, a read-back through the product's
own verifier, a computer action (pointer, keys, wheel, waiting) or an accessibility action."""
ACTION_KINDS: tuple[str, ...] = get_args(ActionKind)
Seconds = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class TaskInfo(_Model):
    """The task the episode ran and the divergence injected into it."""

    title: str
    category: Category
    """The divergence category (SPEC 2)."""
    substrate: Substrate
    correct_action_available: bool
    mechanism: str = ""
    """How the pack injects the divergence (its own words); empty when the pack states none."""


class Shown(_Model):
    """What an API action's screen said."""

    status: str
    banner: str


class Action(_Model):
    """One thing the agent did through its env, at ``t`` seconds after it was handed the env."""

    t: Seconds
    kind: ActionKind
    name: str | None = None
    """An API action's name, an accessibility action's name, a read-back verifier's name."""
    arguments: dict[str, Scalar] | None = None
    """An API action's arguments (plain values)."""
    shown: Shown | None = None
    """What an API action's screen said after it."""
    x: int | None = None
    y: int | None = None
    button: str | None = None
    count: int | None = None
    path: list[tuple[int, int]] | None = None
    """A drag's points."""
    dx: int | None = None
    dy: int | None = None
    text: str | None = None
    """Typed text (a11y_set_text: the text set)."""
    keys: str | None = None
    """A key combination (xdotool names)."""
    node: str | None = None
    """An accessibility node's id."""
    seconds: float | None = None
    """How long a wait waited."""
    error: str | None = None
    """Why the harness refused the action (it then did nothing)."""


class FrameRef(_Model):
    """One key frame: a file of the bundle's ``frames/`` and when it was taken."""

    name: str
    """``<sha256 of the file>.webp`` (or ``.png``): content-addressed, stored once per bundle."""
    role: FrameRole
    t: Seconds
    """Seconds after the agent was handed the env (0 for the first screen)."""


class EffectEvidence(_Model):
    """What the judge read for one effect (:class:`effectbench.judge.Evidence`)."""

    matched: Count
    """Records the selector picks (new ones only, when the effect counts new records only)."""
    values: list[Scalar] = Field(default_factory=list)
    """``field_equals``: the field's value in each picked record (the actual value)."""
    lost: Count = 0
    """Records present before that vanished (``forbid_collateral_loss``)."""


class EffectReading(_Model):
    """One declared effect: what was expected, what the record holds, and the judge's verdict."""

    index: Count
    """The effect's position in the contract (0: the primary effect)."""
    kind: EffectKind
    table: str | None = None
    """The table it reads (None for a pack whose effects name none)."""
    match: dict[str, str]
    """Its selector, resolved for the trial."""
    field: str | None = None
    """The read-back's field (``field_equals``)."""
    expected: str | int
    """``record_written``: how many records; ``field_equals``: the value, as a string."""
    idempotency_key: str | None = None
    count_new_only: bool = False
    forbid_collateral_loss: bool = False
    evidence: EffectEvidence
    verdict: Verdict
    """What :func:`effectbench.judge.decide` gives for the evidence."""
    state: TrueState
    """The verdict reduced (correct, wrong_persisted or absent)."""


class Change(_Model):
    """One changed row of one table."""

    table: str
    change: Literal["inserted", "updated", "deleted"]
    key: dict[str, Scalar]
    """The row's key columns."""
    values: dict[str, Scalar]
    """The row after an insert or update, before a delete."""
    fields: dict[str, tuple[Scalar, Scalar]] | None = None
    """An update's changed fields: column -> [old, new]."""
    collateral: bool
    """Outside what the task allows: a collateral write."""


class Changes(_Model):
    """The record's change set over every table the oracle read."""

    tables: list[str]
    """Every table read, sorted."""
    untouched: list[str]
    """The tables no change touched, sorted: what stayed as it was."""
    rows: list[Change]
    """The changed rows, by table, kind, key."""


class TruthRow(_Model):
    """The truth table's inputs (SPEC 3) and the label they give."""

    reported_success: bool
    true_state: TrueState
    correct_action_available: bool
    outcome: Outcome
    swer_variant: SwerVariant


class Receipt(_Model):
    """The receipt of one scored episode (one line of a bundle's ``receipts.jsonl``)."""

    receipt_version: Literal[1] = RECEIPT_VERSION
    episode_id: str
    task_id: str
    trial: Count
    seed: int | None = None
    task: TaskInfo
    actions: list[Action]
    """Everything the agent did through its env, in order."""
    observations: Count = 0
    """How often the agent looked (screenshots, screens, accessibility trees) besides acting."""
    frames: list[FrameRef] = Field(default_factory=list)
    """Key frames (screen substrates only), in time order."""
    claim: AgentReport
    """The agent's report, quoted."""
    reading: OracleVerdict
    """The oracle's reading (the row's ``oracle``)."""
    effects: list[EffectReading] | None = None
    """Per declared effect, expected against actual (None: the oracle offers no tables)."""
    changes: Changes | None = None
    """The change set (None: the oracle offers no tables)."""
    collateral: bool | None = None
    """Any change outside the task's allowance (None: no change set to tell)."""
    truth: TruthRow
    note: str = ""
    """What the harness adds (why something is missing)."""

    @classmethod
    def from_json(cls, data: bytes | str) -> Receipt:
        """Parse one receipt from JSON text, strictly (raises :class:`pydantic.ValidationError`)."""
        return cls.model_validate_json(data, strict=True)

    def to_json(self) -> dict[str, Any]:
        """Return the receipt as JSON-ready data (an action's unset fields left out)."""
        data = self.model_dump(mode="json")
        data["actions"] = [a.model_dump(mode="json", exclude_none=True) for a in self.actions]
        return data
