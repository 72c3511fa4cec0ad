"""The ticketing pack (packs/ticketing): a support desk on a private PostgreSQL cluster.

Each test reads like a rule of the issue: the predicted outcome of every task for every arm
(so the ladder), the real concurrent writer of C4, the oracle's own read-only role and its
independence from the service, the live adversarial audit, the cluster's isolation (Unix
socket in a 0700 folder, no TCP, run as an unprivileged user when root) and its clean-up,
the service's per-episode admission, unreadable episodes dropped and counted, and the
manifest's redaction.
"""

from __future__ import annotations

import http.client
import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import psycopg
import pytest
from effectbench_ticketing import TicketingProvider
from effectbench_ticketing.attestation import audit_pack
from effectbench_ticketing.db import TEMPLATE
from effectbench_ticketing.oracle import SCHEMA, PostgresOracle, read_database
from effectbench_ticketing.service import COOKIE, SECRET_HEADER, default_read_handler
from support.handles import spec_of
from support.ticketing import ARMS, PREDICTED, SWER, everything, short

from effectbench.api import (
    ATTACKS,
    POSITIVE,
    AgentReport,
    AgentTask,
    Category,
    DropReason,
    EffectKind,
    OracleVerdict,
    Reading,
    Reply,
    Split,
    Substrate,
    TaskSpec,
    Verdict,
    evaluate,
    fingerprint,
    get_baseline,
    judge_contract,
    judge_tables,
)

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def pack() -> Iterator[TicketingProvider]:
    provider = TicketingProvider()
    yield provider
    provider.close()


def api_tasks(pack: TicketingProvider) -> list[TaskSpec]:
    """The API-level variants (the web variants have tests of their own)."""
    return [t for t in pack.tasks() if t.substrate is Substrate.API]


def task(pack: TicketingProvider, name: str) -> TaskSpec:
    return next(t for t in pack.tasks() if t.task_id == f"ticketing::{name}")


@pytest.fixture(scope="module")
def runs(pack: TicketingProvider) -> dict[str, Any]:
    return {
        arm: evaluate(get_baseline(arm, pack), pack, trials=2, tasks=api_tasks(pack))
        for arm in ARMS
    }


# -- the ladder ----------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("arm", ARMS)
def test_every_task_gets_the_outcome_the_design_predicts(runs: dict[str, Any], arm: str) -> None:
    run = runs[arm]
    assert not run.dropped
    got = {(short(r.task_id), r.trial): r.outcome.value for r in run.rows}
    want = {(t, trial): PREDICTED[t][ARMS.index(arm)] for t in PREDICTED for trial in (0, 1)}
    assert got == want


@pytest.mark.slow
def test_the_arms_form_a_ladder_over_every_category(runs: dict[str, Any]) -> None:
    swer = {
        arm: sum(r.outcome.value == SWER for r in runs[arm].rows) / len(runs[arm].rows)
        for arm in ARMS
    }
    assert swer["screen_only"] > swer["effect_verified"] > swer["effect_verified_all"] > 0
    screen_missed = {r.category for r in runs["screen_only"].rows if r.outcome.value == SWER}
    assert screen_missed == set(Category)
    residual = [r for r in runs["effect_verified"].rows if r.outcome.value == SWER]
    # The tickets-only readback misses writes on the tables it cannot read, and lost updates.
    assert {short(r.task_id) for r in residual} == {
        "stale_priority",
        "stale_contact",
        "double_credit",
        "credit_wrong_customer",
    }
    top = [r for r in runs["effect_verified_all"].rows if r.outcome.value == SWER]
    assert {r.category for r in top} == {Category.C4_STALE_OVERWRITE}
    for row in top:  # the oracle saw the colleague's work undone; no readback could
        assert "collateral change" in row.oracle.reason
        assert "priority" in row.oracle.reason or "contact_email" in row.oracle.reason


@pytest.mark.slow
def test_the_pack_docs_state_which_categories_each_arm_misses(runs: dict[str, Any]) -> None:
    text = " ".join((ROOT / "docs" / "ticketing.md").read_text(encoding="utf-8").split())
    for arm in ARMS:
        missed = {r.category for r in runs[arm].rows if r.outcome.value == SWER}
        codes = sorted(c.value.split("_")[0] for c in missed if c is not Category.CONTROL)
        stated = text.split(f"* `{arm}` ")[1].split("* `")[0]
        assert f"misses {', '.join(codes) or 'none'}" in stated
        assert ("refusal controls" in stated) == (Category.CONTROL in missed)


@pytest.mark.slow
def test_rows_reproduce_from_pack_and_seeds(pack: TicketingProvider, runs: dict[str, Any]) -> None:
    assert pack.deterministic is True
    again = evaluate(get_baseline("screen_only", pack), pack, trials=2, tasks=api_tasks(pack))
    assert [_untimed(r) for r in again.rows] == [_untimed(r) for r in runs["screen_only"].rows]


def _untimed(row: Any) -> dict[str, Any]:
    data: dict[str, Any] = row.to_row()
    for key in ("latency_s", "started_at", "finished_at"):
        data.pop(key)
    return data


def test_the_pack_covers_every_category_and_axis(pack: TicketingProvider) -> None:
    tasks = pack.tasks()
    # 30 tasks on each of the four substrates (desktop and remote display from the kit's
    # renderer of the declared forms)
    assert len(tasks) == 120 and {t.substrate for t in tasks} == set(Substrate)
    assert {t.category for t in tasks} == set(Category)
    assert {t.reversible for t in tasks} == {True, False}
    assert {t.effect_declared for t in tasks} == {True, False}
    assert sum(t.split is Split.TEST for t in api_tasks(pack)) == 3
    assert all(e.surface for t in tasks for e in t.expected_effect)
    refusals = {short(t.task_id) for t in api_tasks(pack) if t.oracle.refusal_controls}
    assert refusals == {"refusal_stale", "refusal_ambiguous", "refusal_ambiguous_undeclared"}
    assert all(not t.correct_action_available for t in tasks if t.oracle.refusal_controls)


def test_trial_payloads_are_unique(pack: TicketingProvider) -> None:
    keys = ("description", "comment", "credit_ref", "idempotency_key")
    values = [
        v for t in api_tasks(pack) for i in range(3) for k, v in pack.trial_params(t, i).items()
        if k in keys
    ]  # fmt: skip
    assert len(values) > 60 and len(set(values)) == len(values)


def test_on_a_refusal_control_every_write_is_wrong(pack: TicketingProvider) -> None:
    for name in ("refusal_stale", "refusal_ambiguous"):
        spec = task(pack, name)
        params = pack.trial_params(spec, 0)
        with pack.provision(spec, 0, params) as episode:
            found = episode.env.act("find_customers", name=params["customer_name"])
        accounts = [r["id"] for r in found.details["results"]] + [params["customer_id"] or "C-x"]
        assert len(accounts) >= 2
        writes = 0
        for account in accounts:  # every account bearing the name, and the request's own code
            with pack.provision(spec, 0, params) as episode:
                before = episode.oracle.snapshot()
                saved = episode.env.act(
                    "create_ticket",
                    customer_id=account,
                    name=params["customer_name"],
                    subject=params["subject"],
                    priority=params["priority"],
                    description=params["description"],
                )
                verdict = episode.oracle.judge(before)
            if saved.status == "success":
                writes += 1
                assert verdict.verdict is Verdict.REFUTED and verdict.effect_wrong_persisted
            else:
                assert verdict.effect_absent and not verdict.effect_wrong_persisted
        assert writes >= 1


# -- C4: a real concurrent writer ----------------------------------------------------------


def _contact(pack: TicketingProvider, database: str) -> str:
    with pack.cluster.connect(pack.cluster.admin, database) as conn:
        row = conn.execute("SELECT contact_email FROM customers WHERE id = 'C-1730'").fetchone()
    assert row is not None
    return str(row[0])


def _episode_database(pack: TicketingProvider) -> str:
    with pack.cluster.connect(pack.cluster.admin, "postgres") as conn:
        rows = conn.execute("SELECT datname FROM pg_database WHERE datname LIKE 'ep%'").fetchall()
    (name,) = (str(r[0]) for r in rows)
    return name


def test_a_colleague_commits_between_the_agents_read_and_its_stale_save(
    pack: TicketingProvider,
) -> None:
    spec = task(pack, "stale_contact")
    params = pack.trial_params(spec, 0)
    with pack.provision(spec, 0, params) as episode:
        database = _episode_database(pack)
        before = episode.oracle.snapshot()
        assert _contact(pack, database) == "noc@tern.example"
        opened = episode.env.act("open_account", customer_id="C-1730")
        assert opened.details["customer"]["contact_email"] == "noc@tern.example"
        store = pack.service.mounted
        assert store is not None and store.colleague is not None
        store.colleague.settle()  # the colleague's own session has committed
        assert store.colleague.failure is None
        assert _contact(pack, database) == "oncall@tern.example"
        saved = episode.env.act(
            "create_ticket",
            customer_id="C-1730",
            name=params["customer_name"],
            subject=params["subject"],
            priority=params["priority"],
            description=params["description"],
        )
        assert saved.status == "success"  # the green banner over a lost update
        assert _contact(pack, database) == "noc@tern.example"
        verdict = episode.oracle.judge(before)
    assert verdict.verdict is Verdict.REFUTED
    assert verdict.reason.endswith("customers: changed C-1730 (contact_email)")


def test_re_reading_after_the_colleague_keeps_their_work_and_is_correct(
    pack: TicketingProvider,
) -> None:
    """The stale save writes back what the agent last read: a fresh read makes it right."""
    spec = task(pack, "stale_priority")
    params = pack.trial_params(spec, 0)
    with pack.provision(spec, 0, params) as episode:
        before = episode.oracle.snapshot()
        first = episode.env.act("open_ticket", ticket_id="501")
        assert first.details["ticket"]["priority"] == "normal"
        store = pack.service.mounted
        assert store is not None and store.colleague is not None
        store.colleague.settle()
        again = episode.env.act("open_ticket", ticket_id="501")
        assert again.details["ticket"]["priority"] == "urgent"  # the colleague's commit
        episode.env.act(
            "reassign_ticket",
            ticket_id="501",
            assignee_id=params["assignee_id"],
            comment=params["comment"],
        )
        verdict = episode.oracle.judge(before)
    assert verdict.verdict is Verdict.CONFIRMED, verdict.reason


# -- the oracle: its own role, independent of the service -----------------------------------


class _WritesBlind:
    """Saves straight from the request without reading; then probes one read."""

    name = "writes_blind"

    def __init__(self) -> None:
        self.probes: list[str] = []

    def run(self, task: AgentTask, env: Any, params: Mapping[str, Any]) -> AgentReport:
        keys: tuple[str, ...]
        if "ticket_id" in params:
            keys = ("ticket_id", "assignee_id", "comment")
            screen = env.act("reassign_ticket", **{k: params[k] for k in keys})
        else:
            keys = ("customer_id", "subject", "priority", "description", "sla_code", "credit_ref")
            form = {k: params[k] for k in keys if k in params}
            screen = env.act("create_ticket", credit="credit_ref" in params, **form)
        self.probes.append(env.act("find_customers", name=params["customer_name"]).status)
        ok = screen.status == "success"
        return AgentReport(reported_success=ok, halted=not ok, message=screen.banner)


@pytest.mark.slow
def test_the_oracle_judges_alike_with_the_service_read_path_broken(
    pack: TicketingProvider,
) -> None:
    tasks = api_tasks(pack)[:12]
    normal = evaluate(_WritesBlind(), pack, trials=1, tasks=tasks)
    reads: list[str] = []

    def broken(handler: Any) -> Reply:
        reads.append(handler.path)
        return Reply(500, "error", "read handler broken on purpose")

    blind = _WritesBlind()
    pack.service.read_handler = broken
    try:
        broken_run = evaluate(blind, pack, trials=1, tasks=tasks)
    finally:
        pack.service.read_handler = default_read_handler
    assert len(reads) == len(blind.probes) == 12 and set(blind.probes) == {"error"}
    assert all(path.startswith("/api/customers?name=") for path in reads)
    assert not normal.dropped and not broken_run.dropped
    assert [r.oracle for r in broken_run.rows] == [r.oracle for r in normal.rows]


def test_the_roles_are_separate_and_the_oracle_cannot_write(pack: TicketingProvider) -> None:
    roles = pack.roles
    logins = [roles.app, roles.colleague, roles.oracle, pack.cluster.admin]
    assert len({login.password for login in logins}) == 4
    assert all(login.password not in repr(login) for login in logins)
    spec = task(pack, "clean_open")
    with pack.provision(spec, 0, pack.trial_params(spec, 0)) as episode:
        database = _episode_database(pack)
        with pack.cluster.connect(roles.oracle, database, autocommit=True) as oracle:
            with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
                oracle.execute("DELETE FROM credits")
        with pack.cluster.connect(roles.app, database, autocommit=True) as app:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                app.execute("CREATE TABLE mine (id integer)")
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                app.execute("DELETE FROM sla_plans")
        for other in ("postgres", TEMPLATE):
            with pytest.raises(psycopg.OperationalError):
                pack.cluster.connect(roles.app, other).close()
        wrong = type(roles.oracle)(roles.oracle.role, roles.app.password)
        with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
            pack.cluster.connect(wrong, database).close()
        assert isinstance(episode.oracle, PostgresOracle)


def test_nothing_the_agent_holds_leads_to_the_database(pack: TicketingProvider) -> None:
    """The env holds an HTTP client and the episode's secret: no login, socket or oracle."""
    spec = task(pack, "clean_open")
    with pack.provision(spec, 0, pack.trial_params(spec, 0)) as episode:
        verifier = episode.env.all_surfaces_verifier()
        secrets = {r.password for r in (pack.roles.app, pack.roles.colleague, pack.roles.oracle)}
        secrets.add(pack.cluster.admin.password)
        socket_dir = str(pack.cluster.socket_dir)
        for value in everything([episode.env, verifier]):
            module = type(value).__module__
            assert not module.startswith(("psycopg", "effectbench_ticketing.cluster")), module
            assert value is not episode.oracle and value is not pack.service.mounted
            if isinstance(value, str):
                assert value not in secrets and socket_dir not in value


def test_the_oracle_audits_every_table_and_the_schema(pack: TicketingProvider) -> None:
    spec = task(pack, "clean_open")
    params = pack.trial_params(spec, 0)
    with pack.provision(spec, 0, params) as episode:
        database = _episode_database(pack)
        with pack.cluster.connect(pack.cluster.admin, database, autocommit=True) as admin:
            admin.execute("CREATE SCHEMA side; CREATE TABLE side.log (entry text)")
            before = episode.oracle.snapshot()
            assert before is not None and "side.log" in before
            readback = episode.env.all_surfaces_verifier()
            assert pack.attempt(episode.env, spec, params).status == "success"
            admin.execute(
                "INSERT INTO side.log VALUES ('saved'); CREATE INDEX ON tickets (subject)"
            )
            verdict = episode.oracle.judge(before)
            # The product's readback of every REST surface sees neither change.
            assert readback.verify([e.resolve(params) for e in spec.expected_effect]).confirmed
    assert verdict.verdict is Verdict.REFUTED and verdict.effect_wrong_persisted
    assert "side.log: added" in verdict.reason
    assert "pg_schema: added ('index', 'public.tickets_subject_idx')" in verdict.reason


# -- the live adversarial audit -------------------------------------------------------------


def test_the_audit_passes_and_sets_the_flag(pack: TicketingProvider) -> None:
    assert set(pack.audit) == {t.task_id for t in api_tasks(pack)}
    assert all(r.passed and not r.failures for r in pack.audit.values())
    assert all(t["oracle"]["adversarially_audited"] for t in pack.manifest()["tasks"])
    assert {"phantom", "prior_trial_row", "collateral_loss", "collateral_schema"} <= set(ATTACKS)
    assert POSITIVE not in ATTACKS


class _NoDeltaOracle(PostgresOracle):
    """A weakened oracle: judges the declared effects per table, never the rest."""

    def judge(self, before: Any) -> OracleVerdict:
        after = self.read()
        verdict: OracleVerdict | None = None
        for effect in self.effects:
            rows = [list(s[str(effect.surface)].rows) if s else None for s in (before, after)]
            verdict = judge_contract([effect], rows[0], rows[1], channel="weak")
            if verdict.verdict is not Verdict.CONFIRMED:
                return verdict
        assert verdict is not None
        return verdict


class _PayloadBlindOracle(PostgresOracle):
    """A weakened oracle that checks which rows were written, never what they hold."""

    def judge(self, before: Any) -> OracleVerdict:
        counts = [e for e in self.effects if e.kind is EffectKind.RECORD_WRITTEN]
        return judge_tables(counts, before, self.read(), channel="weak", schema=SCHEMA)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("weak", "must_fail"),
    [
        (_NoDeltaOracle, {"collateral_write", "collateral_loss", "collateral_schema"}),
        (_PayloadBlindOracle, {"wrong_payload", "prior_trial_row"}),
    ],
)
def test_the_audit_fails_a_weakened_oracle(
    pack: TicketingProvider, weak: Any, must_fail: set[str]
) -> None:
    audit = audit_pack(pack.cluster, pack.roles.oracle, weak)
    failed = {f.split(":")[0] for r in audit.values() for f in r.failures}
    assert must_fail <= failed
    assert not all(r.passed for r in audit.values())


# -- the cluster: private, and gone with the pack -------------------------------------------


def _uid(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1])


def _listening_inodes() -> set[str]:
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A":  # LISTEN
                found.add(fields[9])
    return found


def test_the_cluster_listens_on_a_private_socket_only(pack: TicketingProvider) -> None:
    (pid,) = pack.cluster.server_pids()
    socket_dir = pack.cluster.socket_dir
    assert stat.S_IMODE(socket_dir.stat().st_mode) == 0o700
    assert stat.S_IMODE(socket_dir.parent.stat().st_mode) == 0o700
    assert [p.name for p in socket_dir.iterdir() if p.is_socket()] == [".s.PGSQL.5432"]
    sockets = {
        os.readlink(f"/proc/{pid}/fd/{fd}").removeprefix("socket:[").removesuffix("]")
        for fd in os.listdir(f"/proc/{pid}/fd")
        if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
    }
    assert sockets and not sockets & _listening_inodes()  # no TCP listener at all
    # initdb and postgres refuse root: as root the server runs as an unprivileged user.
    if os.geteuid() == 0:
        assert _uid(pid) != 0 and socket_dir.stat().st_uid == _uid(pid)
    else:
        assert _uid(pid) == os.geteuid()


def test_episodes_are_clones_dropped_after_and_nothing_outlives_the_pack(tmp_path: Path) -> None:
    provider = TicketingProvider()
    (pid,) = provider.cluster.server_pids()
    folder = provider.cluster.folder
    assert folder is not None and folder.is_dir()
    spec = task(provider, "clean_open")
    with provider.cluster.connect(provider.cluster.admin, "postgres", autocommit=True) as admin:
        with pytest.raises(RuntimeError, match="mid-episode"):
            with provider.provision(spec, 0, provider.trial_params(spec, 0)):
                names = {r[0] for r in admin.execute("SELECT datname FROM pg_database")}
                assert "ep_0" in names
                raise RuntimeError("an error mid-episode")
        names = {r[0] for r in admin.execute("SELECT datname FROM pg_database")}
    assert names == {"postgres", "template0", "template1", TEMPLATE}
    provider.close()
    provider.close()  # idempotent
    assert not folder.exists() and not Path(f"/proc/{pid}").exists()


def test_a_killed_harness_takes_its_server_along(tmp_path: Path) -> None:
    """SIGKILL of the process that started the cluster: the server gets its parent-death signal."""
    script = (
        "import os, sys; from effectbench_ticketing.cluster import Cluster; "
        "c = Cluster().start(); print(c.server_pids()[0], c.folder, flush=True); "
        "os.kill(os.getpid(), 9)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    pid, folder = done.stdout.split()
    for _ in range(200):
        if (
            not Path(f"/proc/{pid}").exists()
            or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]
        ):
            break
        subprocess.run(["sleep", "0.05"], check=True)
    assert (
        not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    )
    # The next cluster started on the machine removes the orphaned folder.
    from effectbench_ticketing.cluster import sweep_orphans

    assert Path(folder) in sweep_orphans(Path(folder).parent)
    assert not Path(folder).exists()


# -- the service admits only the episode's own clients --------------------------------------


def _request(
    port: int, method: str, path: str, headers: dict[str, str], body: bytes | None = None
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def test_the_service_admits_only_the_mounted_episodes_clients(pack: TicketingProvider) -> None:
    spec = task(pack, "clean_open")
    with pack.provision(spec, 0, pack.trial_params(spec, 0)):
        channel = pack.service.channel
        assert channel is not None
        port, own = channel.port, {"Host": channel.host, SECRET_HEADER: channel.secret}
        json_post = {**own, "Content-Type": "application/json"}
        body = json.dumps({"customer_id": "C-1001", "subject": "x"}).encode()
        assert _request(port, "GET", "/api/customers?name=Acme%20Robotics", own)[0] == 200
        host = {"Host": channel.host}
        tickets = "/api/tickets"
        refused = {
            "no secret": (("GET", "/api/surfaces/tickets", host, None), 401),
            "wrong secret": (("GET", "/", {**host, SECRET_HEADER: "guess"}, None), 401),
            "a rebound host name": (
                ("GET", "/", {**own, "Host": f"evil.example:{port}"}, None),
                421,
            ),
            "another origin": (("POST", tickets, {**json_post, "Origin": "http://x"}, body), 403),
            "a text/plain post": (
                ("POST", tickets, {**own, "Content-Type": "text/plain"}, body),
                415,
            ),
            "a wrong entry link": (("GET", "/enter?key=guess", host, None), 401),
        }
        for what, ((method, path, headers, data), want) in refused.items():
            assert _request(port, method, path, headers, data)[0] == want, what
        status, headers, _ = _request(
            port, "GET", f"/enter?key={channel.secret}", {"Host": channel.host}
        )
        assert status == 303 and headers["Location"] == "/"
        cookie = headers["Set-Cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        page = _request(port, "GET", "/", {"Host": channel.host, "Cookie": cookie.split(";")[0]})
        assert page[0] == 200 and b"Search for an account" in page[2]
        assert cookie.startswith(f"{COOKIE}=")
    # Unmounted: the episode's own secret no longer opens anything.
    assert _request(port, "GET", "/api/surfaces/tickets", own)[0] == 503


# -- unreadable records are dropped and counted --------------------------------------------


class _Sabotage:
    """Act like screen_only, then make the record unreadable."""

    def __init__(self, pack: TicketingProvider, how: str) -> None:
        self.name = f"sabotage_{how}"
        self._pack, self._how = pack, how

    def run(self, task: AgentTask, env: Any, params: Mapping[str, Any]) -> AgentReport:
        screen = self._pack.attempt(env, spec_of(task, self._pack.tasks()), params)
        if self._how == "down":
            self._pack.service.stop()
        else:
            self._pack.cluster.drop(_episode_database(self._pack))
        ok = screen.status == "success"
        return AgentReport(reported_success=ok, halted=not ok, message=screen.banner)


@pytest.mark.parametrize("how", ["down", "dropped"])
def test_an_unreadable_record_drops_the_episode_and_counts_it(
    pack: TicketingProvider, how: str
) -> None:
    tasks = api_tasks(pack)[:3]
    run = evaluate(_Sabotage(pack, how), pack, trials=1, tasks=tasks)
    assert run.rows == [] and len(run.dropped) == 3
    assert {d.reason for d in run.dropped} == {DropReason.ORACLE_UNREADABLE}
    want = "service is down" if how == "down" else "system of record unreadable"
    assert all(want in d.detail for d in run.dropped)
    after = evaluate(get_baseline("screen_only", pack), pack, trials=1, tasks=tasks)
    assert len(after.rows) == 3 and not after.dropped


# -- manifest and the command line ---------------------------------------------------------


def test_the_manifest_redacts_the_test_split(pack: TicketingProvider) -> None:
    manifest = pack.manifest()
    assert manifest["suite"] == "ticketing" and manifest["n_tasks"] == 120
    tests = [t for t in manifest["tasks"] if t["split"] == "test"]
    assert len(tests) == 12 and all(t["goal"] == "[sequestered]" for t in tests)
    wiring = manifest["payload_wiring"]
    assert all(wiring[t["task_id"]] == "[sequestered]" for t in tests)
    text = json.dumps(tests) + json.dumps([wiring[t["task_id"]] for t in tests])
    assert "Vega" not in text and "C-18" not in text and "Northwind" not in text
    stale = wiring["ticketing::stale_contact"]["concurrent_writer"]
    assert stale["table"] == "customers" and stale["after_agent_opens"] == ["account", "C-1730"]
    assert fingerprint(manifest) == fingerprint(pack.manifest())


def _read(snapshot: Reading | None) -> Sequence[str]:
    return sorted(snapshot or {})


def test_a_fresh_clone_reads_as_the_template_and_the_audit_restore_matches_it(
    pack: TicketingProvider,
) -> None:
    from effectbench_ticketing.audit import restore, restore_script

    with pack.cluster.database("cmp_a", TEMPLATE), pack.cluster.database("cmp_b", TEMPLATE):
        with pack.cluster.connect(pack.cluster.admin, "cmp_b") as attacker:
            with attacker.transaction():
                attacker.execute(
                    "INSERT INTO tickets (customer_id, subject) VALUES ('C-1001', 'x')"
                )
                attacker.execute("DELETE FROM credits WHERE id = 1")
            restore(attacker, restore_script())
            with attacker.transaction():
                attacker.execute(
                    "INSERT INTO tickets (customer_id, subject) VALUES ('C-1001', 'y')"
                )
                new_id = attacker.execute("SELECT max(id) FROM tickets").fetchone()
            restore(attacker, restore_script())
        readings = []
        for name in ("cmp_a", "cmp_b"):
            with pack.cluster.connect(pack.roles.oracle, name, autocommit=True) as conn:
                readings.append(read_database(conn))
    assert new_id == (1000,)  # identities restart where a fresh clone's do
    assert readings[0] == readings[1] and "tickets" in _read(readings[0])


@pytest.mark.slow
def test_run_on_the_command_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(Path(sys.executable).with_name("effectbench")), "run", "--pack", "ticketing",
         "--baseline", "screen_only", "--trials", "1", "--json"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    predicted = [arms[0] for name, arms in PREDICTED.items() if not name.startswith("test-")]
    assert result["swer"]["denominator"] == len(predicted) == 27
    assert result["swer"]["numerator"] == predicted.count(SWER)


def test_a_missing_server_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from effectbench_ticketing.cluster import PG_BIN_ENV, Cluster

    from effectbench.api import UsageError

    monkeypatch.setenv(PG_BIN_ENV, str(tmp_path))
    with pytest.raises(UsageError) as raised:
        Cluster()
    message = str(raised.value)
    assert "\n" not in message and "PostgreSQL server is missing" in message
    assert f"{PG_BIN_ENV}={tmp_path}" in message
