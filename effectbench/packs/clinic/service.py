"""The HTTP record service: the only door a system under test has into the clinic.

A :class:`~effectbench.episode_http.RecordService` (a standard-library HTTP server bound to
127.0.0.1 on an ephemeral port). One service runs per provider (so per worker process); each
episode *mounts* its own :class:`~effectbench.packs.clinic.store.ClinicStore` (its own
database file and fault) and unmounts it when the episode ends.

Routes (JSON in, JSON out; every reply is ``{status, banner, details}``)::

    GET   /api/patients?name=NAME        find charts by name
    GET   /api/patients/MRN/chart        open a chart
    POST  /api/encounters                save a new encounter (the form)
    PATCH /api/encounters/ID             edit an encounter's note
    GET   /api/surfaces/NAME             the REST read of one surface (patients,
                                         encounters, billing): the product's own
                                         readback, never the harness oracle's

Every other path is the clinic's web application (:mod:`.web.app`): HTML pages and form
posts over the same mounted store, so the web UI and the JSON routes reach the same faulty
persistence boundary.

Only the mounted episode's own clients get in, by the one admission rule of
:mod:`effectbench.episode_http`: the episode's secret in the :data:`SECRET_HEADER` header
(the harness's clients, the desktop app and the episode's browser context send it; no agent
ever sees it), the service's own ``Host``, no other ``Origin``, JSON to ``/api/`` and
URL-encoded forms to pages. The harness oracle never comes through here: it reads the
database file directly (``mode=ro``).
"""

from __future__ import annotations

from effectbench.episode_http import Channel, RecordService, Route, default_read_handler
from effectbench.packs.clinic.store import ClinicStore

__all__ = ["SECRET_HEADER", "Channel", "ClinicService", "default_read_handler"]

SECRET_HEADER = "X-Clinic-Episode"
"""The request header that carries the mounted episode's secret."""


class ClinicService(RecordService[ClinicStore]):
    """The clinic's record service: start once, mount one episode's store at a time, stop."""

    routes = (
        Route("GET", "/api/patients", lambda s, r: s.search(r.query.get("name", ""))),
        Route("GET", "/api/patients/{mrn}/chart", lambda s, r: s.chart(r.args["mrn"])),
        Route("GET", "/api/surfaces/{name}", lambda s, r: s.surface(r.args["name"])),
        Route("POST", "/api/encounters", lambda s, r: s.save(r.form)),
        Route("PATCH", "/api/encounters/{id:int}", lambda s, r: s.edit(r.args["id"], r.form)),
    )
    pages = "effectbench.packs.clinic.web.app"
    noun = "clinic"
    secret_header = SECRET_HEADER
    thread_name = "clinic-record-service"
