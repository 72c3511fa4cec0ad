"""What the kit's audit harness needs of the clinic: where its probes land.

The probes themselves, the rule that judges them and the red team are the kit's
(:mod:`effectbench.kit.audit`), and so is the bench (:func:`effectbench.kit.sqlite.audit_bench`:
the template copied to a fresh file before every probe, the attack written straight into the
file over a connection of its own). The clinic says which record a probe moves to (a same-name
chart or the patient's other encounter, else a stranger's), its three collateral writes (a
charge or an allergy written beside the effect, an unrelated encounter's note tampered with, a
seed charge deleted) and that the note is the payload a probe alters.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from effectbench.effects import Effect
from effectbench.kit.audit import AuditPlan, Db


def _patient_other(db: Db, mrn: str, name: str, *, same_name: bool) -> str:
    rows = db.rows("SELECT mrn, name FROM patients ORDER BY rowid")
    others = [r for r in rows if r["mrn"] != mrn]
    homonyms = [r for r in others if r["name"] == name]
    strangers = [r for r in others if r["name"] != name]
    pool = (homonyms or strangers) if same_name else strangers
    return str(pool[0]["mrn"])


def _encounter_other(db: Db, enc_id: str, *, same_patient: bool) -> str:
    mrn = db.one("SELECT patient_mrn FROM encounters WHERE id = ?", (enc_id,)) or ""
    op = "=" if same_patient else "!="
    query = f"SELECT id FROM encounters WHERE id != ? AND patient_mrn {op} ? ORDER BY id LIMIT 1"
    return str(db.one(query, (enc_id, mrn)))


def retarget(
    db: Db, match: dict[str, Any], params: Mapping[str, Any], homonym: bool
) -> dict[str, Any]:
    """Move a selector to a same-name chart or the patient's other encounter (``homonym``),
    or to another patient's."""
    moved = dict(match)
    if "patient_mrn" in moved:
        name = str(params.get("patient_name", ""))
        moved["patient_mrn"] = _patient_other(
            db, str(moved["patient_mrn"]), name, same_name=homonym
        )
    if "id" in moved:
        moved["id"] = _encounter_other(db, str(moved["id"]), same_patient=homonym)
    return moved


def _other_table(db: Db, effects: Sequence[Effect]) -> None:
    if "billing" not in {e.surface for e in effects}:
        db.execute(
            "INSERT INTO billing (patient_mrn, code, claim_ref, amount_cents) "
            "VALUES ('M-0101', '99213', 'CLM-collateral', 9200)"
        )
    else:
        db.execute("UPDATE patients SET allergies = 'collateral' WHERE rowid = 1")


def _same_surface(db: Db, effects: Sequence[Effect]) -> None:
    touched = {str(e.match.get("id")) for e in effects if "id" in e.match}
    ids = [str(r["id"]) for r in db.rows("SELECT id FROM encounters ORDER BY id")]
    victim = next(i for i in ids if i not in touched)
    db.execute("UPDATE encounters SET note = note || ' (tampered)' WHERE id = ?", (victim,))


PLAN = AuditPlan(
    retarget=retarget,
    other_table=_other_table,
    same_surface=_same_surface,
    loss=lambda db: db.execute("DELETE FROM billing WHERE id = 1"),
    payload=("note",),
)
"""The clinic's part of the audit and of its red team."""
