"""Each episode's channels are private to it: nothing an episode starts serves anyone else.

The clinic's record service listens on 127.0.0.1, where every local user and
every web page a local browser shows can reach it. Each mounted episode draws a
secret that its own clients carry; the service also checks ``Host`` (a rebound
DNS name), ``Origin`` (another page) and the body's type (a no-preflight
``text/plain`` post). A desktop or remote-display episode's X server wants the
session's cookie, its RFB server and buses listen in a folder of mode 0700.

The attacks run as a second local user would make them: in a process of uid
65534 (:mod:`support.second_user`; the suite runs as root in CI), or from a page in
real Chromium. Every refused attack leaves the record as it was: the oracle,
which reads the database file and never the service, says so.
"""

from __future__ import annotations

import html
import http.client
import http.server
import json
import socket
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import psutil
import pytest
from support.second_user import attack

from effectbench.packs.clinic import ClinicProvider
from effectbench.packs.clinic.service import SECRET_HEADER, Channel
from effectbench.packs.clinic.web import layout as web_layout
from effectbench.schema import OracleVerdict, Substrate, TaskSpec, Verdict
from effectbench.screens.browser import BrowserSession, shared_browser

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
    channel = Channel(8080, "s3cret-value", SECRET_HEADER)
    assert "s3cret" not in repr(channel) and "8080" in repr(channel)


# -- as a second local user would (uid 65534) -------------------------------------------------


def _episode_listeners() -> dict[str, dict[str, list[Any]]]:
    """Every socket a process below this one listens on: name -> {"unix": [...], "tcp": [...]}."""
    found: dict[str, dict[str, list[Any]]] = {}
    for proc in psutil.Process().children(recursive=True):
        try:
            name, conns = proc.name(), proc.net_connections(kind="all")
        except psutil.Error:
            continue
        entry = found.setdefault(name, {"unix": [], "tcp": [], "cmdline": proc.cmdline()})
        for conn in conns:
            if conn.family is socket.AF_UNIX and conn.laddr and conn.laddr not in entry["unix"]:
                entry["unix"].append(conn.laddr)  # listening, or accepted there
            elif conn.status == psutil.CONN_LISTEN:
                entry["tcp"].append((conn.laddr.ip, conn.laddr.port))
    return found


def test_a_second_local_user_cannot_write_or_read_the_record(pack: ClinicProvider) -> None:
    """Attacks the record service as uid 65534: a JSON save, a guessed secret, a form post
    and a chart read, each naming the service as Host with the right body type."""
    task = _task(pack)
    params = pack.trial_params(task, 0)
    with pack.provision(task, 0, params) as episode:
        before = episode.oracle.snapshot()
        port = pack.service.port
        host = {"Host": f"127.0.0.1:{port}"}
        as_json = {**host, "Content-Type": "application/json"}
        page_form = "&".join(f"{k}={v}" for k, v in _encounter(params).items()).replace(" ", "+")

        def request(method: str, path: str, headers: dict[str, str], body: str = "") -> Any:
            return {"attack": "http", "port": port, "method": method, "path": path}, headers, body

        attacks = [
            request("POST", "/api/encounters", as_json, json.dumps(_encounter(params))),
            request("POST", "/api/encounters", {**as_json, SECRET_HEADER: "guess"}, "{}"),
            request(
                "POST",
                f"/chart/{params['mrn']}/encounters",
                {**host, "Content-Type": "application/x-www-form-urlencoded"},
                page_form,
            ),
            request("GET", f"/api/patients/{params['mrn']}/chart", host),
        ]
        results = attack(*({**a, "headers": h, "body": b} for a, h, b in attacks))
        assert [r.get("status") for r in results] == [401] * 4, results
        verdict = episode.oracle.judge(before)
        assert verdict.verdict is Verdict.REFUTED and verdict.effect_absent  # nothing written


@pytest.mark.desktop
def test_a_second_local_user_cannot_list_read_or_reach_an_episodes_display_or_buses(
    pack: ClinicProvider,
) -> None:
    """Attacks a desktop episode as uid 65534: its X display without a cookie (on the socket
    and the abstract socket), its cookie file, its session and accessibility buses, and the
    accessibility reader's socket."""
    task = _task(pack, Substrate.DESKTOP)
    with pack.provision(task, 0, pack.trial_params(task, 0)) as episode:
        before = episode.oracle.snapshot()
        listeners = _episode_listeners()
        [display] = {p.rsplit("X", 1)[1] for p in listeners["Xvfb"]["unix"]}
        attacks: list[dict[str, Any]] = [{"attack": "x11", "display": int(display)}]
        args = listeners["Xvfb"]["cmdline"]
        if "-auth" in args:  # the cookie's path is on the command line: the cookie is not
            attacks.append({"attack": "read", "path": args[args.index("-auth") + 1]})
        buses = [p for p in listeners["dbus-daemon"]["unix"] if not p.startswith("@")]
        assert len(buses) == 2  # the session bus and the accessibility bus
        attacks += [{"attack": "dbus", "path": path} for path in buses]
        readers = [p for n, e in listeners.items() if n.startswith("python") for p in e["unix"]]
        attacks += [{"attack": "dbus", "path": path} for path in readers]
        x11, *rest = attack(*attacks)
        for way in ("socket", "abstract"):
            assert not x11[way]["admitted"], x11  # no window list, no pixel
            assert "Authorization required" in x11[way]["reason"]
        assert len(rest) >= 4 and not any(r.get("read") or r.get("admitted") for r in rest), rest
        assert episode.oracle.judge(before).verdict is Verdict.REFUTED


@pytest.mark.desktop
def test_a_second_local_user_cannot_find_the_episodes_secret(pack: ClinicProvider) -> None:
    """Looks, as uid 65534, for a desktop episode's secret in every process's command line
    and environment: the app holds it, in an environment only its own user reads."""
    task = _task(pack, Substrate.DESKTOP)
    with pack.provision(task, 0, pack.trial_params(task, 0)):
        channel = pack.service.channel
        assert channel is not None
        [found] = attack({"attack": "find", "needle": channel.secret})
        assert found == {"found": []}
        holders = [pid for pid in psutil.pids() if _holds(pid, channel.secret)]
        assert len(holders) == 1  # this user (the harness) sees it, in the app's environment


def _holds(pid: int, secret: str) -> bool:
    try:
        return secret.encode() in Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False


@pytest.mark.desktop
def test_a_second_local_user_cannot_type_into_an_episode_over_rfb(pack: ClinicProvider) -> None:
    """Attacks a remote-display episode as uid 65534: an RFB session on every socket and port
    its Xvnc listens on, then its X display without a cookie."""
    task = _task(pack, Substrate.REMOTE_DISPLAY)
    with pack.provision(task, 0, pack.trial_params(task, 0)):
        xvnc = _episode_listeners()["Xvnc"]
        x_sockets = [p for p in xvnc["unix"] if ".X11-unix" in p]
        [display] = {p.rsplit("X", 1)[1] for p in x_sockets}
        rfb = [p for p in xvnc["unix"] if p not in x_sockets] + [port for _, port in xvnc["tcp"]]
        assert rfb  # the episode's own RFB connection came through one of them
        *sessions, x11 = attack(
            *({"attack": "rfb", "address": a, "text": "typed by another user"} for a in rfb),
            {"attack": "x11", "display": int(display)},
        )
        assert not any(s["typed"] for s in sessions), sessions
        assert xvnc["tcp"] == []  # no RFB (or X) port for anyone on this machine to try
        assert not x11["socket"]["admitted"] and not x11["abstract"]["admitted"], x11


HOSTILE_PAGE = """<!doctype html><title>hostile</title>
<form id="f" method="post" action="{service}/chart/{mrn}/encounters" target="sink">
{inputs}</form><iframe name="sink"></iframe>
<script>
const sent = fetch("{service}/api/encounters", {{
  method: "POST", mode: "no-cors", headers: {{"Content-Type": "text/plain"}}, body: {body}
}}).catch(() => null);
const posted = new Promise((done) => {{ document.querySelector("iframe").onload = done; }});
document.getElementById("f").submit();
Promise.all([sent, posted]).then(() => {{ document.title = "done"; }});
</script>"""


@pytest.fixture
def hostile_site(pack: ClinicProvider) -> Iterator[Callable[[Mapping[str, Any]], str]]:
    """A web server on 127.0.0.1 (another port: another origin) serving an attacking page."""
    pages: dict[str, bytes] = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            page = pages.get(self.path, b"")
            self.send_response(200 if page else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def serve(params: Mapping[str, Any]) -> str:
        form = _encounter(params)
        inputs = "".join(f'<input name="{k}" value="{html.escape(v)}">' for k, v in form.items())
        page = HOSTILE_PAGE.format(
            service=f"http://127.0.0.1:{pack.service.port}",
            mrn=params["mrn"],
            inputs=inputs,
            body=json.dumps(json.dumps(form)),
        )
        path = f"/attack-{len(pages)}.html"
        pages[path] = page.encode()
        return f"http://127.0.0.1:{server.server_address[1]}{path}"

    try:
        yield serve
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.mark.web
def test_a_web_pages_no_preflight_text_plain_post_cannot_write_the_record(
    pack: ClinicProvider, hostile_site: Callable[[Mapping[str, Any]], str]
) -> None:
    """Attacks the record service from a page on another origin in real Chromium: a
    no-cors ``text/plain`` fetch of the JSON form and a cross-site form post, from a
    context without the secret and from one that sends it (as the episode's own does)."""
    task = _task(pack, Substrate.WEB)
    params = pack.trial_params(task, 0)
    with pack.provision(task, 0, params) as episode:
        before = episode.oracle.snapshot()
        url = hostile_site(params)

        def visit(session: BrowserSession) -> None:
            try:
                done = "document.title === 'done'"  # the page's attacks have all answered
                session.call(lambda page: page.wait_for_function(done, timeout=15_000), 20)
            finally:
                session.close()
            verdict = episode.oracle.judge(before)
            assert verdict.verdict is Verdict.REFUTED and verdict.effect_absent

        visit(shared_browser().open(web_layout.VIEWPORT, url))  # any browser on this machine
        channel = pack.service.channel
        assert channel is not None
        visit(shared_browser().open(web_layout.VIEWPORT, url, channel.headers()))
