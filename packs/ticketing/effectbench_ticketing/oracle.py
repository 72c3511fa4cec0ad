"""The independent oracle: its own read-only role and a whole-database delta audit.

:func:`read_database` reads an episode's database through the oracle's own connection (role
``tk_oracle``: a member of ``pg_read_all_data`` whose transactions are read-only; never the
app's connection, never the HTTP service) inside one ``REPEATABLE READ READ ONLY``
transaction. It reads the schema (:data:`SCHEMA`: every schema, relation, column,
constraint, index, trigger, function, view, policy and table privilege outside PostgreSQL's
own catalogs) and every table in it, each keyed by its primary key (``ctid`` for a table
without one). A table the app never serves is read all the same.

:func:`judge_record` is the one rule that decides a declared contract against two readings:

* each declared effect is judged on its ``surface`` (table) by
  :func:`effectbench.api.judge_contract`;
* the per-table delta is audited: a row added or changed is *explained* only when a declared
  effect on that table selects it (a changed row may only differ in fields the contract
  sets); a vanished row is never explained.

Anything unexplained is a collateral write or loss, on any table or in the schema: a wrong
effect, whatever the declared effect says. When every effect is confirmed and nothing else
changed the verdict is confirmed; when the effect is not confirmed, an empty delta reads as
*absent* and any change as *wrong persisted*.

Another actor's work is not the agent's: when the stale-overwrite colleague commits
(:mod:`.colleague`), :meth:`PostgresOracle.observe` reads the row it wrote, through the
oracle's own connection, and lays it over the baseline. A save that then writes the agent's
stale copy back over it is a change against that baseline (a lost update), and a save that
keeps it is none.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import psycopg
from psycopg import sql

from effectbench.api import Effect, EffectKind, OracleVerdict, Verdict, judge_contract, matches

CHANNEL = "sql_readonly"
SCHEMA = "pg_schema"
"""The reading's entry for the schema itself."""

_USER_NAMESPACES = (
    "n.nspname NOT IN ('pg_catalog', 'information_schema') "
    "AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp%'"
)
_SCHEMA_QUERY = f"""
SELECT 'schema' AS kind, n.nspname AS name, coalesce(n.nspacl::text, '') AS detail
  FROM pg_namespace n WHERE {_USER_NAMESPACES}
UNION ALL
SELECT 'relation', n.nspname || '.' || c.relname,
       c.relkind::text || ' ' || coalesce(c.relacl::text, '') || ' ' || c.relrowsecurity::text
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE {_USER_NAMESPACES} AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S', 'i', 'I')
UNION ALL
SELECT 'column', n.nspname || '.' || c.relname || '.' || a.attname,
       format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull::text || ' ' ||
       coalesce(pg_get_expr(d.adbin, d.adrelid), '')
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
 WHERE {_USER_NAMESPACES} AND a.attnum > 0 AND NOT a.attisdropped
   AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
UNION ALL
SELECT 'constraint', n.nspname || '.' || c.relname || '.' || k.conname,
       pg_get_constraintdef(k.oid)
  FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace WHERE {_USER_NAMESPACES}
UNION ALL
SELECT 'index', n.nspname || '.' || i.relname, pg_get_indexdef(i.oid)
  FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
  JOIN pg_namespace n ON n.oid = i.relnamespace WHERE {_USER_NAMESPACES}
UNION ALL
SELECT 'trigger', n.nspname || '.' || c.relname || '.' || t.tgname, pg_get_triggerdef(t.oid)
  FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace WHERE {_USER_NAMESPACES} AND NOT t.tgisinternal
UNION ALL
SELECT 'function', n.nspname || '.' || p.proname || '(' ||
       pg_get_function_identity_arguments(p.oid) || ')', md5(coalesce(p.prosrc, ''))
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE {_USER_NAMESPACES}
UNION ALL
SELECT 'view', n.nspname || '.' || c.relname, pg_get_viewdef(c.oid)
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE {_USER_NAMESPACES} AND c.relkind IN ('v', 'm')
UNION ALL
SELECT 'policy', n.nspname || '.' || c.relname || '.' || p.polname,
       coalesce(pg_get_expr(p.polqual, p.polrelid), '')
  FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace WHERE {_USER_NAMESPACES}
"""
"""The logical schema: what a write to the catalog (DDL, a grant, a trigger) would change."""

_TABLES_QUERY = f"""
SELECT n.nspname, c.relname,
       coalesce((SELECT array_agg(a.attname ORDER BY a.attname)
                   FROM pg_index x
                   JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = ANY(x.indkey)
                  WHERE x.indrelid = c.oid AND x.indisprimary), '{{}}') AS key
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE {_USER_NAMESPACES} AND c.relkind IN ('r', 'p')
 ORDER BY 1, 2
"""


@dataclass(frozen=True)
class Surface:
    """One table as read: the columns that identify a row, and its rows."""

    key: tuple[str, ...]
    rows: tuple[Mapping[str, Any], ...]

    def key_of(self, row: Mapping[str, Any]) -> Any:
        """Return ``row``'s identity: its key value (a tuple when the key has several columns)."""
        if len(self.key) == 1:
            return row.get(self.key[0])
        return tuple(row.get(c) for c in self.key)

    def replaced(self, key: Any, row: Mapping[str, Any] | None) -> Surface:
        """Return this table with the row keyed ``key`` replaced by ``row`` (removed: None)."""
        kept = [r for r in self.rows if self.key_of(r) != key]
        return Surface(self.key, tuple(kept + ([row] if row is not None else [])))


Snapshot = dict[str, Surface]


def surface_name(schema: str, table: str) -> str:
    """Return a table's name in a reading: bare in ``public``, ``schema.table`` elsewhere."""
    return table if schema == "public" else f"{schema}.{table}"


def _select(schema: str, table: str, key: Sequence[str]) -> sql.Composed:
    select = sql.SQL("SELECT *") if key else sql.SQL("SELECT ctid::text AS ctid, *")
    return sql.SQL("{} FROM {}").format(select, sql.Identifier(schema, table))


def _surface(cur: psycopg.Cursor[Any], key: Sequence[str]) -> Surface:
    cols = [d.name for d in cur.description or ()]
    rows = tuple(dict(zip(cols, row, strict=True)) for row in cur.fetchall())
    return Surface(key=tuple(key) or ("ctid",), rows=rows)


def read_database(conn: psycopg.Connection[Any]) -> Snapshot:
    """Read the schema and every table in one read-only snapshot (raises on any failure).

    Two round trips: the schema and the list of tables, then every table at once (the
    queries of each step are pipelined).
    """
    with conn.transaction():
        with conn.pipeline():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            schema_cur = conn.execute(_SCHEMA_QUERY)
            tables_cur = conn.execute(_TABLES_QUERY)
        schema = tuple({"kind": k, "name": n, "detail": d} for k, n, d in schema_cur.fetchall())
        tables = tables_cur.fetchall()
        snapshot: Snapshot = {SCHEMA: Surface(key=("kind", "name"), rows=schema)}
        with conn.pipeline():
            reads = [
                (nsp, rel, key, conn.execute(_select(nsp, rel, key))) for nsp, rel, key in tables
            ]
        for nsp, rel, key, cur in reads:
            snapshot[surface_name(nsp, rel)] = _surface(cur, list(key))
        return snapshot


@dataclass(frozen=True)
class Change:
    """One row of one table that differs between the two readings."""

    table: str
    key: Any
    kind: str
    """``added``, ``removed`` or ``changed``."""
    columns: tuple[str, ...] = ()


def delta(before: Snapshot, after: Snapshot, tables: Collection[str]) -> list[Change]:
    """Return every row that was added, removed or changed in ``tables``."""
    changes: list[Change] = []
    for table in sorted(tables):
        old, new = before.get(table), after.get(table)
        shape = new or old
        if shape is None:
            continue
        was = {shape.key_of(r): r for r in (old.rows if old else ())}
        now = {shape.key_of(r): r for r in (new.rows if new else ())}
        for k in sorted(now.keys() - was.keys(), key=str):
            changes.append(Change(table, k, "added"))
        for k in sorted(now.keys() & was.keys(), key=str):
            cols = tuple(
                sorted(c for c in now[k].keys() | was[k].keys() if now[k].get(c) != was[k].get(c))
            )
            if cols:
                changes.append(Change(table, k, "changed", cols))
        for k in sorted(was.keys() - now.keys(), key=str):
            changes.append(Change(table, k, "removed"))
    return changes


def explained(change: Change, row: Mapping[str, Any] | None, effects: Sequence[Effect]) -> bool:
    """Say whether the declared ``effects`` account for ``change`` (``row``: its new value)."""
    if change.kind == "removed" or row is None:
        return False
    selecting = [e for e in effects if e.surface == change.table and matches(row, e)]
    if change.kind == "added":
        return bool(selecting)
    settable = {e.field for e in selecting if e.kind is EffectKind.FIELD_EQUALS and e.field}
    edits_existing = any(not e.count_new_only for e in selecting)
    return edits_existing and set(change.columns) <= settable


def _summary(unexplained: Sequence[Change]) -> str:
    by_table: dict[str, list[str]] = {}
    for c in unexplained:
        cols = f" ({', '.join(c.columns)})" if c.columns else ""
        by_table.setdefault(c.table, []).append(f"{c.kind} {c.key}{cols}")
    return "; ".join(f"{t}: {', '.join(v)}" for t, v in sorted(by_table.items()))


def _rows(snapshot: Snapshot | None, table: str | None) -> list[Mapping[str, Any]] | None:
    if snapshot is None:
        return None
    surface = snapshot.get(table or "")
    return list(surface.rows) if surface else []


def _indeterminate(effect: Effect, channel: str, reason: str, before_ok: bool) -> OracleVerdict:
    base = judge_contract([effect], [] if before_ok else None, None, channel=channel)
    return base.model_copy(update={"reason": reason})


def judge_record(
    effects: Sequence[Effect],
    before: Snapshot | None,
    after: Snapshot | None,
    *,
    channel: str,
    surfaces: Collection[str] | None = None,
) -> OracleVerdict:
    """Judge a declared contract and audit the delta of every readable table.

    ``surfaces`` limits what is audited (a product readback that sees only some tables);
    ``None`` means every table either reading holds, and the schema.
    """
    if not effects or any(e.surface is None for e in effects):
        raise ValueError("a ticketing contract needs effects that each name a surface (table)")
    primary = effects[0]
    if after is None:
        return _indeterminate(primary, channel, "system of record unreadable", before is not None)
    if before is None:
        return _indeterminate(
            primary, channel, "baseline unreadable: the delta cannot be audited", False
        )
    tables = set(before) | set(after) if surfaces is None else set(surfaces)
    checked = [e for e in effects if e.surface in tables]
    if not checked:
        return _indeterminate(primary, channel, "no declared effect on a readable surface", True)
    verdicts = [
        judge_contract([e], _rows(before, e.surface), _rows(after, e.surface), channel=channel)
        for e in checked
    ]
    changes = delta(before, after, tables)
    now = {(t, s.key_of(r)): r for t, s in after.items() if t in tables for r in s.rows}
    unexplained = [c for c in changes if not explained(c, now.get((c.table, c.key)), checked)]
    head = verdicts[0]
    audited = f"{len(tables - {SCHEMA})} table(s)" + (" and the schema" if SCHEMA in tables else "")
    audited += " audited"
    if unexplained:
        return head.model_copy(
            update={
                "verdict": Verdict.REFUTED,
                "reason": "collateral change outside the declared effect: " + _summary(unexplained),
                "effect_correct": False,
                "effect_wrong_persisted": True,
                "effect_absent": False,
            }
        )
    failed = next((i for i, v in enumerate(verdicts) if v.verdict is not Verdict.CONFIRMED), None)
    if failed is None:
        return head.model_copy(
            update={"reason": f"declared effect holds and nothing else changed; {audited}"}
        )
    bad = verdicts[failed]
    if not changes:
        return bad.model_copy(
            update={
                "reason": f"nothing changed in any table: nothing persisted; {audited}",
                "effect_wrong_persisted": False,
                "effect_absent": True,
            }
        )
    return bad.model_copy(
        update={
            "reason": f"{checked[failed].surface}: {bad.reason}; {audited}",
            "effect_wrong_persisted": True,
            "effect_absent": False,
        }
    )


Connect = Callable[[], psycopg.Connection[Any]]


@runtime_checkable
class ObservesOthers(Protocol):
    """An oracle told when another actor (the stale-overwrite colleague) committed a row."""

    def observe(self, table: str, key: Any) -> None:
        """Read ``table`` row ``key`` now, for the baseline."""
        ...


class PostgresOracle:
    """The harness's oracle for one episode: its own role's connection, read-only."""

    channel = CHANNEL

    def __init__(
        self, connect: Connect, effects: Sequence[Effect], service_alive: Callable[[], bool]
    ) -> None:
        self._connect = connect
        self._effects = tuple(effects)
        self._alive = service_alive
        self._conn: psycopg.Connection[Any] | None = None
        self._lock = threading.Lock()
        self._observed: dict[tuple[str, Any], Mapping[str, Any] | None] = {}
        """Rows another actor committed during the episode, as the oracle read them."""
        self._missed: list[str] = []
        """Another actor's commits the oracle could not read (the episode is then unscored)."""

    def _read(self) -> Snapshot | None:
        with self._lock:
            try:
                if self._conn is None or self._conn.closed:
                    self._conn = self._connect()
                return read_database(self._conn)
            except psycopg.Error:
                self._drop()
                return None

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except psycopg.Error:
                pass

    def snapshot(self) -> Snapshot | None:
        """Read every table now; ``None`` when the service is down or the database unreadable."""
        return self._read() if self._alive() else None

    def observe(self, table: str, key: Any) -> None:
        """Another actor committed ``table`` row ``key``: read it now, for the baseline."""
        reading = self._read()
        surface = None if reading is None else reading.get(table)
        if surface is None:
            self._missed.append(f"{table} {key}")
            return
        found = [r for r in surface.rows if surface.key_of(r) == key]
        self._observed[(table, key)] = found[0] if found else None

    def baseline(self, before: Snapshot | None) -> Snapshot | None:
        """Return ``before`` with the rows other actors committed meanwhile laid over it."""
        if before is None or not self._observed:
            return before
        laid = dict(before)
        for (table, key), row in self._observed.items():
            if table in laid:
                laid[table] = laid[table].replaced(key, row)
        return laid

    def judge(self, before: Any) -> OracleVerdict:
        """Read again and judge the contract plus the whole-database delta."""
        if not self._alive():
            return _indeterminate(
                self._effects[0],
                self.channel,
                "the support desk service is down: the episode cannot be scored",
                before is not None,
            )
        if self._missed:
            return _indeterminate(
                self._effects[0],
                self.channel,
                "a concurrent actor's commit could not be read: " + ", ".join(self._missed),
                before is not None,
            )
        after = self._read()
        return judge_record(self._effects, self.baseline(before), after, channel=self.channel)

    def close(self) -> None:
        """Close the oracle's connection."""
        with self._lock:
            self._drop()
