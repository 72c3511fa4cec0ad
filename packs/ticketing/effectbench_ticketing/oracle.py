"""The independent oracle: its own read-only role and a whole-database delta audit.

:func:`read_database` reads an episode's database through the oracle's own connection (role
``tk_oracle``: a member of ``pg_read_all_data`` whose transactions are read-only; never the
app's connection, never the HTTP service) inside one ``REPEATABLE READ READ ONLY``
transaction. It reads the schema (:data:`SCHEMA`: every schema, relation, column,
constraint, index, trigger, function, view, policy and table privilege outside PostgreSQL's
own catalogs) and every table in it, each keyed by its primary key (``ctid`` for a table
without one). A table the app never serves is read all the same.

:class:`PostgresOracle` judges a declared contract against two such readings by the kit's one
rule (:func:`effectbench.api.judge_tables`): every declared effect on its table, and every
table's change set against what the contract allows; anything else is a collateral write or
loss, on any table or in the schema.

Another actor's work is not the agent's: when the stale-overwrite colleague commits
(:mod:`.colleague`), the oracle reads the row it wrote (``observe``), through its own
connection, and lays it over the baseline. A save that then writes the agent's
stale copy back over it is a change against that baseline (a lost update), and a save that
keeps it is none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import psycopg
from psycopg import sql

from effectbench.api import Effect, Table, TableOracle

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


def surface_name(schema: str, table: str) -> str:
    """Return a table's name in a reading: bare in ``public``, ``schema.table`` elsewhere."""
    return table if schema == "public" else f"{schema}.{table}"


def _select(schema: str, table: str, key: Sequence[str]) -> sql.Composed:
    select = sql.SQL("SELECT *") if key else sql.SQL("SELECT ctid::text AS ctid, *")
    return sql.SQL("{} FROM {}").format(select, sql.Identifier(schema, table))


def _table(cur: psycopg.Cursor[Any], key: Sequence[str]) -> Table:
    cols = [d.name for d in cur.description or ()]
    rows = tuple(dict(zip(cols, row, strict=True)) for row in cur.fetchall())
    return Table(key=tuple(key) or ("ctid",), rows=rows)


def read_database(conn: psycopg.Connection[Any]) -> dict[str, Table]:
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
        reading = {SCHEMA: Table(key=("kind", "name"), rows=schema)}
        with conn.pipeline():
            reads = [
                (nsp, rel, key, conn.execute(_select(nsp, rel, key))) for nsp, rel, key in tables
            ]
        for nsp, rel, key, cur in reads:
            reading[surface_name(nsp, rel)] = _table(cur, list(key))
        return reading


Connect = Callable[[], psycopg.Connection[Any]]


@runtime_checkable
class ObservesOthers(Protocol):
    """An oracle told when another actor (the stale-overwrite colleague) committed a row."""

    def observe(self, table: str, key: Any) -> None:
        """Read ``table`` row ``key`` now, for the baseline."""
        ...


class PostgresOracle(TableOracle):
    """The harness's oracle for one episode: its own role's connection, read-only."""

    channel = CHANNEL

    def __init__(
        self, connect: Connect, effects: Sequence[Effect], service_alive: Callable[[], bool]
    ) -> None:
        self._connect = connect
        self._conn: psycopg.Connection[Any] | None = None
        super().__init__(
            self._reading,
            effects,
            service_alive,
            schema=SCHEMA,
            down="the support desk service is down",
            close=self._drop,
        )

    def _reading(self) -> dict[str, Table] | None:
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
