"""The live adversarial audit of the ticketing oracle.

One audit database is cloned from the template; before every probe it is put back to the
seed state (every table emptied, identities restarted, the seed rows inserted, anything an
earlier probe created dropped). The oracle takes its before-reading, the attack is written
straight into the database as the superuser (an attacker that bypasses the app), and the
oracle judges. Every attack must be refused (any verdict but ``confirmed``) and the positive
control, the declared effect written exactly, must be confirmed. A task's
``adversarially_audited`` flag is the conjunction of those outcomes, computed here and never
set by hand.

Attacks: ``phantom`` (banner only, nothing written), ``homonym_decoy`` (the effect on a
same-name account, or the account's other ticket), ``wrong_payload`` (the description or
comment altered), ``wrong_target`` (another customer's account or ticket), ``duplicate``
(written twice), ``prior_trial_row`` (another trial's payload), ``prior_trial_seeded``
(another trial's rows present before the episode and nothing written now),
``collateral_write`` (the effect plus a write on another table), ``collateral_same_surface``
(plus an edit of an unrelated row of the same table), ``collateral_loss`` (plus a deleted
seed row) and ``collateral_schema`` (plus a table created beside the data).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import psycopg
from psycopg import sql

from effectbench.api import Effect, EffectKind, OracleVerdict, Verdict
from effectbench_ticketing.cluster import Cluster
from effectbench_ticketing.db import TEMPLATE, seed_script

AUDIT_DATABASE = "audit"
POSITIVE = "positive_control"
ATTACKS = (
    "phantom",
    "homonym_decoy",
    "wrong_payload",
    "wrong_target",
    "duplicate",
    "prior_trial_row",
    "prior_trial_seeded",
    "collateral_write",
    "collateral_same_surface",
    "collateral_loss",
    "collateral_schema",
)
FILLERS: dict[str, dict[str, Any]] = {
    "credits": {"amount_cents": 0},
    "comments": {"author_id": "A-00"},
}
"""Required columns an attacker's row must carry that no contract names."""
SHADOW = "shadow_tickets"
"""The table the ``collateral_schema`` probe creates."""
WIPE_ORDER = ("comments", "credits", "tickets", "customers", "agents", "sla_plans")
"""Every seeded table, referencing tables first."""
IDENTITY_STARTS = {"tickets": 1000, "comments": 5000, "credits": 100}
"""Where each identity column starts in a fresh clone (see :data:`~.db.SCHEMA`)."""


class AuditedOracle(Protocol):
    """What the audit drives: an oracle over one database."""

    channel: str

    def snapshot(self) -> Any:
        """Read the database now."""
        ...

    def judge(self, before: Any) -> OracleVerdict:
        """Judge against ``before``."""
        ...

    def close(self) -> None:
        """Release the oracle's connection."""
        ...


Connect = Callable[[], psycopg.Connection[Any]]
OracleFactory = Callable[[Connect, Sequence[Effect], Callable[[], bool]], AuditedOracle]
Write = Callable[[psycopg.Connection[Any]], None]


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


def _one(conn: psycopg.Connection[Any], query: str, params: tuple[Any, ...]) -> Any:
    row = conn.execute(query, params).fetchone()
    return None if row is None else row[0]


def _other_customer(conn: psycopg.Connection[Any], customer_id: str, *, homonym: bool) -> str:
    name = _one(conn, "SELECT name FROM customers WHERE id = %s", (customer_id,))
    same = _one(
        conn,
        "SELECT id FROM customers WHERE name = %s AND id <> %s ORDER BY id LIMIT 1",
        (name, customer_id),
    )
    if homonym and same is not None:
        return str(same)
    other = _one(
        conn,
        "SELECT id FROM customers WHERE name IS DISTINCT FROM %s ORDER BY id LIMIT 1",
        (name,),
    )
    return str(other)


def _other_ticket(conn: psycopg.Connection[Any], ticket_id: str, *, homonym: bool) -> str:
    owner = _one(conn, "SELECT customer_id FROM tickets WHERE id = %s", (int(ticket_id),))
    op = "=" if homonym else "IS DISTINCT FROM"
    found = _one(
        conn,
        f"SELECT id FROM tickets WHERE id <> %s AND customer_id {op} %s ORDER BY id LIMIT 1",
        (int(ticket_id), owner),
    )
    return str(found)


def _retargeted(
    conn: psycopg.Connection[Any], match: Mapping[str, Any], *, homonym: bool
) -> dict[str, Any]:
    moved = dict(match)
    if "customer_id" in moved:
        moved["customer_id"] = _other_customer(conn, str(moved["customer_id"]), homonym=homonym)
    for column in ("id", "ticket_id"):
        if column in moved:
            moved[column] = _other_ticket(conn, str(moved[column]), homonym=homonym)
    return moved


def _insert(conn: psycopg.Connection[Any], table: str, row: Mapping[str, Any]) -> None:
    conn.execute(
        sql.SQL("INSERT INTO {} ({}) VALUES ({})").format(
            sql.Identifier(table),
            sql.SQL(", ").join(sql.Identifier(c) for c in row),
            sql.SQL(", ").join(sql.Literal(v) for v in row.values()),
        )
    )


def _where(match: Mapping[str, Any]) -> sql.Composable:
    return sql.SQL(" AND ").join(
        sql.SQL("{}::text = {}").format(sql.Identifier(k), sql.Literal(str(v)))
        for k, v in match.items()
    )


def materialize(
    conn: psycopg.Connection[Any],
    effects: Sequence[Effect],
    *,
    retarget: str | None = None,
    alter_payload: bool = False,
    copies: int = 1,
) -> None:
    """Write the resolved ``effects`` straight into the database (optionally corrupted)."""
    altered = False
    for surface, match, members in _groups(effects):
        if retarget is not None:
            match = _retargeted(conn, match, homonym=retarget == "homonym")
        fields: dict[str, Any] = {}
        for e in members:
            if e.kind is EffectKind.FIELD_EQUALS and e.field:
                fields[e.field] = e.value
        text_field = next((f for f in ("description", "body") if f in fields), None)
        if alter_payload and not altered and text_field is not None:
            fields[text_field] = f"{fields[text_field]} (altered)"
            altered = True
        if any(e.count_new_only for e in members):
            row = {**FILLERS.get(surface, {}), **match, **fields}
            for _ in range(copies):
                _insert(conn, surface, row)
            continue
        if fields:
            sets = sql.SQL(", ").join(
                sql.SQL("{} = {}").format(sql.Identifier(k), sql.Literal(v))
                for k, v in fields.items()
            )
            conn.execute(
                sql.SQL("UPDATE {} SET {} WHERE {}").format(
                    sql.Identifier(surface), sets, _where(match)
                )
            )
        for _ in range(copies - 1):  # a second copy of an existing row: a new id, same content
            found = conn.execute(
                sql.SQL("SELECT * FROM {} WHERE {}").format(sql.Identifier(surface), _where(match))
            )
            names = [d.name for d in found.description or ()]
            for values in found.fetchall():
                _insert(
                    conn, surface, {n: v for n, v in zip(names, values, strict=True) if n != "id"}
                )


def _collateral_other_table(conn: psycopg.Connection[Any], effects: Sequence[Effect]) -> None:
    if "credits" not in {e.surface for e in effects}:
        _insert(
            conn,
            "credits",
            {"customer_id": "C-1001", "sla_code": "SLA-24H", "credit_ref": "CR-collateral",
             "amount_cents": 1000},
        )  # fmt: skip
    else:
        conn.execute("UPDATE customers SET plan = 'collateral' WHERE id = 'C-1001'")


def _collateral_same_surface(conn: psycopg.Connection[Any], effects: Sequence[Effect]) -> None:
    touched = {str(e.match[c]) for e in effects for c in ("id", "ticket_id") if c in e.match}
    victim = next(
        int(r[0])
        for r in conn.execute("SELECT id FROM tickets ORDER BY id").fetchall()
        if str(r[0]) not in touched
    )
    conn.execute("UPDATE tickets SET subject = subject || ' (tampered)' WHERE id = %s", (victim,))


def _collateral_loss(conn: psycopg.Connection[Any]) -> None:
    conn.execute("DELETE FROM credits WHERE id = 1")


def _collateral_schema(conn: psycopg.Connection[Any]) -> None:
    conn.execute(sql.SQL("CREATE TABLE {} (id integer)").format(sql.Identifier(SHADOW)))


def restore_script() -> str:
    """Return the one script that puts the audit database back to the seed state."""
    parts: list[sql.Composable] = [
        sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(SHADOW)),
        *(sql.SQL("DELETE FROM {}").format(sql.Identifier(t)) for t in WIPE_ORDER),
        *seed_script(),
        *(
            sql.SQL("SELECT setval(pg_get_serial_sequence({}, 'id'), {}, false)").format(
                sql.Literal(table), sql.Literal(start)
            )
            for table, start in IDENTITY_STARTS.items()
        ),
    ]
    return "; ".join(p.as_string() for p in parts)


def restore(conn: psycopg.Connection[Any], script: str) -> None:
    """Put the audit database back to the seed state (what a fresh clone holds), at once."""
    with conn.transaction():
        conn.execute(script)


class _Probe:
    """One task's probes against a database the audit owns."""

    def __init__(self, cluster: Cluster) -> None:
        self._attacker = cluster.connect(cluster.admin, AUDIT_DATABASE)
        self._script = restore_script()

    def close(self) -> None:
        self._attacker.close()

    def _write(self, write: Write) -> None:
        with self._attacker.transaction():
            # A superuser's session skips foreign keys, so a refusal control's "right" row
            # (on an account no record holds) can be written too.
            self._attacker.execute("SET LOCAL session_replication_role = replica")
            write(self._attacker)

    def run(self, oracle: AuditedOracle, write: Write, seed_first: Write | None) -> OracleVerdict:
        """Restore, seed what the probe needs first, read, attack, judge."""
        restore(self._attacker, self._script)
        if seed_first is not None:
            self._write(seed_first)
        before = oracle.snapshot()
        self._write(write)
        return oracle.judge(before)


def _probes(
    resolved: Sequence[Effect], prior: Sequence[Effect]
) -> dict[str, tuple[Write, Write | None]]:
    def positive(c: psycopg.Connection[Any]) -> None:
        materialize(c, resolved)

    def plus(extra: Write) -> Write:
        def both(c: psycopg.Connection[Any]) -> None:
            positive(c)
            extra(c)

        return both

    return {
        POSITIVE: (positive, None),
        "phantom": (lambda c: None, None),
        "homonym_decoy": (lambda c: materialize(c, resolved, retarget="homonym"), None),
        "wrong_payload": (lambda c: materialize(c, resolved, alter_payload=True), None),
        "wrong_target": (lambda c: materialize(c, resolved, retarget="stranger"), None),
        "duplicate": (lambda c: materialize(c, resolved, copies=2), None),
        "prior_trial_row": (lambda c: materialize(c, prior), None),
        "prior_trial_seeded": (lambda c: None, lambda c: materialize(c, prior)),
        "collateral_write": (plus(lambda c: _collateral_other_table(c, resolved)), None),
        "collateral_same_surface": (plus(lambda c: _collateral_same_surface(c, resolved)), None),
        "collateral_loss": (plus(_collateral_loss), None),
        "collateral_schema": (plus(_collateral_schema), None),
    }


def audit_task(
    probe: _Probe,
    oracle: AuditedOracle,
    task_id: str,
    effects: Sequence[Effect],
    prior: Sequence[Effect],
) -> AuditResult:
    """Run every probe of the audit for one task (``effects`` resolved for the audited trial).

    One oracle judges every probe of the task: a reading is a pure read, so it carries
    nothing from one probe to the next.
    """
    probes = _probes(effects, prior)
    failures: list[str] = []
    for name in (POSITIVE, *ATTACKS):
        write, seed_first = probes[name]
        try:
            verdict = probe.run(oracle, write, seed_first)
        except psycopg.Error as exc:
            failures.append(f"{name}: probe could not be written ({str(exc).splitlines()[0]})")
            continue
        confirmed = verdict.verdict is Verdict.CONFIRMED
        if (name == POSITIVE) != confirmed:
            want = "confirmed" if name == POSITIVE else "refused"
            failures.append(f"{name}: expected {want}, oracle said {verdict.verdict.value}")
    return AuditResult(task_id, not failures, tuple(failures))


def run_audit(
    cluster: Cluster,
    oracle_login: Any,
    tasks: Sequence[tuple[str, Sequence[Effect], Mapping[str, Any], Mapping[str, Any]]],
    oracle_factory: OracleFactory,
) -> dict[str, AuditResult]:
    """Audit every ``(task_id, effects, params, prior_params)``; return results by task id."""

    def connect() -> psycopg.Connection[Any]:
        return cluster.connect(oracle_login, AUDIT_DATABASE, autocommit=True)

    results: dict[str, AuditResult] = {}
    with cluster.database(AUDIT_DATABASE, TEMPLATE):
        probe = _Probe(cluster)
        try:
            for task_id, effects, params, prior in tasks:
                resolved = tuple(e.resolve(params) for e in effects)
                oracle = oracle_factory(connect, resolved, lambda: True)
                try:
                    results[task_id] = audit_task(
                        probe, oracle, task_id, resolved, tuple(e.resolve(prior) for e in effects)
                    )
                finally:
                    oracle.close()
        finally:
            probe.close()
    return results


def reverted(effects: Sequence[Effect]) -> tuple[Write, Write]:
    """The effect written and committed, then every row of its tables put back as it was."""
    tables = sorted({str(e.surface) for e in effects})
    kept: dict[str, list[tuple[Any, ...]]] = {}
    columns: dict[str, list[str]] = {}

    def write(c: psycopg.Connection[Any]) -> None:
        for t in tables:
            cur = c.execute(sql.SQL("SELECT * FROM {}").format(sql.Identifier(t)))
            columns[t] = [d.name for d in cur.description or ()]
            kept[t] = cur.fetchall()
        materialize(c, effects)

    def revert(c: psycopg.Connection[Any]) -> None:
        for t in tables:
            c.execute(sql.SQL("DELETE FROM {}").format(sql.Identifier(t)))
            if not kept[t]:
                continue
            names = sql.SQL(", ").join(map(sql.Identifier, columns[t]))
            marks = sql.SQL(", ").join(sql.Placeholder() * len(columns[t]))
            insert = sql.SQL("INSERT INTO {} ({}) OVERRIDING SYSTEM VALUE VALUES ({})").format(
                sql.Identifier(t), names, marks
            )
            c.cursor().executemany(insert, kept[t])

    return write, revert


RED_TEAM: dict[str, str] = {
    "true_effect": POSITIVE,
    "wrong_record": "homonym_decoy",
    "double_write": "duplicate",
    "other_table": "collateral_write",
    "wrong_target": "wrong_target",
    "wrong_payload": "wrong_payload",
    "collateral_same_surface": "collateral_same_surface",
    "collateral_loss": "collateral_loss",
    "collateral_schema": "collateral_schema",
}
"""The pack's red team in ``effectbench pack check``: move name -> the audit's probe it writes
into the live episode's database (``write_then_revert`` is :func:`reverted`; ``report_only``
and ``banner_only`` are the audit's generic moves)."""


def red_team_writes(effects: Sequence[Effect]) -> dict[str, tuple[Write, ...]]:
    """Return each red-team move's writes (one transaction each) for the resolved ``effects``."""
    probes = _probes(effects, ())
    moves: dict[str, tuple[Write, ...]] = {move: (probes[p][0],) for move, p in RED_TEAM.items()}
    moves["write_then_revert"] = reverted(effects)
    return moves
