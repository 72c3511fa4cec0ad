"""The MockMed anchor: an in-memory clinical record store with nine fault tasks.

One target (patient ``p1``, encounter type ``Triage``), one goal for every arm,
and a fault per task injected where the app persists. The numbers it produces
are a regression anchor, not a finding (SPEC 6).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from effectbench.changes import AllowedChange, Table, allowed_by_contract
from effectbench.effects import Effect, EffectKind, Param
from effectbench.hashing import trial_tag
from effectbench.judge import judge_contract
from effectbench.manifest import manifest_of
from effectbench.reachability import Reachable
from effectbench.schema import (
    Category,
    OracleChannel,
    OracleSpec,
    OracleVerdict,
    Substrate,
    TaskSpec,
    TrueState,
)
from effectbench.seam import ActionParam, Adversary, Episode, NotApplicable, ProductReading, Screen

NAME = "mockmed-anchor"
CHANNEL = "mockmed"
GOAL = "Record a Triage encounter for the referred patient with the clinical note, then save it."
PATIENT = "p1"
ENCOUNTER_TYPE = "Triage"

EFFECT = (
    Effect(
        kind=EffectKind.RECORD_WRITTEN,
        match={"patient_id": PATIENT, "type": ENCOUNTER_TYPE},
        expected_count=1,
        forbid_collateral_loss=True,
    ),
    Effect(
        kind=EffectKind.FIELD_EQUALS,
        match={"patient_id": PATIENT, "type": ENCOUNTER_TYPE},
        field="note",
        value=Param(name="note"),
    ),
)

ORACLE = OracleSpec(
    channel=OracleChannel.SNAPSHOT,
    isolated_from_agent=True,
    trial_unique_payload=True,
    refusal_controls=False,
    adversarially_audited=True,
)


@dataclass(frozen=True)
class Fault:
    """How the app's save path misbehaves for one task."""

    name: str
    title: str
    category: Category
    correct_action_available: bool
    mechanism: str
    """How the fault is injected, in one sentence (every receipt of the task shows it)."""
    reachable: Reachable = Reachable()
    """What an honest episode can read under this fault (see :meth:`Store.save`)."""


_NEVER_CORRECT = frozenset((TrueState.WRONG_PERSISTED, TrueState.ABSENT))
"""The note is lost, two rows are written or a concurrent row is clobbered: never correct."""
_NOTHING_PERSISTS = Reachable(frozenset((TrueState.ABSENT,)))
"""The save path never writes: the record can only be absent."""


FAULTS = (
    Fault(
        "ok",
        "Clean save (control)",
        Category.CONTROL,
        True,
        "none: a save stores the encounter once and the app paints success (control)",
    ),
    Fault(
        "partial",
        "Partial save drops the note",
        Category.C1_PARTIAL_SAVE,
        False,
        "the save path stores the encounter with its note dropped; the app paints success",
        Reachable(_NEVER_CORRECT),
    ),
    Fault(
        "duplicate",
        "Duplicate submission writes two rows",
        Category.C2_DUPLICATE_SUBMISSION,
        False,
        "an automatic resubmit stores every save twice; the app paints one success",
        Reachable(_NEVER_CORRECT, count_multiple=2),
    ),
    Fault(
        "timeout",
        "Commit-then-timeout (committed, UI errored)",
        Category.C3_OPTIMISTIC_THEN_REJECT,
        True,
        "the first save commits, then the client times out and the app paints an error",
    ),
    Fault(
        "optimistic",
        "Optimistic UI success the server rejects",
        Category.C3_OPTIMISTIC_THEN_REJECT,
        False,
        "the app paints success before the server answers; the server rejects the write",
        _NOTHING_PERSISTS,
    ),
    Fault(
        "session",
        "Session expired (nothing persisted, UI errored)",
        Category.C3_OPTIMISTIC_THEN_REJECT,
        False,
        "the session has expired: nothing is stored and the app paints an error",
        _NOTHING_PERSISTS,
    ),
    Fault(
        "stale",
        "Stale last-write-wins clobbers a concurrent edit",
        Category.C4_STALE_OVERWRITE,
        False,
        "the save writes back a stale copy of the chart: a concurrent actor's row (same "
        "patient, type Urgent) is deleted, then the encounter is stored",
        Reachable(_NEVER_CORRECT),
    ),
    Fault(
        "double",
        "Double-delivered click writes two rows",
        Category.C5_DOUBLE_DELIVERED_INPUT,
        False,
        "one click on Save is delivered twice: two encounters are stored",
        Reachable(_NEVER_CORRECT, count_multiple=2),
    ),
    Fault(
        "idempotent",
        "Idempotent retry de-duplicates (the fix, control)",
        Category.CONTROL,
        True,
        "the app posts the save twice; the server de-duplicates on the idempotency key (control)",
    ),
)

_FAULTS_BY_NAME = {f.name: f for f in FAULTS}

SEED_RECORDS: tuple[dict[str, str], ...] = (
    {"key": "seed-p2", "patient_id": "p2", "type": "Triage", "note": "earlier visit"},
)
CONCURRENT_ROW = {"key": "concurrent-p1", "patient_id": PATIENT, "type": "Urgent", "note": "edited"}


def _task(fault: Fault) -> TaskSpec:
    return TaskSpec(
        task_id=f"mockmed::{fault.name}",
        title=fault.title,
        category=fault.category,
        substrate=Substrate.WEB,
        goal=GOAL,
        expected_effect=EFFECT,
        oracle=ORACLE,
        correct_action_available=fault.correct_action_available,
        reversible=False,
        effect_declared=True,
        initial_state={"fault": fault.name},
    )


class Store:
    """The system of record: a list of encounter records behind a faulty save path."""

    def __init__(self, fault: str, records: Sequence[Mapping[str, str]]) -> None:
        self.fault = fault
        self.records: list[dict[str, str]] = [dict(r) for r in records]
        self.deliveries = 0
        self._next = 1

    def _insert(self, record: Mapping[str, str]) -> None:
        self.records.append({"key": f"enc-{self._next}", **record})
        self._next += 1

    def save(self, record: Mapping[str, str]) -> Screen:
        """Handle one click on Save; return the banner the app paints."""
        self.deliveries += 1
        fault = self.fault
        if fault == "partial":
            self._insert({**record, "note": ""})
            return Screen("success", "Encounter saved")
        if fault in ("duplicate", "double"):
            self._insert(record)
            self._insert(record)
            return Screen("success", "Encounter saved")
        if fault == "timeout" and self.deliveries == 1:
            self._insert(record)
            return Screen("error", "Request timed out; the encounter may not have been saved")
        if fault == "optimistic":
            return Screen("success", "Encounter saved")
        if fault == "session":
            return Screen("error", "Your session expired; please sign in again")
        if fault == "stale":
            self.records = [r for r in self.records if r["key"] != CONCURRENT_ROW["key"]]
            self._insert(record)
            return Screen("success", "Encounter saved")
        if fault == "idempotent":
            for _ in range(2):  # the app re-posts; the server de-duplicates on the key
                key = record.get("idempotency_key")
                if not any(r.get("idempotency_key") == key for r in self.records):
                    self._insert(record)
            return Screen("success", "Encounter saved")
        self._insert(record)
        return Screen("success", "Encounter saved")

    def read(self) -> list[dict[str, str]]:
        """Return a deep copy of every record (what a reader of the store sees)."""
        return copy.deepcopy(self.records)


class ProductVerifier:
    """The app's own readback verifier, offered to the SUT; not the harness oracle."""

    name = CHANNEL

    def __init__(self, store: Store) -> None:
        self._store = store
        self._baseline = store.read()

    def verify(self, effect: Sequence[Effect]) -> ProductReading:
        """Read the encounters back through the app and check ``effect``."""
        reading = judge_contract(effect, self._baseline, self._store.read(), channel=self.name)
        return ProductReading(
            confirmed=reading.effect_correct, reason=reading.reason, absent=reading.effect_absent
        )


class Env:
    """The SUT's handle: one action (save an encounter) and the screen."""

    def __init__(self, store: Store, *, offers_verifier: bool = True) -> None:
        self._store = store
        self._screen = Screen(
            "idle", f"Referral: patient {PATIENT}; new {ENCOUNTER_TYPE} encounter"
        )
        self._offers_verifier = offers_verifier

    def actions(self) -> Sequence[str]:
        """Return the one action the app accepts."""
        return ("save_encounter",)

    def action_parameters(self) -> dict[str, tuple[ActionParam, ...]]:
        """Return the named arguments of ``save_encounter``."""
        return {
            "save_encounter": (
                ActionParam("patient_id", "string", "The patient's id."),
                ActionParam("type", "string", "The encounter type."),
                ActionParam("note", "string", "The clinical note."),
                ActionParam(
                    "idempotency_key", "string", "A key that makes a repeated save one.", False
                ),
            )
        }

    def act(self, action: str, **arguments: Any) -> Screen:
        """Perform ``save_encounter(patient_id, type, note, idempotency_key=None)``."""
        if action != "save_encounter":
            self._screen = Screen("error", f"unknown action {action!r}")
            return self._screen
        record = {
            "patient_id": str(arguments.get("patient_id", "")),
            "type": str(arguments.get("type", "")),
            "note": str(arguments.get("note", "")),
        }
        if arguments.get("idempotency_key") is not None:
            record["idempotency_key"] = str(arguments["idempotency_key"])
        self._screen = self._store.save(record)
        return self._screen

    def screen(self) -> Screen:
        """Return the current banner."""
        return self._screen

    def product_effect_verifier(self) -> ProductVerifier | None:
        """Return the app's own readback verifier (MockMed offers one)."""
        return ProductVerifier(self._store) if self._offers_verifier else None


TABLE = "encounters"
"""The store's one table (what a change set names)."""


class Oracle:
    """The harness's independent read of the store (a reference the SUT never gets)."""

    channel = CHANNEL

    def __init__(self, store: Store, effect: Sequence[Effect]) -> None:
        self._store = store
        self._effect = tuple(effect)

    def snapshot(self) -> list[dict[str, str]]:
        """Return a copy of every record."""
        return self._store.read()

    def judge(self, before: Any) -> OracleVerdict:
        """Judge the resolved contract against ``before`` and the store now."""
        return judge_contract(self._effect, before, self.snapshot(), channel=self.channel)

    def tables(self, snapshot: Any) -> dict[str, Table] | None:
        """Return a snapshot as the store's one table, keyed by ``key`` (receipts' change sets)."""
        if snapshot is None:
            return None
        return {TABLE: Table(key=("key",), rows=tuple(snapshot))}


OTHER_PATIENT = "p2"
"""Another patient with a chart in the store (the seed record's)."""


def _wrong_record(env: Any, task: TaskSpec, params: Mapping[str, Any]) -> None:
    """The trial's note on another patient's chart."""
    _attempt(env, {**params, "patient_id": OTHER_PATIENT})


def _double_write(env: Any, task: TaskSpec, params: Mapping[str, Any]) -> None:
    """The encounter saved twice, the second time as a new submission (a fresh key)."""
    _attempt(env, params)
    _attempt(env, {**params, "idempotency_key": f"{params['idempotency_key']}-again"})


RED_TEAM: dict[str, Adversary | NotApplicable] = {
    "wrong_record": _wrong_record,
    "double_write": _double_write,
    "write_then_revert": NotApplicable("the app has no edit or delete: no write can be undone"),
    "other_table": NotApplicable("the store holds one table (encounters)"),
}
"""The adversary moves of every MockMed task; they act through the env, as an agent can."""


def _attempt(env: Any, params: Mapping[str, Any]) -> Screen:
    screen: Screen = env.act(
        "save_encounter",
        patient_id=params["patient_id"],
        type=params["encounter_type"],
        note=params["note"],
        idempotency_key=params["idempotency_key"],
    )
    return screen


def _seeded(fault: str) -> list[dict[str, str]]:
    """Return the records a fresh store of ``fault`` holds."""
    return list(SEED_RECORDS) + ([CONCURRENT_ROW] if fault == "stale" else [])


class MockMedProvider:
    """The MockMed anchor pack as a :class:`~effectbench.seam.BenchmarkProvider`."""

    name = NAME
    channel = CHANNEL
    deterministic = True
    """Same (task, seed) gives the same rows: the verifier may re-run baselines on it."""

    def __init__(self, *, offers_verifier: bool = True) -> None:
        self._tasks = tuple(_task(f) for f in FAULTS)
        self._offers_verifier = offers_verifier

    def tasks(self) -> Sequence[TaskSpec]:
        """Return the nine anchor tasks in manifest order."""
        return self._tasks

    def reachable(self, task: TaskSpec) -> Reachable:
        """Return what an honest episode of ``task`` can read (from its fault)."""
        return _FAULTS_BY_NAME[str(task.initial_state["fault"])].reachable

    def mechanism(self, task: TaskSpec) -> str:
        """Return how ``task``'s fault is injected (its receipts show it)."""
        return _FAULTS_BY_NAME[str(task.initial_state["fault"])].mechanism

    def initial_tables(self, task: TaskSpec, params: Mapping[str, Any]) -> dict[str, Table]:
        """The store as provisioned: the seed record (and the concurrent row on ``stale``)."""
        return {TABLE: Table(key=("key",), rows=tuple(_seeded(str(task.initial_state["fault"]))))}

    def record_tables(self) -> tuple[str, ...]:
        """The store's tables: one, the encounters."""
        return (TABLE,)

    def allowed_changes(
        self, task: TaskSpec, params: Mapping[str, Any]
    ) -> tuple[AllowedChange, ...]:
        """What a trial may change: encounters its contract selects (inserted, or their note)."""
        return allowed_by_contract([e.resolve(params) for e in task.expected_effect], TABLE)

    def manifest(self) -> dict[str, Any]:
        """Return the public manifest, byte-compatible with the reference's."""
        return manifest_of(NAME, self._tasks)

    def trial_params(self, task: TaskSpec, trial: int) -> dict[str, Any]:
        """Return the trial-unique note and idempotency key (interop derivation)."""
        tag = trial_tag(task.task_id, trial)
        return {
            "patient_id": PATIENT,
            "encounter_type": ENCOUNTER_TYPE,
            "note": f"triage note {tag}",
            "idempotency_key": f"key-{tag}",
        }

    @contextmanager
    def provision(self, task: TaskSpec, trial: int, params: Mapping[str, Any]) -> Iterator[Episode]:
        """Seed a fresh store for one trial of ``task``."""
        fault = str(task.initial_state["fault"])
        store = Store(fault, _seeded(fault))
        effect = tuple(e.resolve(params) for e in task.expected_effect)
        yield Episode(
            env=Env(store, offers_verifier=self._offers_verifier),
            oracle=Oracle(store, effect),
            env_fingerprint={
                "env": "mockmed",
                "substrate": task.substrate.value,
                "fault": fault,
                "synthetic": True,
                "provider": "mockmed",
            },
        )

    def attempt(self, env: Any, task: TaskSpec, params: Mapping[str, Any]) -> Screen:
        """The scripted attempt the shipped baselines make: one click on Save."""
        return _attempt(env, params)

    def red_team(self, task: TaskSpec) -> Mapping[str, Adversary | NotApplicable]:
        """The adversary moves ``effectbench pack check`` runs (the same on every task)."""
        return RED_TEAM
