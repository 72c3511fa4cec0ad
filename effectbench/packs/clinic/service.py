"""The HTTP record service: the only door a system under test has into the clinic.

An :class:`~effectbench.episode_http.EpisodeService` (a standard-library HTTP
server bound to 127.0.0.1 on an ephemeral port). One service runs per provider (so per worker
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

Only the mounted episode's own clients get in, by the one admission rule of
:mod:`effectbench.episode_http`: the episode's secret in the :data:`SECRET_HEADER`
header (the harness's clients, the desktop app and the episode's browser context send
it; no agent ever sees it), the service's own ``Host``, no other ``Origin``, JSON to
``/api/`` and URL-encoded forms to pages. The harness oracle never comes through
here: it reads the database file directly (``mode=ro``).
"""

from __future__ import annotations

from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from effectbench.episode_http import Channel, EpisodeHandler, EpisodeService, Reply
from effectbench.packs.clinic.store import ClinicStore

__all__ = ["SECRET_HEADER", "Channel", "RecordService", "default_read_handler"]

SECRET_HEADER = "X-Clinic-Episode"
"""The request header that carries the mounted episode's secret."""


class _Handler(EpisodeHandler):
    title = "Clinic"
    server: Any

    def _store(self) -> ClinicStore | None:
        store: ClinicStore | None = self.server.service.mounted
        return store

    def _web(self) -> bool:
        """Answer a web-app request (any path outside ``/api/``); say whether it was one."""
        if self.is_api():
            return False
        # The web app is imported by its first page: an api-only episode never loads it.
        from effectbench.packs.clinic.web.app import handle_get, handle_post

        store = self._store()
        raw = self.read_body() if self.command == "POST" else b""
        if store is None:
            self.send_notice(503, "No clinic is mounted")
        elif raw is None:
            self.send_notice(413, "Form too large")
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

    def _write_request(self) -> tuple[ClinicStore, dict[str, Any], list[str]] | None:
        """Return the mounted store, the JSON form and the path's parts, or answer the error."""
        store, form = self._store(), self.read_json()
        if store is None:
            self.send_reply(Reply(503, "error", "no clinic is mounted"))
            return None
        if form is None:
            self.send_reply(Reply(400, "error", "the form is not a JSON object"))
            return None
        return store, form, urlsplit(self.path).path.strip("/").split("/")

    def do_POST(self) -> None:  # noqa: N802
        """Route a save (a form post, or a JSON save)."""
        if not self.admitted() or self._web():
            return
        request = self._write_request()
        if request is None:
            return
        store, form, parts = request
        if parts == ["api", "encounters"]:
            self.send_reply(store.save(form))
        else:
            self.send_reply(Reply(404, "error", f"no route {self.path}"))

    def do_PATCH(self) -> None:  # noqa: N802
        """Route an edit."""
        if not self.admitted():
            return
        request = self._write_request()
        if request is None:
            return
        store, form, parts = request
        if len(parts) == 3 and parts[:2] == ["api", "encounters"] and parts[2].isdigit():
            self.send_reply(store.edit(int(parts[2]), form))
        else:
            self.send_reply(Reply(404, "error", f"no route {self.path}"))


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


class RecordService(EpisodeService[ClinicStore]):
    """The clinic's record service: start once, mount one episode's store at a time, stop."""

    handler = _Handler
    secret_header = SECRET_HEADER
    thread_name = "clinic-record-service"

    def __init__(self) -> None:
        super().__init__()
        self.read_handler: Callable[[BaseHTTPRequestHandler], Reply] = default_read_handler
        """The GET handler; tests replace it to prove the oracle never reads through it."""
