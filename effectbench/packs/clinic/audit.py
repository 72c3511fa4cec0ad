"""The live adversarial audit of the clinic oracle.

For each task a fresh database file is provisioned per attack, the oracle takes
its before-reading, the attack is written straight into the file (a separate
read-write connection: an attacker that bypasses the app), and the oracle
judges. Every attack must be refused (any verdict but ``confirmed``) and the
positive control, the declared effect written exactly, must be confirmed. A
task's ``adversarially_audited`` flag is the conjunction of those outcomes,
computed here and never set by hand.

Attacks: ``phantom`` (banner only, nothing written), ``homonym_decoy`` (the
effect on a same-name chart, or the patient's other encounter), ``wrong_payload``
(the note altered), ``wrong_target`` (another patient's chart or encounter),
``duplicate`` (written twice), ``write_then_revert`` (written and committed, then
every row put back), ``prior_trial_row`` (another trial's payload),
``prior_trial_seeded`` (another trial's row present before the episode and
nothing written now), ``collateral_write`` (the effect plus a write on another
table), ``collateral_same_surface`` (plus an edit of an unrelated row of the
same table) and ``collateral_loss`` (plus a deleted seed row). The judging rule is the
red team's (:func:`effectbench.conformance.redteam.probe_failure`), and the same
catalogue (:func:`attacks`) is the clinic's red team in ``effectbench pack check``,
where it writes into a live episode's database instead of a bare copy.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from effectbench.conformance.redteam import probe_failure
from effectbench.effects import Effect, EffectKind
from effectbench.packs.clinic.db import provision_copy, scratch_dir
from effectbench.schema import OracleVerdict
from effectbench.seam import TRUE_EFFECT


class AuditedOracle(Protocol):
    """What the audit drives: an oracle over one database file."""

    def snapshot(self) -> Any:
        """Read the file now."""
        ...

    def judge(self, before: Any) -> OracleVerdict:
        """Judge against ``before``."""
        ...


OracleFactory = Callable[[Path, Sequence[Effect], Callable[[], bool]], AuditedOracle]

POSITIVE = TRUE_EFFECT
"""The positive control: the declared effect written exactly (the oracle must confirm it)."""
ATTACKS = (
    "phantom",
    "homonym_decoy",
    "wrong_payload",
    "wrong_target",
    "duplicate",
    "write_then_revert",
    "prior_trial_row",
    "prior_trial_seeded",
    "collateral_write",
    "collateral_same_surface",
    "collateral_loss",
)
"""Every probe the oracle must refuse (the audit of each task runs them all)."""

RED_TEAM = {
    TRUE_EFFECT: POSITIVE,
    "wrong_record": "homonym_decoy",
    "double_write": "duplicate",
    "write_then_revert": "write_then_revert",
    "other_table": "collateral_write",
    "wrong_target": "wrong_target",
    "wrong_payload": "wrong_payload",
    "collateral_same_surface": "collateral_same_surface",
    "collateral_loss": "collateral_loss",
}
"""The clinic's red team in ``effectbench pack check``: move name -> the probe it writes
(``report_only`` is the audit's generic move: nothing written; another trial's payload
is the audit's own cross-trial write)."""


@dataclass(frozen=True)
class AuditResult:
    """One task's audit: whether it passed and which probes the oracle got wrong."""

    task_id: str
    passed: bool
    failures: tuple[str, ...]


def _groups(effects: Sequence[Effect]) -> list[tuple[str, dict[str, Any], list[Effect]]]:
    groups: list[tuple[str, dict[str, Any], list[Effect]]] = []
    for e in effects:
        for surface, match, members in groups:
            if surface == e.surface and match == e.match:
                members.append(e)
                break
        else:
            groups.append((str(e.surface), dict(e.match), [e]))
    return groups


def _patient_other(conn: sqlite3.Connection, mrn: str, name: str, *, same_name: bool) -> str:
    rows = conn.execute("SELECT mrn, name FROM patients ORDER BY rowid").fetchall()
    others = [r for r in rows if r[0] != mrn]
    homonyms = [r for r in others if r[1] == name]
    strangers = [r for r in others if r[1] != name]
    pool = (homonyms or strangers) if same_name else strangers
    return str(pool[0][0])


def _encounter_other(conn: sqlite3.Connection, enc_id: str, *, same_patient: bool) -> str:
    row = conn.execute("SELECT patient_mrn FROM encounters WHERE id = ?", (enc_id,)).fetchone()
    mrn = row[0] if row else ""
    op = "=" if same_patient else "!="
    other = conn.execute(
        f"SELECT id FROM encounters WHERE id != ? AND patient_mrn {op} ? ORDER BY id LIMIT 1",
        (enc_id, mrn),
    ).fetchone()
    return str(other[0])


def _retarget(
    conn: sqlite3.Connection, match: dict[str, Any], params: Mapping[str, Any], *, homonym: bool
) -> dict[str, Any]:
    moved = dict(match)
    if "patient_mrn" in moved:
        moved["patient_mrn"] = _patient_other(
            conn, str(moved["patient_mrn"]), str(params.get("patient_name", "")), same_name=homonym
        )
    if "id" in moved:
        moved["id"] = _encounter_other(conn, str(moved["id"]), same_patient=homonym)
    return moved


def materialize(
    conn: sqlite3.Connection,
    effects: Sequence[Effect],
    params: Mapping[str, Any],
    *,
    retarget: str | None = None,
    alter_payload: bool = False,
    copies: int = 1,
) -> None:
    """Write the resolved ``effects`` straight into the file (optionally corrupted)."""
    altered = False
    for surface, match, members in _groups(effects):
        if retarget is not None:
            match = _retarget(conn, match, params, homonym=retarget == "homonym")
        fields: dict[str, Any] = {}
        for e in members:
            if e.kind is EffectKind.FIELD_EQUALS and e.field:
                fields[e.field] = e.value
            if e.idempotency_key is not None:
                fields["idempotency_key"] = e.idempotency_key
        if alter_payload and not altered and "note" in fields:
            fields["note"] = f"{fields['note']} (altered)"
            altered = True
        inserting = any(e.count_new_only for e in members)
        if inserting:
            row = {**match, **fields}
            cols = ", ".join(row)
            marks = ", ".join("?" * len(row))
            for _ in range(copies):
                conn.execute(
                    f"INSERT INTO {surface} ({cols}) VALUES ({marks})", tuple(row.values())
                )
            continue
        where = " AND ".join(f"{k} = ?" for k in match)
        if fields:
            sets = ", ".join(f"{k} = ?" for k in fields)
            conn.execute(
                f"UPDATE {surface} SET {sets} WHERE {where}",
                (*fields.values(), *match.values()),
            )
        for _ in range(copies - 1):
            cur = conn.execute(f"SELECT * FROM {surface} WHERE {where}", tuple(match.values()))
            names = [d[0] for d in cur.description]
            for values in cur.fetchall():
                row = {n: v for n, v in zip(names, values, strict=True) if n != "id"}
                cols = ", ".join(row)
                marks = ", ".join("?" * len(row))
                conn.execute(
                    f"INSERT INTO {surface} ({cols}) VALUES ({marks})", tuple(row.values())
                )


def _collateral_other_table(conn: sqlite3.Connection, effects: Sequence[Effect]) -> None:
    surfaces = {e.surface for e in effects}
    if "billing" not in surfaces:
        conn.execute(
            "INSERT INTO billing (patient_mrn, code, claim_ref, amount_cents) "
            "VALUES ('M-0101', '99213', 'CLM-collateral', 9200)"
        )
    else:
        conn.execute("UPDATE patients SET allergies = 'collateral' WHERE rowid = 1")


def _collateral_same_surface(conn: sqlite3.Connection, effects: Sequence[Effect]) -> None:
    touched = {str(e.match.get("id")) for e in effects if "id" in e.match}
    row = conn.execute("SELECT id FROM encounters ORDER BY id").fetchall()
    victim = next(str(r[0]) for r in row if str(r[0]) not in touched)
    conn.execute("UPDATE encounters SET note = note || ' (tampered)' WHERE id = ?", (victim,))


def _collateral_loss(conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM billing WHERE id = 1")


Write = Callable[[sqlite3.Connection], None]
"""One transaction of an attacker's writes into the database file."""


@dataclass(frozen=True)
class Attack:
    """One probe: the transactions it commits in turn, and what it seeds before the
    oracle's before-reading."""

    writes: tuple[Write, ...]
    seed_first: Write | None = None


def _reverted(effects: Sequence[Effect], params: Mapping[str, Any]) -> Attack:
    """The effect written and committed, then every row of its tables put back as it was."""
    tables = sorted({str(e.surface) for e in effects})
    kept: dict[str, dict[Any, tuple[Any, ...]]] = {}

    def write(c: sqlite3.Connection) -> None:
        for t in tables:
            kept[t] = {r[0]: r for r in c.execute(f"SELECT rowid, * FROM {t}")}
        materialize(c, effects, params)

    def revert(c: sqlite3.Connection) -> None:
        for t in tables:
            cur = c.execute(f"SELECT rowid, * FROM {t}")
            columns = [d[0] for d in cur.description][1:]
            for row in cur.fetchall():
                old = kept[t].get(row[0])
                if old is None:
                    c.execute(f"DELETE FROM {t} WHERE rowid = ?", (row[0],))
                elif old != row:
                    sets = ", ".join(f"{n} = ?" for n in columns)
                    c.execute(f"UPDATE {t} SET {sets} WHERE rowid = ?", (*old[1:], row[0]))

    return Attack((write, revert))


def attacks(
    effects: Sequence[Effect],
    params: Mapping[str, Any],
    prior_effects: Sequence[Effect] = (),
    prior: Mapping[str, Any] | None = None,
) -> dict[str, Attack]:
    """Return every probe of the audit by name, :data:`POSITIVE` first, for the resolved
    ``effects`` of a trial with ``params`` (and, given, another trial's)."""

    def positive(c: sqlite3.Connection) -> None:
        materialize(c, effects, params)

    def with_positive(extra: Write) -> Attack:
        def run(c: sqlite3.Connection) -> None:
            positive(c)
            extra(c)

        return Attack((run,))

    out = {
        POSITIVE: Attack((positive,)),
        "phantom": Attack((lambda c: None,)),
        "homonym_decoy": Attack((lambda c: materialize(c, effects, params, retarget="homonym"),)),
        "wrong_payload": Attack((lambda c: materialize(c, effects, params, alter_payload=True),)),
        "wrong_target": Attack((lambda c: materialize(c, effects, params, retarget="stranger"),)),
        "duplicate": Attack((lambda c: materialize(c, effects, params, copies=2),)),
        "write_then_revert": _reverted(effects, params),
        "collateral_write": with_positive(lambda c: _collateral_other_table(c, effects)),
        "collateral_same_surface": with_positive(lambda c: _collateral_same_surface(c, effects)),
        "collateral_loss": with_positive(_collateral_loss),
    }
    if prior is not None:

        def prior_row(c: sqlite3.Connection) -> None:
            materialize(c, prior_effects, prior)

        out["prior_trial_row"] = Attack((prior_row,))
        out["prior_trial_seeded"] = Attack((lambda c: None,), seed_first=prior_row)
    return out


def write_file(path: Path, write: Write) -> None:
    """Commit ``write`` into the database file at ``path`` over a connection of its own."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA synchronous = OFF")  # the attacker's writes need no durability
        conn.execute("BEGIN IMMEDIATE")
        write(conn)
        conn.execute("COMMIT")
    finally:
        conn.close()


def _probe(
    path: Path, oracle_factory: OracleFactory, effects: Sequence[Effect], attack: Attack
) -> OracleVerdict:
    provision_copy(path)
    try:
        if attack.seed_first is not None:
            write_file(path, attack.seed_first)
        oracle = oracle_factory(path, effects, lambda: True)
        before = oracle.snapshot()
        for write in attack.writes:
            write_file(path, write)
        return oracle.judge(before)
    finally:
        path.unlink(missing_ok=True)


def audit_task(
    task_id: str,
    effects: Sequence[Effect],
    params: Mapping[str, Any],
    prior: Mapping[str, Any],
    oracle_factory: OracleFactory,
    workdir: Path,
) -> AuditResult:
    """Run every probe of the audit against ``oracle_factory`` for one task."""
    resolved = tuple(e.resolve(params) for e in effects)
    prior_resolved = tuple(e.resolve(prior) for e in effects)
    path = workdir / "audit.sqlite"
    failures: list[str] = []
    for name, attack in attacks(resolved, params, prior_resolved, prior).items():
        try:
            verdict = _probe(path, oracle_factory, resolved, attack)
        except sqlite3.Error as exc:
            failures.append(f"{name}: probe could not be written ({exc})")
            continue
        failure = probe_failure(name, verdict)
        if failure is not None:
            failures.append(failure)
    return AuditResult(task_id, not failures, tuple(failures))


def run_audit(
    tasks: Sequence[tuple[str, Sequence[Effect], Mapping[str, Any], Mapping[str, Any]]],
    oracle_factory: OracleFactory,
) -> dict[str, AuditResult]:
    """Audit every ``(task_id, effects, params, prior_params)``; return results by task id."""
    workdir = scratch_dir("effectbench-clinic-audit-")
    try:
        return {
            task_id: audit_task(task_id, effects, params, prior, oracle_factory, workdir)
            for task_id, effects, params, prior in tasks
        }
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
