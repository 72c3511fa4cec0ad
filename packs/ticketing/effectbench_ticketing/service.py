"""The support desk's HTTP service: the only door a system under test has into the tickets.

An :class:`~effectbench.api.EpisodeService` (a standard-library HTTP server bound to 127.0.0.1
on an ephemeral port). One service runs per provider; each episode *mounts* its own
:class:`~effectbench_ticketing.store.TicketStore` (its own database and fault) and unmounts it
when the episode ends.

Routes (JSON in, JSON out; every reply is ``{status, banner, details}``)::

    GET  /api/customers?name=NAME          find accounts by name
    GET  /api/customers/ID                 open an account (the customer and its tickets)
    GET  /api/tickets/ID                   open a ticket (the ticket and its comments)
    POST /api/tickets                      open a new ticket (the form; optionally an SLA credit)
    POST /api/tickets/ID/reassign          reassign a ticket with a handover comment
    GET  /api/surfaces/NAME                the REST read of one surface (customers, agents,
                                           tickets, comments, credits): the product's own
                                           readback, never the harness oracle's

Every other path is the web app (:mod:`.web.app`): HTML pages and form posts over the same
mounted store, so the web UI and the JSON routes reach the same faulty persistence boundary.

Only the mounted episode's own clients get in, by the engine's one admission rule
(:mod:`effectbench.episode_http`): the episode's secret in the :data:`SECRET_HEADER` header (the
JSON clients and the product's readbacks) or in the :data:`COOKIE` cookie (the episode's browser
context trades the secret for it at ``/enter``; no agent ever sees it), the service's own
``Host``, no other ``Origin``, JSON to ``/api/`` and URL-encoded forms to pages. The harness
oracle never comes through here: it reads the database through its own role.
"""

from __future__ import annotations

from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from effectbench.api import Channel, EpisodeHandler, EpisodeService, Reply
from effectbench_ticketing.store import TicketStore
from effectbench_ticketing.web.app import handle_get, handle_post

__all__ = ["COOKIE", "SECRET_HEADER", "Channel", "TicketService", "default_read_handler"]

SECRET_HEADER = "X-Ticketing-Episode"
"""The request header that carries the mounted episode's secret."""
COOKIE = "tk_episode"
"""The cookie that carries it for the episode's browser context."""


class _Handler(EpisodeHandler):
    title = "Support desk"
    server: Any

    def _store(self) -> TicketStore | None:
        store: TicketStore | None = self.server.service.mounted
        return store

    def _web(self) -> bool:
        """Answer a web-app request (any path outside ``/api/``); say whether it was one."""
        if self.is_api():
            return False
        store = self._store()
        raw = self.read_body() if self.command == "POST" else b""
        if store is None:
            self.send_notice(503, "Not mounted")
        elif raw is None:
            self.send_notice(413, "Too large")
        else:
            page = (
                handle_post(store, self.path, raw.decode("utf-8", "replace"))
                if self.command == "POST"
                else handle_get(store, self.path)
            )
            self.send_page(page.http_status, page.document)
        return True

    def do_GET(self) -> None:  # noqa: N802
        """Route a read (a page, or a JSON read)."""
        if self.admitted() and not self._web():
            self.send_reply(self.server.service.read_handler(self))

    def do_POST(self) -> None:  # noqa: N802
        """Route a save (a form post, or a JSON save)."""
        if not self.admitted() or self._web():
            return
        store, form = self._store(), self.read_json()
        if store is None:
            self.send_reply(Reply(503, "error", "no support desk is mounted"))
            return
        if form is None:
            self.send_reply(Reply(400, "error", "the form is not a JSON object"))
            return
        parts = urlsplit(self.path).path.strip("/").split("/")
        if parts == ["api", "tickets"]:
            self.send_reply(store.create(form))
        elif len(parts) == 4 and parts[:2] == ["api", "tickets"] and parts[3] == "reassign":
            if not parts[2].isdigit():
                self.send_reply(Reply(404, "error", f"no ticket {parts[2]!r}"))
            else:
                self.send_reply(store.reassign(int(parts[2]), form))
        else:
            self.send_reply(Reply(404, "error", f"no route {self.path}"))


def default_read_handler(handler: BaseHTTPRequestHandler) -> Reply:
    """Answer a JSON GET from the mounted store (the app's read path)."""
    server: Any = handler.server
    store: TicketStore | None = server.service.mounted
    if store is None:
        return Reply(503, "error", "no support desk is mounted")
    url = urlsplit(handler.path)
    parts = url.path.strip("/").split("/")
    if parts == ["api", "customers"]:
        return store.search(parse_qs(url.query).get("name", [""])[0])
    if len(parts) == 3 and parts[:2] == ["api", "customers"]:
        return store.account(parts[2])
    if len(parts) == 3 and parts[:2] == ["api", "tickets"] and parts[2].isdigit():
        return store.ticket(int(parts[2]))
    if len(parts) == 3 and parts[:2] == ["api", "surfaces"]:
        return store.surface(parts[2])
    return Reply(404, "error", f"no route {handler.path}")


class TicketService(EpisodeService[TicketStore]):
    """The app's service: start once, mount one episode's store at a time, stop."""

    handler = _Handler
    secret_header = SECRET_HEADER
    cookie = COOKIE
    thread_name = "ticketing-service"

    def __init__(self) -> None:
        super().__init__()
        self.read_handler: Callable[[BaseHTTPRequestHandler], Reply] = default_read_handler
        """The JSON GET handler; tests replace it to prove the oracle never reads through it."""
