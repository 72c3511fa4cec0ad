"""What reading before writing means on the support desk's JSON actions (``look_before_write``).

The careful script is handed the agent's view (:class:`~effectbench.api.AgentTask`) and the env,
nothing of the task's definition. Before it writes it reads what a desk user can read:

* the accounts the request's name finds, and the one whose code (or, without a code, whose
  domain) is the request's: none, or two it cannot tell apart, contradicts the request;
* that account, opened: its name and domain against the request's;
* for a handover, the referred ticket, opened: that it exists and belongs to the request's
  account;
* the record it is about to save over, opened once more just before the write: what a
  colleague changed since the first look is what the desk's form then carries (the desk
  writes back the record as last opened), so their work is not lost.

The one write sends the request's reference (the desk's idempotency key); the effect it should
leave is the one the goal of the request's shape describes
(:func:`~effectbench_ticketing.tasks.described_effect`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from effectbench.api import AgentTask, Look, Screen
from effectbench_ticketing.tasks import described_effect, kind_of, ticket_form


def look(env: Any, task: AgentTask) -> Look:
    """Read the account the request names (and the ticket to hand over); say what contradicts."""
    request = task.referral
    if kind_of(request) == "reassign":
        return _look_reassign(env, request)
    return _look_create(env, request)


def _results(screen: Screen) -> list[dict[str, Any]]:
    rows = screen.details.get("results", [])
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


def pick_account(
    found: Sequence[Mapping[str, Any]], request: Mapping[str, Any]
) -> tuple[Mapping[str, Any] | None, str]:
    """The account of ``found`` the request names, or why none can be chosen."""
    name, domain, code = (
        request.get("customer_name", ""),
        request.get("domain", ""),
        request.get("customer_id"),
    )
    listed = ", ".join(f"{r.get('id')} ({r.get('domain')})" for r in found) or "none"
    if code:
        account = next((r for r in found if r.get("id") == code), None)
        if account is None:
            return None, f"no account named {name!r} has code {code} (the search lists {listed})"
        if domain and account.get("domain") != domain:
            return None, f"account {code} is {account.get('domain')}'s, not {domain}'s"
        return account, ""
    same = [r for r in found if r.get("domain") == domain]
    if len(same) != 1:
        return None, (
            f"{len(same)} accounts named {name!r} at {domain} and no code to tell them apart "
            f"(the search lists {listed})"
        )
    return same[0], ""


def _again(env: Any, action: str, key: str, arguments: Mapping[str, Any], first: object) -> str:
    """Open the record once more just before writing; say what changed since ``first``."""
    again = env.act(action, **arguments)
    now = again.details.get(key)
    if not isinstance(first, dict) or not isinstance(now, dict):
        return f"re-read: {again.banner}"
    changed = sorted(k for k in now if now.get(k) != first.get(k))
    if not changed:
        return f"re-read just before writing: {again.banner}, unchanged"
    moves = ", ".join(f"{k} {first.get(k)!r} -> {now.get(k)!r}" for k in changed)
    return f"re-read just before writing: changed since first opened ({moves}); the form carries it"


def _look_create(env: Any, request: Mapping[str, Any]) -> Look:
    found = env.act("find_customers", name=request.get("customer_name", ""))
    reads = [f"search: {found.banner}"]
    account, why = pick_account(_results(found), request)
    form: dict[str, Any] = {}

    def write() -> Screen:
        saved: Screen = env.act("create_ticket", **form)
        return saved

    expected = described_effect(request)
    if account is None:
        return Look(tuple(reads), why, write, expected)
    opened = env.act("open_account", customer_id=account["id"])
    reads.append(f"account: {opened.banner}")
    shown = opened.details.get("customer")
    contradiction = None
    if opened.status == "error" or not isinstance(shown, dict):
        contradiction = f"the account does not open ({opened.banner})"
    elif shown.get("name") != request.get("customer_name"):
        contradiction = (
            f"the account is {shown.get('name')!r}, not {request.get('customer_name')!r}"
        )
    reads.append(_again(env, "open_account", "customer", {"customer_id": account["id"]}, shown))
    form |= ticket_form(account, request, credit=kind_of(request) == "credit")
    reads.append(f"request reference {form['request_ref']} on the form")
    return Look(tuple(reads), contradiction, write, expected)


def _look_reassign(env: Any, request: Mapping[str, Any]) -> Look:
    wanted = request["ticket_id"]
    opened = env.act("open_ticket", ticket_id=wanted)
    reads = [f"ticket: {opened.banner}"]
    ticket = opened.details.get("ticket")
    contradiction = None
    if opened.status == "error" or not isinstance(ticket, dict):
        contradiction = f"ticket {wanted} does not open ({opened.banner})"
    elif request.get("customer_id") and ticket.get("customer_id") != request["customer_id"]:
        contradiction = (
            f"ticket {wanted} is account {ticket.get('customer_id')}'s, "
            f"not {request['customer_id']}'s"
        )

    if contradiction is None:
        reads.append(_again(env, "open_ticket", "ticket", {"ticket_id": wanted}, ticket))

    def write() -> Screen:
        handed: Screen = env.act(
            "reassign_ticket",
            ticket_id=wanted,
            assignee_id=request["assignee_id"],
            comment=request["comment"],
        )
        return handed

    return Look(tuple(reads), contradiction, write, described_effect(request))
