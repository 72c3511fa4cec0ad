"""The pack kit's agent side on the ``api`` substrate: HTTP actions and the product's readback.

A kit-built pack serves its system of record over an
:class:`~effectbench.episode_http.EpisodeService`; everything an agent does goes through that
service, never around it:

* :class:`ServiceClient` is one keep-alive HTTP/1.1 connection to the service, carrying the
  episode's secret (which the agent never sees); a failed request is an error screen, as in
  any client;
* :class:`RestReadback` is the product's own readback over some of the service's REST
  surfaces (``GET /api/surfaces/NAME``): a baseline when it is created, and on ``verify`` the
  contract and those surfaces' change set judged by :func:`effectbench.kit.tables.judge_tables`,
  the oracle's own rule on what the product shows;
* :class:`HttpEnv` is the env an agent holds: a pack declares its actions as :class:`Action`
  routes (method, path, body fields, typed parameters) and the one banner an episode opens on;
  the env does the rest (dispatch, screens, the readback of one surface and of every surface).

Neither readback is the harness oracle: both read through the service.
"""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar
from urllib.parse import quote

from effectbench.changes import Table
from effectbench.computer.base import ALL_SURFACES, PRODUCT
from effectbench.effects import Effect
from effectbench.episode_http import Channel
from effectbench.kit.tables import judge_tables
from effectbench.schema import Verdict
from effectbench.seam import ActionParam, ProductReading, Screen

__all__ = ["Action", "HttpEnv", "RestReadback", "ServiceClient", "screen_of"]


class ServiceClient:
    """One keep-alive HTTP/1.1 connection to a pack's service, admitted by ``channel``."""

    def __init__(
        self, channel: Channel, service: str = "record service", timeout: float = 5.0
    ) -> None:
        self._port = channel.port
        self._admit = channel.headers()
        self._service = service
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
            return {"status": "error", "banner": f"{self._service} unreachable ({exc})"}
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


def screen_of(reply: Mapping[str, Any]) -> Screen:
    """Return the screen a service's JSON reply paints."""
    details = reply.get("details")
    return Screen(
        status=str(reply.get("status", "error")),
        banner=str(reply.get("banner", "")),
        details=details if isinstance(details, dict) else {},
    )


class RestReadback:
    """A product readback over REST surfaces: baseline at creation, judge on ``verify``."""

    def __init__(self, client: ServiceClient, surfaces: Sequence[str], name: str) -> None:
        self._client = client
        self._surfaces = tuple(surfaces)
        self.name = name
        self._baseline = self.read()

    def read(self) -> dict[str, Table] | None:
        """Read every surface now (None: one of them could not be read)."""
        reading: dict[str, Table] = {}
        for surface in self._surfaces:
            reply = self._client.call("GET", f"/api/surfaces/{surface}")
            details = reply.get("details")
            rows = details.get("rows") if isinstance(details, dict) else None
            if reply.get("status") == "error" or not isinstance(rows, list):
                return None
            key = str(details.get("key", "id")) if isinstance(details, dict) else "id"
            reading[surface] = Table(key=(key,), rows=tuple(rows))
        return reading

    def verify(self, effect: Sequence[Effect]) -> ProductReading:
        """Read the surfaces back and judge ``effect`` plus their change set."""
        reading = judge_tables(
            effect, self._baseline, self.read(), channel=self.name, surfaces=self._surfaces
        )
        return ProductReading(
            confirmed=reading.verdict is Verdict.CONFIRMED,
            reason=reading.reason,
            absent=reading.effect_absent,
        )


@dataclass(frozen=True)
class Action:
    """One API action of a pack: its typed parameters and the request it makes."""

    method: str
    path: str
    """The path, with ``{name}`` where an argument goes (quoted; absent: empty)."""
    params: tuple[ActionParam, ...]
    body: tuple[str, ...] = ()
    """The arguments sent as the JSON body (POST, PATCH)."""
    fill: bool = False
    """Send every body field (empty when not given) rather than only those given."""
    whole: str | None = None
    """A path argument that must be a whole number (the request is not made otherwise)."""

    def request(
        self, name: str, arguments: Mapping[str, Any]
    ) -> tuple[str, dict[str, Any] | None] | str:
        """Return the path and body of a call with ``arguments``, or why it cannot be made."""
        values = {p.name: str(arguments.get(p.name, "")) for p in self.params}
        if self.whole is not None:
            try:
                number = int(arguments.get(self.whole, ""))
            except (TypeError, ValueError):
                number = -1
            if number < 0:
                return f"{name} needs an {self.whole}"
            values[self.whole] = str(number)
        path = self.path.format(**{k: quote(v, safe="") for k, v in values.items()})
        if self.method == "GET":
            return path, None
        if self.fill:
            return path, {k: arguments.get(k, "") for k in self.body}
        return path, {k: arguments[k] for k in self.body if k in arguments}


class HttpEnv:
    """The agent's handle on one episode: the pack's actions over HTTP, nothing else.

    A pack subclasses it with :attr:`ACTIONS`, the surfaces its readbacks read
    (:attr:`PRODUCT_SURFACES`: what the product's own verifier shows; :attr:`SURFACES`: every
    one), the name of its service and of the brief, and :meth:`opening`.
    """

    ACTIONS: ClassVar[Mapping[str, Action]] = {}
    PRODUCT_SURFACES: ClassVar[tuple[str, ...]] = ()
    SURFACES: ClassVar[tuple[str, ...]] = ()
    SERVICE: ClassVar[str] = "record service"
    """What an unreachable service is called on the error screen."""
    BRIEF: ClassVar[str] = "request"
    """The key of the opening screen's details that holds the brief."""

    def __init__(self, channel: Channel, brief: Mapping[str, Any]) -> None:
        self._client = ServiceClient(channel, self.SERVICE)
        self._brief = dict(brief)
        self._screen = Screen("idle", self.opening(self._brief), {self.BRIEF: self._brief})

    def opening(self, brief: Mapping[str, Any]) -> str:
        """Return the banner the episode opens on (what the agent is asked to do)."""
        raise NotImplementedError

    def close(self) -> None:
        """Close the episode's connection."""
        self._client.close()

    def actions(self) -> Sequence[str]:
        """Return the actions the app accepts."""
        return tuple(self.ACTIONS)

    def action_parameters(self) -> dict[str, tuple[ActionParam, ...]]:
        """Return each action's named arguments."""
        return {name: a.params for name, a in self.ACTIONS.items()}

    def act(self, action: str, **arguments: Any) -> Screen:
        """Perform one action over HTTP and return the screen the app paints."""
        route = self.ACTIONS.get(action)
        request = route.request(action, arguments) if route else f"unknown action {action!r}"
        if isinstance(request, str):
            reply: dict[str, Any] = {"status": "error", "banner": request}
        else:
            assert route is not None
            reply = self._client.call(route.method, *request)
        self._screen = screen_of(reply)
        return self._screen

    def screen(self) -> Screen:
        """Return the banner the app painted last."""
        return self._screen

    def product_effect_verifier(self) -> RestReadback:
        """Return the product's readback: its own surfaces only."""
        return self.readbacks(self._client)[PRODUCT]()

    def all_surfaces_verifier(self) -> RestReadback:
        """Return a readback over every REST surface."""
        return self.readbacks(self._client)[ALL_SURFACES]()

    @classmethod
    def readbacks(cls, client: ServiceClient) -> dict[str, Callable[[], RestReadback]]:
        """Return the product's readbacks over ``client`` (what a screen env offers too)."""
        name = "rest:" + ",".join(cls.PRODUCT_SURFACES)
        return {
            PRODUCT: lambda: RestReadback(client, cls.PRODUCT_SURFACES, name),
            ALL_SURFACES: lambda: RestReadback(client, cls.SURFACES, "rest:all-surfaces"),
        }
