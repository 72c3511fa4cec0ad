"""The arm-facing handle: every action and every product read goes over HTTP.

:class:`TicketingEnv` is what a system under test holds on the ``api`` substrate. It talks to
the support desk service on 127.0.0.1 (one keep-alive connection per episode, carrying the
episode's secret, which the handle never hands out) and offers:

* actions ``find_customers(name)``, ``open_account(customer_id)``, ``open_ticket(ticket_id)``,
  ``create_ticket(customer_id, name, subject, priority, description, request_ref=None,
  credit=False, sla_code=None, credit_ref=None)`` and ``reassign_ticket(ticket_id,
  assignee_id, comment)``;
* :meth:`TicketingEnv.screen`, the banner the app painted last;
* :meth:`TicketingEnv.product_effect_verifier`, the product's own readback of one REST
  surface, the tickets endpoint;
* :meth:`TicketingEnv.all_surfaces_verifier`, a readback over every REST surface (what the
  ``effect_verified_all`` arm uses).

Neither verifier is the harness oracle: both read through the service, as the app's role.
"""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from effectbench.api import Effect, ProductReading, Screen, Verdict
from effectbench_ticketing.db import SURFACES
from effectbench_ticketing.oracle import Snapshot, Surface, judge_record
from effectbench_ticketing.service import Channel

ACTIONS = ("find_customers", "open_account", "open_ticket", "create_ticket", "reassign_ticket")
CREATE_FIELDS = (
    "customer_id",
    "name",
    "subject",
    "priority",
    "description",
    "request_ref",
    "credit",
    "sla_code",
    "credit_ref",
)
PRODUCT_SURFACE = "tickets"
"""What the product's own readback reads."""


class Client:
    """One keep-alive HTTP/1.1 connection to the service, admitted by the episode's channel."""

    def __init__(self, channel: Channel, timeout: float = 5.0) -> None:
        self._port = channel.port
        self._admit = {"Host": channel.host, **channel.headers()}
        self._timeout = timeout
        self._conn: http.client.HTTPConnection | None = None

    def _connect(self) -> http.client.HTTPConnection:
        if self._conn is None:
            conn = http.client.HTTPConnection("127.0.0.1", self._port, timeout=self._timeout)
            conn.connect()
            if conn.sock is not None:
                conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._conn = conn
        return self._conn

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one request; return the JSON reply, or an error screen if it failed."""
        payload = None if body is None else json.dumps(body).encode("utf-8")
        headers = dict(self._admit)
        if payload is not None:
            headers["Content-Type"] = "application/json"
        try:
            conn = self._connect()
            conn.request(method, path, body=payload, headers=headers)
            response = conn.getresponse()
            raw = response.read()
        except (OSError, http.client.HTTPException) as exc:
            self.close()
            return {"status": "error", "banner": f"support desk unreachable ({exc})"}
        try:
            data = json.loads(raw)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            return {"status": "error", "banner": f"unreadable reply (HTTP {response.status})"}
        return data

    def close(self) -> None:
        """Close the connection."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _screen(reply: dict[str, Any]) -> Screen:
    details = reply.get("details")
    return Screen(
        status=str(reply.get("status", "error")),
        banner=str(reply.get("banner", "")),
        details=details if isinstance(details, dict) else {},
    )


class RestVerifier:
    """A product readback over REST surfaces: baseline at creation, judge on ``verify``."""

    def __init__(self, client: Client, surfaces: Sequence[str], name: str) -> None:
        self._client = client
        self._surfaces = tuple(surfaces)
        self.name = name
        self._baseline = self._read()

    def _read(self) -> Snapshot | None:
        snapshot: Snapshot = {}
        for surface in self._surfaces:
            reply = self._client.call("GET", f"/api/surfaces/{surface}")
            details = reply.get("details")
            rows = details.get("rows") if isinstance(details, dict) else None
            if reply.get("status") == "error" or not isinstance(rows, list):
                return None
            key = str(details.get("key", "id")) if isinstance(details, dict) else "id"
            snapshot[surface] = Surface(key=(key,), rows=tuple(rows))
        return snapshot

    def verify(self, effect: Sequence[Effect]) -> ProductReading:
        """Read the surfaces back and judge ``effect`` plus their delta."""
        reading = judge_record(
            effect, self._baseline, self._read(), channel=self.name, surfaces=self._surfaces
        )
        return ProductReading(
            confirmed=reading.verdict is Verdict.CONFIRMED,
            reason=reading.reason,
            absent=reading.effect_absent,
        )


def product_verifier(client: Client) -> RestVerifier:
    """The product's readback: the tickets REST endpoint, and only that."""
    return RestVerifier(client, (PRODUCT_SURFACE,), f"rest:{PRODUCT_SURFACE}")


def all_surfaces_verifier(client: Client) -> RestVerifier:
    """A readback over every REST surface the service exposes."""
    return RestVerifier(client, SURFACES, "rest:all-surfaces")


def _quote(text: str) -> str:
    return quote(text, safe="")


class TicketingEnv:
    """The SUT's handle on one episode: actions and reads over HTTP, nothing else."""

    def __init__(self, channel: Channel, request: dict[str, Any]) -> None:
        self._client = Client(channel)
        self._request = dict(request)
        self._screen = Screen("idle", self._request_banner(), {"request": dict(self._request)})

    def _request_banner(self) -> str:
        r = self._request
        if "ticket_id" in r:
            return f"Task: hand ticket #{r['ticket_id']} to agent {r.get('assignee_id', '?')}"
        code = f", account {r['customer_id']}" if r.get("customer_id") else ""
        return f"Request: {r.get('customer_name', '?')} ({r.get('domain', '')}{code}); new ticket"

    def close(self) -> None:
        """Close the episode's connection."""
        self._client.close()

    def actions(self) -> Sequence[str]:
        """Return the actions the support desk accepts."""
        return ACTIONS

    def act(self, action: str, **arguments: Any) -> Screen:
        """Perform one action over HTTP and return the screen the app paints."""
        if action == "find_customers":
            reply = self._client.call(
                "GET", "/api/customers?name=" + _quote(str(arguments.get("name", "")))
            )
        elif action == "open_account":
            customer = _quote(str(arguments.get("customer_id", "")))
            reply = self._client.call("GET", f"/api/customers/{customer}")
        elif action == "open_ticket":
            reply = self._client.call(
                "GET", f"/api/tickets/{_quote(str(arguments.get('ticket_id', '')))}"
            )
        elif action == "create_ticket":
            form = {k: arguments[k] for k in CREATE_FIELDS if k in arguments}
            reply = self._client.call("POST", "/api/tickets", form)
        elif action == "reassign_ticket":
            ticket = _quote(str(arguments.get("ticket_id", "")))
            body = {k: arguments.get(k, "") for k in ("assignee_id", "comment")}
            reply = self._client.call("POST", f"/api/tickets/{ticket}/reassign", body)
        else:
            reply = {"status": "error", "banner": f"unknown action {action!r}"}
        self._screen = _screen(reply)
        return self._screen

    def screen(self) -> Screen:
        """Return the banner the app painted last."""
        return self._screen

    def product_effect_verifier(self) -> RestVerifier:
        """Return the product's readback: the tickets REST endpoint, and only that."""
        return product_verifier(self._client)

    def all_surfaces_verifier(self) -> RestVerifier:
        """Return a readback over every REST surface (customers, agents, tickets, ...)."""
        return all_surfaces_verifier(self._client)
