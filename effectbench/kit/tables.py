"""The pack kit's oracle: a declared contract judged against two readings of every table.

A pack with a real system of record reads it as named :class:`~effectbench.changes.Table`
values (every table it holds, and one entry for its schema), through a read path of its own
that no agent is given. :func:`judge_tables` is the one rule that decides a declared contract
against two such readings, the rule every kit-built pack's oracle and its product readbacks
apply:

* each declared effect is judged on its ``surface`` (table) by
  :func:`effectbench.judge.judge`;
* the change set of every readable table (:func:`effectbench.changes.change_set`) is audited
  against what the contract allows (:func:`effectbench.changes.allowed_by_contract`): a row
  its effects select may be inserted, and the fields its read-backs set updated on a row that
  was there; nothing else, and no row deleted.

Anything outside the allowance is a collateral write or loss, on any table or in the schema:
a wrong effect, whatever the declared effect says. When every effect is confirmed and nothing
else changed the verdict is confirmed; when the effect is not confirmed, an empty change set
reads as *absent* (nothing persisted) and any change as *wrong persisted*. A product readback
that reads only some surfaces judges only those (``surfaces``), which is exactly why a
readback of one surface misses collateral writes on the others.

:class:`TableOracle` is the harness's oracle built on that rule: it reads through the pack's
read function, says *indeterminate* while the pack's service is down, and lays rows another
actor committed during the episode (a concurrent colleague) over its baseline, so a save that
destroys their work is a change against it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from effectbench.changes import (
    ChangeSet,
    RowChange,
    Table,
    allowed,
    allowed_by_contract,
    change_set,
)
from effectbench.effects import Effect
from effectbench.judge import judge
from effectbench.schema import OracleVerdict, Verdict

__all__ = [
    "CHANGE_WORDS",
    "COLLATERAL_REASON",
    "Reading",
    "TableOracle",
    "describe_changes",
    "judge_tables",
    "replace_row",
]

Reading = Mapping[str, Table]
"""One reading of the record: every table (and the schema's entry) by name."""

CHANGE_WORDS = {"inserted": "added", "updated": "changed", "deleted": "removed"}
"""How a verdict's reason names each kind of change."""
COLLATERAL_REASON = "collateral change outside the declared effect: "
"""How a verdict's reason starts when the change set holds a change outside the allowance;
:func:`describe_changes` of those changes follows (the verifier holds a receipt's collateral
marks to it: ``receipt.thinned``)."""


def _label(change: RowChange) -> str:
    values = tuple(change.key.values())
    key: Any = values[0] if len(values) == 1 else values
    columns = f" ({', '.join(change.fields)})" if change.fields else ""
    return f"{CHANGE_WORDS[change.change]} {key}{columns}"


def describe_changes(changes: Sequence[RowChange]) -> str:
    """Name ``changes`` as a verdict's reason does: per table (sorted), each change's kind and
    key (an update's columns too)."""
    by_table: dict[str, list[str]] = {}
    for c in changes:
        by_table.setdefault(c.table, []).append(_label(c))
    return "; ".join(f"{t}: {', '.join(v)}" for t, v in sorted(by_table.items()))


def _rows(reading: Reading | None, table: str | None) -> list[Mapping[str, Any]] | None:
    if reading is None:
        return None
    found = reading.get(table or "")
    return list(found.rows) if found is not None else []


def _indeterminate(effect: Effect, channel: str, reason: str, before_ok: bool) -> OracleVerdict:
    base = judge(effect, [] if before_ok else None, None, channel=channel)
    return base.model_copy(update={"reason": reason})


def _only(reading: Reading, tables: Collection[str]) -> dict[str, Table]:
    return {name: t for name, t in reading.items() if name in tables}


def judge_tables(
    effects: Sequence[Effect],
    before: Reading | None,
    after: Reading | None,
    *,
    channel: str,
    surfaces: Collection[str] | None = None,
    schema: str | None = None,
) -> OracleVerdict:
    """Judge a declared contract and audit the change set of every readable table.

    ``surfaces`` limits what is read (a product readback that sees only some tables);
    ``None`` means every table either reading holds. ``schema`` names the reading's entry
    for the schema itself (the reason says whether it was audited).
    """
    if not effects:
        raise ValueError("an effect contract needs at least one effect")
    if any(e.surface is None for e in effects):
        raise ValueError("every effect of a table contract names its surface (table)")
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
        judge(e, _rows(before, e.surface), _rows(after, e.surface), channel=channel)
        for e in checked
    ]
    changes: ChangeSet = change_set(_only(before, tables), _only(after, tables))
    allowance = allowed_by_contract(checked)
    unexplained = [c for c in changes.changes if not allowed(c, allowance)]
    audited = f"{len(tables - {schema})} table(s)" + (" and the schema" if schema in tables else "")
    audited += " audited"
    head = verdicts[0]
    if unexplained:
        return head.model_copy(
            update={
                "verdict": Verdict.REFUTED,
                "reason": COLLATERAL_REASON + describe_changes(unexplained),
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
    if not changes.changes:
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


def replace_row(table: Table, key: tuple[Any, ...], row: Mapping[str, Any] | None) -> Table:
    """Return ``table`` with the row whose key is ``key`` replaced by ``row`` (None: removed)."""
    kept = [r for r in table.rows if table.key_of(r) != key]
    return Table(table.key, tuple(kept + ([row] if row is not None else [])))


class TableOracle:
    """The harness's oracle for one episode, reading the record through ``read``.

    ``read`` returns every table now, or None when the record cannot be read (it must never
    raise for an unreadable record); ``alive`` says whether the pack's service still runs
    (while it does not, the episode cannot be scored); ``down`` says so in the reason.
    """

    channel = "sql_readonly"

    def __init__(
        self,
        read: Callable[[], Reading | None],
        effects: Sequence[Effect],
        alive: Callable[[], bool],
        *,
        schema: str,
        down: str = "the record service is down",
        close: Callable[[], None] | None = None,
    ) -> None:
        self._reader = read
        self.effects = tuple(effects)
        self._alive = alive
        self._schema = schema
        self._down = down
        self._close = close
        self._lock = threading.Lock()
        self._observed: dict[tuple[str, tuple[Any, ...]], Mapping[str, Any] | None] = {}
        """Rows another actor committed during the episode, as the oracle read them."""
        self._missed: list[str] = []
        """Another actor's commits the oracle could not read (the episode is then unscored)."""
        self._judged: Reading | None = None
        """The before-reading the oracle last judged against."""

    def read(self) -> Reading | None:
        """Read every table now (None: unreadable), one reading at a time: a concurrent
        actor's commit is read from another thread."""
        with self._lock:
            return self._reader()

    def snapshot(self) -> Reading | None:
        """Read every table now; ``None`` when the service is down or the record unreadable."""
        return self.read() if self._alive() else None

    def observe(self, table: str, key: Any) -> None:
        """Another actor committed ``table``'s row ``key`` (its key value): read it now."""
        reading = self.read()
        found = None if reading is None else reading.get(table)
        wanted = key if isinstance(key, tuple) else (key,)
        if found is None:
            self._missed.append(f"{table} {key}")
            return
        rows = [r for r in found.rows if found.key_of(r) == wanted]
        self._observed[(table, wanted)] = rows[0] if rows else None

    def baseline(self, before: Reading | None) -> Reading | None:
        """Return ``before`` with the rows other actors committed meanwhile laid over it."""
        if before is None or not self._observed:
            return before
        laid = dict(before)
        for (table, key), row in self._observed.items():
            if table in laid:
                laid[table] = replace_row(laid[table], key, row)
        return laid

    def judge(self, before: Any) -> OracleVerdict:
        """Read again and judge the contract plus every table's change set against ``before``."""
        first = self.effects[0]
        if not self._alive():
            reason = f"{self._down}: the episode cannot be scored"
            return _indeterminate(first, self.channel, reason, before is not None)
        if self._missed:
            reason = "a concurrent actor's commit could not be read: " + ", ".join(self._missed)
            return _indeterminate(first, self.channel, reason, before is not None)
        self._judged = before
        return judge_tables(
            self.effects,
            self.baseline(before),
            self.read(),
            channel=self.channel,
            schema=self._schema,
        )

    def tables(self, snapshot: Any) -> dict[str, Table] | None:
        """Return a reading as every table (the schema's entry too), for the receipt; the
        before-reading the oracle judged against is its baseline (another actor's commits laid
        over it), so the receipt's change set is the one the verdict read."""
        if snapshot is None:
            return None
        if snapshot is self._judged:
            snapshot = self.baseline(snapshot)
        return dict(snapshot)

    def close(self) -> None:
        """Release the read path (a connection), if the pack gave a way to."""
        if self._close is not None:
            with self._lock:
                self._close()
