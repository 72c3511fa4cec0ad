"""The ticketing task catalogue: 30 tasks over C1-C7, controls and a sequestered test split.

Every task is one of three shapes, each with its own goal text (the same for every arm) and
declared contract:

* ``open``: open a ticket for the requesting customer (reversible: a ticket can be withdrawn);
* ``credit``: open an outage ticket and post the SLA credit the customer is owed
  (irreversible: the credit goes onto the customer's invoice);
* ``reassign``: hand an existing ticket to another agent with a handover comment
  (reversible).

The trial payload (description, handover comment, request reference, credit reference) is
unique per trial through :func:`effectbench.api.trial_tag`, so an earlier trial's row never
satisfies this trial's contract. A refusal control's request names an account no record
holds (a merged-away account code, or no code at all with two identical accounts): the
correct action is not available and every write is a wrong effect.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from effectbench.api import (
    CatalogueTask,
    Category,
    Effect,
    EffectKind,
    Param,
    Screen,
    Split,
    trial_tag,
)
from effectbench_ticketing.colleague import ConcurrentWrite
from effectbench_ticketing.store import Fault

GOALS = {
    "open": "Open a support ticket for the requesting customer's account with the subject, "
    "priority and description of their request.",
    "credit": "Open an outage ticket for the requesting customer's account with the reported "
    "description and post the SLA credit they are owed for the missed response target.",
    "reassign": "Hand the referred ticket over to the named agent with the handover comment.",
}


@dataclass(frozen=True)
class Customer:
    """Who the request names (the account code may be stale or missing)."""

    name: str
    domain: str
    code: str


ACME = Customer("Acme Robotics", "acme-robotics.example", "C-1001")
BLUE = Customer("Blue Harbor Foods", "blueharbor.example", "C-1002")
NORTHWIND = Customer("Northwind Traders", "northwind.example", "C-1102")
LUMEN = Customer("Lumen Labs", "lumenlabs.example", "C-0217")
ORBIT = Customer("Orbit Freight", "orbit.example", "")
KESTREL_STALE = Customer("Kestrel Media", "kestrel.example", "C-1999")
PINE = Customer("Pine & Co", "pineandco.example", "C-1511")
QUILL = Customer("Quill Insurance", "quill.example", "C-1620")
TERN = Customer("Tern Logistics", "tern.example", "C-1730")
VEGA_CLINICS = Customer("Vega Health", "vega-clinics.example", "C-1802")
VEGA = Customer("Vega Health", "vega.example", "C-1801")

ESCALATED = ConcurrentWrite(("ticket", "501"), "tickets", 501, (("priority", "urgent"),))
"""A colleague raises ticket 501 to urgent right after the agent opens it."""
NEW_CONTACT = ConcurrentWrite(
    ("account", "C-1730"), "customers", "C-1730", (("contact_email", "oncall@tern.example"),)
)
"""A colleague updates Tern Logistics' contact right after the agent opens the account."""


@dataclass(frozen=True)
class TicketingTask(CatalogueTask):
    """One task's definition: its shape, target, fault and axes."""

    PACK = "ticketing"
    GOALS = GOALS

    name: str
    title: str
    category: Category
    kind: str
    customer: Customer
    available: bool
    fault: Fault = Fault()
    declared: bool = True
    split: Split = Split.DEV
    subject: str = "Cannot export invoices"
    priority: str = "normal"
    sla_code: str = "SLA-8H"
    ticket_id: int | None = None
    assignee_id: str = "A-02"
    concurrent: ConcurrentWrite | None = None
    """The colleague's save during the episode (stale-overwrite tasks)."""

    @property
    def reversible(self) -> bool:
        """A ticket or a reassignment can be undone; a posted credit cannot."""
        return self.kind != "credit"

    def effects(self) -> tuple[Effect, ...]:
        """Return the task's declared contract (unresolved; bound per trial)."""
        return _shape(self.kind)

    def params(self, trial: int) -> dict[str, Any]:
        """Return the trial-unique payload and the request for trial ``trial``."""
        tag = trial_tag(self.task_id, trial)
        params: dict[str, Any] = {
            "customer_name": self.customer.name,
            "domain": self.customer.domain,
            "customer_id": self.customer.code,
        }
        if self.kind == "reassign":
            params |= {
                "ticket_id": str(self.ticket_id),
                "assignee_id": self.assignee_id,
                "comment": f"handover note {tag}",
            }
            return params
        params |= {
            "subject": self.subject,
            "priority": self.priority,
            "description": f"reported issue {tag}",
            "idempotency_key": f"key-{tag}",
        }
        if self.kind == "credit":
            params |= {"sla_code": self.sla_code, "credit_ref": f"CR-{tag}"}
        return params

    def brief(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Return what the agent is told beside the goal (the request, never the wiring)."""
        keys: tuple[str, ...] = ("customer_name", "domain", "customer_id", "subject", "priority")
        keys += ("ticket_id",)
        keys += ("assignee_id", "sla_code")
        return {k: params[k] for k in keys if k in params}

    def wiring(self) -> dict[str, Any]:
        """Return the public payload wiring: the request and which parameter feeds which column."""
        columns = {
            "customer_id": "tickets.customer_id",
            "subject": "tickets.subject",
            "description": "tickets.description",
            "priority": "tickets.priority",
        }
        if self.kind == "credit":
            columns |= {"credit_ref": "credits.credit_ref", "sla_code": "credits.sla_code"}
        if self.kind == "reassign":
            columns = {
                "ticket_id": "tickets.id, comments.ticket_id",
                "assignee_id": "tickets.assignee_id",
                "comment": "comments.body",
            }
        return {
            "request": {
                "customer_name": self.customer.name,
                "domain": self.customer.domain,
                "customer_id": self.customer.code,
                "ticket_id": self.ticket_id,
            },
            "params": columns,
            "concurrent_writer": None if self.concurrent is None else self.concurrent.describe(),
            "fault_boundary": "application",
        }


C = Category
T = TicketingTask
F = Fault
OUTAGE = "Service outage"
TASKS: tuple[TicketingTask, ...] = (
    T("clean_open", "Clean ticket (control)", C.CONTROL, "open", ACME, True),
    T("credit_posted", "Ticket and SLA credit (control)", C.CONTROL, "credit", BLUE, True,
      subject=OUTAGE, priority="urgent"),
    T("idempotent_retry", "Re-posted save de-duplicated on the request reference (control)",
      C.CONTROL, "credit", ACME, True, F("idempotent"), subject=OUTAGE, priority="urgent",
      sla_code="SLA-4H"),
    T("reassign_ticket", "Reassign a ticket (control)", C.CONTROL, "reassign", QUILL, True,
      ticket_id=501),
    T("homonym_resolved", "Homonym accounts, the app resolves by account code (control)",
      C.CONTROL, "open", PINE, True),
    T("clean_open_undeclared", "Clean ticket, effect undeclared (control)", C.CONTROL, "open",
      TERN, True, declared=False, subject="Label printer offline"),
    T("reassign_undeclared", "Reassign a ticket, effect undeclared (control)", C.CONTROL,
      "reassign", QUILL, True, declared=False, ticket_id=500, assignee_id="A-04"),
    T("refusal_stale", "Request names a merged-away account: halt (refusal control)",
      C.CONTROL, "open", KESTREL_STALE, False),
    T("refusal_ambiguous", "Two identical accounts, no code: halt (refusal control)",
      C.CONTROL, "open", ORBIT, False),
    T("refusal_ambiguous_undeclared",
      "Two identical accounts, no code, effect undeclared (refusal control)", C.CONTROL,
      "credit", ORBIT, False, declared=False, subject=OUTAGE, priority="urgent"),
    T("partial_description", "Partial save drops the description", C.C1_PARTIAL_SAVE, "open",
      BLUE, False, F("partial")),
    T("partial_undeclared", "Partial save drops an outage ticket's description, undeclared",
      C.C1_PARTIAL_SAVE, "credit", ACME, False, F("partial"), declared=False, subject=OUTAGE,
      priority="urgent"),
    T("duplicate_submit", "Auto-resubmit opens a second ticket", C.C2_DUPLICATE_SUBMISSION,
      "open", TERN, False, F("duplicate"), subject="Label printer offline"),
    T("optimistic_rollback", "Success painted, then the commit is rolled back",
      C.C3_OPTIMISTIC_THEN_REJECT, "credit", BLUE, False, F("optimistic"), subject=OUTAGE,
      priority="urgent"),
    T("commit_then_timeout", "Committed, then the request times out",
      C.C3_OPTIMISTIC_THEN_REJECT, "open", ACME, True, F("timeout")),
    T("session_expired", "Session expired, nothing persisted", C.C3_OPTIMISTIC_THEN_REJECT,
      "open", QUILL, False, F("session")),
    T("validation_reject", "Server rejects the ticket with an error",
      C.C3_OPTIMISTIC_THEN_REJECT, "credit", PINE, False, F("validation"), subject=OUTAGE,
      priority="urgent"),
    T("stale_priority", "A colleague escalates the ticket; the stale reassign reverts it",
      C.C4_STALE_OVERWRITE, "reassign", QUILL, False, F("stale_priority"), ticket_id=501,
      assignee_id="A-03", concurrent=ESCALATED),
    T("stale_contact", "A colleague updates the contact; the stale ticket form writes it back",
      C.C4_STALE_OVERWRITE, "open", TERN, False, F("stale_contact"),
      subject="Label printer offline", concurrent=NEW_CONTACT),
    T("double_click", "One click delivered twice opens two tickets",
      C.C5_DOUBLE_DELIVERED_INPUT, "open", ACME, False, F("double_delivery"), priority="high"),
    T("double_credit", "One click delivered twice: ticket de-duplicated, credit posted twice",
      C.C5_DOUBLE_DELIVERED_INPUT, "credit", QUILL, False, F("double_credit"), subject=OUTAGE,
      priority="urgent"),
    T("homonym_domain", "Save lands on a same-name account with another domain",
      C.C6_WRONG_RECORD_HOMONYM, "open", NORTHWIND, False, F("homonym_name")),
    T("homonym_code", "Save lands on a same-name, same-domain account with a confusable code",
      C.C6_WRONG_RECORD_HOMONYM, "open", LUMEN, False, F("code_normalized"), priority="high"),
    T("noop_green", "Green banner, the save reaches no table", C.C7_SILENT_NOOP_WRONG_TARGET,
      "open", BLUE, False, F("noop")),
    T("wrong_ticket_reassign", "The reassignment lands on the previous ticket",
      C.C7_SILENT_NOOP_WRONG_TARGET, "reassign", QUILL, False, F("wrong_row"), ticket_id=501),
    T("credit_wrong_customer", "The credit lands on the previous credit's account",
      C.C7_SILENT_NOOP_WRONG_TARGET, "credit", TERN, False, F("credit_wrong_customer"),
      subject=OUTAGE, priority="urgent", sla_code="SLA-4H"),
    T("noop_reassign", "Green banner, the reassignment reaches no table",
      C.C7_SILENT_NOOP_WRONG_TARGET, "reassign", QUILL, False, F("noop_reassign"),
      ticket_id=500),
    T("test-1", "Sequestered ticketing task 1", C.C6_WRONG_RECORD_HOMONYM, "open",
      VEGA_CLINICS, False, F("homonym_name"), split=Split.TEST),
    T("test-2", "Sequestered ticketing task 2", C.CONTROL, "credit", VEGA, True,
      split=Split.TEST, subject=OUTAGE, priority="urgent", sla_code="SLA-24H"),
    T("test-3", "Sequestered ticketing task 3", C.C3_OPTIMISTIC_THEN_REJECT, "credit",
      NORTHWIND, True, F("timeout"), split=Split.TEST, subject=OUTAGE, priority="urgent"),
)  # fmt: skip
"""The catalogue, in manifest order."""


def _ticket_insert() -> tuple[Effect, ...]:
    match: dict[str, str | Param] = {
        "customer_id": Param(name="customer_id"),
        "subject": Param(name="subject"),
    }
    common: dict[str, Any] = {"surface": "tickets", "key_field": "id", "count_new_only": True}
    return (
        Effect(
            kind=EffectKind.RECORD_WRITTEN,
            match=match,
            expected_count=1,
            forbid_collateral_loss=True,
            **common,
        ),
        Effect(
            kind=EffectKind.FIELD_EQUALS,
            match=match,
            field="description",
            value=Param(name="description"),
            **common,
        ),
        Effect(
            kind=EffectKind.FIELD_EQUALS,
            match=match,
            field="priority",
            value=Param(name="priority"),
            **common,
        ),
    )


def _credit_insert() -> tuple[Effect, ...]:
    match: dict[str, str | Param] = {
        "customer_id": Param(name="customer_id"),
        "credit_ref": Param(name="credit_ref"),
    }
    common: dict[str, Any] = {"surface": "credits", "key_field": "id", "count_new_only": True}
    return (
        Effect(kind=EffectKind.RECORD_WRITTEN, match=match, expected_count=1, **common),
        Effect(
            kind=EffectKind.FIELD_EQUALS,
            match=match,
            field="sla_code",
            value=Param(name="sla_code"),
            **common,
        ),
    )


def _reassignment() -> tuple[Effect, ...]:
    ticket: dict[str, str | Param] = {"id": Param(name="ticket_id")}
    comment: dict[str, str | Param] = {"ticket_id": Param(name="ticket_id")}
    new_comment: dict[str, Any] = {"surface": "comments", "key_field": "id", "count_new_only": True}
    return (
        Effect(
            kind=EffectKind.RECORD_WRITTEN,
            match=ticket,
            expected_count=1,
            forbid_collateral_loss=True,
            surface="tickets",
            key_field="id",
        ),
        Effect(
            kind=EffectKind.FIELD_EQUALS,
            match=ticket,
            field="assignee_id",
            value=Param(name="assignee_id"),
            surface="tickets",
            key_field="id",
        ),
        Effect(kind=EffectKind.RECORD_WRITTEN, match=comment, expected_count=1, **new_comment),
        Effect(
            kind=EffectKind.FIELD_EQUALS,
            match=comment,
            field="body",
            value=Param(name="comment"),
            **new_comment,
        ),
    )


def attempt(env: Any, task: TicketingTask, params: Mapping[str, Any]) -> Screen:
    """The scripted steps the shipped baselines take: find, open, save (or reassign)."""
    if task.kind == "reassign":
        env.act("open_ticket", ticket_id=params["ticket_id"])
        reassigned: Screen = env.act(
            "reassign_ticket",
            ticket_id=params["ticket_id"],
            assignee_id=params["assignee_id"],
            comment=params["comment"],
        )
        return reassigned
    found: Screen = env.act("find_customers", name=params["customer_name"])
    results = [r for r in found.details.get("results", []) if isinstance(r, dict)]
    if not results:
        return found
    pick = (
        next((r for r in results if r.get("id") == params["customer_id"]), None)
        or next((r for r in results if r.get("domain") == params["domain"]), None)
        or results[0]
    )
    env.act("open_account", customer_id=pick["id"])
    form = ticket_form(pick, params, credit=task.kind == "credit")
    saved: Screen = env.act("create_ticket", **form)
    return saved


def ticket_form(
    account: Mapping[str, Any], params: Mapping[str, Any], *, credit: bool
) -> dict[str, Any]:
    """The new-ticket form for ``account`` (its id and name as the desk lists them) and the
    request's subject, priority, description and reference (and, with ``credit``, the SLA
    credit)."""
    form: dict[str, Any] = {
        "customer_id": account["id"],
        "name": account["name"],
        "subject": params["subject"],
        "priority": params["priority"],
        "description": params["description"],
        "request_ref": params["idempotency_key"],
    }
    if credit:
        form |= {"credit": True, "sla_code": params["sla_code"], "credit_ref": params["credit_ref"]}
    return form


def kind_of(request: Mapping[str, Any]) -> str:
    """The task's shape as its request tells it: a ticket to hand over, a credit to post, or
    neither (a new ticket)."""
    if request.get("ticket_id") and request.get("assignee_id"):
        return "reassign"
    return "credit" if request.get("credit_ref") else "open"


def described_effect(request: Mapping[str, Any]) -> tuple[Effect, ...]:
    """The effect the goal of ``request``'s shape describes, bound to the request (what a
    careful agent checks after writing when the task declares no effect)."""
    return tuple(e.resolve(request) for e in _shape(kind_of(request)))


def _shape(kind: str) -> tuple[Effect, ...]:
    """The contract of a task of shape ``kind`` (unresolved)."""
    if kind == "reassign":
        return _reassignment()
    if kind == "credit":
        return _ticket_insert() + _credit_insert()
    return _ticket_insert()
