"""An episode's HTTP door: a loopback service that only the mounted episode's clients get into.

A pack whose system of record is reached over HTTP (the clinic, the ticketing pack) runs one
:class:`EpisodeService` per provider: a standard-library threading HTTP server bound to
127.0.0.1 on an ephemeral port. Each episode *mounts* its own store and unmounts it when it
ends. Mounting draws a fresh secret (:class:`Channel`), and the one admission rule
(:meth:`EpisodeHandler.admitted`) holds every request to it:

* the secret, in the pack's header (the harness's clients, a desktop app, the product's
  readbacks) or, for a pack that names a cookie, in that cookie (a browser context trades the
  secret for an ``HttpOnly``, ``SameSite=Strict`` cookie at ``/enter``); no agent ever sees it;
* ``Host`` naming the service itself (``127.0.0.1:PORT``: a rebound DNS name is refused);
* no other ``Origin``;
* a ``POST`` or ``PATCH`` carrying JSON to ``/api/`` or a URL-encoded form to a page.

So another local user, another episode's client, or a web page's no-preflight ``text/plain``
post reaches nothing. The pack's oracle never comes through here (it reads the record by its
own path).

A pack declares what it serves rather than writing a handler: a :class:`RecordService` lists
its JSON :class:`Route` values (method, path pattern, the store's answer) and names the module
of its web pages (``handle_get(store, path)`` and ``handle_post(store, path, body)``, each
returning a :class:`Page`); every path outside ``/api/`` is a page, so the web UI and the JSON
actions reach the same mounted store. A pack may still subclass :class:`EpisodeHandler` for
routes of another shape.
"""

from __future__ import annotations

import hmac
import html
import importlib
import json
import secrets
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Generic, Protocol, Self, TypeVar
from urllib.parse import parse_qs, urlsplit

__all__ = [
    "MAX_BODY",
    "Channel",
    "EpisodeHandler",
    "EpisodeService",
    "Page",
    "RecordService",
    "Reply",
    "Request",
    "Route",
    "default_read_handler",
]

MAX_BODY = 64 * 1024
"""The largest body a service reads (a form or a JSON object)."""
FORM_TYPES = {"/api/": "application/json", "/": "application/x-www-form-urlencoded"}
"""The one body type each kind of route accepts (JSON routes, web-app pages)."""
ENTER_PATH = "/enter"
"""Where a browser trades the episode's secret for its cookie (packs that name a cookie)."""

S = TypeVar("S")


@dataclass(frozen=True)
class Reply:
    """What a record service answers: an HTTP status and the screen the app paints."""

    http_status: int
    status: str
    banner: str
    details: dict[str, Any] = field(default_factory=dict)

    def body(self) -> dict[str, Any]:
        """Return the JSON body of the reply."""
        return {"status": self.status, "banner": self.banner, "details": self.details}


@dataclass(frozen=True)
class Channel:
    """How one episode's own clients reach the service: its port and the episode's secret."""

    port: int
    secret: str = field(repr=False)
    header: str
    """The request header that carries the secret."""
    cookie: str | None = None
    """The cookie that carries it for a browser context (None: the header only)."""

    @property
    def host(self) -> str:
        """Return the ``Host`` every request names: ``127.0.0.1:PORT``."""
        return f"127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """Return the web app's start page."""
        return f"http://{self.host}/"

    def headers(self) -> dict[str, str]:
        """Return the header that admits a request to this episode."""
        return {self.header: self.secret}

    def entry_url(self) -> str:
        """Return a browser's way in: it trades the secret for the episode's cookie."""
        if self.cookie is None:
            raise ValueError("this service admits by header only; it sets no cookie")
        return f"http://{self.host}{ENTER_PATH}?key={self.secret}"


def _same(given: str, secret: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8", "replace"), secret.encode("utf-8"))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    service: EpisodeService[Any]

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that left mid-reply (a browser context closed) is not an error."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class EpisodeHandler(BaseHTTPRequestHandler):
    """The base of a pack's request handler: answers, admission and bodies.

    A subclass routes (``do_GET`` ...), each method starting with ``if not
    self.admitted(): return``; :attr:`title` names the app on refused pages.
    """

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _Server
    title: ClassVar[str] = "Record service"
    """The app's name on a refused request's page."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Stay quiet: the service is a fixture, not a log source."""

    # -- answers -------------------------------------------------------------------------

    def send_bytes(
        self, status: int, kind: str, payload: bytes, extra: dict[str, str] | None = None
    ) -> None:
        """Answer with ``payload`` of type ``kind`` (never cached) and ``extra`` headers."""
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def send_reply(self, reply: Reply) -> None:
        """Answer a JSON route."""
        payload = json.dumps(reply.body()).encode("utf-8")
        self.send_bytes(reply.http_status, "application/json", payload)

    def send_page(self, status: int, document: str) -> None:
        """Answer a web-app page."""
        self.send_bytes(status, "text/html; charset=utf-8", document.encode("utf-8"))

    def send_notice(self, status: int, message: str) -> None:
        """Answer a page that only says ``message`` (escaped)."""
        text = html.escape(message, quote=True)
        self.send_page(status, f"<!doctype html><title>{html.escape(self.title)}</title>{text}")

    def refuse(self, status: int, message: str) -> None:
        """Refuse the request, saying why (JSON on ``/api/``, a page elsewhere)."""
        self.close_connection = True  # a refused request's body is never read
        if self.is_api():
            self.send_reply(Reply(status, "error", message))
        else:
            self.send_notice(status, message)

    # -- admission -------------------------------------------------------------------------

    def is_api(self) -> bool:
        """Whether the request is for a JSON route (``/api/...``)."""
        return urlsplit(self.path).path.startswith("/api/")

    def _cookie(self, name: str) -> str:
        try:
            jar = SimpleCookie(self.headers.get("Cookie") or "")
        except CookieError:
            return ""
        morsel = jar.get(name)
        return morsel.value if morsel is not None else ""

    def admitted(self) -> bool:
        """Admit only the mounted episode's own clients; answer anything else and say so.

        The one rule of the module's docstring. A browser's ``GET /enter?key=SECRET`` is
        answered here (the cookie set, a redirect to ``/``) and is not admitted further.
        """
        channel = self.server.service.channel
        if channel is None:
            self.refuse(503, "nothing is mounted")
            return False
        if self.headers.get("Host") != channel.host:
            self.refuse(421, f"this service answers only as {channel.host}")
            return False
        origin = self.headers.get("Origin")
        if origin is not None and origin != f"http://{channel.host}":
            self.refuse(403, f"requests from {origin} are not served")
            return False
        url = urlsplit(self.path)
        if channel.cookie is not None and self.command == "GET" and url.path == ENTER_PATH:
            key = parse_qs(url.query).get("key", [""])[0]
            if not _same(key, channel.secret):
                self.refuse(401, "this entry link is not the episode's")
                return False
            cookie = f"{channel.cookie}={channel.secret}; Path=/; HttpOnly; SameSite=Strict"
            self.send_bytes(303, "text/plain", b"", {"Location": "/", "Set-Cookie": cookie})
            return False
        given = self.headers.get(channel.header) or (
            self._cookie(channel.cookie) if channel.cookie is not None else ""
        )
        if not _same(given, channel.secret):
            self.refuse(401, "this request does not carry the episode's secret")
            return False
        if self.command in ("POST", "PATCH"):
            wanted = FORM_TYPES["/api/" if self.is_api() else "/"]
            got = (self.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
            if got != wanted:
                self.refuse(415, f"a {self.command} here takes {wanted}, not {got or 'none'}")
                return False
        return True

    # -- bodies -----------------------------------------------------------------------------

    def read_body(self) -> bytes | None:
        """Return the request's body, or None when it is larger than :data:`MAX_BODY`."""
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY:
            self.close_connection = True  # the unread body would desync the stream
            return None
        return self.rfile.read(length) if length else b""

    def read_json(self) -> dict[str, Any] | None:
        """Return the request's body as a JSON object, or None when it is not one."""
        raw = self.read_body()
        try:
            data = json.loads(raw or b"{}") if raw is not None else None
        except ValueError:
            self.close_connection = True
            return None
        return data if isinstance(data, dict) else None


class EpisodeService(Generic[S]):
    """A record service: start once, mount one episode's store (``S``) at a time, stop.

    A pack sets :attr:`handler` (its :class:`EpisodeHandler`), :attr:`secret_header`,
    optionally :attr:`cookie`, and :attr:`thread_name`.
    """

    handler: ClassVar[type[EpisodeHandler]] = EpisodeHandler
    secret_header: ClassVar[str] = "X-Episode"
    cookie: ClassVar[str | None] = None
    thread_name: ClassVar[str] = "episode-service"

    def __init__(self) -> None:
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.mounted: S | None = None
        self.channel: Channel | None = None
        """The mounted episode's channel (port and secret); ``None`` while nothing is mounted."""

    @property
    def port(self) -> int:
        """Return the ephemeral port the service listens on."""
        if self._server is None:
            raise RuntimeError(f"the {self.thread_name} is not running")
        return int(self._server.server_address[1])

    def start(self) -> Self:
        """Bind 127.0.0.1 on an ephemeral port and serve in a daemon thread."""
        if self.alive():
            return self
        server = _Server(("127.0.0.1", 0), self.handler)
        server.service = self
        thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=self.thread_name,
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

    def mount(self, store: S) -> Channel:
        """Serve ``store`` (one episode's record and fault) to the channel returned.

        Each mount draws a new secret: the previous episode's clients are shut out.
        """
        self.channel = Channel(
            self.port, secrets.token_urlsafe(32), self.secret_header, self.cookie
        )
        self.mounted = store
        return self.channel

    def unmount(self) -> None:
        """Stop serving the current episode's store."""
        self.mounted = None
        self.channel = None


# -- declared routes: what a kit-built pack serves ---------------------------------------------


@dataclass(frozen=True)
class Page:
    """An HTML answer of a pack's web app: the HTTP status and the document."""

    http_status: int
    document: str


@dataclass(frozen=True)
class Request:
    """What a route's answer is given besides the mounted store."""

    path: str
    """The request's path as sent (query included)."""
    args: Mapping[str, Any]
    """The pattern's named parts (as sent, not decoded; ``{name:int}`` ones as integers)."""
    query: Mapping[str, str]
    """The query's first value of each name."""
    form: Mapping[str, Any]
    """The JSON body of a POST or PATCH (empty for a GET)."""


Answer = Callable[[Any, Request], Reply]
"""A route's answer: the mounted store and the request in, the reply out."""


@dataclass(frozen=True)
class Route:
    """One JSON route: a method, a path pattern (``/api/tickets/{id:int}/reassign``), an answer.

    A ``{name}`` part matches any one part of the path; ``{name:int}`` only digits.
    """

    method: str
    pattern: str
    answer: Answer

    def match(self, method: str, parts: list[str]) -> dict[str, Any] | None:
        """Return the named parts when this route serves ``method`` on ``parts``, else None."""
        want = self.pattern.strip("/").split("/")
        if method != self.method or len(want) != len(parts):
            return None
        args: dict[str, Any] = {}
        for pattern, part in zip(want, parts, strict=True):
            if not (pattern.startswith("{") and pattern.endswith("}")):
                if pattern != part:
                    return None
                continue
            name, _, kind = pattern[1:-1].partition(":")
            if kind == "int":
                if not part.isdigit():
                    return None
                args[name] = int(part)
            else:
                args[name] = part
        return args


class _Pages(Protocol):
    def handle_get(self, store: Any, path: str) -> Page: ...

    def handle_post(self, store: Any, path: str, body: str) -> Page: ...


def _first(query: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(query).items() if v}


class _RoutedHandler(EpisodeHandler):
    """Serves a :class:`RecordService`'s routes and pages under the admission rule."""

    server: Any

    @property
    def _service(self) -> RecordService[Any]:
        service: RecordService[Any] = self.server.service
        return service

    def _web(self) -> bool:
        """Answer a web-app request (any path outside ``/api/``); say whether it was one."""
        if self.is_api():
            return False
        service = self._service
        raw = self.read_body() if self.command == "POST" else b""
        pages = service.web_pages()
        if service.mounted is None:
            self.send_notice(503, f"No {service.noun} is mounted")
        elif raw is None:
            self.send_notice(413, "Form too large")
        elif pages is None:
            self.send_notice(404, f"No page {urlsplit(self.path).path}")
        else:
            page = (
                pages.handle_post(service.mounted, self.path, raw.decode("utf-8", "replace"))
                if self.command == "POST"
                else pages.handle_get(service.mounted, self.path)
            )
            self.send_page(page.http_status, page.document)
        return True

    def do_GET(self) -> None:  # noqa: N802
        """Route a read (a page, or a JSON read through the service's read handler)."""
        if self.admitted() and not self._web():
            self.send_reply(self._service.read_handler(self))

    def _write(self) -> None:
        service = self._service
        form = self.read_json()
        if service.mounted is None:
            self.send_reply(Reply(503, "error", f"no {service.noun} is mounted"))
        elif form is None:
            self.send_reply(Reply(400, "error", "the form is not a JSON object"))
        else:
            self.send_reply(service.answer(self.command, self.path, form))

    def do_POST(self) -> None:  # noqa: N802
        """Route a save (a form post to a page, or a JSON save)."""
        if self.admitted() and not self._web():
            self._write()

    def do_PATCH(self) -> None:  # noqa: N802
        """Route an edit (JSON only)."""
        if self.admitted():
            self._write()


def default_read_handler(handler: BaseHTTPRequestHandler) -> Reply:
    """Answer a JSON GET from the mounted store (a :class:`RecordService`'s read path)."""
    service: RecordService[Any] = handler.server.service  # type: ignore[attr-defined]
    return service.answer("GET", handler.path, {})


class RecordService(EpisodeService[S]):
    """An episode service that serves declared routes and pages (see the module's docstring).

    A pack sets :attr:`routes`, :attr:`pages` (the module of its web app, imported by the
    first page asked for: an api-only episode never loads it), :attr:`noun` (what is mounted,
    in refusals) and the :class:`EpisodeService` attributes.
    """

    handler: ClassVar[type[EpisodeHandler]] = _RoutedHandler
    routes: ClassVar[tuple[Route, ...]] = ()
    pages: ClassVar[str | None] = None
    noun: ClassVar[str] = "record"

    def __init__(self) -> None:
        super().__init__()
        self.read_handler: Callable[[BaseHTTPRequestHandler], Reply] = default_read_handler
        """The JSON GET handler; tests replace it to show the oracle never reads through it."""

    def web_pages(self) -> _Pages | None:
        """Return the web app's module (None: the pack has no web app)."""
        if self.pages is None:
            return None
        module: Any = importlib.import_module(self.pages)
        return module  # type: ignore[no-any-return]

    def answer(self, method: str, path: str, form: Mapping[str, Any]) -> Reply:
        """Answer a JSON request by the first route that matches it."""
        store = self.mounted
        if store is None:
            return Reply(503, "error", f"no {self.noun} is mounted")
        url = urlsplit(path)
        parts = url.path.strip("/").split("/")
        for route in self.routes:
            args = route.match(method, parts)
            if args is not None:
                return route.answer(store, Request(path, args, _first(url.query), form))
        return Reply(404, "error", f"no route {path}")
