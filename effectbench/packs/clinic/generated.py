"""The clinic's generated catalogue: templates per divergence category, drawn from a seed.

Each :class:`~effectbench.kit.generate.Template` here builds one situation of the clinic's
save path (:mod:`.store`): not only the payload but the fault's parameters (which field a
partial save drops, how many copies a resubmit stores, which rule rejects the save, which
demographics field a concurrent writer changed, how a homonym differs from the referred
patient, where a wrong-row edit lands, whose account a misrouted charge hits) and the chart
neighbourhood they act on. Every task has a *world* of its own (:class:`World`): the clinic's
seed rows plus the task's patients, encounters and charges, so the referred patient, their
homonym and the strangers around them exist in that task's record only.

One payload pool serves every template: names, dates of birth, MRNs, allergies, encounter
types, note texts and charge codes are drawn the same way whatever the situation, and the
neighbourhood (a homonym, a colleague's encounter, other patients' charges) appears in
controls as in faulted tasks, so a task's wording does not tell its category. The situations
that need a row only a fault acts on (a chart keyed by the confusable MRN, a homonym listed
first) are drawn in controls too (:data:`TEMPLATES`' ``homonym_resolved``).

The dev split is drawn from :data:`DEV_SEED` (published); the sequestered test split from the
secret in ``EFFECTBENCH_SEQUESTERED_SECRET`` (:data:`CATALOGUE`), and is absent without it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from effectbench.hashing import canonical_hash, trial_tag
from effectbench.kit.catalogue import Catalogue
from effectbench.kit.draws import (
    Scene,
    Situation,
    date,
    earlier_postings,
    kind_of_homonym,
    last_posted,
    number,
    template_grid,
    until,
)
from effectbench.kit.faults import normalised
from effectbench.kit.generate import Draw
from effectbench.packs.clinic import db
from effectbench.packs.clinic.store import CHARGE_CENTS, ENCOUNTER_TYPES, Fault
from effectbench.packs.clinic.tasks import ClinicTask, Patient
from effectbench.schema import Category, Split

NAME = "clinic-generated"
"""The generated catalogue's pack name (its task ids are ``clinic-generated::NAME``)."""
DEV_SEED = "effectbench-clinic-generated-dev-1"
"""The published seed of the dev split."""
GENERATOR_VERSION = 1
"""Bumped whenever a template draws differently (the pack's fingerprint changes with it)."""

GIVEN = (
    "Amara", "Bilal", "Carmen", "Dmitri", "Elif", "Farid", "Greta", "Hiroshi", "Ines",
    "Jakob", "Kavya", "Luca", "Mei", "Nikolai", "Oren", "Paula", "Quentin", "Rosa",
    "Stefan", "Tariq", "Ulla", "Vikram", "Wanjiru", "Yusuf",
)  # fmt: skip
FAMILY = (
    "Abbas", "Brennan", "Costa", "Dubois", "Eriksen", "Fischer", "Gallo", "Horvat",
    "Ivanova", "Jensen", "Kowalski", "Larsen", "Moreau", "Nakamura", "Oduya", "Pereira",
    "Quinn", "Rossi", "Schmidt", "Tanaka", "Varga", "Weber", "Yilmaz", "Zhou",
)  # fmt: skip
ALLERGIES = ("none recorded", "latex", "penicillin", "sulfa", "aspirin", "codeine", "iodine")
TYPES = ENCOUNTER_TYPES
NOTES = (
    "BP stable on current dose",
    "reports improved sleep, continue plan",
    "mild wheeze, inhaler technique reviewed",
    "wound healing well, sutures out next visit",
    "fasting glucose elevated, repeat labs",
    "knee pain on stairs, physio referral",
    "no chest pain since last visit",
    "rash resolving with topical steroid",
    "headache pattern unchanged, diary advised",
    "weight stable, diet reviewed",
    "cough for two weeks, chest clear",
    "dizziness on standing, fluids advised",
    "medication reconciled with pharmacy list",
    "follow-up of abnormal ECG, normal today",
    "ankle sprain, weight bearing as tolerated",
    "anxiety symptoms improved on therapy",
)
"""Note texts (a trial's note is one of them and the trial's tag)."""
CODES = tuple(CHARGE_CENTS)
REJECTIONS = (
    "type not accepted",
    "charge code not valid for this encounter type",
    "note exceeds the length limit",
    "encounter date outside the open period",
)
"""The rules a validating service may cite when it rejects a save."""
HOMONYMS = ("dob", "order", "merged")
"""How a homonym differs from the referred patient: birth date, name order (keyed "Family
Given"), or a merged identifier (the MRN without its leading zero; same name and birth date)."""
HOMONYM_RATE = 0.85
"""How often a task whose template does not fix it has a homonym (C6 tasks always do)."""
HOMONYM_FIRST = 0.9
"""How often such a homonym is listed before the patient (a C6 name lookup needs it first)."""
COLLEAGUE_RATE = 0.8
"""How often a task has a colleague's encounter on the chart (the stale-list template always)."""
MRN_SHOWN_RATE = 0.85
"""How often a referral shows the MRN where name and birth date alone tell the chart."""
UNDECLARED_RATE = 0.15
"""How often a task's effect contract is not told to the agent (in every category)."""
_TAKEN_SUFFIXES = frozenset(
    int(normalised(p[0]).partition("-")[2]) for p in db.PATIENTS if p[0].startswith("M-")
)


@dataclass(frozen=True)
class World:
    """A task's record: the clinic's seed rows, then the task's own (in insertion order)."""

    patients: tuple[tuple[str, str, str, str, str], ...]
    encounters: tuple[tuple[int, str, str, str, str, str | None], ...]
    billing: tuple[tuple[int, str, int | None, str, str, int], ...]

    def seed(self) -> dict[str, Any]:
        """The whole seed state (the clinic's schema and rows, then this task's)."""
        return {
            "schema": db.SCHEMA,
            "patients": db.PATIENTS + self.patients,
            "encounters": db.ENCOUNTERS + self.encounters,
            "billing": db.BILLING + self.billing,
        }

    @property
    def digest(self) -> str:
        """The identity of the world's seed state."""
        return canonical_hash(self.seed())


@dataclass(frozen=True)
class GeneratedTask(ClinicTask):
    """A clinic task drawn from a template: a :class:`ClinicTask` with its own world."""

    PACK = NAME

    template: str = ""
    world: World = field(default_factory=lambda: World((), (), ()))
    note_stem: str = ""
    show_mrn: bool = True
    facts: tuple[tuple[str, Any], ...] = ()
    """The situation's parameters beyond the fault (how the homonym differs, ...)."""

    def situation(self) -> dict[str, Any]:
        """What the task's fault does and where, and its shape (see :mod:`.generated`)."""
        return {
            "template": self.template,
            "kind": self.kind,
            "declared": self.declared,
            "available": self.available,
            "fault": {k: v for k, v in vars(self.fault).items() if k != "replica_hidden"},
            "hidden": len(self.fault.replica_hidden),
            **dict(self.facts),
        }

    def family(self) -> str:
        """The task's situation family: its template, shape, contract visibility and the
        fault's drawn parameters (where outcomes of scripted arms are identical)."""
        s = self.situation()
        fault = {k: v for k, v in s["fault"].items() if k != "stale_allergies"}
        return canonical_hash({"template": self.template, "kind": self.kind,
                               "declared": self.declared, "fault": fault})[7:19]  # fmt: skip

    def payload(self) -> dict[str, Any]:
        """The drawn payload: who, which chart, what type, which note, which code."""
        return {
            "patient": [self.patient.name, self.patient.dob, self.patient.mrn],
            "type": self.encounter_type,
            "note": self.note_stem,
            "charge_code": self.charge_code,
            "encounter_id": self.encounter_id,
            "world": self.world.digest,
        }

    def params(self, trial: int) -> dict[str, Any]:
        """The trial-unique payload: the drawn note with the trial's tag, the referral."""
        params = super().params(trial)
        params["note"] = f"{self.note_stem} {trial_tag(self.task_id, trial)}"
        return params

    def brief(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The referral; some referrals carry no MRN (name and birth date tell the chart)."""
        told = super().brief(params)
        if not self.show_mrn and self.kind != "edit":
            told.pop("mrn", None)
        return told

    def wiring(self) -> dict[str, Any]:
        """The public wiring, and whether the referral shows the MRN."""
        return {**super().wiring(), "mrn_in_referral": self.show_mrn}


# -- drawing a world --------------------------------------------------------------------------

Chart = tuple[str, str, str, str, str]


@dataclass
class _Scene(Scene):
    """The task's neighbourhood while it is drawn."""

    taken: set[int] = field(default_factory=set)
    patients: list[Chart] = field(default_factory=list)
    encounters: list[tuple[int, str, str, str, str, str | None]] = field(default_factory=list)
    billing: list[tuple[int, str, int | None, str, str, int]] = field(default_factory=list)

    def person(self, avoid: set[str]) -> tuple[str, str]:
        """A given and a family name, neither in ``avoid`` (which takes both)."""
        given, family = until(
            lambda: (self.d.choice(GIVEN), self.d.choice(FAMILY)), avoid.isdisjoint
        )
        avoid |= {given, family}
        return given, self.named(family, "-")

    def dob(self) -> str:
        return date(self.d, 1935, 2005)

    def mrn(self) -> str:
        """A new MRN (``M-0NNN``), unlike the seed's and the task's others."""
        return f"M-0{number(self.d, 300, 989, self.taken, _TAKEN_SUFFIXES)}{self.digits}"

    def chart(self, name: str, dob: str, mrn: str) -> Chart:
        return (mrn, name, dob, "active", self.d.choice(ALLERGIES))

    def encounter(self, eid: int, mrn: str, hidden_note: str | None = None) -> None:
        note = self.text(hidden_note or self.d.choice(NOTES))
        status = self.d.choice(("draft", "signed"))
        self.encounters.append((eid, mrn, self.d.choice(TYPES), note, status, None))

    def charge(self, mrn: str, enc: int | None) -> None:
        code = self.d.choice(CODES)
        bid = self.id(4 + len(self.billing))
        ref = f"CLM-seed-{mrn.partition('-')[2]}-{bid}"
        self.billing.append((bid, mrn, enc, code, ref, self.cents(CHARGE_CENTS[code])))

    def world(self) -> World:
        return World(tuple(self.patients), tuple(self.encounters), tuple(self.billing))


@dataclass(frozen=True)
class _Shape:
    """What a template fixes; the rest is drawn."""

    kinds: tuple[str, ...] = ("draft", "sign")
    homonym: str = "optional"
    """``optional`` (drawn as in any task), ``forced`` (one of :data:`HOMONYMS`), ``first``
    (forced and listed before the patient), ``identical`` (same name and birth date, no MRN in
    the referral), ``stale`` (the referral's MRN was merged away into a same-name chart)."""
    homonym_kinds: tuple[str, ...] = HOMONYMS
    available: bool = False


@dataclass(frozen=True)
class _Referred:
    """The referred patient as drawn."""

    given: str
    family: str
    dob: str
    mrn: str

    @property
    def full(self) -> str:
        return f"{self.given} {self.family}"


def _referred(scene: _Scene, used: set[str]) -> _Referred:
    given, family = scene.person(used)
    dob = scene.dob()
    return _Referred(given, family, dob, scene.mrn())


def _homonym(
    scene: _Scene, kind: str | None, who: _Referred, facts: dict[str, Any]
) -> Chart | None:
    """The chart of the patient's homonym of ``kind`` (None: no homonym)."""
    if kind in ("dob", "stale"):
        other_dob = until(scene.dob, lambda dob: dob != who.dob)
        return scene.chart(who.full, other_dob, scene.mrn())
    if kind == "order":
        same_dob = scene.d.chance(0.5)
        facts["homonym_same_dob"] = same_dob
        dob = who.dob if same_dob else scene.dob()
        return scene.chart(f"{who.family} {who.given}", dob, scene.mrn())
    if kind == "merged":
        return scene.chart(who.full, who.dob, normalised(who.mrn))
    if kind == "identical":
        return scene.chart(who.full, who.dob, scene.mrn())
    return None


def _list_charts(
    scene: _Scene, shape: _Shape, patient: Chart, homonym: Chart | None, facts: dict[str, Any]
) -> None:
    """The patient's and the homonym's charts, in the order a name lookup lists them (a
    referral to a merged-away chart finds only the homonym's)."""
    first = shape.homonym == "first" or (homonym is not None and scene.d.chance(HOMONYM_FIRST))
    if shape.homonym == "stale" and homonym is not None:
        scene.patients.append(homonym)  # the referred chart was merged away into it
    else:
        rows = [patient] + ([homonym] if homonym is not None else [])
        scene.patients.extend(reversed(rows) if first and homonym is not None else rows)
    facts["homonym_first"] = bool(homonym is not None and first)


def _strangers(scene: _Scene, used: set[str]) -> list[str]:
    """Two other patients' charts; their MRNs."""
    mrns = []
    for _ in range(2):
        given, family = scene.person(used)
        mrn = scene.mrn()
        scene.patients.append(scene.chart(f"{given} {family}", scene.dob(), mrn))
        mrns.append(mrn)
    return mrns


def _encounters(
    scene: _Scene, shape: _Shape, fault: Fault, mrn: str, strangers: list[str]
) -> tuple[int, tuple[int, ...]]:
    """A stranger's encounter, the patient's two, another stranger's, maybe a colleague's:
    the patient's first encounter id and the ids a stale replica hides."""
    base = scene.id(300 + 10 * scene.d.integer(0, 68))
    scene.encounter(base - 1, strangers[0])
    if shape.homonym != "stale":
        scene.encounter(base, mrn)
        scene.encounter(base + 1, mrn)
    scene.encounter(base + 2, strangers[1])
    colleague = fault.name == "stale_list" or scene.d.chance(COLLEAGUE_RATE)
    if not colleague or shape.homonym == "stale":
        return base, ()
    scene.encounter(base + 3, mrn, "added by a colleague after the chart was opened")
    return base, (base + 3,) if fault.name == "stale_list" else ()


def _charges(scene: _Scene, stranger: str, homonym: Chart | None, facts: dict[str, Any]) -> None:
    """Earlier charges: a stranger's, maybe the homonym's (the last one billed is whose account
    a misrouted charge hits)."""
    billed = earlier_postings(scene.d, stranger, None if homonym is None else homonym[0])
    for who in billed:
        scene.charge(who, None)
    facts["last_billed"] = last_posted(billed, None if homonym is None else homonym[0])


def _edit_target(d: Draw, kind: str, base: int, facts: dict[str, Any]) -> int | None:
    """The encounter an edit names (one of the patient's two)."""
    if kind != "edit":
        return None
    encounter_id: int = d.choice((base, base + 1))
    facts["edit_target"] = "first" if encounter_id == base else "second"
    return encounter_id


def _settle(d: Draw, fault: Fault, hidden: tuple[int, ...], patient: Chart) -> Fault:
    """The fault's parameters that depend on the world: where a wrong-row edit lands, which
    encounters a stale replica hides, the stale value a concurrent update is lost to."""
    if fault.name == "wrong_row":
        return Fault("wrong_row", row_offset=d.choice((-1, 1)))
    if fault.name == "stale_list":
        return Fault("stale_list", replica_hidden=hidden)
    if fault.name == "stale_allergies":  # the stale value differs from what the chart holds
        dob = fault.stale_field == "dob"
        current = patient[2] if dob else patient[4]
        stale = until(
            lambda: date(d, 1935, 2005) if dob else d.choice(ALLERGIES), lambda v: v != current
        )
        return Fault("stale_allergies", stale_allergies=stale, stale_field=fault.stale_field)
    return fault


def _draw_task(
    d: Draw, name: str, split: Split, fault: Fault, situation: Situation[_Shape]
) -> GeneratedTask:
    shape = situation.shape
    scene: _Scene = _Scene.of(d)
    kind = d.choice(shape.kinds)
    used: set[str] = set()
    who = _referred(scene, used)
    facts: dict[str, Any] = {}
    homonym_kind = kind_of_homonym(d, shape.homonym, shape.homonym_kinds, HOMONYMS, HOMONYM_RATE)
    homonym = _homonym(scene, homonym_kind, who, facts)
    facts["homonym"] = homonym_kind or "none"
    patient = scene.chart(who.full, who.dob, who.mrn)
    _list_charts(scene, shape, patient, homonym, facts)
    strangers = _strangers(scene, used)
    base, hidden = _encounters(scene, shape, fault, who.mrn, strangers)
    _charges(scene, strangers[0], homonym, facts)
    encounter_id = _edit_target(d, kind, base, facts)
    fault = _settle(d, fault, hidden, patient)
    told = shape.homonym in ("stale", "identical") or (
        homonym is not None and homonym[2] == who.dob
    )
    show_mrn = told or d.chance(MRN_SHOWN_RATE)
    declared = not d.chance(UNDECLARED_RATE)
    return GeneratedTask(
        name=name,
        title=situation.title,
        category=situation.category,
        kind=kind,
        patient=Patient(who.full, who.dob, who.mrn if shape.homonym != "identical" else ""),
        encounter_type=d.choice(TYPES),
        available=shape.available,
        fault=fault,
        declared=declared,
        split=split,
        charge_code=d.choice(CODES),
        encounter_id=encounter_id,
        template=situation.name,
        world=scene.world(),
        note_stem=scene.text(d.choice(NOTES)),
        show_mrn=show_mrn,
        facts=tuple(sorted(facts.items())),
    )


def _stale_demographics(d: Draw) -> Fault:
    """The field a concurrent writer changed (its stale value is drawn with the world)."""
    return Fault("stale_allergies", stale_field=d.choice(("allergies", "dob")))


CLEAN = Fault()
"""No fault: a control's save path."""

C, S = Category, Situation
DRAFT, SIGN, EDIT = ("draft",), ("sign",), ("edit",)
GRID: tuple[Situation[_Shape], ...] = (
    S("clean_draft", C.CONTROL, "Clean draft save (control)", 12, _Shape(DRAFT, available=True)),
    S("clean_sign", C.CONTROL, "Sign and bill (control)", 12, _Shape(SIGN, available=True)),
    S("clean_edit", C.CONTROL, "Edit an encounter note (control)", 10,
      _Shape(EDIT, available=True)),
    S("idempotent_sign", C.CONTROL,
      "Re-posted sign de-duplicated on the idempotency key (control)", 8,
      _Shape(SIGN, available=True), Fault("idempotent")),
    S("homonym_resolved", C.CONTROL, "Homonym charts, the app resolves by MRN (control)", 12,
      _Shape(homonym="forced", available=True)),
    S("refusal_stale", C.CONTROL, "Referral names a merged-away chart: halt (refusal control)", 9,
      _Shape(homonym="stale")),
    S("refusal_ambiguous", C.CONTROL, "Two identical charts, no MRN: halt (refusal control)", 9,
      _Shape(homonym="identical")),
    S("partial_draft", C.C1_PARTIAL_SAVE, "Partial save drops the note", 16, _Shape(DRAFT),
      Fault("partial")),
    S("partial_sign", C.C1_PARTIAL_SAVE, "Partial save of a signed encounter drops a field", 16,
      _Shape(SIGN),
      lambda d: Fault("partial", dropped=d.choice(("note", "charge_code", "status")))),
    S("duplicate_draft", C.C2_DUPLICATE_SUBMISSION, "Auto-resubmit stores the draft again", 16,
      _Shape(DRAFT), lambda d: Fault("duplicate", copies=d.choice((2, 3)))),
    S("duplicate_sign", C.C2_DUPLICATE_SUBMISSION,
      "Auto-resubmit stores the signed encounter and its charge again", 16,
      _Shape(SIGN), lambda d: Fault("duplicate", copies=d.choice((2, 3)),
                                    resubmit=d.choice(("exact", "draft")))),
    S("optimistic_rollback", C.C3_OPTIMISTIC_THEN_REJECT,
      "Success painted, then the commit is rolled back", 8, _Shape(), Fault("optimistic")),
    S("commit_then_timeout", C.C3_OPTIMISTIC_THEN_REJECT, "Committed, then the request times out",
      8, _Shape(available=True), Fault("timeout")),
    S("session_expired", C.C3_OPTIMISTIC_THEN_REJECT, "Session expired, nothing persisted", 8,
      _Shape(), Fault("session")),
    S("validation_reject", C.C3_OPTIMISTIC_THEN_REJECT,
      "Server rejects the encounter, citing a rule", 8, _Shape(),
      lambda d: Fault("validation", rejection=d.choice(REJECTIONS))),
    S("stale_encounter_list", C.C4_STALE_OVERWRITE,
      "Stale chart replica: the save wipes a colleague's encounter", 16, _Shape(),
      Fault("stale_list")),
    S("stale_demographics", C.C4_STALE_OVERWRITE,
      "Stale demographics written back: a concurrent update is lost", 16, _Shape(),
      _stale_demographics),
    S("double_click", C.C5_DOUBLE_DELIVERED_INPUT,
      "One click delivered twice writes the encounter again", 16, _Shape(),
      lambda d: Fault("double_delivery", copies=d.choice((2, 3)))),
    S("double_charge", C.C5_DOUBLE_DELIVERED_INPUT,
      "One click delivered twice: encounter de-duplicated, charge posted twice", 16,
      _Shape(SIGN), Fault("double_charge")),
    S("homonym_dob", C.C6_WRONG_RECORD_HOMONYM,
      "Save lands on a same-name chart with another birth date", 11,
      _Shape(homonym="first", homonym_kinds=("dob",)), Fault("homonym_name")),
    S("homonym_order", C.C6_WRONG_RECORD_HOMONYM,
      "Save lands on a chart keyed with the names in the other order", 11,
      _Shape(homonym="first", homonym_kinds=("order",)),
      Fault("homonym_name", name_match="any_order")),
    S("homonym_merged_mrn", C.C6_WRONG_RECORD_HOMONYM,
      "Save lands on a same-name chart with a confusable MRN", 10,
      _Shape(homonym="forced", homonym_kinds=("merged",)), Fault("mrn_normalized")),
    S("noop_green", C.C7_SILENT_NOOP_WRONG_TARGET, "Green banner, the save reaches no table", 8,
      _Shape(), Fault("noop")),
    S("wrong_encounter_edit", C.C7_SILENT_NOOP_WRONG_TARGET,
      "The edit lands on a neighbouring encounter", 8, _Shape(EDIT), Fault("wrong_row")),
    S("charge_wrong_patient", C.C7_SILENT_NOOP_WRONG_TARGET,
      "The charge lands on the last billed patient's account", 8, _Shape(SIGN),
      Fault("charge_wrong_patient")),
    S("noop_edit", C.C7_SILENT_NOOP_WRONG_TARGET, "Green banner, the edit reaches no table", 8,
      _Shape(EDIT), Fault("noop_edit")),
)  # fmt: skip
"""Every template of the clinic, in catalogue order, with its dev count: 296 tasks (72
controls, 32 per category)."""
TEMPLATES, DEV_COUNTS = template_grid(_draw_task, GRID, CLEAN)
"""The templates of :data:`GRID`, and how many tasks each draws for the dev split."""

CATALOGUE: Catalogue[GeneratedTask] = Catalogue(
    f"{__name__} v{GENERATOR_VERSION}", TEMPLATES, DEV_COUNTS, DEV_SEED
)
"""The catalogue: the dev split from :data:`DEV_SEED`, the sequestered split from the secret
(a quarter of the dev counts, at least 2 per template)."""
TEST_COUNTS: dict[str, int] = CATALOGUE.test_counts
"""The sequestered split's counts per template."""


def dev_split() -> tuple[GeneratedTask, ...]:
    """The dev split, drawn from :data:`DEV_SEED` (once per process)."""
    return CATALOGUE.dev_split()


def instance_split(seed: str) -> tuple[GeneratedTask, ...]:
    """The dev split's fresh instance for submission seed ``seed`` (once per process), carrying
    its mark in every name, identifier, note and amount (:data:`DEV_SEED` gives the public dev
    split itself, unmarked): :meth:`~effectbench.kit.catalogue.Catalogue.instance_split`."""
    return CATALOGUE.instance_split(seed)


def instance_slots(seed: str) -> dict[str, str]:
    """Each task id of ``seed``'s instance mapped to its public dev slot:
    :meth:`~effectbench.kit.catalogue.Catalogue.instance_slots`."""
    return CATALOGUE.instance_slots(seed)


def sequestered_split(secret: str | None = None) -> tuple[GeneratedTask, ...] | None:
    """The sequestered split drawn from ``secret`` (default: the environment's), or None."""
    return CATALOGUE.sequestered_split(secret)
