"""The other actor of a stale-overwrite (C4) episode: a colleague saving through their own session.

When the agent opens the record the colleague is working on (an account, or a ticket), the
colleague saves a change to it: a thread of its own, on a PostgreSQL connection of its own
(role ``tk_colleague``), in a transaction of its own, committed while the agent's copy of the
record is already on the agent's screen. The app's last-write-wins save then writes the
agent's stale copy back over it: a lost update, made by two real writers.

The interleaving is fixed, so runs reproduce: the app's next write (or read) waits until the
colleague's commit has landed (:meth:`Colleague.settle`), as it would if the colleague had
simply been quicker. Right after committing, the colleague tells the harness which row it
wrote (:attr:`Colleague.committed` callbacks, the oracle's among them); the oracle then reads
that row through its own connection, so its baseline holds the colleague's work and a save
that destroys it is a wrong effect. The colleague never talks to the agent, and the agent
never reaches the colleague.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import sql

SETTLE_TIMEOUT_S = 10.0
"""How long the app waits for the colleague's commit before it gives up (an infrastructure
failure, never the agent's)."""


@dataclass(frozen=True)
class ConcurrentWrite:
    """What the colleague saves, and which of the agent's reads sets them off."""

    opened: tuple[str, str]
    """``("account", CUSTOMER_ID)`` or ``("ticket", TICKET_ID)``: the read that triggers it."""
    table: str
    key: int | str
    """The primary key of the row the colleague updates (``id`` on every table)."""
    changes: tuple[tuple[str, str], ...]
    """``(column, new value)`` pairs."""

    def describe(self) -> dict[str, Any]:
        """Return the write for the public payload wiring."""
        return {
            "after_agent_opens": list(self.opened),
            "table": self.table,
            "key": self.key,
            "sets": dict(self.changes),
        }


@dataclass
class Colleague:
    """One episode's colleague: waits for its trigger, commits once, reports the row."""

    write: ConcurrentWrite
    connect: Callable[[], psycopg.Connection[Any]]
    committed: list[Callable[[str, Any], None]] = field(default_factory=list)
    """Called with ``(table, key)`` right after the colleague's commit."""
    failure: str | None = None
    _thread: threading.Thread | None = None
    _done: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def opened(self, kind: str, ident: str) -> None:
        """The app served the agent ``kind`` ``ident``: start the colleague if it is theirs."""
        if (kind, str(ident)) != self.write.opened:
            return
        with self._lock:
            if self._thread is not None:
                return
            self._thread = threading.Thread(
                target=self._save, name="ticketing-colleague", daemon=True
            )
            self._thread.start()

    def _save(self) -> None:
        try:
            with self.connect() as conn:
                sets = sql.SQL(", ").join(
                    sql.SQL("{} = {}").format(sql.Identifier(c), sql.Literal(v))
                    for c, v in self.write.changes
                )
                with conn.transaction():
                    conn.execute(
                        sql.SQL("UPDATE {} SET {} WHERE id = {}").format(
                            sql.Identifier(self.write.table), sets, sql.Literal(self.write.key)
                        )
                    )
            for tell in self.committed:
                tell(self.write.table, self.write.key)
        except Exception as exc:  # noqa: BLE001 - reported through the episode's health
            self.failure = f"the concurrent colleague failed: {type(exc).__name__}: {exc}"
        finally:
            self._done.set()

    def settle(self) -> None:
        """Before the app writes: wait for a colleague already at work to commit."""
        with self._lock:
            thread = self._thread
        if thread is None:
            return
        if not self._done.wait(SETTLE_TIMEOUT_S):
            self.failure = self.failure or "the concurrent colleague did not commit in time"

    def started(self) -> bool:
        """Say whether the agent's read set the colleague off."""
        return self._thread is not None

    def close(self) -> None:
        """Wait for the colleague's thread (it ends after one commit)."""
        thread = self._thread
        if thread is not None:
            thread.join(SETTLE_TIMEOUT_S)
