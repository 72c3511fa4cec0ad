"""The clinic's system of record: the SQLite schema, its seed rows and the template file.

Every episode gets its own database file, provisioned by copying one template
file that is built once per process from :data:`SCHEMA` and :data:`SEED` (never
by replaying inserts per episode). The template holds the seed state of every
task at once, so a fresh copy is the initial state of any trial.
"""

from __future__ import annotations

import multiprocessing.util
import os
import re
import shutil
import sqlite3
import tempfile
import threading
from pathlib import Path
from typing import Any

from effectbench.hashing import canonical_hash

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

SHM = Path("/dev/shm")
"""RAM-backed storage for the database files, used where it is writable."""

SCRATCH_ENV = "EFFECTBENCH_SCRATCH_DIR"
"""Names another folder for the database files (a test's, or a disk with more room)."""

_lock = threading.Lock()
_template: Path | None = None


def _build(path: Path) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.executescript(SCHEMA)
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO patients VALUES (?, ?, ?, ?, ?)", PATIENTS)
        conn.executemany("INSERT INTO encounters VALUES (?, ?, ?, ?, ?, ?)", ENCOUNTERS)
        conn.executemany("INSERT INTO billing VALUES (?, ?, ?, ?, ?, ?)", BILLING)
        conn.execute("COMMIT")
    finally:
        conn.close()


SCRATCH_NAME = re.compile(r"effectbench-clinic-[a-z-]*?pid(\d+)-[a-z0-9_]{8}")
"""The name of a scratch folder: its prefix, the pid of the process that made it, a suffix."""


def scratch_base() -> Path:
    """Return the folder scratch folders are made in (``$EFFECTBENCH_SCRATCH_DIR``, else
    ``/dev/shm`` where writable, else the system's temporary folder)."""
    chosen = os.environ.get(SCRATCH_ENV)
    if chosen:
        return Path(chosen)
    return SHM if SHM.is_dir() and os.access(SHM, os.W_OK) else Path(tempfile.gettempdir())


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive, and not ours to judge
        return True
    return True


def sweep_scratch(base: Path) -> list[Path]:
    """Remove the scratch folders in ``base`` that a process killed before its cleanup
    left: this user's, named after a process that no longer runs. Return them."""
    removed: list[Path] = []
    uid = os.getuid()
    try:
        entries = list(os.scandir(base))
    except OSError:
        return removed
    for entry in entries:
        found = SCRATCH_NAME.fullmatch(entry.name)
        try:  # its owner (or another sweep) may remove it while we look
            if found is None or not entry.is_dir(follow_symlinks=False):
                continue
            owner = entry.stat(follow_symlinks=False).st_uid
        except OSError:
            continue
        if owner != uid or _alive(int(found.group(1))):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed.append(Path(entry.path))
    return removed


def scratch_dir(prefix: str) -> Path:
    """Make a private folder for database files: RAM-backed ``/dev/shm`` where available.

    Episode files are throwaway copies; keeping them off the disk removes the
    fsync of every commit from the episode's time. The process that made a folder
    removes it (see the callers); the folders of a process killed before it could are
    removed by the next process that makes one (:func:`sweep_scratch`), so none piles up.
    """
    base = scratch_base()
    sweep_scratch(base)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}pid{os.getpid()}-", dir=base))


def template_path() -> Path:
    """Return this process's template database file, building it on first use."""
    global _template
    with _lock:
        if _template is None or not _template.exists():
            folder = scratch_dir("effectbench-clinic-template-")
            path = folder / "template.sqlite"
            _build(path)
            _template = path
            # Runs at interpreter exit and at a multiprocessing worker's exit alike.
            multiprocessing.util.Finalize(
                None, shutil.rmtree, args=(folder,), kwargs={"ignore_errors": True}, exitpriority=1
            )
        return _template


def provision_copy(dest: Path) -> Path:
    """Copy the template to ``dest`` (a fresh database file) and return ``dest``."""
    shutil.copyfile(template_path(), dest)
    return dest
