"""The ticketing pack's generated catalogue: templates per divergence category, drawn from a seed.

Each :class:`~effectbench.api.Template` here builds one situation of the support desk's save
path (:mod:`.store`): the payload (the requesting account, its domain and code, the subject,
priority, SLA and description, the ticket to hand over and to whom) and the situation (which
part a partial save drops, how many copies a resubmit or a double-delivered click stores, which
rule a validating service cites, which field a colleague changes while the agent has the record
open, how a same-name account differs, where a misdirected reassignment lands, whose account a
misrouted credit hits). Every task has a *world* of its own (:class:`World`): the desk's seed
rows plus the task's accounts, tickets, comments and credits, so the requester, their homonym
and the strangers around them exist in that task's record only.

One payload pool serves every template, and the neighbourhood (a same-name account, another
account's tickets and credits) is drawn in controls as in faulted tasks, so a request's wording
does not tell its category. The dev split is drawn from :data:`DEV_SEED` (published); the
sequestered test split from the secret in ``EFFECTBENCH_SEQUESTERED_SECRET``
(:data:`CATALOGUE`), and is absent without it.

A fresh instance (:meth:`~effectbench.api.Catalogue.instance_split`, drawn from a submission
seed) makes the same random draws and writes its seed's mark
(:class:`~effectbench.api.InstanceMark`) into every payload: a suffix on every company name
(and so on its domains and contacts), eight digits after every account code (and so in every
credit reference), an offset on every ticket, comment and credit id of the world (clear of the
ids an episode's inserts take), cents on every credit already posted, and a tag after every
description and comment text, the agent's handover comment included. The public and
sequestered splits carry no mark.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from psycopg import sql

from effectbench.api import (
    Catalogue,
    Category,
    Draw,
    InstanceMark,
    Split,
    Template,
    canonical_hash,
    marked,
    situation_template,
    trial_tag,
)
from effectbench_ticketing import db
from effectbench_ticketing.colleague import ConcurrentWrite
from effectbench_ticketing.store import DROPPABLE, Fault
from effectbench_ticketing.tasks import Customer, TicketingTask

NAME = "ticketing-generated"
"""The generated catalogue's pack name (its task ids are ``ticketing-generated::NAME``)."""
DEV_SEED = "effectbench-ticketing-generated-dev-1"
"""The published seed of the dev split."""
GENERATOR_VERSION = 1
"""Bumped whenever a template draws differently (the pack's fingerprint changes with it)."""

FIRST = (
    "Alder", "Beacon", "Cobalt", "Driftwood", "Ember", "Fjord", "Granite", "Heron", "Indigo",
    "Juniper", "Kiln", "Larch", "Meridian", "Nimbus", "Onyx", "Pebble", "Quarry", "Redwood",
    "Saffron", "Tidal", "Umber", "Vireo", "Willow", "Zephyr",
)  # fmt: skip
SECOND = (
    "Analytics", "Bakery", "Cinemas", "Dental", "Energy", "Fabrics", "Galleries", "Hotels",
    "Imaging", "Joinery", "Kitchens", "Labs", "Mills", "Nurseries", "Optics", "Pharma",
    "Roasters", "Studios", "Textiles", "Utilities", "Vineyards", "Works",
)  # fmt: skip
REGIONS = ("-eu", "-group", "-uk", "-na", "hq")
"""How a same-name account's domain differs (``name-eu.example``, ``namehq.example``, ...)."""
SUBJECTS = (
    "Cannot export invoices", "Label printer offline", "Password reset loop",
    "Webhook retries failing", "Dashboard loads slowly", "Missing usage report",
    "SSO certificate expiring", "Duplicate invoice emails", "Mobile app crashes on login",
    "Bulk import rejected", "Audit log gap", "Shipping labels misaligned",
)  # fmt: skip
OUTAGES = ("Service outage", "API outage", "Portal down", "Payments gateway down")
"""The subjects of an outage ticket (the credit shape)."""
DESCRIPTIONS = (
    "customer reports the problem since this morning",
    "affects every user of the finance team",
    "started after the last release",
    "intermittent, roughly one request in five",
    "only on the EU tenant",
    "reproduced by the customer with a screen recording",
    "blocks month-end close",
    "workaround in place but slow",
    "seen from two offices",
    "customer attached the error id",
)
"""Description stems (a trial's description is one of them and the trial's tag)."""
COMMENTS = (
    "Asked for logs.", "Customer confirmed the steps.", "Waiting on engineering.",
    "Escalation declined, monitoring.", "Sent the known-issue article.",
)  # fmt: skip
PRIORITIES = db.PRIORITIES
SLAS = tuple(code for code, _, _ in db.SLA_PLANS)
PLANS = ("standard", "priority", "enterprise")
AGENTS = tuple(a[0] for a in db.AGENTS if a[0] != "A-00")
REJECTIONS = (
    "SLA code not accepted",
    "priority not allowed for this plan",
    "description exceeds the length limit",
    "account is on a billing hold",
)
"""The rules a validating service may cite when it rejects a save."""
HOMONYMS = ("domain", "closed", "merged")
"""How a same-name account differs from the requester's: another domain, a closed account
(which the app's search hides), or a merged code (the requester's code without its leading
zero; same name and domain)."""
HOMONYM_RATE = 0.8
"""How often a task whose template does not fix it has a same-name account."""
CODE_SHOWN_RATE = 0.85
"""How often a request shows the account code where name and domain alone tell the account."""
UNDECLARED_RATE = 0.15
"""How often a task's effect contract is not told to the agent (in every category)."""
LEADING_ZERO_RATE = 0.3
"""How often a requester's code has a leading zero (always where a merged code is drawn)."""
_SEED_CODES = frozenset(c[0] for c in db.CUSTOMERS)
CODES = (2000, 8999)
"""The numbers of drawn account codes (``C-2000`` to ``C-8999``)."""
ZERO_CODES = (200, 899)
"""The numbers of drawn codes with a leading zero (``C-0200`` to ``C-0899``)."""
ID_CLEARANCE = 10_000
"""Added with the mark's id offset to a fresh instance's world ids: the app's inserts take
ids from the identity starts (tickets 1000, comments 5000, credits 100), far below."""
HANDOVER = "handover note"
"""The agent's handover comment before the trial's tag (:class:`TicketingTask`'s)."""

Row = tuple[Any, ...]


@dataclass(frozen=True)
class World:
    """A task's record: the desk's seed rows, then the task's own (in insertion order)."""

    customers: tuple[Row, ...]
    tickets: tuple[Row, ...]
    comments: tuple[Row, ...]
    credits: tuple[Row, ...]

    def tables(self) -> tuple[tuple[str, tuple[Row, ...]], ...]:
        """The task's own rows per table, in the order they are inserted."""
        return (
            ("customers", self.customers),
            ("tickets", self.tickets),
            ("comments", self.comments),
            ("credits", self.credits),
        )

    def script(self) -> list[sql.Composed]:
        """The statements that add the task's rows to a fresh clone of the template."""
        return db.insert_script(self.tables())

    @property
    def digest(self) -> str:
        """The identity of the world's seed state (the desk's seed and the task's rows)."""
        return canonical_hash({"seed": db.TEMPLATE_DIGEST, **dict(self.tables())})


@dataclass(frozen=True)
class GeneratedTask(TicketingTask):
    """A ticketing task drawn from a template: a :class:`TicketingTask` with its own world."""

    PACK = NAME

    template: str = ""
    world: World = field(default_factory=lambda: World((), (), (), ()))
    description: str = ""
    show_code: bool = True
    facts: tuple[tuple[str, Any], ...] = ()
    """The situation's parameters beyond the fault (how the homonym differs, ...)."""
    handover: str = HANDOVER
    """A reassignment's handover comment before the trial's tag (a fresh instance's is
    marked)."""

    def situation(self) -> dict[str, Any]:
        """What the task's fault does and where, and its shape (see :mod:`.generated`)."""
        return {
            "template": self.template,
            "kind": self.kind,
            "declared": self.declared,
            "available": self.available,
            "fault": dict(vars(self.fault)),
            "concurrent": None if self.concurrent is None else self.concurrent.describe(),
            **dict(self.facts),
        }

    def family(self) -> str:
        """The task's situation family: its template, shape, contract visibility and the
        fault's drawn parameters (where outcomes of scripted arms are identical)."""
        return canonical_hash(
            {
                "template": self.template,
                "kind": self.kind,
                "declared": self.declared,
                "fault": dict(vars(self.fault)),
            }
        )[7:19]

    def payload(self) -> dict[str, Any]:
        """The drawn payload: whose account, which ticket, subject, priority, SLA, text."""
        c = self.customer
        return {
            "customer": [c.name, c.domain, c.code],
            "subject": self.subject,
            "priority": self.priority,
            "sla_code": self.sla_code,
            "ticket_id": self.ticket_id,
            "assignee_id": self.assignee_id,
            "description": self.description,
            "world": self.world.digest,
        }

    def params(self, trial: int) -> dict[str, Any]:
        """The trial-unique payload: the drawn description (a reassignment's handover comment)
        with the trial's tag."""
        params = super().params(trial)
        if "description" in params:
            params["description"] = f"{self.description} {trial_tag(self.task_id, trial)}"
        if "comment" in params and self.handover != HANDOVER:
            params["comment"] = f"{self.handover} {trial_tag(self.task_id, trial)}"
        return params

    def brief(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The request; some requests carry no account code (name and domain tell it)."""
        told = super().brief(params)
        if not self.show_code and self.kind != "reassign":
            told.pop("customer_id", None)
        return told

    def wiring(self) -> dict[str, Any]:
        """The public wiring, and whether the request shows the account code."""
        return {**super().wiring(), "code_in_request": self.show_code}


# -- drawing a world --------------------------------------------------------------------------


def _slug(name: str) -> str:
    return name.lower().replace(" ", "-")


@dataclass
class _Scene:
    """The task's neighbourhood while it is drawn."""

    d: Draw
    mark: InstanceMark | None = None
    """A fresh instance's mark (None for the public and sequestered seeds)."""
    names: set[str] = field(default_factory=set)
    codes: set[int] = field(default_factory=set)
    customers: list[Row] = field(default_factory=list)
    tickets: list[Row] = field(default_factory=list)
    comments: list[Row] = field(default_factory=list)
    credits: list[Row] = field(default_factory=list)

    def company(self) -> str:
        while True:
            name = f"{self.d.choice(FIRST)} {self.d.choice(SECOND)}"
            if name not in self.names:
                self.names.add(name)
                return name if self.mark is None else f"{name} {self.mark.word}"

    def code(self, lo: int, hi: int, *, zero: bool = False) -> str:
        """A new account code ``C-N`` (``C-0N`` with ``zero``), N in ``[lo, hi]``, unlike any
        other code of the record (in either form), then the mark's digits."""
        while True:
            n = self.d.integer(lo, hi)
            if n not in self.codes and {f"C-{n}", f"C-0{n}"}.isdisjoint(_SEED_CODES):
                self.codes.add(n)
                return f"C-0{n}{self.digits}" if zero else f"C-{n}{self.digits}"

    @property
    def digits(self) -> str:
        """What follows a code's number ("" unmarked)."""
        return "" if self.mark is None else self.mark.digits

    def number(self, code: str) -> int:
        """The drawn number of ``code`` (the mark's digits left out)."""
        return int(code.partition("-")[2].removesuffix(self.digits))

    def id(self, number: int) -> int:
        """A world row's id: ``number``, moved by the mark's offset."""
        return number if self.mark is None else number + ID_CLEARANCE + self.mark.ids

    def text(self, text: str) -> str:
        """A drawn text, with the instance's tag when the draw is marked."""
        return marked(text, self.mark)

    def account(self, code: str, name: str, domain: str, status: str = "active") -> Row:
        contact = f"{self.d.choice(('it', 'ops', 'desk', 'help'))}@{domain}"
        return (code, name, domain, self.d.choice(PLANS), contact, status)

    def ticket(self, tid: int, code: str) -> Row:
        row = (tid, code, self.d.choice(SUBJECTS), self.text(self.d.choice(DESCRIPTIONS)),
               self.d.choice(PRIORITIES), "open", self.d.choice(AGENTS), None)  # fmt: skip
        self.tickets.append(row)
        return row

    def credit(self, code: str, ticket: int) -> None:
        sla, _, cents = db.SLA_PLANS[self.d.integer(0, len(db.SLA_PLANS) - 1)]
        cid = self.id(4 + len(self.credits))
        cents += 0 if self.mark is None else self.mark.cents
        self.credits.append((cid, code, ticket, sla, f"CR-seed-{code.partition('-')[2]}", cents))


@dataclass(frozen=True)
class _Shape:
    """What a template fixes; the rest is drawn."""

    kinds: tuple[str, ...] = ("open", "credit")
    homonym: str = "optional"
    """``optional`` (drawn as in any task), ``forced`` (one of ``homonym_kinds``, listed
    before the requester), ``identical`` (same name and domain, no code in the request) or
    ``stale`` (the request's code was merged away into a same-name account)."""
    homonym_kinds: tuple[str, ...] = HOMONYMS
    available: bool = False
    concurrent: str | None = None
    """``ticket`` or ``account``: the record a colleague changes while the agent has it open."""


def _homonym(scene: _Scene, kind: str, name: str, domain: str, code: str, first: bool) -> Row:
    """The same-name account of ``kind``; ``first`` gives it the lower code (where a lookup by
    name lands)."""
    if kind == "merged":
        return scene.account(f"C-{code.removeprefix('C-0')}", name, domain)
    number, zero = scene.number(code), code.startswith("C-0")
    lo, hi = ZERO_CODES if zero else CODES
    lo, hi = (lo, number - 1) if first else (number + 1, hi)
    if lo > hi:  # the requester's number ends the range: the homonym's is just beyond it
        lo, hi = (number - 100, number - 1) if first else (number + 1, number + 100)
    other = scene.code(lo, hi, zero=zero)
    if kind == "closed":
        domain = scene.d.choice((domain, _other(scene, name)))
        return scene.account(other, name, domain, status="closed")
    return scene.account(other, name, _other(scene, name) if kind == "domain" else domain)


def _other(scene: _Scene, name: str) -> str:
    return f"{_slug(name)}{scene.d.choice(REGIONS)}.example"


def _draw_task(
    d: Draw, name: str, split: Split, fault: Fault, *, template: str, category: Category,
    shape: _Shape, title: str,
) -> GeneratedTask:  # fmt: skip
    scene = _Scene(d, InstanceMark.of(d.mark))
    kind = d.choice(shape.kinds)
    company = scene.company()
    domain = f"{_slug(company)}.example"
    facts: dict[str, Any] = {}
    homonym_kind: str | None = None
    if shape.homonym == "forced":
        homonym_kind = d.choice(shape.homonym_kinds)
    elif shape.homonym in ("identical", "stale"):
        homonym_kind = shape.homonym
    elif shape.homonym == "optional" and d.chance(HOMONYM_RATE):
        homonym_kind = d.choice(HOMONYMS)
    zero = homonym_kind == "merged" or d.chance(LEADING_ZERO_RATE)
    code = scene.code(*(ZERO_CODES if zero else CODES), zero=zero)
    # A forced homonym is the one a lookup by name finds first; elsewhere its place is drawn.
    first = shape.homonym == "forced" or d.chance(0.5)
    me = scene.account(code, company, domain)
    homonym: Row | None = None
    if homonym_kind in ("domain", "closed", "merged"):
        homonym = _homonym(scene, homonym_kind, company, domain, code, first)
    elif homonym_kind == "identical":
        homonym = scene.account(scene.code(*CODES), company, domain)
    elif homonym_kind == "stale":  # the request's account was merged into this one
        homonym = scene.account(scene.code(*CODES), company, _other(scene, company))
    facts["homonym"] = homonym_kind or "none"
    if homonym_kind in ("domain", "closed"):
        facts["homonym_first"] = homonym is not None and homonym[0] < code
    if homonym_kind != "stale":
        scene.customers.append(me)
    if homonym is not None:
        scene.customers.append(homonym)
    strangers = []
    for _ in range(2):
        other = scene.company()
        row = scene.account(scene.code(*CODES), other, f"{_slug(other)}.example")
        scene.customers.append(row)
        strangers.append(row[0])

    # Tickets: a stranger's, the requester's two, another stranger's (a reassignment that
    # misses its ticket by one lands on a neighbour either way).
    owner = homonym[0] if homonym_kind == "stale" and homonym is not None else code
    base = scene.id(600 + 5 * d.integer(0, 70))
    scene.ticket(base - 1, strangers[0])
    mine = [scene.ticket(base, owner), scene.ticket(base + 1, owner)]
    scene.ticket(base + 2, strangers[1])
    target = d.choice(mine)
    if d.chance(0.6):
        comment = scene.text(d.choice(COMMENTS))
        scene.comments.append((scene.id(4002), target[0], target[6], comment, True))
    # Earlier credits: a stranger's, maybe the homonym's; the last one posted is whose account
    # a misrouted credit hits.
    credited = [strangers[0]] + ([homonym[0]] if homonym is not None and d.chance(0.5) else [])
    if d.chance(0.5):
        credited.reverse()
    for who in credited:
        scene.credit(who, base - 1)
    facts["last_credited"] = (
        "homonym" if homonym is not None and credited[-1] == homonym[0] else "stranger"
    )

    ticket_id: int | None = None
    assignee = d.choice(AGENTS)
    concurrent: ConcurrentWrite | None = None
    if kind == "reassign":
        ticket_id = int(target[0])
        assignee = d.choice([a for a in AGENTS if a != target[6]])
        facts["target"] = "first" if target is mine[0] else "second"
    if shape.concurrent == "ticket" and ticket_id is not None:
        concurrent = _colleague_on_ticket(d, target)
    elif shape.concurrent == "account":
        concurrent = _colleague_on_account(d, me)
    if concurrent is not None:
        facts["colleague_sets"] = [c for c, _ in concurrent.changes]
    if fault.name == "wrong_row":
        fault = Fault("wrong_row", row_offset=d.choice((-1, 1)))
    credit = kind == "credit"
    if fault.name == "partial" and fault.dropped == "credit" and not credit:
        fault = Fault("partial", dropped="description")
    priority = d.choice(PRIORITIES)
    if fault.name == "partial" and fault.dropped == "priority":  # a dropped priority shows
        priority = d.choice(("low", "high", "urgent"))
    shown = "" if homonym_kind == "identical" else code
    same_domain = homonym is not None and homonym[2] == domain and homonym_kind != "closed"
    show_code = homonym_kind in ("stale", "identical") or same_domain or d.chance(CODE_SHOWN_RATE)
    return GeneratedTask(
        name=name,
        title=title,
        category=category,
        kind=kind,
        customer=Customer(company, domain, shown),
        available=shape.available,
        fault=fault,
        declared=not d.chance(UNDECLARED_RATE),
        split=split,
        subject=d.choice(OUTAGES if credit else SUBJECTS),
        priority=priority,
        sla_code=d.choice(SLAS),
        ticket_id=ticket_id,
        assignee_id=assignee,
        concurrent=concurrent,
        template=template,
        world=World(
            tuple(scene.customers),
            tuple(scene.tickets),
            tuple(scene.comments),
            tuple(scene.credits),
        ),  # fmt: skip
        description=scene.text(d.choice(DESCRIPTIONS)),
        show_code=show_code,
        facts=tuple(sorted(facts.items())),
        handover=scene.text(HANDOVER),
    )


def _colleague_on_ticket(d: Draw, ticket: Row) -> ConcurrentWrite:
    """A colleague changes one field of the ticket the agent opened (never to its value)."""
    column = d.choice(("priority", "status", "subject"))
    if column == "priority":
        value = d.choice([p for p in PRIORITIES if p != ticket[4]])
    elif column == "status":
        value = d.choice(("pending", "on hold", "waiting on customer"))
    else:
        value = f"{ticket[2]} ({d.choice(('customer chased', 'escalated', 'VIP'))})"
    return ConcurrentWrite(("ticket", str(ticket[0])), "tickets", ticket[0], ((column, value),))


def _colleague_on_account(d: Draw, account: Row) -> ConcurrentWrite:
    """A colleague changes the contact or the plan of the account the agent opened."""
    if d.chance(0.5):
        value = f"{d.choice(('oncall', 'support', 'admin'))}@{account[2]}"
        change = ("contact_email", value)
    else:
        change = ("plan", d.choice([p for p in PLANS if p != account[3]]))
    return ConcurrentWrite(("account", account[0]), "customers", account[0], (change,))


CLEAN = Fault()
"""No fault: a control's save path."""


def _template(
    name: str, category: Category, title: str, shape: _Shape,
    fault: Fault | Callable[[Draw], Fault] = CLEAN,
) -> Template[GeneratedTask]:  # fmt: skip
    """A template of :data:`TEMPLATES`: its fault (fixed or drawn), then its task."""
    build = partial(_draw_task, template=name, category=category, shape=shape, title=title)
    return situation_template(name, category, title, build, fault)


C = Category
OPEN, CREDIT, REASSIGN = ("open",), ("credit",), ("reassign",)
TEMPLATES: tuple[Template[GeneratedTask], ...] = (
    _template("clean_open", C.CONTROL, "Clean ticket (control)", _Shape(OPEN, available=True)),
    _template("clean_credit", C.CONTROL, "Ticket and SLA credit (control)",
              _Shape(CREDIT, available=True)),
    _template("clean_reassign", C.CONTROL, "Reassign a ticket (control)",
              _Shape(REASSIGN, available=True)),
    _template("idempotent_credit", C.CONTROL,
              "Re-posted save de-duplicated on the request reference (control)",
              _Shape(CREDIT, available=True), Fault("idempotent")),
    _template("homonym_resolved", C.CONTROL,
              "Same-name accounts, the app resolves by account code (control)",
              _Shape(homonym="forced", available=True)),
    _template("refusal_stale", C.CONTROL,
              "Request names a merged-away account: halt (refusal control)",
              _Shape(homonym="stale")),
    _template("refusal_ambiguous", C.CONTROL,
              "Two identical accounts, no code: halt (refusal control)",
              _Shape(homonym="identical")),
    _template("partial_open", C.C1_PARTIAL_SAVE, "Partial save drops a field of the ticket",
              _Shape(OPEN), lambda d: Fault("partial", dropped=d.choice(("description",
                                                                         "priority")))),
    _template("partial_credit", C.C1_PARTIAL_SAVE,
              "Partial save of an outage ticket drops a field or the credit", _Shape(CREDIT),
              lambda d: Fault("partial", dropped=d.choice(DROPPABLE))),
    _template("duplicate_open", C.C2_DUPLICATE_SUBMISSION, "Auto-resubmit opens the ticket again",
              _Shape(OPEN), lambda d: Fault("duplicate", copies=d.choice((2, 3)))),
    _template("duplicate_credit", C.C2_DUPLICATE_SUBMISSION,
              "Auto-resubmit opens the outage ticket and posts its credit again",
              _Shape(CREDIT), lambda d: Fault("duplicate", copies=d.choice((2, 3)))),
    _template("optimistic_rollback", C.C3_OPTIMISTIC_THEN_REJECT,
              "Success painted, then the commit is rolled back", _Shape(), Fault("optimistic")),
    _template("commit_then_timeout", C.C3_OPTIMISTIC_THEN_REJECT,
              "Committed, then the request times out", _Shape(available=True), Fault("timeout")),
    _template("session_expired", C.C3_OPTIMISTIC_THEN_REJECT, "Session expired, nothing persisted",
              _Shape(), Fault("session")),
    _template("validation_reject", C.C3_OPTIMISTIC_THEN_REJECT,
              "Server rejects the ticket, citing a rule", _Shape(),
              lambda d: Fault("validation", rejection=d.choice(REJECTIONS))),
    _template("stale_ticket", C.C4_STALE_OVERWRITE,
              "A colleague changes the ticket; the stale reassignment reverts it",
              _Shape(REASSIGN, concurrent="ticket"), Fault("stale_priority")),
    _template("stale_account", C.C4_STALE_OVERWRITE,
              "A colleague changes the account; the stale ticket form writes it back",
              _Shape(concurrent="account"), Fault("stale_contact")),
    _template("double_click", C.C5_DOUBLE_DELIVERED_INPUT,
              "One click delivered twice or three times opens the ticket again", _Shape(OPEN),
              lambda d: Fault("double_delivery", copies=d.choice((2, 3)))),
    _template("double_credit", C.C5_DOUBLE_DELIVERED_INPUT,
              "One click delivered twice: ticket de-duplicated, credit posted again",
              _Shape(CREDIT), lambda d: Fault("double_credit", copies=d.choice((2, 3)))),
    _template("homonym_domain", C.C6_WRONG_RECORD_HOMONYM,
              "Save lands on a same-name account with another domain",
              _Shape(homonym="forced", homonym_kinds=("domain",)), Fault("homonym_name")),
    _template("homonym_closed", C.C6_WRONG_RECORD_HOMONYM,
              "Save lands on a closed same-name account the search hides",
              _Shape(homonym="forced", homonym_kinds=("closed",)), Fault("homonym_name")),
    _template("homonym_code", C.C6_WRONG_RECORD_HOMONYM,
              "Save lands on a same-name, same-domain account with a confusable code",
              _Shape(homonym="forced", homonym_kinds=("merged",)), Fault("code_normalized")),
    _template("noop_green", C.C7_SILENT_NOOP_WRONG_TARGET,
              "Green banner, the save reaches no table", _Shape(), Fault("noop")),
    _template("wrong_ticket_reassign", C.C7_SILENT_NOOP_WRONG_TARGET,
              "The reassignment lands on a neighbouring ticket", _Shape(REASSIGN),
              Fault("wrong_row")),
    _template("credit_wrong_customer", C.C7_SILENT_NOOP_WRONG_TARGET,
              "The credit lands on the last credited account", _Shape(CREDIT),
              Fault("credit_wrong_customer")),
    _template("noop_reassign", C.C7_SILENT_NOOP_WRONG_TARGET,
              "Green banner, the reassignment reaches no table", _Shape(REASSIGN),
              Fault("noop_reassign")),
)  # fmt: skip
"""Every template of the ticketing pack, in catalogue order."""

DEV_COUNTS: dict[str, int] = {
    "clean_open": 12, "clean_credit": 12, "clean_reassign": 10, "idempotent_credit": 8,
    "homonym_resolved": 12, "refusal_stale": 9, "refusal_ambiguous": 9,
    "partial_open": 16, "partial_credit": 16,
    "duplicate_open": 16, "duplicate_credit": 16,
    "optimistic_rollback": 8, "commit_then_timeout": 8, "session_expired": 8,
    "validation_reject": 8,
    "stale_ticket": 16, "stale_account": 16,
    "double_click": 16, "double_credit": 16,
    "homonym_domain": 11, "homonym_closed": 11, "homonym_code": 10,
    "noop_green": 8, "wrong_ticket_reassign": 8, "credit_wrong_customer": 8, "noop_reassign": 8,
}  # fmt: skip
"""How many tasks each template draws for the dev split: 296 (72 controls, 32 per category)."""
CATALOGUE: Catalogue[GeneratedTask] = Catalogue(
    f"{__name__} v{GENERATOR_VERSION}", TEMPLATES, DEV_COUNTS, DEV_SEED
)
"""The catalogue: the dev split from :data:`DEV_SEED`, the sequestered split from the secret
(a quarter of the dev counts, at least 2 per template)."""
