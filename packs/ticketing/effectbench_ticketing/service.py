"""The support desk's HTTP service: the only door a system under test has into the tickets.

A standard-library HTTP server bound to 127.0.0.1 on an ephemeral port. One service runs per
provider; each episode *mounts* its own :class:`~effectbench_ticketing.store.TicketStore`
(its own database and fault) and unmounts it when the episode ends.

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

Only the mounted episode's own clients get in. Mounting draws a fresh secret
(:class:`Channel`); every request must carry it, in the :data:`SECRET_HEADER` header (the
JSON clients and the product's readbacks) or in the :data:`COOKIE` cookie (the episode's
browser context, which trades the secret for an ``HttpOnly``, ``SameSite=Strict`` cookie at
``/enter``; no agent ever sees it); it must name the service itself as ``Host``
(``127.0.0.1:PORT``: a rebound DNS name is refused), come from no other ``Origin``, and post
JSON to ``/api/`` or a URL-encoded form to a page. So another local user, another episode's
client, or a web page's no-preflight ``text/plain`` post reaches nothing. The harness oracle
never comes through here: it reads the database through its own role.
"""

from __future__ import annotations

import hmac
import html
import json
import secrets
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from effectbench_ticketing.store import Reply, TicketStore
from effectbench_ticketing.web.app import Page, handle_get, handle_post

MAX_BODY = 64 * 1024
"""The largest form the service reads."""
SECRET_HEADER = "X-Ticketing-Episode"
"""The request header that carries the mounted episode's secret."""
COOKIE = "tk_episode"
"""The cookie that carries it for the episode's browser context."""
FORM_TYPES = {"/api/": "application/json", "/": "application/x-www-form-urlencoded"}
"""The one body type each kind of route accepts (JSON routes, web-app pages)."""


@dataclass(frozen=True)
class Channel:
    """How one episode's own clients reach the service: its port and the episode's secret."""

    port: int
    secret: str = field(repr=False)

    @property
    def host(self) -> str:
        """Return the ``Host`` every request names: ``127.0.0.1:PORT``."""
        return f"127.0.0.1:{self.port}"

    def headers(self) -> dict[str, str]:
        """Return the header that admits a request to this episode."""
        return {SECRET_HEADER: self.secret}

    def entry_url(self) -> str:
        """Return the browser's way in: trades the secret for the episode's cookie."""
        return f"http://{self.host}/enter?key={self.secret}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    service: TicketService

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that left mid-reply (a browser context closed) is not an error."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


def _same(given: str, secret: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8", "replace"), secret.encode("utf-8"))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Stay quiet: the service is a fixture, not a log source."""

    # -- answers -------------------------------------------------------------------------

    def _send_bytes(self, status: int, kind: str, payload: bytes, extra: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in extra.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def _send(self, reply: Reply) -> None:
        payload = json.dumps(reply.body()).encode("utf-8")
        self._send_bytes(reply.http_status, "application/json", payload, {})

    def _send_page(self, page: Page) -> None:
        payload = page.document.encode("utf-8")
        self._send_bytes(page.http_status, "text/html; charset=utf-8", payload, {})

    def _refuse(self, status: int, message: str) -> None:
        self.close_connection = True  # a refused request's body is never read
        if self._api():
            self._send(Reply(status, "error", message))
        else:
            text = html.escape(message, quote=True)
            self._send_page(Page(status, f"<!doctype html><title>Support desk</title>{text}"))

    # -- admission -------------------------------------------------------------------------

    def _api(self) -> bool:
        return urlsplit(self.path).path.startswith("/api/")

    def _cookie(self) -> str:
        try:
            jar = SimpleCookie(self.headers.get("Cookie") or "")
        except CookieError:
            return ""
        morsel = jar.get(COOKIE)
        return morsel.value if morsel is not None else ""

    def _admitted(self) -> bool:
        """Admit only the mounted episode's own clients; answer anything else and say so."""
        channel = self.server.service.channel
        if channel is None:
            self._refuse(503, "no support desk is mounted")
            return False
        if self.headers.get("Host") != channel.host:
            self._refuse(421, f"this service answers only as {channel.host}")
            return False
        origin = self.headers.get("Origin")
        if origin is not None and origin != f"http://{channel.host}":
            self._refuse(403, f"requests from {origin} are not served")
            return False
        url = urlsplit(self.path)
        if self.command == "GET" and url.path == "/enter":
            key = parse_qs(url.query).get("key", [""])[0]
            if not _same(key, channel.secret):
                self._refuse(401, "this entry link is not the episode's")
                return False
            cookie = f"{COOKIE}={channel.secret}; Path=/; HttpOnly; SameSite=Strict"
            self._send_bytes(303, "text/plain", b"", {"Location": "/", "Set-Cookie": cookie})
            return False
        given = self.headers.get(SECRET_HEADER) or self._cookie()
        if not _same(given, channel.secret):
            self._refuse(401, "this request does not carry the episode's secret")
            return False
        if self.command == "POST":
            wanted = FORM_TYPES["/api/" if self._api() else "/"]
            got = (self.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
            if got != wanted:
                self._refuse(415, f"a POST here takes {wanted}, not {got or 'none'}")
                return False
        return True

    # -- bodies -----------------------------------------------------------------------------

    def _read_body(self) -> bytes | None:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY:
            self.close_connection = True  # the unread body would desync the stream
            return None
        return self.rfile.read(length) if length else b""

    def _read_json(self) -> dict[str, Any] | None:
        raw = self._read_body()
        try:
            data = json.loads(raw or b"{}") if raw is not None else None
        except ValueError:
            self.close_connection = True
            return None
        return data if isinstance(data, dict) else None

    # -- routes ----------------------------------------------------------------------------

    def _store(self) -> TicketStore | None:
        return self.server.service.mounted

    def _web(self) -> bool:
        """Answer a web-app request (any path outside ``/api/``); say whether it was one."""
        if self._api():
            return False
        store = self._store()
        raw = self._read_body() if self.command == "POST" else b""
        if store is None:
            self._send_page(Page(503, "<!doctype html><title>Support desk</title>Not mounted"))
        elif raw is None:
            self._send_page(Page(413, "<!doctype html><title>Support desk</title>Too large"))
        elif self.command == "POST":
            self._send_page(handle_post(store, self.path, raw.decode("utf-8", "replace")))
        else:
            self._send_page(handle_get(store, self.path))
        return True

    def do_GET(self) -> None:  # noqa: N802
        """Route a read (a page, or a JSON read)."""
        if self._admitted() and not self._web():
            self._send(self.server.service.read_handler(self))

    def do_POST(self) -> None:  # noqa: N802
        """Route a save (a form post, or a JSON save)."""
        if not self._admitted() or self._web():
            return
        store, form = self._store(), self._read_json()
        if store is None:
            self._send(Reply(503, "error", "no support desk is mounted"))
            return
        if form is None:
            self._send(Reply(400, "error", "the form is not a JSON object"))
            return
        parts = urlsplit(self.path).path.strip("/").split("/")
        if parts == ["api", "tickets"]:
            self._send(store.create(form))
        elif len(parts) == 4 and parts[:2] == ["api", "tickets"] and parts[3] == "reassign":
            if not parts[2].isdigit():
                self._send(Reply(404, "error", f"no ticket {parts[2]!r}"))
            else:
                self._send(store.reassign(int(parts[2]), form))
        else:
            self._send(Reply(404, "error", f"no route {self.path}"))


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


class TicketService:
    """The app's service: start once, mount one episode's store at a time, stop."""

    def __init__(self) -> None:
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.mounted: TicketStore | None = None
        self.channel: Channel | None = None
        """The mounted episode's channel (port and secret); ``None`` while nothing is mounted."""
        self.read_handler: Callable[[BaseHTTPRequestHandler], Reply] = default_read_handler
        """The JSON GET handler; tests replace it to prove the oracle never reads through it."""

    @property
    def port(self) -> int:
        """Return the ephemeral port the service listens on."""
        if self._server is None:
            raise RuntimeError("the ticketing service is not running")
        return int(self._server.server_address[1])

    def start(self) -> TicketService:
        """Bind 127.0.0.1 on an ephemeral port and serve in a daemon thread."""
        if self.alive():
            return self
        server = _Server(("127.0.0.1", 0), _Handler)
        server.service = self
        thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="ticketing-service",
            daemon=True,
        )
        thread.start()
        self._server, self._thread = server, thread
        return self

    def alive(self) -> bool:
        """Say whether the service is serving (checked in-process, not over HTTP)."""
        return self._server is not None and self._thread is not None and self._thread.is_alive()

    def stop(self) -> None:
        """Stop serving and release the port."""
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is not None:
            server.shutdown()
            server.server_close()
        if thread is not None:
            thread.join(timeout=2)

    def mount(self, store: TicketStore) -> Channel:
        """Serve ``store`` to the channel returned (a new secret: earlier clients are shut out)."""
        self.channel = Channel(self.port, secrets.token_urlsafe(32))
        self.mounted = store
        return self.channel

    def unmount(self) -> None:
        """Stop serving the current episode's store."""
        self.mounted = None
        self.channel = None
