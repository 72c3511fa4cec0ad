"""The clinic's system of record: the SQLite schema and its seed rows.

Every episode gets its own database file, a copy of one template file the kit builds once
per process from :data:`SCHEMA` and the seed rows (:data:`TEMPLATE`, never by replaying
inserts per episode). The template holds the seed state of every task at once, so a fresh
copy is the initial state of any trial.
"""

from __future__ import annotations

from typing import Any

from effectbench.hashing import canonical_hash
from effectbench.kit.sqlite import SCRATCH_ENV, Template, scratch_dir, seed_database, sweep_scratch

SCHEMA = """
CREATE TABLE patients (
    mrn TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    dob TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'active',
    allergies TEXT NOT NULL DEFAULT 'none recorded'
);
CREATE TABLE encounters (
    id INTEGER PRIMARY KEY,
    patient_mrn TEXT NOT NULL REFERENCES patients(mrn),
    type TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT 'draft',
    idempotency_key TEXT
);
CREATE TABLE billing (
    id INTEGER PRIMARY KEY,
    patient_mrn TEXT NOT NULL REFERENCES patients(mrn),
    encounter_id INTEGER REFERENCES encounters(id),
    code TEXT NOT NULL DEFAULT '',
    claim_ref TEXT NOT NULL DEFAULT '',
    amount_cents INTEGER NOT NULL DEFAULT 0
);
"""
"""Three mutable surfaces: patients, encounters and billing."""

SURFACES = ("patients", "encounters", "billing")
"""The tables the record service exposes, in a fixed order."""

# Insertion order matters: where two charts share a name, the first inserted is the
# one a faulty name lookup lands on.
PATIENTS: tuple[tuple[str, str, str, str, str], ...] = (
    ("M-0101", "Jonas Berg", "1975-02-11", "active", "none recorded"),
    ("M-0102", "Priya Natarajan", "1988-07-30", "active", "latex"),
    ("M-0232", "David Chen", "1992-01-05", "active", "none recorded"),
    ("M-0233", "David Chen", "1969-09-14", "active", "sulfa"),
    ("M-417", "Maria Lopez", "1980-03-02", "active", "none recorded"),
    ("M-0417", "Maria Lopez", "1980-03-02", "active", "aspirin"),
    ("M-0301", "Sam Okafor", "1990-12-01", "active", "none recorded"),
    ("M-0302", "Sam Okafor", "1990-12-01", "active", "none recorded"),
    ("M-0998", "Ana Ruiz", "1987-10-03", "active", "none recorded"),
    ("M-0510", "Lee Kim", "1958-05-19", "active", "none recorded"),
    ("M-0511", "Lee Kim", "2001-11-23", "active", "none recorded"),
    ("M-0620", "Olga Petrov", "1949-08-08", "active", "codeine"),
    ("M-0730", "Tomas Novak", "1983-06-17", "active", "penicillin"),
    ("M-0801", "Nora Haddad", "1995-04-04", "active", "none recorded"),
    ("M-0802", "Nora Haddad", "1971-12-29", "active", "none recorded"),
)
"""(mrn, name, dob, status, allergies); homonyms share a name (and sometimes a birth date)."""

ENCOUNTERS: tuple[tuple[int, str, str, str, str, str | None], ...] = (
    (100, "M-0620", "Follow-up", "BP stable on current dose", "draft", None),
    (101, "M-0620", "Follow-up", "initial follow-up note", "draft", None),
    (102, "M-0102", "Triage", "earlier visit", "signed", None),
    (103, "M-0730", "Triage", "earlier triage, chest pain ruled out", "signed", None),
    (201, "M-0730", "Urgent", "added by a colleague after the chart was opened", "draft", None),
    (104, "M-0101", "Triage", "earlier visit", "signed", None),
)
"""(id, patient_mrn, type, note, status, idempotency_key)."""

BILLING: tuple[tuple[int, str, int | None, str, str, int], ...] = (
    (1, "M-0102", 102, "99213", "CLM-seed-0102", 9200),
    (2, "M-0730", 103, "99284", "CLM-seed-0730", 31000),
    (3, "M-0101", 104, "99213", "CLM-seed-0101", 9200),
)
"""(id, patient_mrn, encounter_id, code, claim_ref, amount_cents)."""

SEED: dict[str, Any] = {
    "schema": SCHEMA,
    "patients": PATIENTS,
    "encounters": ENCOUNTERS,
    "billing": BILLING,
}

TEMPLATE_DIGEST = canonical_hash(SEED)
"""A stable identity of the template's content (independent of SQLite's file bytes)."""


TEMPLATE = Template("clinic", lambda conn: seed_database(conn, SEED))
"""This process's template file, built on first use and copied per episode."""
template_path = TEMPLATE.path
provision_copy = TEMPLATE.copy

__all__ = [
    "SCHEMA",
    "SCRATCH_ENV",
    "SEED",
    "SURFACES",
    "TEMPLATE",
    "TEMPLATE_DIGEST",
    "provision_copy",
    "scratch_dir",
    "sweep_scratch",
    "template_path",
]
