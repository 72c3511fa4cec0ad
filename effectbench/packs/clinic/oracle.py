"""The independent oracle: a read-only SQLite connection and a whole-database delta audit.

:func:`read_database` opens the episode's database file through its own
``mode=ro`` URI connection (never through the record service) and, inside one
read transaction, reads the schema (``sqlite_master``: every table, index, view
and trigger) and every table it lists (SQLite's own ``sqlite_*`` tables
excepted), each keyed by its primary key (several columns for a composite key)
or by its rowid. A table the service never serves is read all the same.
:func:`judge_record` is the one rule that decides a declared contract against
two such readings:

* each declared effect is judged on its ``surface`` (table) by
  :func:`effectbench.judge.judge`;
* the per-table delta is audited: a row added or changed is *explained* only
  when a declared effect on that table selects it (and a changed row may only
  differ in fields the contract sets); a vanished row is never explained.

Anything unexplained is a collateral write or loss, on any table or in the
schema (a table created or dropped, an index or trigger added): a wrong effect,
whatever the declared effect says. When every effect is confirmed and nothing
else changed the verdict is confirmed; when the effect is not confirmed, an
empty delta reads as *absent* (nothing persisted) and any change as *wrong
persisted*. The
product's own verifiers (:mod:`effectbench.packs.clinic.env`) apply the same
rule to the surfaces they can read over REST, which is exactly why a verifier
that reads one surface misses collateral writes on the others.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from effectbench.changes import Table
from effectbench.effects import Effect, EffectKind
from effectbench.judge import judge, matches
from effectbench.schema import OracleVerdict, Verdict

CHANNEL = "sql_readonly"
READ_TIMEOUT_S = 0.05
"""How long the oracle waits on a locked file before it calls the reading unreadable."""


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


Snapshot = dict[str, Surface]

SCHEMA = "sqlite_master"
"""The reading's entry for the schema itself (every table, index, view and trigger)."""


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _read_table(conn: sqlite3.Connection, name: str) -> Surface:
    pks = sorted((r[5], str(r[1])) for r in conn.execute(f"PRAGMA table_info({_quoted(name)})"))
    key = tuple(col for order, col in pks if order)
    # A table without a declared primary key is keyed by its rowid.
    select = "SELECT *" if key else "SELECT rowid AS rowid, *"
    cur = conn.execute(f"{select} FROM {_quoted(name)}")
    cols = [d[0] for d in cur.description]
    rows = tuple(dict(zip(cols, row, strict=True)) for row in cur.fetchall())
    return Surface(key=key or ("rowid",), rows=rows)


def read_database(path: Path) -> Snapshot | None:
    """Read the schema and every table through a fresh ``mode=ro`` connection.

    Returns ``None`` when the file is missing, locked or otherwise unreadable.
    """
    if not path.exists():
        return None
    uri = f"file:{quote(str(path))}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=READ_TIMEOUT_S, isolation_level=None)
    except sqlite3.Error:
        return None
    try:
        conn.execute("BEGIN")
        # The logical schema; rootpage is where a table sits in the file, not what it holds.
        cur = conn.execute(f"SELECT type, name, tbl_name, sql FROM {SCHEMA}")
        schema = tuple(dict(zip(("type", "name", "tbl_name", "sql"), r, strict=True)) for r in cur)
        snapshot: Snapshot = {SCHEMA: Surface(key=("type", "name"), rows=schema)}
        for row in schema:
            name = str(row["name"])
            # SQLite's own tables (sqlite_sequence, sqlite_stat*) follow from other writes.
            if row["type"] == "table" and not name.startswith("sqlite_"):
                snapshot[name] = _read_table(conn, name)
        conn.execute("COMMIT")
        return snapshot
    except sqlite3.Error:
        return None
    finally:
        conn.close()


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
        old = before.get(table)
        new = after.get(table)
        surface = new or old
        if surface is None:
            continue
        old_rows = {surface.key_of(r): r for r in (old.rows if old else ())}
        new_rows = {surface.key_of(r): r for r in (new.rows if new else ())}
        for k, row in new_rows.items():
            if k not in old_rows:
                changes.append(Change(table, k, "added"))
            elif row != old_rows[k]:
                cols = sorted(
                    c for c in set(row) | set(old_rows[k]) if row.get(c) != old_rows[k].get(c)
                )
                changes.append(Change(table, k, "changed", tuple(cols)))
        for k in old_rows:
            if k not in new_rows:
                changes.append(Change(table, k, "removed"))
    return changes


def _explained(change: Change, row: Mapping[str, Any] | None, effects: Sequence[Effect]) -> bool:
    if change.kind == "removed" or row is None:
        return False
    on_table = [e for e in effects if e.surface == change.table and matches(row, e)]
    if change.kind == "added":
        return bool(on_table)
    settable = {e.field for e in on_table if e.kind is EffectKind.FIELD_EQUALS and e.field}
    selects_old = any(not e.count_new_only for e in on_table)
    return selects_old and set(change.columns) <= settable


def _describe(unexplained: Sequence[Change]) -> str:
    parts: dict[str, list[str]] = {}
    for c in unexplained:
        cols = f" ({', '.join(c.columns)})" if c.columns else ""
        parts.setdefault(c.table, []).append(f"{c.kind} {c.key}{cols}")
    return "; ".join(f"{t}: {', '.join(v)}" for t, v in sorted(parts.items()))


def _rows(snapshot: Snapshot, table: str | None) -> list[Mapping[str, Any]]:
    surface = snapshot.get(table or "")
    return list(surface.rows) if surface else []


def _unreadable(effect: Effect, channel: str, reason: str, before_ok: bool) -> OracleVerdict:
    base = judge(effect, [] if before_ok else None, None, channel=channel)
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

    ``surfaces`` limits what is read (a product verifier that sees only some
    tables); ``None`` means every table both readings hold.
    """
    if not effects:
        raise ValueError("an effect contract needs at least one effect")
    if any(e.surface is None for e in effects):
        raise ValueError("every clinic effect names its surface (table)")
    primary = effects[0]
    if after is None:
        return _unreadable(primary, channel, "system of record unreadable", before is not None)
    if before is None:
        return _unreadable(
            primary, channel, "baseline unreadable: the delta cannot be audited", False
        )
    tables = set(before) | set(after) if surfaces is None else set(surfaces)
    checked = [e for e in effects if e.surface in tables]
    if not checked:
        return _unreadable(primary, channel, "no declared effect on a readable surface", True)
    verdicts = [
        judge(e, _rows(before, e.surface), _rows(after, e.surface), channel=channel)
        for e in checked
    ]
    changes = delta(before, after, tables)
    after_rows = {(t, s.key_of(r)): r for t, s in after.items() if t in tables for r in s.rows}
    unexplained = [
        c for c in changes if not _explained(c, after_rows.get((c.table, c.key)), checked)
    ]
    head = verdicts[0]
    audited = f"{len(tables - {SCHEMA})} table(s)" + (" and the schema" if SCHEMA in tables else "")
    audited += " audited"
    if unexplained:
        return head.model_copy(
            update={
                "verdict": Verdict.REFUTED,
                "reason": "collateral change outside the declared effect: "
                + _describe(unexplained),
                "effect_correct": False,
                "effect_wrong_persisted": True,
                "effect_absent": False,
            }
        )
    bad_at = next((i for i, v in enumerate(verdicts) if v.verdict is not Verdict.CONFIRMED), None)
    bad = None if bad_at is None else verdicts[bad_at]
    bad_surface = None if bad_at is None else checked[bad_at].surface
    if bad is None:
        return head.model_copy(
            update={"reason": f"declared effect holds and nothing else changed; {audited}"}
        )
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
            "reason": f"{bad_surface}: {bad.reason}; {audited}",
            "effect_wrong_persisted": True,
            "effect_absent": False,
        }
    )


class SqliteOracle:
    """The harness's oracle for one episode: the file, read-only, and the service's liveness."""

    channel = CHANNEL

    def __init__(
        self, path: Path, effects: Sequence[Effect], service_alive: Callable[[], bool]
    ) -> None:
        self._path = path
        self._effects = tuple(effects)
        self._alive = service_alive

    def snapshot(self) -> Snapshot | None:
        """Read every table now; ``None`` when the service is down or the file unreadable."""
        if not self._alive():
            return None
        return read_database(self._path)

    def judge(self, before: Any) -> OracleVerdict:
        """Read again and judge the contract plus the whole-database delta against ``before``."""
        if not self._alive():
            return _unreadable(
                self._effects[0],
                self.channel,
                "record service down: the episode cannot be scored",
                before is not None,
            )
        after = read_database(self._path)
        return judge_record(self._effects, before, after, channel=self.channel)

    def tables(self, snapshot: Any) -> dict[str, Table] | None:
        """Return a reading as every table (the schema's entry too), for the receipt's
        change set."""
        if snapshot is None:
            return None
        return {name: Table(key=s.key, rows=s.rows) for name, s in snapshot.items()}
