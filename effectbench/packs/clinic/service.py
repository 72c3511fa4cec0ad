"""The HTTP record service: the only door a system under test has into the clinic.

A standard-library HTTP server (``http.server`` + ``threading``) bound to
127.0.0.1 on an ephemeral port. One service runs per provider (so per worker
process); each episode *mounts* its own :class:`~effectbench.packs.clinic.store.ClinicStore`
(its own database file and fault) and unmounts it when the episode ends.

Routes (JSON in, JSON out; every reply is ``{status, banner, details}``)::

    GET   /api/patients?name=NAME        find charts by name
    GET   /api/patients/MRN/chart        open a chart
    POST  /api/encounters                save a new encounter (the form)
    PATCH /api/encounters/ID             edit an encounter's note
    GET   /api/surfaces/NAME             the REST read of one surface (patients,
                                         encounters, billing): the product's own
                                         readback, never the harness oracle's

Every other path is the clinic's web application (:mod:`.web.app`): HTML pages
and form posts over the same mounted store, so the web UI and the JSON routes
reach the same faulty persistence boundary.

Only the mounted episode's own clients get in. Mounting a store draws a fresh
secret (:class:`Channel`); every request must carry it in the
:data:`SECRET_HEADER` header (the harness's clients, the desktop app and the
episode's browser context send it; no agent ever sees it), name the service
itself as ``Host`` (``127.0.0.1:PORT``: a rebound DNS name is refused), come
from no other ``Origin``, and post JSON to ``/api/`` or a URL-encoded form to a
page. So another local user, or a web page's no-preflight ``text/plain`` post,
reaches nothing. The harness oracle never comes through here: it reads the
database file directly (``mode=ro``).
"""

from __future__ import annotations

import hmac
import html
import json
import secrets
import sys
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from effectbench.packs.clinic.store import ClinicStore, Reply

MAX_BODY = 64 * 1024
"""The largest form the service reads (a clinical note fits many times over)."""
SECRET_HEADER = "X-Clinic-Episode"
"""The request header that carries the mounted episode's secret."""
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

    @property
    def url(self) -> str:
        """Return the web app's start page."""
        return f"http://{self.host}/"

    def headers(self) -> dict[str, str]:
        """Return the header that admits a request to this episode."""
        return {SECRET_HEADER: self.secret}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    service: RecordService

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that left mid-reply (a browser context closed) is not an error."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Stay quiet: the service is a fixture, not a log source."""

    def _send(self, reply: Reply) -> None:
        payload = json.dumps(reply.body()).encode("utf-8")
        self.send_response(reply.http_status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _send_page(self, http_status: int, document: str) -> None:
        payload = document.encode("utf-8")
        self.send_response(http_status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

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

    def _refuse(self, status: int, message: str) -> None:
        self.close_connection = True  # a refused request's body is never read
        if self._api():
            self._send(Reply(status, "error", message))
        else:
            text = html.escape(message, quote=True)
            self._send_page(status, f"<!doctype html><title>Clinic</title>{text}")

    def _api(self) -> bool:
        return urlsplit(self.path).path.startswith("/api/")

    def _admitted(self) -> bool:
        """Admit only the mounted episode's own clients; answer anything else and say so."""
        channel = self.server.service.channel
        if channel is None:
            self._refuse(503, "no clinic is mounted")
            return False
        if self.headers.get("Host") != channel.host:
            self._refuse(421, f"this service answers only as {channel.host}")
            return False
        secret = self.headers.get(SECRET_HEADER, "")
        if not hmac.compare_digest(secret.encode("utf-8", "replace"), channel.secret.encode()):
            self._refuse(401, "this request does not carry the episode's secret")
            return False
        origin = self.headers.get("Origin")
        if origin is not None and origin != f"http://{channel.host}":
            self._refuse(403, f"requests from {origin} are not served")
            return False
        if self.command in ("POST", "PATCH"):
            wanted = FORM_TYPES["/api/" if self._api() else "/"]
            given = (self.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
            if given != wanted:
                self._refuse(415, f"a {self.command} here takes {wanted}, not {given or 'none'}")
                return False
        return True

    def _web(self) -> bool:
        """Answer a web-app request (any path outside ``/api/``); say whether it was one."""
        if self._api():
            return False
        # The web app is imported by its first page: an api-only episode never loads it.
        from effectbench.packs.clinic.web.app import handle_get, handle_post

        store = self._store()
        raw = self._read_body() if self.command == "POST" else b""
        if store is None:
            self._send_page(503, "<!doctype html><title>Clinic</title>No clinic is mounted")
        elif raw is None:
            self._send_page(413, "<!doctype html><title>Clinic</title>Form too large")
        else:
            page = (
                handle_post(store, self.path, raw.decode("utf-8", "replace"))
                if self.command == "POST"
                else handle_get(store, self.path)
            )
            self._send_page(page.http_status, page.document)
        return True

    def _store(self) -> ClinicStore | None:
        return self.server.service.mounted

    def do_GET(self) -> None:  # noqa: N802
        """Route a read (a page, or a JSON read)."""
        if not self._admitted():
            return
        if not self._web():
            self._send(self.server.service.read_handler(self))

    def _write_request(self) -> tuple[ClinicStore, dict[str, Any], list[str]] | None:
        """Return the mounted store, the JSON form and the path's parts, or answer the error."""
        store, form = self._store(), self._read_json()
        if store is None:
            self._send(Reply(503, "error", "no clinic is mounted"))
            return None
        if form is None:
            self._send(Reply(400, "error", "the form is not a JSON object"))
            return None
        return store, form, urlsplit(self.path).path.strip("/").split("/")

    def do_POST(self) -> None:  # noqa: N802
        """Route a save (a form post, or a JSON save)."""
        if not self._admitted() or self._web():
            return
        request = self._write_request()
        if request is None:
            return
        store, form, parts = request
        if parts == ["api", "encounters"]:
            self._send(store.save(form))
        else:
            self._send(Reply(404, "error", f"no route {self.path}"))

    def do_PATCH(self) -> None:  # noqa: N802
        """Route an edit."""
        if not self._admitted():
            return
        request = self._write_request()
        if request is None:
            return
        store, form, parts = request
        if len(parts) == 3 and parts[:2] == ["api", "encounters"] and parts[2].isdigit():
            self._send(store.edit(int(parts[2]), form))
        else:
            self._send(Reply(404, "error", f"no route {self.path}"))


def default_read_handler(handler: BaseHTTPRequestHandler) -> Reply:
    """Answer a GET from the mounted store (the app's read path)."""
    server: Any = handler.server
    store: ClinicStore | None = server.service.mounted
    if store is None:
        return Reply(503, "error", "no clinic is mounted")
    url = urlsplit(handler.path)
    parts = url.path.strip("/").split("/")
    if parts == ["api", "patients"]:
        name = parse_qs(url.query).get("name", [""])[0]
        return store.search(name)
    if len(parts) == 4 and parts[:2] == ["api", "patients"] and parts[3] == "chart":
        return store.chart(parts[2])
    if len(parts) == 3 and parts[:2] == ["api", "surfaces"]:
        return store.surface(parts[2])
    return Reply(404, "error", f"no route {handler.path}")


class RecordService:
    """The record service: start once, mount one episode's store at a time, stop."""

    def __init__(self) -> None:
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.mounted: ClinicStore | None = None
        self.channel: Channel | None = None
        """The mounted episode's channel (port and secret); ``None`` while nothing is mounted."""
        self.read_handler = default_read_handler
        """The GET handler; tests replace it to prove the oracle never reads through it."""

    @property
    def port(self) -> int:
        """Return the ephemeral port the service listens on."""
        if self._server is None:
            raise RuntimeError("the record service is not running")
        return int(self._server.server_address[1])

    def start(self) -> RecordService:
        """Bind 127.0.0.1 on an ephemeral port and serve in a daemon thread."""
        if self.alive():
            return self
        server = _Server(("127.0.0.1", 0), _Handler)
        server.service = self
        thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="clinic-record-service",
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

    def mount(self, store: ClinicStore) -> Channel:
        """Serve ``store`` (one episode's database file and fault) to the channel returned.

        Each mount draws a new secret: the previous episode's clients are shut out.
        """
        self.channel = Channel(self.port, secrets.token_urlsafe(32))
        self.mounted = store
        return self.channel

    def unmount(self) -> None:
        """Stop serving the current episode's store."""
        self.mounted = None
        self.channel = None
