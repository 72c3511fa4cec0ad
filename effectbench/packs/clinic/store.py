"""The clinic app's persistence boundary, where each task's fault is injected.

A :class:`ClinicStore` is what the record service calls for one episode: it
owns the service's read-write connection to that episode's database file and
turns a form into SQL. A fault changes only what reaches (or fails to reach)
the tables, and what banner the app paints; the app always paints its banner
from what it *intended*, as a real app that shows success before its write
settles does.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from effectbench.episode_http import Reply
from effectbench.kit.faults import FaultCatalogue, failed, normalised, previous, refused, settled
from effectbench.packs.clinic.db import SURFACES

SAVE_FAULTS = (
    "none",
    "partial",
    "duplicate",
    "optimistic",
    "timeout",
    "session",
    "validation",
    "stale_list",
    "stale_allergies",
    "double_delivery",
    "double_charge",
    "homonym_name",
    "mrn_normalized",
    "noop",
    "charge_wrong_patient",
    "idempotent",
)
"""Faults of the save path (``POST /api/encounters``)."""

EDIT_FAULTS = ("none", "wrong_row", "noop_edit")
"""Faults of the edit path (``PATCH /api/encounters/<id>``)."""

MECHANISMS = {
    "none": "none: the service stores what the form says (control)",
    "partial": "the save path stores the encounter with its note dropped; the app paints success",
    "duplicate": "an automatic resubmit stores every save as two encounters; the app paints "
    "one success",
    "optimistic": "the app paints success, then the service rolls the commit back: nothing is "
    "stored",
    "timeout": "the save commits, then the request times out and the app paints an error",
    "session": "the session has expired: nothing is stored and the app paints an error",
    "validation": "the service rejects the encounter (type not accepted) and the app paints an "
    "error",
    "stale_list": "the save writes back the app's stale chart replica, deleting a colleague's "
    "encounter the replica did not show",
    "stale_allergies": "the save writes back stale demographics, undoing the patient's allergy "
    "update",
    "double_delivery": "one click on Save is delivered twice: two encounters are stored",
    "double_charge": "one click is delivered twice: the encounter is de-duplicated on its key, "
    "its charge is posted twice",
    "homonym_name": "the service finds the chart by name, not by MRN: the save lands on the "
    "first chart of that name",
    "mrn_normalized": "the service strips the MRN's leading zeros: the save lands on a chart "
    "with a confusable MRN",
    "noop": "the Save button posts to the preview endpoint: the app paints success and no "
    "table is touched",
    "charge_wrong_patient": "the charge is posted to the previous patient's account",
    "idempotent": "the app posts the sign twice; the service de-duplicates on the idempotency "
    "key (control)",
    "wrong_row": "the edit is written to the previous encounter's row",
    "noop_edit": "the edit goes to the autosave preview: the app paints success and no table "
    "is touched",
}
"""How each fault is injected, one sentence each (every receipt of a task shows its own)."""

CATALOGUE = FaultCatalogue(
    "clinic",
    MECHANISMS,
    writes_twice=frozenset(("duplicate", "double_delivery")),
    never_lands=frozenset(("noop_edit", "wrong_row")),
    deduplicated=frozenset(("idempotent", "double_charge")),
)
"""What each fault does: its sentence, the states it leaves reachable, how a save is delivered."""


STALE_FIELDS = ("allergies", "dob")
"""The demographics fields a stale cache may write back."""
DROPPABLE = ("note", "charge_code", "status")
"""The fields a partial save may drop."""
RESUBMITS = ("exact", "draft")
"""Which step an automatic resubmit may replay."""
NAME_MATCHES = ("exact", "any_order")
"""How a faulty name lookup may compare names."""


def _tokens(name: str) -> tuple[str, ...]:
    return tuple(sorted(name.lower().split()))


CHARGE_CENTS = {"99213": 9200, "99214": 13500, "99284": 31000}
ENCOUNTER_TYPES = ("Triage", "Follow-up", "Urgent", "Consult")
"""Every encounter type the record service takes and the catalogue draws: every front end's
type control offers each of them (the doability check of ``pack check`` holds it to that)."""
"""What the app bills per procedure code."""


@dataclass(frozen=True)
class Fault:
    """How the persistence boundary misbehaves for one task."""

    name: str = "none"
    replica_hidden: tuple[int, ...] = ()
    """Encounter ids the app's lagging chart replica does not show (``stale_list``)."""
    stale_allergies: str = "none recorded"
    """The demographics value the app's stale cache writes back (``stale_allergies``)."""
    stale_field: str = "allergies"
    """Which demographics field the stale cache writes back (``stale_allergies``): the one a
    concurrent writer changed after the app cached the chart (``allergies`` or ``dob``)."""
    dropped: str = "note"
    """Which field a partial save drops (``partial``): ``note``, ``charge_code`` (the charge
    is posted without its code) or ``status`` (a signed encounter is stored as a draft)."""
    copies: int = 2
    """How many times an automatic resubmit or a double-delivered click stores one save
    (``duplicate``, ``double_delivery``)."""
    resubmit: str = "exact"
    """Which step an automatic resubmit replays (``duplicate``): ``exact`` (the save itself:
    every copy signed and billed) or ``draft`` (the draft autosave: later copies stored as
    unsigned drafts, without a charge)."""
    rejection: str = "type not accepted"
    """The rule the service cites when it rejects the encounter (``validation``)."""
    name_match: str = "exact"
    """How a faulty name lookup compares names (``homonym_name``): ``exact``, or
    ``any_order`` (given and family name in either order, as a chart keyed "Family Given")."""
    row_offset: int = -1
    """Where a wrong-row edit lands relative to the named encounter (``wrong_row``)."""

    def __post_init__(self) -> None:
        CATALOGUE.check(self.name)
        if self.stale_field not in STALE_FIELDS:
            raise ValueError(f"stale_field must be one of {', '.join(STALE_FIELDS)}")
        if self.dropped not in DROPPABLE:
            raise ValueError(f"dropped must be one of {', '.join(DROPPABLE)}")
        if self.name_match not in NAME_MATCHES:
            raise ValueError(f"name_match must be one of {', '.join(NAME_MATCHES)}")
        if self.resubmit not in RESUBMITS:
            raise ValueError(f"resubmit must be one of {', '.join(RESUBMITS)}")
        if self.copies < 2 or self.row_offset == 0:
            raise ValueError("copies must be at least 2 and row_offset not 0")

    def deliveries(self) -> int:
        """How many times one save reaches the service under this fault."""
        n = CATALOGUE.deliveries(self.name)
        return self.copies if self.name in CATALOGUE.writes_twice else n


def _rows(cursor: sqlite3.Cursor) -> list[dict[str, Any]]:
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


class ClinicStore:
    """One episode's app state: a connection to its database file and its fault."""

    def __init__(self, path: Path, fault: Fault) -> None:
        self.path = path
        self.fault = fault
        self._conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._conn.execute("PRAGMA foreign_keys = ON")
        self._lock = threading.Lock()
        self._chart_cache: dict[str, list[int]] = {}

    def close(self) -> None:
        """Close the service's connection to the database file."""
        with self._lock:
            self._conn.close()

    # -- reads (what the app shows) ---------------------------------------------------

    def search(self, name: str) -> Reply:
        """Find charts whose name equals ``name`` (case-insensitive), in chart order."""
        with self._lock:
            cur = self._conn.execute(
                "SELECT mrn, name, dob FROM patients WHERE lower(name) = lower(?) "
                "AND status = 'active' ORDER BY rowid",
                (name,),
            )
            found = _rows(cur)
        banner = f"{len(found)} chart(s) named {name!r}"
        return Reply(200, "idle", banner, {"results": found})

    def chart(self, mrn: str) -> Reply:
        """Open a chart: the patient and their encounters, as the app's replica has them."""
        with self._lock:
            patient = _rows(self._conn.execute("SELECT * FROM patients WHERE mrn = ?", (mrn,)))
            if not patient:
                return Reply(404, "error", f"No chart with MRN {mrn}")
            encounters = _rows(
                self._conn.execute(
                    "SELECT * FROM encounters WHERE patient_mrn = ? ORDER BY id", (mrn,)
                )
            )
            hidden = set(self.fault.replica_hidden) if self.fault.name == "stale_list" else set()
            encounters = [e for e in encounters if e["id"] not in hidden]
            self._chart_cache[mrn] = [int(e["id"]) for e in encounters]
        p = patient[0]
        banner = f"Chart of {p['name']} (born {p['dob']}, MRN {p['mrn']})"
        return Reply(200, "idle", banner, {"patient": p, "encounters": encounters})

    def surface(self, name: str) -> Reply:
        """Return every row of one surface (the product's REST read of that table)."""
        if name not in SURFACES:
            return Reply(404, "error", f"no surface {name!r}")
        key = "mrn" if name == "patients" else "id"
        with self._lock:
            rows = _rows(self._conn.execute(f"SELECT * FROM {name} ORDER BY rowid"))
        return Reply(200, "idle", f"{len(rows)} {name}", {"key": key, "rows": rows})

    # -- writes (the persistence boundary) ------------------------------------------

    def _resolve_patient(self, form: Mapping[str, Any]) -> str | None:
        mrn = str(form.get("mrn", ""))
        if self.fault.name == "homonym_name" and self.fault.name_match == "any_order":
            wanted = _tokens(str(form.get("name", "")))
            rows = self._conn.execute("SELECT mrn, name FROM patients ORDER BY rowid")
            return next((str(m) for m, n in rows if _tokens(str(n)) == wanted), None)
        if self.fault.name == "homonym_name":
            row = self._conn.execute(
                "SELECT mrn FROM patients WHERE name = ? ORDER BY rowid LIMIT 1",
                (str(form.get("name", "")),),
            ).fetchone()
            return None if row is None else str(row[0])
        if self.fault.name == "mrn_normalized":
            mrn = normalised(mrn)
        row = self._conn.execute("SELECT mrn FROM patients WHERE mrn = ?", (mrn,)).fetchone()
        return None if row is None else str(row[0])

    def _insert_encounter(self, mrn: str, form: Mapping[str, Any], note: str) -> int:
        status = "signed" if form.get("sign") else "draft"
        if self._drops("status"):
            status = "draft"
        cur = self._conn.execute(
            "INSERT INTO encounters (patient_mrn, type, note, status, idempotency_key) "
            "VALUES (?, ?, ?, ?, ?)",
            (mrn, str(form.get("type", "")), note, status, form.get("idempotency_key")),
        )
        return int(cur.lastrowid or 0)

    def _drops(self, name: str) -> bool:
        return self.fault.name == "partial" and self.fault.dropped == name

    def _insert_charge(self, mrn: str, encounter_id: int, form: Mapping[str, Any]) -> None:
        code = str(form.get("charge_code", ""))
        amount = CHARGE_CENTS.get(code, 0)
        if self._drops("charge_code"):
            code = ""
        self._conn.execute(
            "INSERT INTO billing (patient_mrn, encounter_id, code, claim_ref, amount_cents) "
            "VALUES (?, ?, ?, ?, ?)",
            (mrn, encounter_id, code, str(form.get("claim_ref", "")), amount),
        )

    def _keyed(self, key: Any) -> int | None:
        if key is None:
            return None
        row = self._conn.execute(
            "SELECT id FROM encounters WHERE idempotency_key = ?", (str(key),)
        ).fetchone()
        return None if row is None else int(row[0])

    def _deliver(self, mrn: str, form: Mapping[str, Any], *, dedupe: bool) -> int:
        """Persist one delivery of the form; with ``dedupe`` honour the idempotency key."""
        fault = self.fault.name
        existing = self._keyed(form.get("idempotency_key")) if dedupe else None
        note = "" if self._drops("note") else str(form.get("note", ""))
        encounter_id = existing if existing is not None else self._insert_encounter(mrn, form, note)
        if form.get("sign") and (existing is None or fault == "double_charge"):
            bill_mrn = mrn
            if fault == "charge_wrong_patient":
                row = self._conn.execute(
                    "SELECT patient_mrn FROM billing ORDER BY id DESC LIMIT 1"
                ).fetchone()
                bill_mrn = str(row[0]) if row is not None else mrn
            self._insert_charge(bill_mrn, encounter_id, form)
        return encounter_id

    def save(self, form: Mapping[str, Any]) -> Reply:
        """Handle a click on Save for a new encounter; return the app's reply."""
        fault = self.fault.name
        shown = str(form.get("name", "")) or str(form.get("mrn", ""))
        saved = Reply(201, "success", f"Encounter saved for {shown}")
        refusal = refused(fault, "encounter", self.fault.rejection)
        if refusal is not None:
            return refusal
        if fault == "noop":
            return saved  # the Save button posted to the preview endpoint: no table is touched
        with self._lock:
            mrn = self._resolve_patient(form)
            if mrn is None:
                return Reply(404, "error", f"No chart with MRN {form.get('mrn')}")
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                if fault == "stale_list":
                    cached = self._chart_cache.get(mrn)
                    if cached is not None:
                        marks = ",".join("?" * len(cached)) or "NULL"
                        self._conn.execute(
                            f"DELETE FROM encounters WHERE patient_mrn = ? AND id NOT IN ({marks})",
                            (mrn, *cached),
                        )
                if fault == "stale_allergies":
                    self._conn.execute(
                        f"UPDATE patients SET {self.fault.stale_field} = ? WHERE mrn = ?",
                        (self.fault.stale_allergies, mrn),
                    )
                for copy in range(self.fault.deliveries()):
                    replay = copy > 0 and self.fault.resubmit == "draft"
                    delivered = {**form, "sign": False} if replay else form
                    self._deliver(mrn, delivered, dedupe=CATALOGUE.dedupes(fault))
                if fault == "optimistic":
                    self._conn.execute("ROLLBACK")  # the commit is rejected after the paint
                    return saved
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                return failed("encounter", exc)
        return settled(fault, "encounter", saved)

    def edit(self, encounter_id: int, form: Mapping[str, Any]) -> Reply:
        """Handle Save on an existing encounter's note; return the app's reply."""
        fault = self.fault.name
        saved = Reply(200, "success", f"Encounter {encounter_id} updated")
        if fault == "noop_edit":
            return saved  # the edit went to the autosave preview, never to the table
        target = encounter_id
        if fault == "wrong_row":
            offset = self.fault.row_offset
            target = previous(encounter_id) if offset == -1 else encounter_id + offset
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                cur = self._conn.execute(
                    "UPDATE encounters SET note = ? WHERE id = ?",
                    (str(form.get("note", "")), target),
                )
                if cur.rowcount == 0:
                    self._conn.execute("ROLLBACK")
                    return Reply(404, "error", f"No encounter {encounter_id}")
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                return failed("encounter", exc)
        return saved
