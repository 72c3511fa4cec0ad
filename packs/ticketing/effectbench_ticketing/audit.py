"""What EffectBench's audit harness needs of the support desk: its probes' targets and its bench.

The probes, the rule that judges them and the red team are EffectBench's
(:mod:`effectbench.api`: :data:`~effectbench.api.ATTACKS`, :func:`~effectbench.api.run_audit`);
the desk says which record a probe moves to (a same-name account or the account's other
ticket, else a stranger's), its three collateral writes (an SLA credit or an account's plan
written beside the effect, an unrelated ticket's subject tampered with, a seed credit
deleted), that the description or the comment is the payload a probe alters, and the columns
an attacker's row needs that no contract names.

Its bench is one audit database cloned from the template; before every probe it is put back
to the seed state (every table emptied, identities restarted, the seed rows inserted, anything
an earlier probe created dropped), and the attack is written as the superuser with foreign
keys off (an attacker that bypasses the app; a refusal control's "right" row, on an account no
record holds, can be written too).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from effectbench.api import SHADOW, AuditPlan, Db, Effect, Write
from effectbench_ticketing.cluster import Cluster, Login
from effectbench_ticketing.db import TEMPLATE, seed_script

AUDIT_DATABASE = "audit"
WIPE_ORDER = ("comments", "credits", "tickets", "customers", "agents", "sla_plans")
"""Every seeded table, referencing tables first."""
IDENTITY_STARTS = {"tickets": 1000, "comments": 5000, "credits": 100}
"""Where each identity column starts in a fresh clone (see :data:`~.db.SCHEMA`)."""


def _other_customer(db: Db, customer_id: str, *, homonym: bool) -> str:
    name = db.one("SELECT name FROM customers WHERE id = ?", (customer_id,))
    same = db.one(
        "SELECT id FROM customers WHERE name = ? AND id <> ? ORDER BY id LIMIT 1",
        (name, customer_id),
    )
    if homonym and same is not None:
        return str(same)
    query = "SELECT id FROM customers WHERE name IS DISTINCT FROM ? ORDER BY id LIMIT 1"
    return str(db.one(query, (name,)))


def _other_ticket(db: Db, ticket_id: str, *, homonym: bool) -> str:
    owner = db.one("SELECT customer_id FROM tickets WHERE id = ?", (int(ticket_id),))
    op = "=" if homonym else "IS DISTINCT FROM"
    query = f"SELECT id FROM tickets WHERE id <> ? AND customer_id {op} ? ORDER BY id LIMIT 1"
    return str(db.one(query, (int(ticket_id), owner)))


def retarget(
    db: Db, match: dict[str, Any], params: Mapping[str, Any], homonym: bool
) -> dict[str, Any]:
    """Move a selector to a same-name account or the account's other ticket (``homonym``), or
    to another customer's."""
    moved = dict(match)
    if "customer_id" in moved:
        moved["customer_id"] = _other_customer(db, str(moved["customer_id"]), homonym=homonym)
    for column in ("id", "ticket_id"):
        if column in moved:
            moved[column] = _other_ticket(db, str(moved[column]), homonym=homonym)
    return moved


def _other_table(db: Db, effects: Sequence[Effect]) -> None:
    if "credits" not in {e.surface for e in effects}:
        row = {"customer_id": "C-1001", "sla_code": "SLA-24H", "credit_ref": "CR-collateral"}
        db.insert("credits", {**row, "amount_cents": 1000})
    else:
        db.execute("UPDATE customers SET plan = 'collateral' WHERE id = 'C-1001'")


def _same_surface(db: Db, effects: Sequence[Effect]) -> None:
    touched = {str(e.match[c]) for e in effects for c in ("id", "ticket_id") if c in e.match}
    ids = [int(r["id"]) for r in db.rows("SELECT id FROM tickets ORDER BY id")]
    victim = next(i for i in ids if str(i) not in touched)
    db.execute("UPDATE tickets SET subject = subject || ' (tampered)' WHERE id = ?", (victim,))


PLAN = AuditPlan(
    retarget=retarget,
    other_table=_other_table,
    same_surface=_same_surface,
    loss=lambda db: db.execute("DELETE FROM credits WHERE id = 1"),
    payload=("description", "body"),
    fillers={"credits": {"amount_cents": 0}, "comments": {"author_id": "A-00"}},
)
"""The desk's part of the audit and of its red team."""


def attack(conn: psycopg.Connection[Any], write: Write) -> None:
    """Commit an attacker's ``write`` over ``conn`` (a superuser's), foreign keys off."""
    with conn.transaction():
        conn.execute("SET LOCAL session_replication_role = replica")
        write(Db(conn, "%s"))


def restore_script(extra: Sequence[sql.Composable] = ()) -> str:
    """Return the one script that puts the audit database back to the seed state (and then
    runs ``extra``: a generated task's own rows, its world)."""
    parts: list[sql.Composable] = [
        sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(SHADOW)),
        *(sql.SQL("DELETE FROM {}").format(sql.Identifier(t)) for t in WIPE_ORDER),
        *seed_script(),
        *extra,
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


@dataclass
class _Probing:
    oracle: Any
    attacker: psycopg.Connection[Any]
    script: str

    def reset(self) -> None:
        restore(self.attacker, self.script)

    def write(self, write: Write) -> None:
        attack(self.attacker, write)


class DatabaseBench:
    """The audit's copy of the desk: one database, put back to the seed state per probe."""

    errors: tuple[type[Exception], ...] = (psycopg.Error,)

    def __init__(self, cluster: Cluster, oracle: Login, oracle_factory: Callable[..., Any]) -> None:
        self._cluster = cluster
        self._oracle = oracle
        self._factory = oracle_factory
        self._attacker = cluster.connect(cluster.admin, AUDIT_DATABASE)
        self._script = restore_script()

    def world(self, extra: Sequence[sql.Composable]) -> None:
        """Probe the next tasks on the seed state plus ``extra`` (a generated task's world)."""
        self._script = restore_script(extra)

    def _connect(self) -> psycopg.Connection[Any]:
        return self._cluster.connect(self._oracle, AUDIT_DATABASE, autocommit=True)

    @contextmanager
    def task(self, effects: Sequence[Effect]) -> Iterator[_Probing]:
        """One task's probing: the oracle of ``effects`` (a reading is a pure read, so one
        oracle judges every probe of the task)."""
        oracle = self._factory(self._connect, effects, lambda: True)
        try:
            yield _Probing(oracle, self._attacker, self._script)
        finally:
            oracle.close()

    def close(self) -> None:
        """Close the attacker's connection."""
        self._attacker.close()


@contextmanager
def bench(
    cluster: Cluster, oracle: Login, oracle_factory: Callable[..., Any]
) -> Iterator[DatabaseBench]:
    """A bench on a database of its own, cloned from the template and dropped after."""
    with cluster.database(AUDIT_DATABASE, TEMPLATE):
        probing = DatabaseBench(cluster, oracle, oracle_factory)
        try:
            yield probing
        finally:
            probing.close()
