"""The support desk's web app: server-rendered pages over the same store as the JSON routes.

The service (:mod:`effectbench_ticketing.service`) routes every path outside ``/api/`` here.
Pages are plain HTML forms with no JavaScript at all:

* ``GET /`` and ``GET /search?name=&domain=&code=``: account search (by name, narrowed by
  domain or account code when given), and "open ticket #";
* ``GET /account/ID``: the account (customer, tickets) with the new-ticket form (subject,
  priority, description, SLA credit, credit reference);
* ``POST /account/ID/tickets``: Save, answered by the account page and the banner;
* ``GET /ticket?id=ID`` and ``POST /ticket/ID/reassign``: a ticket and its reassign form.

Every read and write goes through the episode's
:class:`~effectbench_ticketing.store.TicketStore`: the same ``search``, ``account``,
``ticket``, ``create`` and ``reassign`` the JSON routes call, so every fault happens behind
this UI exactly as behind the JSON actions, and the same oracle judges it.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlsplit

from effectbench.api import Page, Reply, forms, pages
from effectbench_ticketing.store import TicketStore
from effectbench_ticketing.web import layout as L

_e = pages.escape
_label = pages.label
_place = pages.place
_form_keys: weakref.WeakKeyDictionary[TicketStore, itertools.count[int]] = (
    weakref.WeakKeyDictionary()
)


def stylesheet() -> str:
    """Return the one stylesheet: EffectBench's page frame, a fixed box per control of
    :mod:`.layout`."""
    rules = [
        *pages.frame_rules("#37474f"),
        ".list{overflow:hidden}",
        "#summary{position:absolute;left:24px;top:92px;width:976px;height:60px;font-size:13px}",
        _place("#q-name", L.SEARCH_NAME),
        _place("#q-domain", L.SEARCH_DOMAIN),
        _place("#q-code", L.SEARCH_CODE),
        _place("#search", L.SEARCH_BUTTON),
        _place("#open-id", L.OPEN_TICKET_ID),
        _place("#open", L.OPEN_TICKET_BUTTON),
        _place("#subject", L.SUBJECT),
        _place("#description", L.DESCRIPTION),
        _place("#credit", L.CREDIT),
        _place("#credit-ref", L.CREDIT_REF),
        _place("#save", L.SAVE),
        _place("#tickets", L.TICKET_LIST),
        _place("#comment", L.COMMENT),
        _place("#reassign", L.REASSIGN_SAVE),
        _place("#comments", L.COMMENT_LIST),
    ]
    rules += [_place(f"#priority-{name}", box) for name, box in L.PRIORITY_RADIO.items()]
    rules += [_place(f"#sla-{code}", box) for code, box in L.SLA_RADIO.items()]
    rules += [_place(f"#assignee-{agent}", box) for agent, box in L.ASSIGNEE_RADIO.items()]
    return "".join(rules)


_CSS = stylesheet()


def _page(http_status: int, title: str, status: str, banner: str, body: str) -> Page:
    return Page(http_status, pages.document(_CSS, "Support desk", title, status, banner, body))


def _search_form(name: str = "", domain: str = "", code: str = "") -> str:
    return (
        '<form method="get" action="/search">'
        + _caption(L.NAME_FIELD)
        + _caption(L.DOMAIN_FIELD)
        + _caption(L.CODE_FIELD)
        + f'<input type="text" id="q-name" name="name" value="{_e(name)}" autocomplete="off">'
        f'<input type="text" id="q-domain" name="domain" value="{_e(domain)}" autocomplete="off">'
        f'<input type="text" id="q-code" name="code" value="{_e(code)}" autocomplete="off">'
        f'<button id="search" type="submit">{_e(L.SEARCH.button.label)}</button></form>'
        '<form method="get" action="/ticket">'
        + _caption(L.TICKET_FIELD)
        + '<input type="text" id="open-id" name="id" autocomplete="off">'
        f'<button id="open" type="submit">{_e(L.OPEN_TICKET.button.label)}</button></form>'
    )


def search_page(store: TicketStore, query: Mapping[str, str]) -> Page:
    """The search page; with a name, the store's search narrowed by domain and code."""
    name, domain, code = (query.get(k, "").strip() for k in ("name", "domain", "code"))
    if not name:
        return _page(200, "Search", "idle", "Search for an account", _search_form())
    reply = store.search(name)
    results = [r for r in reply.details.get("results", []) if isinstance(r, dict)]
    if domain:
        results = [r for r in results if r.get("domain") == domain]
    if code:
        results = [r for r in results if r.get("id") == code]
    rows = (
        "".join(
            f'<a class="row" id="r{i}" href="/account/{quote(str(r["id"]), safe="")}">'
            f"{_e(r['name'])} &middot; {_e(r['domain'])} &middot; account {_e(r['id'])}</a>"
            for i, r in enumerate(results[:10])
        )
        or '<p class="none">No account matches.</p>'
    )
    body = _search_form(name, domain, code) + rows
    return _page(200, "Search", "idle", f"{len(results)} account(s) match", body)


def _caption(field: forms.Entry) -> str:
    return _label(field.label, field.box)


def _radios(group: str, choice: forms.Choice) -> str:
    return "".join(pages.radio(f"{group}-{v}", group, v, text) for v, text, _ in choice.options)


def account_page(store: TicketStore, customer_id: str, outcome: Reply | None = None) -> Page:
    """The account: customer, tickets and the new-ticket form; ``outcome`` paints the banner."""
    reply = store.account(customer_id)
    if reply.status == "error":
        return _page(reply.http_status, "Account", "error", reply.banner, _search_form())
    c = reply.details["customer"]
    tickets = [t for t in reply.details.get("tickets", []) if isinstance(t, dict)]
    shown = reply if outcome is None else outcome
    key = f"form-{customer_id}-{next(_form_keys.setdefault(store, itertools.count(1)))}"
    ticket_rows = "".join(
        f"<tr><td>#{_e(t['id'])}</td><td>{_e(t['subject'])}</td><td>{_e(t['priority'])}</td>"
        f"<td>{_e(t['status'])}</td></tr>"
        for t in tickets
    )
    body = (
        f'<div id="summary"><b>{_e(c["name"])}</b> &middot; {_e(c["domain"])} &middot; '
        f"account {_e(c['id'])}<br>Plan: {_e(c['plan'])} &middot; contact "
        f"{_e(c['contact_email'])}</div>"
        f'<form method="post" action="/account/{quote(customer_id, safe="")}/tickets">'
        f'<input type="hidden" name="customer_id" value="{_e(c["id"])}">'
        f'<input type="hidden" name="name" value="{_e(c["name"])}">'
        f'<input type="hidden" name="request_ref" value="{_e(key)}">'
        + _caption(L.SUBJECT_FIELD)
        + '<input type="text" id="subject" name="subject" autocomplete="off">'
        + _label(L.PRIORITY.label, L.PRIORITY.options[0][2])
        + _radios("priority", L.PRIORITY)
        + _caption(L.DESCRIPTION_FIELD)
        + '<textarea id="description" name="description"></textarea>'
        '<label class="opt" id="credit"><input type="checkbox" name="credit" value="1">'
        f"{_e(L.CREDIT_CHECK.label)}</label>"
        + _radios("sla", L.SLA)
        + _caption(L.CREDIT_REF_FIELD)
        + '<input type="text" id="credit-ref" name="credit_ref" autocomplete="off">'
        f'<button id="save" type="submit">{_e(L.NEW_TICKET.button.label)}</button></form>'
        '<div id="tickets" class="list"><table><tr><th>#</th><th>Subject</th>'
        f"<th>Priority</th><th>Status</th></tr>{ticket_rows}</table></div>"
    )
    return _page(shown.http_status, "Account", shown.status, shown.banner, body)


def ticket_page(store: TicketStore, ticket_id: str, outcome: Reply | None = None) -> Page:
    """A ticket, its comments and the reassign form; ``outcome`` paints the banner."""
    reply = store.ticket(int(ticket_id)) if ticket_id.isdigit() else None
    if reply is None or reply.status == "error":
        text = f"No ticket {ticket_id}" if reply is None else reply.banner
        return _page(404, "Ticket", "error", text, _search_form())
    t = reply.details["ticket"]
    comments = [c for c in reply.details.get("comments", []) if isinstance(c, dict)]
    shown = reply if outcome is None else outcome
    comment_rows = "".join(
        f"<tr><td>{_e(c['author_id'])}</td><td>{_e(c['body'])}</td></tr>" for c in comments
    )
    body = (
        f'<div id="summary"><b>Ticket #{_e(t["id"])}</b> &middot; {_e(t["subject"])} &middot; '
        f"account {_e(t['customer_id'])}<br>Priority {_e(t['priority'])} &middot; "
        f"{_e(t['status'])} &middot; assigned to {_e(t['assignee_id'] or 'nobody')}</div>"
        f'<form method="post" action="/ticket/{_e(t["id"])}/reassign">'
        + _label(L.ASSIGNEE.label, L.ASSIGNEE.options[0][2])
        + _radios("assignee", L.ASSIGNEE)
        + _caption(L.COMMENT_FIELD)
        + '<textarea id="comment" name="comment"></textarea>'
        f'<button id="reassign" type="submit">{_e(L.REASSIGN.button.label)}</button></form>'
        '<div id="comments" class="list"><table><tr><th>By</th><th>Comment</th></tr>'
        f"{comment_rows}</table></div>"
    )
    return _page(shown.http_status, "Ticket", shown.status, shown.banner, body)


def handle_get(store: TicketStore, path: str) -> Page:
    """Answer a page request."""
    url = urlsplit(path)
    parts = [p for p in url.path.split("/") if p]
    query = pages.first_values(url.query)
    if not parts:
        return search_page(store, {})
    if parts == ["search"]:
        return search_page(store, query)
    if len(parts) == 2 and parts[0] == "account":
        return account_page(store, parts[1])
    if parts == ["ticket"]:
        return ticket_page(store, query.get("id", "").strip())
    return _page(404, "Not found", "error", f"No page {url.path}", _search_form())


def handle_post(store: TicketStore, path: str, body: str) -> Page:
    """Handle a form submission: the same store calls as the JSON routes."""
    parts = [p for p in urlsplit(path).path.split("/") if p]
    form = pages.first_values(body, blanks=True)
    if len(parts) == 3 and parts[0] == "account" and parts[2] == "tickets":
        fields = ("customer_id", "name", "subject", "priority", "description", "request_ref")
        save: dict[str, Any] = {k: form[k] for k in fields if k in form}
        if form.get("credit"):
            save |= {
                "credit": True,
                "sla_code": form.get("sla", ""),
                "credit_ref": form.get("credit_ref", ""),
            }
        return account_page(store, parts[1], store.create(save))
    if len(parts) == 3 and parts[0] == "ticket" and parts[1].isdigit() and parts[2] == "reassign":
        reassign = {"assignee_id": form.get("assignee", ""), "comment": form.get("comment", "")}
        outcome = store.reassign(int(parts[1]), reassign)
        return ticket_page(store, parts[1], outcome)
    return _page(404, "Not found", "error", f"No page {path}", _search_form())
