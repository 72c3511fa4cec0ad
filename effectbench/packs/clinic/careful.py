"""What reading before writing means on the clinic's JSON actions (``look_before_write``).

The careful script is handed the agent's view (:class:`~effectbench.seam.AgentTask`) and the
env, nothing of the task's definition. Before it writes it reads what a user of the clinic can
read:

* the charts the referral's name finds, and the one whose MRN (or, without an MRN, whose birth
  date) is the referral's: none, or two it cannot tell apart, contradicts the referral;
* that chart, opened: its name and birth date against the referral's;
* the encounter list it is about to save from, against the product's encounters surface for
  that chart: an encounter the surface holds and the chart does not show means the chart is a
  stale copy, and a save from it would write over the list it does not show;
* for an update, that the referred encounter is on the referred chart.

The one write sends the referral's idempotency key; the effect it should leave is the one the
goal of the referral's shape describes (:func:`~effectbench.packs.clinic.tasks.described_effect`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from effectbench.packs.clinic.tasks import described_effect, kind_of, save_form
from effectbench.seam import AgentTask, Look, ReadsSurfaces, Screen


def look(env: Any, task: AgentTask) -> Look:
    """Read the chart the referral names (and the encounter to update); say what contradicts."""
    referral = task.referral
    if kind_of(referral) == "edit":
        return _look_edit(env, referral)
    return _look_save(env, referral)


def _rows(screen: Screen, key: str) -> list[dict[str, Any]]:
    rows = screen.details.get(key, [])
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


def pick_chart(
    found: Sequence[Mapping[str, Any]], referral: Mapping[str, Any]
) -> tuple[Mapping[str, Any] | None, str]:
    """The chart of ``found`` the referral names, or why none can be chosen."""
    name, dob, mrn = referral.get("patient_name", ""), referral.get("dob", ""), referral.get("mrn")
    listed = ", ".join(f"{r.get('mrn')} born {r.get('dob')}" for r in found) or "none"
    if mrn:
        chart = next((r for r in found if r.get("mrn") == mrn), None)
        if chart is None:
            return None, f"no chart named {name!r} holds MRN {mrn} (the search lists {listed})"
        if dob and chart.get("dob") != dob:
            return None, f"chart {mrn} is of someone born {chart.get('dob')}, not {dob}"
        return chart, ""
    same = [r for r in found if r.get("dob") == dob]
    if len(same) != 1:
        return None, (
            f"{len(same)} charts named {name!r} born {dob} and no MRN to tell them apart "
            f"(the search lists {listed})"
        )
    return same[0], ""


def _surface_ids(env: Any, mrn: str) -> list[int] | None:
    """The encounter ids the product's encounters surface holds for ``mrn`` (None: unread)."""
    verifier = env.product_effect_verifier()
    tables = verifier.read() if isinstance(verifier, ReadsSurfaces) else None
    if tables is None or "encounters" not in tables:
        return None
    return sorted(int(r["id"]) for r in tables["encounters"].rows if r.get("patient_mrn") == mrn)


def _look_save(env: Any, referral: Mapping[str, Any]) -> Look:
    reads: list[str] = []
    found = env.act("find_patients", name=referral.get("patient_name", ""))
    results = _rows(found, "results")
    reads.append(f"search: {found.banner}")
    chart, why = pick_chart(results, referral)
    expected = described_effect(referral)
    form: dict[str, Any] = {}

    def write() -> Screen:
        saved: Screen = env.act("save_encounter", **form)
        return saved

    if chart is None:
        return Look(tuple(reads), why, write, expected)
    opened = env.act("open_chart", mrn=chart["mrn"])
    reads.append(f"chart: {opened.banner}")
    contradiction = _chart_contradiction(env, opened, referral, reads)
    form |= save_form(chart, referral, sign=kind_of(referral) == "sign")
    reads.append(f"idempotency key {form['idempotency_key']} on the form")
    return Look(tuple(reads), contradiction, write, expected)


def _chart_contradiction(
    env: Any, opened: Screen, referral: Mapping[str, Any], reads: list[str]
) -> str | None:
    """What the opened chart shows against the referral and the encounters surface."""
    patient = opened.details.get("patient")
    if opened.status == "error" or not isinstance(patient, dict):
        return f"the chart does not open ({opened.banner})"
    if patient.get("name") != referral.get("patient_name"):
        return f"the chart is {patient.get('name')!r}'s, not {referral.get('patient_name')!r}'s"
    shown = sorted(int(e["id"]) for e in _rows(opened, "encounters"))
    held = _surface_ids(env, str(patient.get("mrn")))
    reads.append(f"chart lists encounters {shown}; the encounters surface holds {held}")
    if held is not None and held != shown:
        missing = sorted(set(held) - set(shown))
        return (
            f"the chart does not show encounter(s) {missing} that the record holds: it is a "
            "stale copy, and saving from it would write over what it does not show"
        )
    return None


def _look_edit(env: Any, referral: Mapping[str, Any]) -> Look:
    mrn, wanted = referral.get("mrn", ""), str(referral.get("encounter_id", ""))
    opened = env.act("open_chart", mrn=mrn)
    reads = [f"chart: {opened.banner}"]
    ids = [str(e.get("id")) for e in _rows(opened, "encounters")]
    reads.append(f"chart lists encounters {', '.join(ids) or 'none'}")
    contradiction = None
    if opened.status == "error":
        contradiction = f"the chart does not open ({opened.banner})"
    elif wanted not in ids:
        contradiction = f"encounter {wanted} is not on chart {mrn}"

    def write() -> Screen:
        edited: Screen = env.act("edit_encounter", encounter_id=wanted, note=referral["note"])
        return edited

    return Look(tuple(reads), contradiction, write, described_effect(referral))
