"""The arm-facing handle: every action and every product read goes over HTTP.

:class:`ClinicEnv` is what a system under test holds on the ``api`` substrate (a kit
:class:`~effectbench.kit.http.HttpEnv`): one keep-alive connection to the record service on
127.0.0.1, carrying the episode's secret, which the handle never hands out. It offers:

* actions ``find_patients(name)``, ``open_chart(mrn)``, ``save_encounter(mrn, name, type,
  note, idempotency_key=None, sign=False, charge_code=None, claim_ref=None)`` and
  ``edit_encounter(encounter_id, note)``;
* the banner the app painted last;
* the product's own readback, which reads one out-of-band REST surface, the encounters
  endpoint, and a readback over every REST surface (what ``effect_verified_all`` uses).

Neither readback is the harness oracle: both read through the service.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from effectbench.kit.http import Action, HttpEnv
from effectbench.packs.clinic.db import SURFACES
from effectbench.seam import ActionParam

MRN = ActionParam("mrn", "string", "The chart's medical record number.")
SAVE_PARAMS = (
    MRN,
    ActionParam("name", "string", "The patient's name as the chart shows it."),
    ActionParam("type", "string", "The encounter type (Triage, Follow-up...)."),
    ActionParam("note", "string", "The clinical note."),
    ActionParam("idempotency_key", "string", "A key that makes a repeated save one save.", False),
    ActionParam("sign", "boolean", "Sign the encounter (and bill it).", False),
    ActionParam("charge_code", "string", "The charge code billed when signing.", False),
    ActionParam("claim_ref", "string", "The claim reference billed when signing.", False),
)
ACTIONS = {
    "find_patients": Action(
        "GET",
        "/api/patients?name={name}",
        (ActionParam("name", "string", "The patient's name, or part of it."),),
    ),
    "open_chart": Action("GET", "/api/patients/{mrn}/chart", (MRN,)),
    "save_encounter": Action(
        "POST", "/api/encounters", SAVE_PARAMS, body=tuple(p.name for p in SAVE_PARAMS)
    ),
    "edit_encounter": Action(
        "PATCH",
        "/api/encounters/{encounter_id}",
        (
            ActionParam("encounter_id", ("integer", "string"), "The encounter to edit."),
            ActionParam("note", "string", "Its new note."),
        ),
        body=("note",),
        fill=True,
        whole="encounter_id",
    ),
}
"""The clinic's actions: what each sends to the record service, and its typed arguments."""
PARAMETERS = {name: action.params for name, action in ACTIONS.items()}
"""The named arguments of each action (what an agent's typed tools declare)."""


class ClinicEnv(HttpEnv):
    """The SUT's handle on one episode: actions and reads over HTTP, nothing else."""

    ACTIONS = ACTIONS
    PRODUCT_SURFACES = ("encounters",)
    SURFACES = SURFACES
    BRIEF = "referral"

    def opening(self, brief: Mapping[str, Any]) -> str:
        """The referral: whose chart, and what to record (or which encounter to update)."""
        if "encounter_id" in brief:
            return (
                f"Task: update encounter {brief['encounter_id']} of chart {brief.get('mrn', '?')}"
            )
        born = f", born {brief['dob']}" if brief.get("dob") else ""
        mrn = f", MRN {brief['mrn']}" if brief.get("mrn") else ""
        patient = brief.get("patient_name", "?")
        return f"Referral: {patient}{born}{mrn}; new {brief.get('type', '')} encounter"
