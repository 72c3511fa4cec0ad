"""The doability audit of ``pack check``: every task can be done where it is offered.

A front end that lacks a value a task requires (a planted API front end whose form has no
"Consult" encounter, as the clinic's web form had none) is found, naming the task, the
substrate and the control; the generated clinic passes on its API and on the web sample now
that its form offers every type the service takes; the ticketing pack's API passes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager
from typing import Any

import pytest

from effectbench.cli import main
from effectbench.conformance.check import Report, check_doability
from effectbench.conformance.ids import AuditId
from effectbench.effects import Effect, EffectKind, Param
from effectbench.kit.audit import audit_doability, required_values, unenterable
from effectbench.packs import get_pack
from effectbench.packs.clinic.store import ENCOUNTER_TYPES
from effectbench.schema import Substrate
from effectbench.seam import Closable, Screen
from effectbench.variants import tasks_on

OFFERED = ("Triage", "Follow-up", "Urgent")
"""The planted form's encounter types: the clinic's web form before it offered Consult."""


class FormWithoutConsult:
    """The clinic's API front end behind a form whose type control lacks "Consult": it says so
    in its ``choices``, and a type it cannot enter is saved empty (what the web form did)."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.substrate = real.substrate
        self.choices = {"encounters.type": OFFERED}

    def session(self, target: Any, request: Mapping[str, Any]) -> AbstractContextManager[Any]:
        return self.real.session(target, request)  # type: ignore[no-any-return]

    def attempt(self, env: Any, task: Any, params: Mapping[str, Any]) -> Screen:
        entered = dict(params)
        if entered.get("type") not in OFFERED:
            entered["type"] = ""
        return self.real.attempt(env, task, entered)  # type: ignore[no-any-return]

    def describe(self) -> dict[str, Any]:
        return self.real.describe()  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def clinic() -> Iterator[Any]:
    pack = get_pack("clinic-generated")
    assert isinstance(pack, Closable)
    yield pack
    pack.close()


def _consult(pack: Any, task: Any) -> bool:
    d = pack.definition(task)
    return bool(d.kind != "edit" and d.encounter_type == "Consult")


def test_required_values_and_what_a_control_cannot_enter() -> None:
    match: dict[str, str | Param] = {"patient_mrn": "M-1", "type": "Consult"}
    effects = [
        Effect(kind=EffectKind.RECORD_WRITTEN, surface="encounters", match=match),
        Effect(
            kind=EffectKind.FIELD_EQUALS, surface="encounters", match=match, field="note", value="x"
        ),
    ]
    assert required_values(effects) == {
        "encounters.patient_mrn": {"M-1"},
        "encounters.type": {"Consult"},
        "encounters.note": {"x"},
    }
    assert unenterable(effects, {"encounters.type": OFFERED}) == [
        "encounters.type = 'Consult' (its control offers Triage, Follow-up, Urgent)"
    ]
    assert unenterable(effects, {"encounters.type": ENCOUNTER_TYPES}) == []
    assert unenterable(effects, {}) == []  # free text everywhere: nothing to compare


def test_a_planted_front_end_missing_a_value_is_found(
    clinic: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every task that needs "Consult" is a ``pack.undoable`` finding naming the task, the
    substrate and the control; those with a correct action also say what the oracle read."""
    planted = FormWithoutConsult(clinic.front_end(Substrate.API))
    monkeypatch.setattr(clinic, "front_end", lambda substrate: planted)
    tasks = tasks_on(clinic, [Substrate.API])
    needing = {t.task_id for t in tasks if _consult(clinic, t)}
    doable = [t for t in tasks if t.correct_action_available and t.task_id not in needing]
    assert needing and doable
    report = Report(pack=clinic.name, substrates=(Substrate.API,))
    check_doability(clinic, [Substrate.API], report, trials=2)
    assert {f.task_id for f in report.findings} == needing
    assert {f.id for f in report.findings} == {AuditId.PACK_UNDOABLE}
    informed = [t for t in tasks if t.task_id in needing and t.correct_action_available]
    assert informed, "the sample of tasks with a correct action holds a Consult task"
    by_task = {f.task_id: f.message for f in report.findings}
    for task in informed:
        message = by_task[task.task_id]
        assert "the api front end cannot enter encounters.type = 'Consult'" in message
        assert "its control offers Triage, Follow-up, Urgent" in message
        assert "the informed agent (told the expected effect) did not produce it" in message
    (result,) = report.doability
    assert result.informed == sum(t.correct_action_available for t in tasks)
    assert result.compared == len(tasks)
    assert "undoable" in result.line()


def test_the_generated_clinic_is_doable_through_its_api(clinic: Any) -> None:
    tasks = tasks_on(clinic, [Substrate.API])
    result = audit_doability(clinic, Substrate.API, tasks, trials=2)
    assert result.undoable == []
    assert result.informed == sum(t.correct_action_available for t in tasks) > 0
    assert any(_consult(clinic, t) and t.correct_action_available for t in tasks)


@pytest.mark.web
def test_the_generated_clinic_is_doable_on_the_web_sample(clinic: Any) -> None:
    """The web form offers every type the service takes; the informed agent completes every
    task with a correct action of the web sample, the Consult ones among them."""
    front = clinic.front_end(Substrate.WEB)
    assert set(front.choices["encounters.type"]) == set(ENCOUNTER_TYPES)
    tasks = tasks_on(clinic, [Substrate.WEB])
    assert any(_consult(clinic, t) and t.correct_action_available for t in tasks)
    result = audit_doability(clinic, Substrate.WEB, tasks, trials=2)
    assert result.undoable == [], [u.message() for u in result.undoable]
    assert result.informed == sum(t.correct_action_available for t in tasks) > 0


@pytest.mark.desktop
def test_the_clinic_desktop_app_offers_every_encounter_type() -> None:
    from effectbench.packs.clinic.desktop.frontend import DesktopFrontEnd

    assert set(DesktopFrontEnd.choices["encounters.type"]) == set(ENCOUNTER_TYPES)


@pytest.mark.postgres
@pytest.mark.parametrize("name", ["ticketing", "ticketing-generated"])
def test_the_ticketing_pack_is_doable_through_its_api(name: str) -> None:
    pack = get_pack(name)
    assert isinstance(pack, Closable)
    try:
        tasks = tasks_on(pack, [Substrate.API])
        result = audit_doability(pack, Substrate.API, tasks, trials=2)
    finally:
        pack.close()
    assert result.undoable == [], [u.message() for u in result.undoable]
    assert result.informed == sum(t.correct_action_available for t in tasks) > 0


@pytest.mark.web
def test_the_ticketing_web_form_offers_every_value_the_catalogue_draws() -> None:
    from effectbench_ticketing.db import PRIORITIES
    from effectbench_ticketing.frontends import web

    assert set(web().choices["tickets.priority"]) == set(PRIORITIES)


def test_an_unknown_doability_substrate_is_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["pack", "check", "mockmed", "--doability", "nowhere"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nowhere" in err[0], err
