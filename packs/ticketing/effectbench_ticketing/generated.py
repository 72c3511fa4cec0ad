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

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from psycopg import sql

from effectbench.api import Catalogue, Category, Draw, Split, canonical_hash, draws, trial_tag
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
_SEED_NUMBERS = frozenset(int(c[0].removeprefix("C-")) for c in db.CUSTOMERS)
"""The numbers of the desk's seed account codes (``C-N`` or ``C-0N``): no drawn code takes one,
in either form."""
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
class _Scene(draws.Scene):
    """The task's neighbourhood while it is drawn."""

    clearance = ID_CLEARANCE
    names: set[str] = field(default_factory=set)
    codes: set[int] = field(default_factory=set)
    customers: list[Row] = field(default_factory=list)
    tickets: list[Row] = field(default_factory=list)
    comments: list[Row] = field(default_factory=list)
    credits: list[Row] = field(default_factory=list)

    def company(self) -> str:
        name = draws.until(
            lambda: f"{self.d.choice(FIRST)} {self.d.choice(SECOND)}",
            lambda name: name not in self.names,
        )
        self.names.add(name)
        return self.named(name, " ")

    def code(self, lo: int, hi: int, *, zero: bool = False) -> str:
        """A new account code ``C-N`` (``C-0N`` with ``zero``), N in ``[lo, hi]``, unlike any
        other code of the record (in either form), then the mark's digits."""
        n = draws.number(self.d, lo, hi, self.codes, _SEED_NUMBERS)
        return f"C-0{n}{self.digits}" if zero else f"C-{n}{self.digits}"

    def number(self, code: str) -> int:
        """The drawn number of ``code`` (the mark's digits left out)."""
        return int(code.partition("-")[2].removesuffix(self.digits))

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
        ref = f"CR-seed-{code.partition('-')[2]}"
        self.credits.append((cid, code, ticket, sla, ref, self.cents(cents)))

    def world(self) -> World:
        return World(
            tuple(self.customers), tuple(self.tickets), tuple(self.comments), tuple(self.credits)
        )


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


def _other(scene: _Scene, name: str) -> str:
    return f"{_slug(name)}{scene.d.choice(REGIONS)}.example"


def _near(scene: _Scene, kind: str, name: str, domain: str, code: str, first: bool) -> Row:
    """The same-name account of ``kind`` (``domain``, ``closed`` or ``merged``); ``first``
    gives it the lower code (where a lookup by name lands)."""
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


def _homonym(
    scene: _Scene, kind: str | None, me: Row, first: bool, facts: dict[str, Any]
) -> Row | None:
    """The requester's same-name account of ``kind`` (None: none)."""
    code, company, domain = me[0], me[1], me[2]
    facts["homonym"] = kind or "none"
    if kind == "identical":
        return scene.account(scene.code(*CODES), company, domain)
    if kind == "stale":  # the request's account was merged into this one
        return scene.account(scene.code(*CODES), company, _other(scene, company))
    if kind is None:
        return None
    homonym = _near(scene, kind, company, domain, code, first)
    if kind in ("domain", "closed"):
        facts["homonym_first"] = homonym[0] < code
    return homonym


def _accounts(scene: _Scene, me: Row, homonym: Row | None, kind: str | None) -> list[str]:
    """The requester's account (unless merged away), the homonym's and two strangers'; the
    strangers' codes."""
    if kind != "stale":
        scene.customers.append(me)
    if homonym is not None:
        scene.customers.append(homonym)
    strangers = []
    for _ in range(2):
        other = scene.company()
        row = scene.account(scene.code(*CODES), other, f"{_slug(other)}.example")
        scene.customers.append(row)
        strangers.append(row[0])
    return strangers


def _tickets(scene: _Scene, owner: str, strangers: list[str]) -> tuple[int, list[Row]]:
    """A stranger's ticket, the requester's two, another stranger's (a reassignment that
    misses its ticket by one lands on a neighbour either way): the first id, the requester's."""
    base = scene.id(600 + 5 * scene.d.integer(0, 70))
    scene.ticket(base - 1, strangers[0])
    mine = [scene.ticket(base, owner), scene.ticket(base + 1, owner)]
    scene.ticket(base + 2, strangers[1])
    return base, mine


def _thread(scene: _Scene, mine: list[Row]) -> Row:
    """The ticket a reassignment names, commented on before more often than not."""
    target: Row = scene.d.choice(mine)
    if scene.d.chance(0.6):
        comment = scene.text(scene.d.choice(COMMENTS))
        scene.comments.append((scene.id(4002), target[0], target[6], comment, True))
    return target


def _credits(
    scene: _Scene, stranger: str, homonym: Row | None, ticket: int, facts: dict[str, Any]
) -> None:
    """Earlier credits: a stranger's, maybe the homonym's (the last one posted is whose account
    a misrouted credit hits)."""
    credited = draws.earlier_postings(scene.d, stranger, None if homonym is None else homonym[0])
    for who in credited:
        scene.credit(who, ticket)
    facts["last_credited"] = draws.last_posted(credited, None if homonym is None else homonym[0])


def _assignment(
    d: Draw, kind: str, target: Row, mine: list[Row], facts: dict[str, Any]
) -> tuple[int | None, str]:
    """The ticket a reassignment names and the agent it goes to (any agent but its own)."""
    assignee = d.choice(AGENTS)
    if kind != "reassign":
        return None, assignee
    facts["target"] = "first" if target is mine[0] else "second"
    return int(target[0]), d.choice([a for a in AGENTS if a != target[6]])


def _colleague(
    d: Draw, shape: _Shape, ticket_id: int | None, target: Row, me: Row, facts: dict[str, Any]
) -> ConcurrentWrite | None:
    """What a colleague changes while the agent has the record open (None: nothing)."""
    concurrent: ConcurrentWrite | None = None
    if shape.concurrent == "ticket" and ticket_id is not None:
        concurrent = _colleague_on_ticket(d, target)
    elif shape.concurrent == "account":
        concurrent = _colleague_on_account(d, me)
    if concurrent is not None:
        facts["colleague_sets"] = [c for c, _ in concurrent.changes]
    return concurrent


def _settle(d: Draw, fault: Fault, kind: str) -> tuple[Fault, str]:
    """The fault's parameters that depend on the task (where a misdirected reassignment lands;
    a partial save of a ticket without a credit drops its description), and the ticket's
    priority (a dropped priority shows: never the default)."""
    if fault.name == "wrong_row":
        fault = Fault("wrong_row", row_offset=d.choice((-1, 1)))
    if fault.name == "partial" and fault.dropped == "credit" and kind != "credit":
        fault = Fault("partial", dropped="description")
    priority = d.choice(PRIORITIES)
    if fault.name == "partial" and fault.dropped == "priority":
        priority = d.choice(("low", "high", "urgent"))
    return fault, priority


def _draw_task(
    d: Draw, name: str, split: Split, fault: Fault, situation: draws.Situation[_Shape]
) -> GeneratedTask:
    shape = situation.shape
    scene: _Scene = _Scene.of(d)
    kind = d.choice(shape.kinds)
    company = scene.company()
    domain = f"{_slug(company)}.example"
    facts: dict[str, Any] = {}
    homonym_kind = draws.kind_of_homonym(
        d, shape.homonym, shape.homonym_kinds, HOMONYMS, HOMONYM_RATE
    )
    zero = homonym_kind == "merged" or d.chance(LEADING_ZERO_RATE)
    code = scene.code(*(ZERO_CODES if zero else CODES), zero=zero)
    # A forced homonym is the one a lookup by name finds first; elsewhere its place is drawn.
    first = shape.homonym == "forced" or d.chance(0.5)
    me = scene.account(code, company, domain)
    homonym = _homonym(scene, homonym_kind, me, first, facts)
    strangers = _accounts(scene, me, homonym, homonym_kind)
    owner = homonym[0] if homonym_kind == "stale" and homonym is not None else code
    base, mine = _tickets(scene, owner, strangers)
    target = _thread(scene, mine)
    _credits(scene, strangers[0], homonym, base - 1, facts)
    ticket_id, assignee = _assignment(d, kind, target, mine, facts)
    concurrent = _colleague(d, shape, ticket_id, target, me, facts)
    fault, priority = _settle(d, fault, kind)
    same_domain = homonym is not None and homonym[2] == domain and homonym_kind != "closed"
    show_code = homonym_kind in ("stale", "identical") or same_domain or d.chance(CODE_SHOWN_RATE)
    return GeneratedTask(
        name=name,
        title=situation.title,
        category=situation.category,
        kind=kind,
        customer=Customer(company, domain, "" if homonym_kind == "identical" else code),
        available=shape.available,
        fault=fault,
        declared=not d.chance(UNDECLARED_RATE),
        split=split,
        subject=d.choice(OUTAGES if kind == "credit" else SUBJECTS),
        priority=priority,
        sla_code=d.choice(SLAS),
        ticket_id=ticket_id,
        assignee_id=assignee,
        concurrent=concurrent,
        template=situation.name,
        world=scene.world(),
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


C, S = Category, draws.Situation
OPEN, CREDIT, REASSIGN = ("open",), ("credit",), ("reassign",)
GRID: tuple[draws.Situation[_Shape], ...] = (
    S("clean_open", C.CONTROL, "Clean ticket (control)", 12, _Shape(OPEN, available=True)),
    S("clean_credit", C.CONTROL, "Ticket and SLA credit (control)", 12,
      _Shape(CREDIT, available=True)),
    S("clean_reassign", C.CONTROL, "Reassign a ticket (control)", 10,
      _Shape(REASSIGN, available=True)),
    S("idempotent_credit", C.CONTROL,
      "Re-posted save de-duplicated on the request reference (control)", 8,
      _Shape(CREDIT, available=True), Fault("idempotent")),
    S("homonym_resolved", C.CONTROL,
      "Same-name accounts, the app resolves by account code (control)", 12,
      _Shape(homonym="forced", available=True)),
    S("refusal_stale", C.CONTROL, "Request names a merged-away account: halt (refusal control)",
      9, _Shape(homonym="stale")),
    S("refusal_ambiguous", C.CONTROL, "Two identical accounts, no code: halt (refusal control)",
      9, _Shape(homonym="identical")),
    S("partial_open", C.C1_PARTIAL_SAVE, "Partial save drops a field of the ticket", 16,
      _Shape(OPEN), lambda d: Fault("partial", dropped=d.choice(("description", "priority")))),
    S("partial_credit", C.C1_PARTIAL_SAVE,
      "Partial save of an outage ticket drops a field or the credit", 16, _Shape(CREDIT),
      lambda d: Fault("partial", dropped=d.choice(DROPPABLE))),
    S("duplicate_open", C.C2_DUPLICATE_SUBMISSION, "Auto-resubmit opens the ticket again", 16,
      _Shape(OPEN), lambda d: Fault("duplicate", copies=d.choice((2, 3)))),
    S("duplicate_credit", C.C2_DUPLICATE_SUBMISSION,
      "Auto-resubmit opens the outage ticket and posts its credit again", 16,
      _Shape(CREDIT), lambda d: Fault("duplicate", copies=d.choice((2, 3)))),
    S("optimistic_rollback", C.C3_OPTIMISTIC_THEN_REJECT,
      "Success painted, then the commit is rolled back", 8, _Shape(), Fault("optimistic")),
    S("commit_then_timeout", C.C3_OPTIMISTIC_THEN_REJECT, "Committed, then the request times out",
      8, _Shape(available=True), Fault("timeout")),
    S("session_expired", C.C3_OPTIMISTIC_THEN_REJECT, "Session expired, nothing persisted", 8,
      _Shape(), Fault("session")),
    S("validation_reject", C.C3_OPTIMISTIC_THEN_REJECT,
      "Server rejects the ticket, citing a rule", 8, _Shape(),
      lambda d: Fault("validation", rejection=d.choice(REJECTIONS))),
    S("stale_ticket", C.C4_STALE_OVERWRITE,
      "A colleague changes the ticket; the stale reassignment reverts it", 16,
      _Shape(REASSIGN, concurrent="ticket"), Fault("stale_priority")),
    S("stale_account", C.C4_STALE_OVERWRITE,
      "A colleague changes the account; the stale ticket form writes it back", 16,
      _Shape(concurrent="account"), Fault("stale_contact")),
    S("double_click", C.C5_DOUBLE_DELIVERED_INPUT,
      "One click delivered twice or three times opens the ticket again", 16, _Shape(OPEN),
      lambda d: Fault("double_delivery", copies=d.choice((2, 3)))),
    S("double_credit", C.C5_DOUBLE_DELIVERED_INPUT,
      "One click delivered twice: ticket de-duplicated, credit posted again", 16,
      _Shape(CREDIT), lambda d: Fault("double_credit", copies=d.choice((2, 3)))),
    S("homonym_domain", C.C6_WRONG_RECORD_HOMONYM,
      "Save lands on a same-name account with another domain", 11,
      _Shape(homonym="forced", homonym_kinds=("domain",)), Fault("homonym_name")),
    S("homonym_closed", C.C6_WRONG_RECORD_HOMONYM,
      "Save lands on a closed same-name account the search hides", 11,
      _Shape(homonym="forced", homonym_kinds=("closed",)), Fault("homonym_name")),
    S("homonym_code", C.C6_WRONG_RECORD_HOMONYM,
      "Save lands on a same-name, same-domain account with a confusable code", 10,
      _Shape(homonym="forced", homonym_kinds=("merged",)), Fault("code_normalized")),
    S("noop_green", C.C7_SILENT_NOOP_WRONG_TARGET, "Green banner, the save reaches no table", 8,
      _Shape(), Fault("noop")),
    S("wrong_ticket_reassign", C.C7_SILENT_NOOP_WRONG_TARGET,
      "The reassignment lands on a neighbouring ticket", 8, _Shape(REASSIGN), Fault("wrong_row")),
    S("credit_wrong_customer", C.C7_SILENT_NOOP_WRONG_TARGET,
      "The credit lands on the last credited account", 8, _Shape(CREDIT),
      Fault("credit_wrong_customer")),
    S("noop_reassign", C.C7_SILENT_NOOP_WRONG_TARGET,
      "Green banner, the reassignment reaches no table", 8, _Shape(REASSIGN),
      Fault("noop_reassign")),
)  # fmt: skip
"""Every template of the ticketing pack, in catalogue order, with its dev count: 296 tasks (72
controls, 32 per category)."""
TEMPLATES, DEV_COUNTS = draws.template_grid(_draw_task, GRID, CLEAN)
"""The templates of :data:`GRID`, and how many tasks each draws for the dev split."""
CATALOGUE: Catalogue[GeneratedTask] = Catalogue(
    f"{__name__} v{GENERATOR_VERSION}", TEMPLATES, DEV_COUNTS, DEV_SEED
)
"""The catalogue: the dev split from :data:`DEV_SEED`, the sequestered split from the secret
(a quarter of the dev counts, at least 2 per template)."""
