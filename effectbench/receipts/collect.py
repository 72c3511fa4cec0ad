"""Collecting one episode's receipt while it runs: the small hook every harness path calls.

A :class:`Recording` is made right after the oracle's before-snapshot; the system under
test is handed :attr:`Recording.env` (the episode's env, wrapped so that every action is
logged); :meth:`Recording.reported` takes the frame of the moment the agent reported;
:meth:`Recording.ended` the last frame and the record's change set (read once more right
after the oracle judged); :meth:`Recording.attach` writes the receipt for the scored row
and attaches it (a dropped episode has none). The runner, the MCP episode server (through
the runner) and the inspect integration call these four and nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from effectbench.changes import AllowedChange, Table, allowed_by_contract, change_set
from effectbench.receipts.derive import changes_of, effect_readings, truth_of
from effectbench.receipts.model import (
    Changes,
    EffectReading,
    FrameRef,
    FrameRole,
    Receipt,
    TaskInfo,
)
from effectbench.receipts.recorder import ActionLog, frame, is_screen, recorded
from effectbench.schema import EpisodeRecord, TaskSpec
from effectbench.seam import (
    BenchmarkProvider,
    DeclaresChanges,
    Episode,
    OffersChangeSet,
    Oracle,
    StatesMechanism,
)

T = TypeVar("T")


@dataclass(frozen=True)
class Evidence:
    """A receipt and the bytes of its key frames, as they travel with the row."""

    receipt: Receipt
    frames: Mapping[str, bytes] = field(default_factory=dict)
    """Frame name -> its bytes (``frames/NAME`` in a bundle)."""


def evidence_of(row: Any) -> Evidence | None:
    """Return the evidence attached to a row (None when the row carries no receipt)."""
    found = getattr(row, "_evidence", None) if isinstance(row, EpisodeRecord) else None
    return found if isinstance(found, Evidence) else None


def with_evidence(row: EpisodeRecord, evidence: Evidence | None) -> EpisodeRecord:
    """Attach ``evidence`` to ``row`` (it travels with the row, never inside it) and return it."""
    row._evidence = evidence
    return row


def allowances(
    provider: BenchmarkProvider, task: TaskSpec, params: Mapping[str, Any], tables: list[str]
) -> tuple[AllowedChange, ...] | None:
    """Return what a trial may change: the pack's declaration, else its contract's (None when
    neither can say, an effect naming no table in a record of several)."""
    if isinstance(provider, DeclaresChanges):
        return tuple(provider.allowed_changes(task, params))
    single = tables[0] if len(tables) == 1 else None
    try:
        return allowed_by_contract([e.resolve(params) for e in task.expected_effect], single)
    except ValueError:
        return None


class Recording:
    """One episode's receipt in the making (see the module's docstring for the order)."""

    def __init__(
        self,
        provider: BenchmarkProvider,
        task: TaskSpec,
        params: Mapping[str, Any],
        episode: Episode,
    ) -> None:
        self._provider = provider
        self._task = task
        self._params = dict(params)
        self._inner = episode.env
        self.log = ActionLog()
        self.env: Any = recorded(episode.env, self.log)
        """What the system under test is handed instead of the episode's env."""
        self._frames: dict[str, bytes] = {}
        self._refs: list[FrameRef] = []
        self._reported = False
        self._effects: list[EffectReading] | None = None
        self._changes: Changes | None = None
        self._collateral: bool | None = None
        self._notes: list[str] = []
        self._last_png = b""
        self._take("first", 0.0)

    @classmethod
    def start(
        cls,
        provider: BenchmarkProvider,
        task: TaskSpec,
        params: Mapping[str, Any],
        episode: Episode,
    ) -> Recording:
        """Start recording an episode (its first frame is taken now, before the agent acts)."""
        return cls(provider, task, params, episode)

    def _take(self, role: FrameRole, t: float) -> None:
        if not is_screen(self._inner):
            return
        png = self._inner.screenshot()
        if png == self._last_png and self._refs:  # the screen did not change: not encoded again
            name = self._refs[-1].name
        else:
            name, data = frame(png)
            self._frames.setdefault(name, data)
            self._last_png = png
        self._refs.append(FrameRef(name=name, role=role, t=t))

    def reported(self) -> None:
        """The agent reported (its run returned): take the frame it left on the screen."""
        if not self._reported:
            self._reported = True
            self._take("report", self.log.since_start())

    def ended(self, oracle: Oracle, before: Any) -> None:
        """The oracle judged: take the last frame and read the record's change set."""
        self.reported()
        self._take("last", self.log.since_start())
        if not isinstance(oracle, OffersChangeSet):
            self._notes.append("the pack's oracle offers no tables: no change set")
            return
        old = oracle.tables(before)
        new = oracle.tables(oracle.snapshot())  # an oracle: it also reads (snapshot)
        if old is None or new is None:
            self._notes.append("the record could not be read again for the change set")
            return
        self._read(old, new)

    def _read(self, old: Mapping[str, Table], new: Mapping[str, Table]) -> None:
        changes = change_set(old, new)
        resolved = [e.resolve(self._params) for e in self._task.expected_effect]
        self._effects = effect_readings(resolved, old, new)
        allowed = allowances(self._provider, self._task, self._params, list(changes.tables))
        self._changes = changes_of(changes, allowed)
        if allowed is None:
            self._notes.append("the pack states no allowed change set: nothing marked collateral")
        else:
            self._collateral = any(c.collateral for c in self._changes.rows)

    def receipt(self, row: EpisodeRecord) -> Evidence:
        """Return the receipt of the scored ``row`` and its frames."""
        task = self._task
        mechanism = (
            self._provider.mechanism(task) if isinstance(self._provider, StatesMechanism) else ""
        )
        receipt = Receipt(
            episode_id=row.episode_id,
            task_id=row.task_id,
            trial=row.trial,
            seed=row.seed,
            task=TaskInfo(
                title=task.title,
                category=task.category,
                substrate=task.substrate,
                correct_action_available=task.correct_action_available,
                mechanism=mechanism,
            ),
            actions=list(self.log.actions),
            observations=self.log.observations,
            frames=list(self._refs),
            claim=row.agent,
            reading=row.oracle,
            effects=self._effects,
            changes=self._changes,
            collateral=self._collateral,
            truth=truth_of(row),
            note="; ".join(self._notes),
        )
        return Evidence(receipt, dict(self._frames))

    def attach(self, outcome: T) -> T:
        """Attach the receipt to a scored row and return it (a drop is returned as it is)."""
        if isinstance(outcome, EpisodeRecord):
            with_evidence(outcome, self.receipt(outcome))
        return outcome
