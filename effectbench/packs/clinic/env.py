"""The arm-facing handle: every action and every product read goes over HTTP.

:class:`ClinicEnv` is what a system under test holds. It talks to the record
service on 127.0.0.1 (one keep-alive connection per episode, carrying the
episode's secret, which the handle never hands out) and offers:

* actions ``find_patients(name)``, ``open_chart(mrn)``, ``save_encounter(mrn,
  name, type, note, idempotency_key=None, sign=False, charge_code=None,
  claim_ref=None)`` and ``edit_encounter(encounter_id, note)``;
* :meth:`ClinicEnv.screen`, the banner the app painted last;
* :meth:`ClinicEnv.product_effect_verifier`, the product's own readback that
  reads one out-of-band REST surface, the encounters endpoint;
* :meth:`ClinicEnv.all_surfaces_verifier`, a readback over every REST surface
  (what the ``effect_verified_all`` arm uses).

Neither verifier is the harness oracle: both read through the service.
"""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from effectbench.effects import Effect
from effectbench.packs.clinic.db import SURFACES
from effectbench.packs.clinic.oracle import Snapshot, Surface, judge_record
from effectbench.packs.clinic.service import Channel
from effectbench.schema import Verdict
from effectbench.seam import ProductReading, Screen

ACTIONS = ("find_patients", "open_chart", "save_encounter", "edit_encounter")
SAVE_FIELDS = ("mrn", "name", "type", "note", "idempotency_key", "sign", "charge_code", "claim_ref")


class _Client:
    """One keep-alive HTTP/1.1 connection to the record service, admitted by ``channel``."""

    def __init__(self, channel: Channel, timeout: float = 5.0) -> None:
        self._port = channel.port
        self._admit = channel.headers()
        self._timeout = timeout
        self._conn: http.client.HTTPConnection | None = None

    def _connect(self) -> http.client.HTTPConnection:
        if self._conn is None:
            conn = http.client.HTTPConnection("127.0.0.1", self._port, timeout=self._timeout)
            conn.connect()
            assert conn.sock is not None
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
            return {"status": "error", "banner": f"record service unreachable ({exc})"}
        try:
            data = json.loads(raw)
        except ValueError:
            return {"status": "error", "banner": f"unreadable reply (HTTP {response.status})"}
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

    def __init__(self, client: _Client, surfaces: Sequence[str], name: str) -> None:
        self._client = client
        self._surfaces = tuple(surfaces)
        self.name = name
        self._baseline = self._read()

    def _read(self) -> Snapshot | None:
        snapshot: Snapshot = {}
        for surface in self._surfaces:
            reply = self._client.call("GET", f"/api/surfaces/{surface}")
            details = reply.get("details")
            if reply.get("status") == "error" or not isinstance(details, dict):
                return None
            rows = details.get("rows")
            if not isinstance(rows, list):
                return None
            snapshot[surface] = Surface(key=(str(details.get("key", "id")),), rows=tuple(rows))
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


class ClinicEnv:
    """The SUT's handle on one episode: actions and reads over HTTP, nothing else."""

    def __init__(self, channel: Channel, referral: dict[str, Any]) -> None:
        self._client = _Client(channel)
        self._referral = dict(referral)
        self._screen = Screen("idle", self._referral_banner(), {"referral": self._referral})

    def _referral_banner(self) -> str:
        r = self._referral
        if "encounter_id" in r:
            return f"Task: update encounter {r['encounter_id']} of chart {r.get('mrn', '?')}"
        born = f", born {r['dob']}" if r.get("dob") else ""
        mrn = f", MRN {r['mrn']}" if r.get("mrn") else ""
        return (
            f"Referral: {r.get('patient_name', '?')}{born}{mrn}; new {r.get('type', '')} encounter"
        )

    def close(self) -> None:
        """Close the episode's connection."""
        self._client.close()

    def actions(self) -> Sequence[str]:
        """Return the actions the clinic app accepts."""
        return ACTIONS

    def act(self, action: str, **arguments: Any) -> Screen:
        """Perform one action over HTTP and return the screen the app paints."""
        if action == "find_patients":
            path = "/api/patients?name=" + _quote(str(arguments.get("name", "")))
            reply = self._client.call("GET", path)
        elif action == "open_chart":
            reply = self._client.call(
                "GET", f"/api/patients/{_quote(str(arguments.get('mrn')))}/chart"
            )
        elif action == "save_encounter":
            form = {k: arguments.get(k) for k in SAVE_FIELDS if k in arguments}
            reply = self._client.call("POST", "/api/encounters", form)
        elif action == "edit_encounter":
            try:
                encounter_id = int(arguments.get("encounter_id", ""))
            except (TypeError, ValueError):
                encounter_id = -1
            if encounter_id < 0:
                reply = {"status": "error", "banner": "edit_encounter needs an encounter_id"}
            else:
                body = {"note": arguments.get("note", "")}
                reply = self._client.call("PATCH", f"/api/encounters/{encounter_id}", body)
        else:
            reply = {"status": "error", "banner": f"unknown action {action!r}"}
        self._screen = _screen(reply)
        return self._screen

    def screen(self) -> Screen:
        """Return the banner the app painted last."""
        return self._screen

    def product_effect_verifier(self) -> RestVerifier:
        """Return the product's readback: the encounters REST endpoint, and only that."""
        return RestVerifier(self._client, ("encounters",), "rest:encounters")

    def all_surfaces_verifier(self) -> RestVerifier:
        """Return a readback over every REST surface (patients, encounters, billing)."""
        return RestVerifier(self._client, SURFACES, "rest:all-surfaces")


def _quote(text: str) -> str:
    return quote(text, safe="")
