"""What an episode changed in the system of record, and what its task allowed it to change.

Pure data and rules, no I/O. A pack's oracle reads the record as named :class:`Table`
values (every table, each with the columns that identify a row); :func:`change_set`
compares two such readings row by row into a :class:`ChangeSet`: every row inserted,
updated (each changed field, old and new) or deleted, and the tables left untouched.

A task allows some changes (:class:`AllowedChange`: a kind of change on one table, to rows
a selector picks, of given fields); :func:`allowed_by_contract` derives the allowance from
the task's declared effect (the rows its effects select may be inserted, and the fields its
read-backs set may be updated on them), and :func:`collateral` marks every change outside
the allowance: a collateral write (a homonym's chart touched, a second table changed, a row
deleted). The rule is the one an episode's receipt records and the verifier applies again.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from effectbench.effects import Effect, EffectKind
from effectbench.judge import selects

__all__ = [
    "CHANGE_KINDS",
    "AllowedChange",
    "ChangeKind",
    "ChangeSet",
    "RowChange",
    "Table",
    "allowed",
    "allowed_by_contract",
    "change_set",
    "collateral",
    "plain_value",
]

ChangeKind = Literal["inserted", "updated", "deleted"]
CHANGE_KINDS: tuple[ChangeKind, ...] = ("inserted", "updated", "deleted")
"""The kinds of change to a row, in the order a change set lists them."""
MAX_TEXT = 4096
"""Characters of one value a change set keeps (a longer text is cut, with its length and hash)."""


def plain_value(value: Any) -> Any:
    """Return ``value`` as a plain JSON scalar: text, an integer, a finite number, a boolean or
    None; anything else (bytes, a date) is written as text, and a long text is cut."""
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, bytes | bytearray | memoryview):
        data = bytes(value)
        return f"<{len(data)} bytes sha256:{hashlib.sha256(data).hexdigest()[:16]}>"
    text = value if isinstance(value, str) else str(value)
    if len(text) > MAX_TEXT:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        return f"{text[:MAX_TEXT]}… ({len(text)} characters, sha256:{digest})"
    return text


@dataclass(frozen=True)
class Table:
    """One table of the system of record as read: the columns identifying a row, and its rows."""

    key: tuple[str, ...]
    rows: tuple[Mapping[str, Any], ...]

    def key_of(self, row: Mapping[str, Any]) -> tuple[Any, ...]:
        """Return ``row``'s identity: the values of the key columns, in order."""
        return tuple(plain_value(row.get(c)) for c in self.key)


@dataclass(frozen=True)
class RowChange:
    """One row of one table that differs between two readings."""

    table: str
    change: ChangeKind
    key: Mapping[str, Any]
    """The row's key columns and their values."""
    values: Mapping[str, Any]
    """The whole row: as it is after an insert or an update, as it was before a delete."""
    fields: Mapping[str, tuple[Any, Any]] = field(default_factory=dict)
    """An update's changed fields: column -> (old value, new value)."""

    def to_json(self) -> dict[str, Any]:
        """Return the change as receipt JSON."""
        out: dict[str, Any] = {
            "table": self.table,
            "change": self.change,
            "key": dict(self.key),
            "values": dict(self.values),
        }
        if self.change == "updated":
            out["fields"] = {c: [old, new] for c, (old, new) in self.fields.items()}
        return out


@dataclass(frozen=True)
class ChangeSet:
    """Every change between two readings of the record, and the tables read."""

    tables: tuple[str, ...]
    """Every table either reading holds, sorted."""
    changes: tuple[RowChange, ...]
    """The changed rows, by table, then kind (inserted, updated, deleted), then key."""

    @property
    def untouched(self) -> tuple[str, ...]:
        """The tables no change touches, sorted."""
        touched = {c.table for c in self.changes}
        return tuple(t for t in self.tables if t not in touched)


def plain_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """Return a row as a change set states it: its values as :func:`plain_value` writes them."""
    return {str(k): plain_value(v) for k, v in row.items()}


def _sort_key(key: tuple[Any, ...]) -> tuple[tuple[int, str], ...]:
    return tuple((0 if v is None else 1, repr(v)) for v in key)


def _table_changes(name: str, old: Table | None, new: Table | None) -> list[RowChange]:
    table = new or old
    assert table is not None
    if old is not None and new is not None and old.key == new.key and old.rows == new.rows:
        return []  # the same rows read twice (equal values stay equal once made plain)
    columns = table.key
    old_rows = {table.key_of(r): plain_row(r) for r in (old.rows if old else ())}
    new_rows = {table.key_of(r): plain_row(r) for r in (new.rows if new else ())}
    out: list[RowChange] = []
    for k in sorted(new_rows.keys() - old_rows.keys(), key=_sort_key):
        out.append(RowChange(name, "inserted", dict(zip(columns, k, strict=True)), new_rows[k]))
    for k in sorted(new_rows.keys() & old_rows.keys(), key=_sort_key):
        before, after = old_rows[k], new_rows[k]
        if before == after:
            continue
        diff = {
            c: (before.get(c), after.get(c))
            for c in sorted(set(before) | set(after))
            if before.get(c) != after.get(c)
        }
        out.append(RowChange(name, "updated", dict(zip(columns, k, strict=True)), after, diff))
    for k in sorted(old_rows.keys() - new_rows.keys(), key=_sort_key):
        out.append(RowChange(name, "deleted", dict(zip(columns, k, strict=True)), old_rows[k]))
    return out


def change_set(before: Mapping[str, Table], after: Mapping[str, Table]) -> ChangeSet:
    """Return every row inserted, updated or deleted between two readings of the record.

    A table only one reading holds counts as emptied (every row deleted) or created
    (every row inserted).
    """
    names = sorted(set(before) | set(after))
    changes = [c for n in names for c in _table_changes(n, before.get(n), after.get(n))]
    return ChangeSet(tables=tuple(names), changes=tuple(changes))


@dataclass(frozen=True)
class AllowedChange:
    """A change a task allows: one kind of change on one table, to the rows a selector picks."""

    table: str
    change: ChangeKind
    match: Mapping[str, str] = field(default_factory=dict)
    """Selector on the row (as inserted or updated, or as it was before a delete): every listed
    column equals the value, compared as strings."""
    fields: tuple[str, ...] = ()
    """An update's columns that may change (an update of any other column is not allowed)."""
    idempotency_key: str | None = None
    """When set, the row must also carry this idempotency key."""

    def selects(self, row: Mapping[str, Any]) -> bool:
        """Say whether ``row`` is one this allowance is about (the judge's selector rule)."""
        return selects(row, self.match, self.idempotency_key)

    def to_json(self) -> dict[str, Any]:
        """Return the allowance as JSON (what a pack's documentation can show)."""
        out: dict[str, Any] = {
            "table": self.table,
            "change": self.change,
            "match": dict(self.match),
        }
        if self.fields:
            out["fields"] = list(self.fields)
        if self.idempotency_key is not None:
            out["idempotency_key"] = self.idempotency_key
        return out


def allowed_by_contract(
    effects: Sequence[Effect], table: str | None = None
) -> tuple[AllowedChange, ...]:
    """Return the changes a resolved effect contract allows (``table``: the one table of a store
    whose effects name none).

    Each effect's selected rows may be inserted; a read-back (``field_equals``) of rows that
    existed before (not ``count_new_only``) may also update its field on them. Nothing may be
    deleted, no other table changed. This is the allowance the clinic's oracle audits its
    delta against, written once for every pack that states no other.
    """
    out: list[AllowedChange] = []
    for e in effects:
        where = e.surface or table
        if where is None:
            raise ValueError("an effect names no table and the store has more than one")
        match = {k: str(v) for k, v in e.match.items()}
        key = None if e.idempotency_key is None else str(e.idempotency_key)
        out.append(AllowedChange(where, "inserted", match, idempotency_key=key))
        if e.kind is EffectKind.FIELD_EQUALS and e.field and not e.count_new_only:
            out.append(AllowedChange(where, "updated", match, (e.field,), key))
    unique: list[AllowedChange] = []
    for a in out:
        if a not in unique:
            unique.append(a)
    return tuple(unique)


def allowed(change: RowChange, allowances: Iterable[AllowedChange]) -> bool:
    """Say whether ``change`` is one the allowances cover.

    An insert or a delete is covered by an allowance of its kind on its table that selects
    the row; an update when allowances of its kind select the row and together allow every
    field it changed.
    """
    mine = [
        a
        for a in allowances
        if a.table == change.table and a.change == change.change and a.selects(change.values)
    ]
    if not mine:
        return False
    if change.change != "updated":
        return True
    settable = {f for a in mine for f in a.fields}
    return set(change.fields) <= settable


def collateral(changes: ChangeSet, allowances: Sequence[AllowedChange]) -> tuple[bool, ...]:
    """Return, per change of ``changes`` (in order), whether it is outside the allowances."""
    return tuple(not allowed(c, allowances) for c in changes.changes)
