"""The support desk's HTTP service: the only door a system under test has into the tickets.

An :class:`~effectbench.api.RecordService` (a standard-library HTTP server bound to 127.0.0.1
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

from effectbench.api import Channel, RecordService, Route, default_read_handler
from effectbench_ticketing.store import TicketStore

__all__ = ["COOKIE", "SECRET_HEADER", "Channel", "TicketService", "default_read_handler"]

SECRET_HEADER = "X-Ticketing-Episode"
"""The request header that carries the mounted episode's secret."""
COOKIE = "tk_episode"
"""The cookie that carries it for the episode's browser context."""


class TicketService(RecordService[TicketStore]):
    """The desk's service: start once, mount one episode's store at a time, stop."""

    routes = (
        Route("GET", "/api/customers", lambda s, r: s.search(r.query.get("name", ""))),
        Route("GET", "/api/customers/{id}", lambda s, r: s.account(r.args["id"])),
        Route("GET", "/api/tickets/{id:int}", lambda s, r: s.ticket(r.args["id"])),
        Route("GET", "/api/surfaces/{name}", lambda s, r: s.surface(r.args["name"])),
        Route("POST", "/api/tickets", lambda s, r: s.create(r.form)),
        Route(
            "POST", "/api/tickets/{id:int}/reassign", lambda s, r: s.reassign(r.args["id"], r.form)
        ),
    )
    pages = "effectbench_ticketing.web.app"
    noun = "support desk"
    secret_header = SECRET_HEADER
    cookie = COOKIE
    thread_name = "ticketing-service"
