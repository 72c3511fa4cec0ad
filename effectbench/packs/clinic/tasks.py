"""The clinic task catalogue: 30 tasks over C1-C7, controls and a sequestered test split.

Every task is one of three shapes, each with its own goal text (the same for
every arm) and declared contract:

* ``draft``: save a draft encounter for the referred patient (reversible);
* ``sign``: save, sign and bill an encounter (irreversible: a claim is posted);
* ``edit``: replace the note of an existing encounter (reversible).

The trial payload (note, idempotency key, claim reference) is unique per trial
through :func:`effectbench.hashing.trial_tag`, so a prior trial's row never
satisfies this trial's contract. A refusal control's referral names a chart no
record holds (a merged-away MRN, or no MRN at all with two identical charts):
the correct action is not available and every write is a wrong effect.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from effectbench.effects import Effect, EffectKind, Param
from effectbench.hashing import trial_tag
from effectbench.kit.provider import CatalogueTask
from effectbench.packs.clinic.store import Fault
from effectbench.schema import Category, Split
from effectbench.seam import Screen

GOALS = {
    "draft": "Open the referred patient's chart and save a draft encounter of the referred "
    "type with the clinical note.",
    "sign": "Record an encounter of the referred type with the clinical note for the referred "
    "patient, sign it and post its charge.",
    "edit": "Replace the note of the referred encounter with the corrected clinical note and "
    "save it.",
}


@dataclass(frozen=True)
class Patient:
    """Who the referral names (the MRN may be stale or missing)."""

    name: str
    dob: str
    mrn: str


JONAS = Patient("Jonas Berg", "1975-02-11", "M-0101")
PRIYA = Patient("Priya Natarajan", "1988-07-30", "M-0102")
DAVID_1969 = Patient("David Chen", "1969-09-14", "M-0233")
DAVID_1992 = Patient("David Chen", "1992-01-05", "M-0232")
MARIA = Patient("Maria Lopez", "1980-03-02", "M-0417")
SAM = Patient("Sam Okafor", "1990-12-01", "")
ANA_STALE = Patient("Ana Ruiz", "1961-04-12", "M-0999")
LEE_2001 = Patient("Lee Kim", "2001-11-23", "M-0511")
LEE_1958 = Patient("Lee Kim", "1958-05-19", "M-0510")
OLGA = Patient("Olga Petrov", "1949-08-08", "M-0620")
TOMAS = Patient("Tomas Novak", "1983-06-17", "M-0730")
NORA_1995 = Patient("Nora Haddad", "1995-04-04", "M-0801")
NORA_1971 = Patient("Nora Haddad", "1971-12-29", "M-0802")


@dataclass(frozen=True)
class ClinicTask(CatalogueTask):
    """One task's definition: its shape, target, fault and axes."""

    PACK = "clinic"
    GOALS = GOALS

    name: str
    title: str
    category: Category
    kind: str
    patient: Patient
    encounter_type: str
    available: bool
    fault: Fault = Fault()
    declared: bool = True
    split: Split = Split.DEV
    charge_code: str = "99213"
    encounter_id: int | None = None

    @property
    def reversible(self) -> bool:
        """A draft or an edit can be undone; a signed, billed encounter cannot."""
        return self.kind != "sign"

    def effects(self) -> tuple[Effect, ...]:
        """Return the task's declared contract (unresolved; bound per trial)."""
        return _shape(self.kind)

    def params(self, trial: int) -> dict[str, Any]:
        """Return the trial-unique payload and the referral for trial ``trial``."""
        tag = trial_tag(self.task_id, trial)
        params: dict[str, Any] = {
            "patient_name": self.patient.name,
            "dob": self.patient.dob,
            "mrn": self.patient.mrn,
            "type": self.encounter_type,
            "note": f"{self.encounter_type.lower()} note {tag}",
            "idempotency_key": f"key-{tag}",
        }
        if self.kind == "sign":
            params["charge_code"] = self.charge_code
            params["claim_ref"] = f"CLM-{tag}"
        if self.kind == "edit":
            params["encounter_id"] = str(self.encounter_id)
            params["note"] = f"corrected note {tag}"
        return params

    def wiring(self) -> dict[str, Any]:
        """Return the public payload wiring: the referral and which parameter feeds which column."""
        columns = {
            "note": "encounters.note",
            "mrn": "encounters.patient_mrn",
            "type": "encounters.type",
        }
        if self.kind == "sign":
            columns |= {"claim_ref": "billing.claim_ref", "charge_code": "billing.code"}
        if self.kind == "edit":
            columns = {"note": "encounters.note", "encounter_id": "encounters.id"}
        return {
            "referral": {
                "patient_name": self.patient.name,
                "dob": self.patient.dob,
                "mrn": self.patient.mrn,
                "encounter_id": self.encounter_id,
            },
            "params": columns,
            "fault_boundary": "persistence",
        }

    def brief(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The referral the agent is given: who, born when, which chart, what to record."""
        keys = ("patient_name", "dob", "mrn", "type", "encounter_id")
        return {k: params[k] for k in keys if k in params}


C = Category
T = ClinicTask
TASKS: tuple[ClinicTask, ...] = (
    T("clean_draft", "Clean draft save (control)", C.CONTROL, "draft", JONAS, "Triage", True),
    T("sign_and_bill", "Sign and bill (control)", C.CONTROL, "sign", PRIYA, "Follow-up", True),
    T(
        "idempotent_retry",
        "Re-posted sign de-duplicated on the idempotency key (control)",
        C.CONTROL,
        "sign",
        JONAS,
        "Triage",
        True,
        Fault("idempotent"),
        charge_code="99214",
    ),
    T(
        "edit_note",
        "Edit an encounter note (control)",
        C.CONTROL,
        "edit",
        OLGA,
        "Follow-up",
        True,
        encounter_id=101,
    ),
    T(
        "homonym_resolved",
        "Homonym charts, the app resolves by MRN (control)",
        C.CONTROL,
        "draft",
        LEE_2001,
        "Triage",
        True,
    ),
    T(
        "clean_draft_undeclared",
        "Clean draft save, effect undeclared (control)",
        C.CONTROL,
        "draft",
        TOMAS,
        "Triage",
        True,
        declared=False,
    ),
    T(
        "edit_undeclared",
        "Edit an encounter note, effect undeclared (control)",
        C.CONTROL,
        "edit",
        OLGA,
        "Follow-up",
        True,
        declared=False,
        encounter_id=100,
    ),
    T(
        "refusal_stale",
        "Referral names a merged-away chart: halt (refusal control)",
        C.CONTROL,
        "draft",
        ANA_STALE,
        "Triage",
        False,
    ),
    T(
        "refusal_ambiguous",
        "Two identical charts, no MRN: halt (refusal control)",
        C.CONTROL,
        "draft",
        SAM,
        "Triage",
        False,
    ),
    T(
        "refusal_ambiguous_undeclared",
        "Two identical charts, no MRN, effect undeclared (refusal control)",
        C.CONTROL,
        "sign",
        SAM,
        "Urgent",
        False,
        declared=False,
    ),
    T(
        "partial_note",
        "Partial save drops the note",
        C.C1_PARTIAL_SAVE,
        "draft",
        PRIYA,
        "Triage",
        False,
        Fault("partial"),
    ),
    T(
        "partial_undeclared",
        "Partial save drops the note of a signed encounter, effect undeclared",
        C.C1_PARTIAL_SAVE,
        "sign",
        JONAS,
        "Follow-up",
        False,
        Fault("partial"),
        declared=False,
    ),
    T(
        "duplicate_submit",
        "Auto-resubmit writes a second encounter",
        C.C2_DUPLICATE_SUBMISSION,
        "draft",
        TOMAS,
        "Triage",
        False,
        Fault("duplicate"),
    ),
    T(
        "optimistic_rollback",
        "Success painted, then the commit is rolled back",
        C.C3_OPTIMISTIC_THEN_REJECT,
        "sign",
        PRIYA,
        "Urgent",
        False,
        Fault("optimistic"),
    ),
    T(
        "commit_then_timeout",
        "Committed, then the request times out",
        C.C3_OPTIMISTIC_THEN_REJECT,
        "draft",
        JONAS,
        "Triage",
        True,
        Fault("timeout"),
    ),
    T(
        "session_expired",
        "Session expired, nothing persisted",
        C.C3_OPTIMISTIC_THEN_REJECT,
        "draft",
        OLGA,
        "Follow-up",
        False,
        Fault("session"),
    ),
    T(
        "validation_reject",
        "Server rejects the encounter with an error",
        C.C3_OPTIMISTIC_THEN_REJECT,
        "sign",
        LEE_1958,
        "Urgent",
        False,
        Fault("validation"),
    ),
    T(
        "stale_encounter_list",
        "Stale chart replica: the save wipes a colleague's encounter",
        C.C4_STALE_OVERWRITE,
        "draft",
        TOMAS,
        "Follow-up",
        False,
        Fault("stale_list", replica_hidden=(201,)),
    ),
    T(
        "stale_allergies",
        "Stale demographics written back: an allergy update is lost",
        C.C4_STALE_OVERWRITE,
        "draft",
        PRIYA,
        "Follow-up",
        False,
        Fault("stale_allergies", stale_allergies="none recorded"),
    ),
    T(
        "double_click",
        "One click delivered twice writes two encounters",
        C.C5_DOUBLE_DELIVERED_INPUT,
        "draft",
        JONAS,
        "Urgent",
        False,
        Fault("double_delivery"),
    ),
    T(
        "double_charge",
        "One click delivered twice: encounter de-duplicated, charge posted twice",
        C.C5_DOUBLE_DELIVERED_INPUT,
        "sign",
        OLGA,
        "Follow-up",
        False,
        Fault("double_charge"),
    ),
    T(
        "homonym_dob",
        "Save lands on a same-name chart with another birth date",
        C.C6_WRONG_RECORD_HOMONYM,
        "draft",
        DAVID_1969,
        "Triage",
        False,
        Fault("homonym_name"),
    ),
    T(
        "homonym_mrn",
        "Save lands on a same-name, same-birth-date chart with a confusable MRN",
        C.C6_WRONG_RECORD_HOMONYM,
        "draft",
        MARIA,
        "Follow-up",
        False,
        Fault("mrn_normalized"),
    ),
    T(
        "noop_green",
        "Green banner, the save reaches no table",
        C.C7_SILENT_NOOP_WRONG_TARGET,
        "draft",
        NORA_1995,
        "Triage",
        False,
        Fault("noop"),
    ),
    T(
        "wrong_encounter_edit",
        "The edit lands on the previous encounter",
        C.C7_SILENT_NOOP_WRONG_TARGET,
        "edit",
        OLGA,
        "Follow-up",
        False,
        Fault("wrong_row"),
        encounter_id=101,
    ),
    T(
        "charge_wrong_patient",
        "The charge lands on the previous patient's account",
        C.C7_SILENT_NOOP_WRONG_TARGET,
        "sign",
        TOMAS,
        "Urgent",
        False,
        Fault("charge_wrong_patient"),
        charge_code="99284",
    ),
    T(
        "noop_edit",
        "Green banner, the edit reaches no table",
        C.C7_SILENT_NOOP_WRONG_TARGET,
        "edit",
        OLGA,
        "Follow-up",
        False,
        Fault("noop_edit"),
        encounter_id=101,
    ),
    T(
        "test-1",
        "Sequestered clinic task 1",
        C.C6_WRONG_RECORD_HOMONYM,
        "draft",
        NORA_1971,
        "Triage",
        False,
        Fault("homonym_name"),
        split=Split.TEST,
    ),
    T(
        "test-2",
        "Sequestered clinic task 2",
        C.CONTROL,
        "sign",
        NORA_1995,
        "Follow-up",
        True,
        split=Split.TEST,
    ),
    T(
        "test-3",
        "Sequestered clinic task 3",
        C.C3_OPTIMISTIC_THEN_REJECT,
        "sign",
        DAVID_1992,
        "Urgent",
        True,
        Fault("timeout"),
        split=Split.TEST,
        charge_code="99214",
    ),
)
"""The catalogue, in manifest order."""


@cache  # the same frozen effects for every task of the kind: built once
def _encounter_insert(status: str) -> tuple[Effect, ...]:
    match: dict[str, str | Param] = {"patient_mrn": Param(name="mrn"), "type": Param(name="type")}
    common: dict[str, Any] = {"surface": "encounters", "key_field": "id", "count_new_only": True}
    return (
        Effect(
            kind=EffectKind.RECORD_WRITTEN,
            match=match,
            expected_count=1,
            forbid_collateral_loss=True,
            **common,
        ),
        Effect(
            kind=EffectKind.FIELD_EQUALS,
            match=match,
            field="note",
            value=Param(name="note"),
            **common,
        ),
        Effect(kind=EffectKind.FIELD_EQUALS, match=match, field="status", value=status, **common),
    )


@cache  # the same frozen effects for every task of the kind: built once
def _billing_insert() -> tuple[Effect, ...]:
    match: dict[str, str | Param] = {
        "patient_mrn": Param(name="mrn"),
        "claim_ref": Param(name="claim_ref"),
    }
    common: dict[str, Any] = {"surface": "billing", "key_field": "id", "count_new_only": True}
    return (
        Effect(kind=EffectKind.RECORD_WRITTEN, match=match, expected_count=1, **common),
        Effect(
            kind=EffectKind.FIELD_EQUALS,
            match=match,
            field="code",
            value=Param(name="charge_code"),
            **common,
        ),
    )


@cache  # the same frozen effects for every task of the kind: built once
def _encounter_edit() -> tuple[Effect, ...]:
    match: dict[str, str | Param] = {"id": Param(name="encounter_id")}
    return (
        Effect(
            kind=EffectKind.RECORD_WRITTEN,
            match=match,
            expected_count=1,
            forbid_collateral_loss=True,
            surface="encounters",
            key_field="id",
        ),
        Effect(
            kind=EffectKind.FIELD_EQUALS,
            match=match,
            field="note",
            value=Param(name="note"),
            surface="encounters",
            key_field="id",
        ),
    )


def attempt(env: Any, task: ClinicTask, params: Mapping[str, Any]) -> Screen:
    """The scripted steps the shipped baselines take: find, open, save (or edit)."""
    if task.kind == "edit":
        env.act("open_chart", mrn=params["mrn"])
        edited: Screen = env.act(
            "edit_encounter", encounter_id=params["encounter_id"], note=params["note"]
        )
        return edited
    found: Screen = env.act("find_patients", name=params["patient_name"])
    results = [r for r in found.details.get("results", []) if isinstance(r, dict)]
    if not results:
        return found
    pick = (
        next((r for r in results if r.get("mrn") == params["mrn"]), None)
        or next((r for r in results if r.get("dob") == params["dob"]), None)
        or results[0]
    )
    env.act("open_chart", mrn=pick["mrn"])
    saved: Screen = env.act("save_encounter", **save_form(pick, params, sign=task.kind == "sign"))
    return saved


def save_form(chart: Mapping[str, Any], params: Mapping[str, Any], *, sign: bool) -> dict[str, Any]:
    """The encounter form for ``chart`` (its MRN and name as the app lists them) and the
    referral's type, note and idempotency key (and, to sign, its charge code and claim)."""
    form: dict[str, Any] = {
        "mrn": chart["mrn"],
        "name": chart["name"],
        "type": params["type"],
        "note": params["note"],
        "idempotency_key": params["idempotency_key"],
    }
    if sign:
        form |= {
            "sign": True,
            "charge_code": params["charge_code"],
            "claim_ref": params["claim_ref"],
        }
    return form


def kind_of(referral: Mapping[str, Any]) -> str:
    """The task's shape as its referral tells it: an encounter to update, a claim to post, or
    neither (a draft)."""
    if referral.get("encounter_id"):
        return "edit"
    return "sign" if referral.get("claim_ref") else "draft"


def described_effect(referral: Mapping[str, Any]) -> tuple[Effect, ...]:
    """The effect the goal of ``referral``'s shape describes, bound to the referral (what a
    careful agent checks after writing when the task declares no effect)."""
    return tuple(e.resolve(referral) for e in _shape(kind_of(referral)))


def _shape(kind: str) -> tuple[Effect, ...]:
    """The contract of a task of shape ``kind`` (unresolved)."""
    if kind == "edit":
        return _encounter_edit()
    if kind == "sign":
        return _encounter_insert("signed") + _billing_insert()
    return _encounter_insert("draft")
