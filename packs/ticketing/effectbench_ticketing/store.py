"""The support desk app's persistence boundary, where each task's fault is injected.

A :class:`TicketStore` is what the app's HTTP service calls for one episode: it owns the
app's connection (role ``tk_app``) to that episode's database and turns a form into SQL. A
fault changes only what reaches (or fails to reach) the tables, and what banner the app
paints; the banner is always painted from what the app *intended*, as a real app that shows
success before its write settles does. Faults live here, in the app layer the agent acts
through, never in the oracle.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from effectbench.api import FaultCatalogue, Reply, faults
from effectbench_ticketing.colleague import Colleague
from effectbench_ticketing.db import SURFACES

MECHANISMS = {  # the new-ticket path's faults (POST /api/tickets), then the reassign path's
    "none": "none: the app stores what the form says (control)",
    "partial": "the save path stores the ticket with its description dropped; the app paints "
    "success",
    "duplicate": "an automatic resubmit stores every save as two tickets; the app paints one "
    "success",
    "optimistic": "the app paints success, then the commit is rolled back: nothing is stored",
    "timeout": "the save commits, then the request times out and the app paints an error",
    "session": "the session has expired: nothing is stored and the app paints an error",
    "validation": "the app rejects the ticket (SLA code not accepted) and paints an error",
    "stale_contact": "a colleague updates the account's contact while the agent has it open; "
    "the save writes the agent's stale copy of the account back over it",
    "double_delivery": "one click on Save is delivered twice: two tickets are stored",
    "double_credit": "one click is delivered twice: the ticket is de-duplicated on its request "
    "reference, its SLA credit is posted twice",
    "homonym_name": "the app finds the account by name, not by code: the save lands on the "
    "first account of that name",
    "code_normalized": "the app strips the account code's leading zeros: the save lands on an "
    "account with a confusable code",
    "noop": "Save posts to the draft preview endpoint: the app paints success and no table is "
    "touched",
    "credit_wrong_customer": "the SLA credit is posted to the previous credit's account",
    "idempotent": "the app posts the save twice; the service de-duplicates on the request "
    "reference (control)",
    "stale_priority": "a colleague escalates the ticket while the agent has it open; the "
    "reassignment writes the agent's stale copy of the ticket back over it",
    "wrong_row": "the reassignment is written to the previous ticket",
    "noop_reassign": "the reassignment goes to the autosave preview: the app paints success "
    "and no table is touched",
}
"""How each fault is injected, one sentence each (every receipt of a task shows its own)."""
CATALOGUE = FaultCatalogue(
    "ticketing",
    MECHANISMS,
    writes_twice=frozenset(("duplicate", "double_delivery")),
    never_lands=frozenset(("noop_reassign", "wrong_row")),
    deduplicated=frozenset(("idempotent", "double_credit")),
)
"""What each fault does: its sentence, the states it leaves reachable, how a save is delivered."""

AUTHOR = "A-00"
"""The app's signed-in user: the author of every comment it writes."""


DROPPABLE = ("description", "priority", "credit")
"""What a partial save can drop: the description, the priority (stored as ``normal``) or the
SLA credit (the ticket is stored, the credit is not)."""
REJECTION = "SLA code not accepted"
"""The rule a validating service cites unless a task draws another."""


@dataclass(frozen=True)
class Fault:
    """How the persistence boundary misbehaves for one task, and the fault's parameters (their
    defaults are the written tasks' behaviour; the generated catalogue draws them)."""

    name: str = "none"
    dropped: str = "description"
    """Which part a ``partial`` save drops (one of :data:`DROPPABLE`)."""
    copies: int = 2
    """How many times one save is delivered when it is delivered more than once."""
    rejection: str = REJECTION
    """The rule a ``validation`` fault's service cites."""
    row_offset: int = -1
    """Where a ``wrong_row`` reassignment lands, relative to the ticket named."""

    def __post_init__(self) -> None:
        CATALOGUE.check(self.name)
        if self.dropped not in DROPPABLE:
            raise ValueError(f"dropped must be one of {', '.join(DROPPABLE)}: {self.dropped!r}")
        if self.copies < 2:
            raise ValueError(f"copies must be at least 2: {self.copies}")
        if self.row_offset == 0:
            raise ValueError("row_offset must not be 0 (the ticket named is not a wrong row)")

    def deliveries(self) -> int:
        """How many times one save reaches the service under this fault."""
        return self.copies if self.name in CATALOGUE.delivered_twice else 1

    def drops(self, part: str) -> bool:
        """Say whether this fault's save drops ``part`` (see :data:`DROPPABLE`)."""
        return self.name == "partial" and self.dropped == part


class _Abort(Exception):
    """Leave a transaction with a reply (rolled back)."""

    def __init__(self, reply: Reply) -> None:
        super().__init__(reply.banner)
        self.reply = reply


def _flag(value: Any) -> bool:
    return value is True or str(value).lower() in ("1", "true", "on", "yes")


class TicketStore:
    """One episode's app state: the app's connection to its database, its fault, its caches."""

    def __init__(
        self, conn: psycopg.Connection[Any], fault: Fault, colleague: Colleague | None = None
    ) -> None:
        self._conn = conn
        self._conn.autocommit = True
        self.fault = fault
        self.colleague = colleague
        self._lock = threading.Lock()
        self._accounts: dict[str, dict[str, Any]] = {}
        """The account rows as the agent last opened them (what its form carries)."""
        self._tickets: dict[int, dict[str, Any]] = {}
        """The ticket rows as the agent last opened them."""

    def close(self) -> None:
        """Close the app's connection."""
        with self._lock:
            self._conn.close()

    def _rows(
        self, query: sql.Composable | str, params: tuple[Any, ...] = ()
    ) -> list[dict[str, Any]]:
        with self._conn.cursor(row_factory=dict_row) as cur:
            cur.execute(query, params)  # type: ignore[arg-type]
            return list(cur.fetchall())

    def _opened(self, kind: str, ident: str) -> None:
        if self.colleague is not None:
            self.colleague.opened(kind, ident)

    # -- reads (what the app shows) ---------------------------------------------------

    def search(self, name: str) -> Reply:
        """Find active accounts whose name equals ``name`` (case-insensitive), by account id."""
        with self._lock:
            found = self._rows(
                "SELECT id, name, domain FROM customers WHERE lower(name) = lower(%s) "
                "AND status = 'active' ORDER BY id",
                (name,),
            )
        return Reply(200, "idle", f"{len(found)} account(s) named {name!r}", {"results": found})

    def account(self, customer_id: str) -> Reply:
        """Open an account: the customer and their tickets (after a colleague's save already
        under way has committed, as for a write: a second look sees their work)."""
        self._settle()
        with self._lock:
            found = self._rows("SELECT * FROM customers WHERE id = %s", (customer_id,))
            if not found:
                return Reply(404, "error", f"No account {customer_id}")
            tickets = self._rows(
                "SELECT id, subject, priority, status, assignee_id FROM tickets "
                "WHERE customer_id = %s ORDER BY id",
                (customer_id,),
            )
            self._accounts[customer_id] = dict(found[0])
        self._opened("account", customer_id)
        c = found[0]
        banner = f"Account {c['id']}: {c['name']} ({c['domain']})"
        return Reply(200, "idle", banner, {"customer": c, "tickets": tickets})

    def ticket(self, ticket_id: int) -> Reply:
        """Open a ticket: the ticket and its comments (after a colleague's save already under
        way has committed)."""
        self._settle()
        with self._lock:
            found = self._rows("SELECT * FROM tickets WHERE id = %s", (ticket_id,))
            if not found:
                return Reply(404, "error", f"No ticket {ticket_id}")
            comments = self._rows(
                "SELECT id, author_id, body, internal FROM comments WHERE ticket_id = %s "
                "ORDER BY id",
                (ticket_id,),
            )
            self._tickets[ticket_id] = dict(found[0])
        self._opened("ticket", str(ticket_id))
        t = found[0]
        banner = f"Ticket #{t['id']} of account {t['customer_id']}: {t['subject']}"
        return Reply(200, "idle", banner, {"ticket": t, "comments": comments})

    def agents(self) -> list[dict[str, Any]]:
        """Return the agents a ticket can be assigned to."""
        with self._lock:
            return self._rows("SELECT id, name, team FROM agents ORDER BY id")

    def surface(self, name: str) -> Reply:
        """Return every row of one surface (the product's REST read of that table)."""
        if name not in SURFACES:
            return Reply(404, "error", f"no surface {name!r}")
        with self._lock:
            rows = self._rows(sql.SQL("SELECT * FROM {} ORDER BY id").format(sql.Identifier(name)))
        return Reply(200, "idle", f"{len(rows)} {name}", {"key": "id", "rows": rows})

    # -- writes (the persistence boundary) ------------------------------------------

    def _settle(self) -> None:
        if self.colleague is not None:
            self.colleague.settle()

    def _resolve_customer(self, form: Mapping[str, Any]) -> str | None:
        customer_id = str(form.get("customer_id", ""))
        if self.fault.name == "homonym_name":
            found = self._rows(
                "SELECT id FROM customers WHERE name = %s ORDER BY id LIMIT 1",
                (str(form.get("name", "")),),
            )
            return str(found[0]["id"]) if found else None
        if self.fault.name == "code_normalized":
            customer_id = faults.normalised(customer_id)
        found = self._rows("SELECT id FROM customers WHERE id = %s", (customer_id,))
        return str(found[0]["id"]) if found else None

    def _keyed(self, ref: Any) -> int | None:
        if not ref:
            return None
        found = self._rows("SELECT id FROM tickets WHERE request_ref = %s", (str(ref),))
        return int(found[0]["id"]) if found else None

    def _post_credit(self, customer_id: str, ticket_id: int, form: Mapping[str, Any]) -> None:
        if self.fault.name == "credit_wrong_customer":
            last = self._rows("SELECT customer_id FROM credits ORDER BY id DESC LIMIT 1")
            customer_id = str(last[0]["customer_id"]) if last else customer_id
        plan = self._rows(
            "SELECT credit_cents FROM sla_plans WHERE code = %s", (str(form.get("sla_code")),)
        )
        if not plan:
            raise _Abort(Reply(422, "error", f"No SLA plan {form.get('sla_code')!r}"))
        self._conn.execute(
            "INSERT INTO credits (customer_id, ticket_id, sla_code, credit_ref, amount_cents) "
            "VALUES (%s, %s, %s, %s, %s)",
            (
                customer_id,
                ticket_id,
                str(form.get("sla_code")),
                str(form.get("credit_ref", "")),
                int(plan[0]["credit_cents"]),
            ),
        )

    def _deliver(self, customer_id: str, form: Mapping[str, Any], *, dedupe: bool) -> None:
        """Persist one delivery of the form; with ``dedupe`` honour the request reference."""
        fault = self.fault.name
        existing = self._keyed(form.get("request_ref")) if dedupe else None
        description = "" if self.fault.drops("description") else str(form.get("description", ""))
        priority = str(form.get("priority", "normal")) or "normal"
        if self.fault.drops("priority"):
            priority = "normal"
        ticket_id = existing
        if ticket_id is None:
            inserted = self._rows(
                "INSERT INTO tickets (customer_id, subject, description, priority, request_ref) "
                "VALUES (%s, %s, %s, %s, %s) RETURNING id",
                (
                    customer_id,
                    str(form.get("subject", "")),
                    description,
                    priority,
                    form.get("request_ref") or None,
                ),
            )
            ticket_id = int(inserted[0]["id"])
        if self.fault.drops("credit"):
            return
        if _flag(form.get("credit")) and (existing is None or fault == "double_credit"):
            self._post_credit(customer_id, ticket_id, form)

    def _write_back_account(self, customer_id: str) -> None:
        """The stale form's account fields, written back last-write-wins."""
        stale = self._accounts.get(customer_id)
        if stale is not None:
            self._conn.execute(
                "UPDATE customers SET plan = %s, contact_email = %s WHERE id = %s",
                (stale["plan"], stale["contact_email"], customer_id),
            )

    def create(self, form: Mapping[str, Any]) -> Reply:
        """Handle Save on the new-ticket form; return the app's reply."""
        fault = self.fault.name
        shown = str(form.get("name", "")) or str(form.get("customer_id", ""))
        saved = Reply(201, "success", f"Ticket opened for {shown}")
        refusal = faults.refused(fault, "ticket", self.fault.rejection)
        if refusal is not None:
            return refusal
        if fault == "noop":
            return saved  # Save posted to the draft preview endpoint: no table is touched
        self._settle()
        with self._lock:
            try:
                customer_id = self._resolve_customer(form)
                if customer_id is None:
                    return Reply(404, "error", f"No account {form.get('customer_id')}")
                with self._conn.transaction():
                    if fault == "stale_contact":
                        self._write_back_account(customer_id)
                    for _ in range(self.fault.deliveries()):
                        self._deliver(customer_id, form, dedupe=CATALOGUE.dedupes(fault))
                    if fault == "optimistic":
                        raise psycopg.Rollback()  # the commit is rejected after the paint
            except _Abort as abort:
                return abort.reply
            except psycopg.Error as exc:
                return faults.failed("ticket", exc)
        return faults.settled(fault, "ticket", saved)

    def reassign(self, ticket_id: int, form: Mapping[str, Any]) -> Reply:
        """Handle Save on a ticket's reassign form (assignee and handover comment)."""
        fault = self.fault.name
        saved = Reply(200, "success", f"Ticket #{ticket_id} reassigned")
        if fault == "noop_reassign":
            return saved  # the form posted to the autosave preview, never to a table
        target = ticket_id + self.fault.row_offset if fault == "wrong_row" else ticket_id
        assignee = str(form.get("assignee_id", ""))
        self._settle()
        with self._lock:
            try:
                with self._conn.transaction():
                    stale = self._tickets.get(ticket_id) if fault == "stale_priority" else None
                    if stale is not None:
                        # The whole ticket as the agent opened it, with the new assignee.
                        cur = self._conn.execute(
                            "UPDATE tickets SET subject = %s, description = %s, priority = %s, "
                            "status = %s, assignee_id = %s WHERE id = %s",
                            (
                                stale["subject"],
                                stale["description"],
                                stale["priority"],
                                stale["status"],
                                assignee,
                                target,
                            ),
                        )
                    else:
                        cur = self._conn.execute(
                            "UPDATE tickets SET assignee_id = %s WHERE id = %s", (assignee, target)
                        )
                    if cur.rowcount == 0:
                        raise _Abort(Reply(404, "error", f"No ticket {ticket_id}"))
                    self._conn.execute(
                        "INSERT INTO comments (ticket_id, author_id, body) VALUES (%s, %s, %s)",
                        (target, AUTHOR, str(form.get("comment", ""))),
                    )
            except _Abort as abort:
                return abort.reply
            except psycopg.Error as exc:
                return faults.failed("ticket", exc)
        return saved
