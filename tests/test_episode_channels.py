"""Each episode's channels are private to it: the record service admits only its own clients.

The clinic's record service listens on 127.0.0.1, where every local user and
every web page a local browser shows can reach it. Each mounted episode draws a
secret that its own clients carry; the service also checks ``Host`` (a rebound
DNS name), ``Origin`` (another page) and the body's type (a no-preflight
``text/plain`` post). Every refused request leaves the record as it was: the
oracle, which reads the database file and never the service, says so.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from effectbench.packs.clinic import ClinicProvider
from effectbench.packs.clinic.service import SECRET_HEADER, Channel
from effectbench.schema import OracleVerdict, Substrate, TaskSpec, Verdict

TASK = "clinic::clean_draft"
"""A control task: one correct Triage encounter for Jonas Berg is the whole effect."""


@pytest.fixture(scope="module")
def pack() -> Iterator[ClinicProvider]:
    provider = ClinicProvider()
    yield provider
    provider.close()


def _task(pack: ClinicProvider, substrate: Substrate = Substrate.API) -> TaskSpec:
    suffix = "" if substrate is Substrate.API else f"@{substrate.value}"
    return next(t for t in pack.tasks() if t.task_id == TASK + suffix)


def _request(
    port: int,
    method: str,
    path: str,
    headers: Mapping[str, str],
    body: bytes | None = None,
) -> tuple[int, str]:
    """Send one request on a fresh connection; return the status and the body's text."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=dict(headers))
        response = conn.getresponse()
        return response.status, response.read().decode("utf-8", "replace")
    finally:
        conn.close()


def _encounter(params: Mapping[str, Any]) -> dict[str, Any]:
    """The form that writes the task's whole expected effect."""
    keys = ("mrn", "type", "note", "idempotency_key")
    return {"name": params["patient_name"], **{k: params[k] for k in keys}}


def test_the_record_service_refuses_whoever_lacks_the_episodes_secret_host_origin_or_type(
    pack: ClinicProvider,
) -> None:
    """Attacks the record service as a local client: no secret, a stale one, DNS rebinding,
    another page's origin, and ``text/plain`` bodies; then the episode's own client."""
    task = _task(pack)
    params = pack.trial_params(task, 0)
    form = json.dumps(_encounter(params)).encode()
    page_form = (
        f"mrn={params['mrn']}&name=Jonas+Berg&type=Triage&note={params['note'].replace(' ', '+')}"
    ).encode()
    with pack.provision(task, 0, params) as episode:
        before = episode.oracle.snapshot()
        channel = pack.service.channel
        assert channel is not None
        own = {"Host": channel.host, **channel.headers()}
        as_json = {**own, "Content-Type": "application/json"}
        refused = {
            "no secret": ({"Host": channel.host, "Content-Type": "application/json"}, 401),
            "a guessed secret": ({**as_json, SECRET_HEADER: "x" * len(channel.secret)}, 401),
            "a rebound DNS name": ({**as_json, "Host": f"clinic.example:{channel.port}"}, 421),
            "another page's origin": ({**as_json, "Origin": "http://127.0.0.1:1"}, 403),
            "a sandboxed page": ({**as_json, "Origin": "null"}, 403),
            "a text/plain body": ({**own, "Content-Type": "text/plain"}, 415),
            "an untyped body": (own, 415),
        }
        for attack, (headers, status) in refused.items():
            got = _request(channel.port, "POST", "/api/encounters", headers, form)
            assert got[0] == status, (attack, got)
        page = f"/chart/{params['mrn']}/encounters"
        for headers in (own | {"Content-Type": "text/plain"}, {"Host": channel.host}):
            assert _request(channel.port, "POST", page, headers, page_form)[0] in (401, 415)
        reads = _request(channel.port, "GET", "/api/surfaces/encounters", {"Host": channel.host})
        assert reads[0] == 401 and "rows" not in reads[1]  # nothing is read without it either
        assert episode.oracle.judge(before).verdict is Verdict.REFUTED  # nothing was written

        saved = _request(channel.port, "POST", "/api/encounters", as_json, form)
        assert saved[0] == 201, saved
        judged: OracleVerdict = episode.oracle.judge(before)
        assert judged.verdict is Verdict.CONFIRMED  # the episode's own client gets in
    with pack.provision(task, 1, pack.trial_params(task, 1)) as episode:
        before = episode.oracle.snapshot()
        stale = _request(channel.port, "POST", "/api/encounters", as_json, form)
        assert stale[0] == 401  # the last episode's secret opens nothing now
        assert episode.oracle.judge(before).verdict is Verdict.REFUTED


def test_the_channel_keeps_its_secret_out_of_its_repr() -> None:
    """A channel in a log line or a traceback names its port, never its secret."""
    channel = Channel(8080, "s3cret-value")
    assert "s3cret" not in repr(channel) and "8080" in repr(channel)
