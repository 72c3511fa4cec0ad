"""--executor dask on a loopback cluster: serial rows, lost workers, refusals, a lost scheduler.

The cluster is a ``LocalCluster`` bound to 127.0.0.1 (its two workers in their
own processes), built with ``allowed-failures`` 0 and one task per worker
thread, so that the executor's own re-queue and drop of lost episodes are what
the tests see (the scheduler's own re-queue comes first with its defaults). The lost-scheduler
test starts the deployment docs/long-runs.md documents (``dask scheduler`` and
``dask worker`` processes). Nothing binds anything but loopback; every process
is stopped by the test that started it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import dask
import distributed
import psutil
import pytest
from distributed import Client, LocalCluster
from distributed.comm.core import connect
from scale_support.agents import (
    BROKEN_TASK,
    RAISING_TASK,
    BrokenProvisioning,
    KillsItsWorker,
    RaisesOnOneTask,
    SlowHalt,
)
from scale_support.tls import certificates
from support.journal import untimed, untimed_results

import effectbench
from effectbench import SPEC_VERSION
from effectbench.baselines import get_baseline
from effectbench.cli import build_parser, main
from effectbench.errors import UsageError
from effectbench.packs import get_pack
from effectbench.run.executors import execute
from effectbench.run.executors.dask_cluster import DaskExecutor
from effectbench.run.executors.worker import Outcome
from effectbench.run.runner import RunPlan, RunResult, evaluate
from effectbench.schema import DropReason
from effectbench.variants import choose, tasks_on

pytestmark = pytest.mark.slow

TESTS = Path(__file__).resolve().parent
DASK = str(Path(sys.executable).with_name("dask"))
LOOPBACK = "127.0.0.1"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """Scheduler here, two single-thread workers in their own processes, all on loopback."""
    strict = {
        "distributed.scheduler.allowed-failures": 0,  # a lost worker's task fails at once
        "distributed.scheduler.worker-saturation": 1.0,  # only the running task is on a worker
    }
    with dask.config.set(strict):
        local = LocalCluster(  # type: ignore[no-untyped-call]
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host=LOOPBACK,
            dashboard_address=f"{LOOPBACK}:0",
            worker_dashboard_address=f"{LOOPBACK}:0",
            local_directory=str(tmp_path_factory.mktemp("dask")),
            silence_logs=logging.CRITICAL,
        )
    try:
        yield local
    finally:
        local.close(timeout=30)


@pytest.fixture
def client(cluster: LocalCluster) -> Iterator[Client]:
    """A client of the cluster; the test starts with both workers present.

    Tests that kill workers come last: the nanny restarts a killed worker.
    """
    with Client(cluster, set_as_default=False) as c:  # type: ignore[no-untyped-call]
        c.wait_for_workers(2, timeout=120)
        yield c


def _same(a: RunResult, b: RunResult) -> None:
    assert untimed(a.rows) == untimed(b.rows)
    assert a.dropped == b.dropped


def test_the_cluster_binds_loopback_only(client: Client) -> None:
    pids = [os.getpid(), *client.run(os.getpid).values()]
    listening = [
        conn.laddr
        for pid in pids
        for conn in psutil.Process(pid).net_connections(kind="inet")
        if conn.status == psutil.CONN_LISTEN
    ]
    assert listening and all(addr.ip == LOOPBACK for addr in listening)


@pytest.mark.parametrize(
    ("pack_name", "baseline"), [("mockmed", "screen_only"), ("clinic", "effect_verified_all")]
)
def test_rows_on_dask_equal_a_serial_run(
    cluster: LocalCluster, client: Client, pack_name: str, baseline: str
) -> None:
    pack = get_pack(pack_name)
    sut = get_baseline(baseline, pack)
    tasks = tasks_on(pack, choose(pack, None))  # the pack's default substrate (api for clinic)
    serial = evaluate(sut, pack, trials=2, tasks=tasks)
    plan = RunPlan.build(sut, pack, trials=2, tasks=tasks)
    distributed = execute(plan, DaskExecutor(cluster.scheduler_address))
    assert len(distributed.rows) == len(plan.cells()) and not distributed.dropped
    _same(distributed, serial)


def test_harness_failures_are_infrastructure_drops_and_agent_exceptions_agent_errors(
    cluster: LocalCluster, client: Client
) -> None:
    pack = BrokenProvisioning()
    sut = RaisesOnOneTask()
    run = execute(RunPlan.build(sut, pack, trials=2), DaskExecutor(cluster.scheduler_address))
    assert sorted((d.task_id, d.reason.value) for d in run.dropped) == sorted(
        [(BROKEN_TASK, "infrastructure")] * 2 + [(RAISING_TASK, "agent_error")] * 2
    )
    assert not [r for r in run.rows if r.task_id in (BROKEN_TASK, RAISING_TASK)]
    _same(run, evaluate(sut, pack, trials=2))


def _extra_worker(
    address: str, env: dict[str, str], cwd: Path, *extra: str
) -> subprocess.Popen[bytes]:
    """``dask worker ADDRESS`` on loopback (as docs/long-runs.md starts one), with ``env`` added."""
    return subprocess.Popen(
        [DASK, "worker", address, "--host", LOOPBACK, "--dashboard-address", f"{LOOPBACK}:0"]
        + ["--nthreads", "1", "--no-nanny", "--local-directory", str(cwd), *extra],
        env={**os.environ, **env},
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


HIDE_EFFECTBENCH = """
import sys

sys.modules["effectbench"] = None  # this worker has no effectbench to import
"""


def _refusal(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    return err


def test_workers_with_other_code_or_without_the_project_are_refused_in_one_line(
    cluster: LocalCluster,
    client: Client,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    other = tmp_path / "other" / "effectbench"
    shutil.copytree(
        Path(effectbench.__file__).parent, other, ignore=shutil.ignore_patterns("__pycache__")
    )
    with (other / "runner.py").open("a") as f:
        f.write("\n# another version of the runner\n")
    (tmp_path / "hide_effectbench.py").write_text(HIDE_EFFECTBENCH)
    address = cluster.scheduler_address
    changed = _extra_worker(address, {"PYTHONPATH": f"{other.parent}{os.pathsep}{TESTS}"}, tmp_path)
    bare = _extra_worker(
        address, {"PYTHONPATH": str(tmp_path)}, tmp_path, "--preload", "hide_effectbench"
    )
    expected = {
        changed.pid: (
            f"runs effectbench {SPEC_VERSION} with code sha256:",
            "rows from other code must not mix",
        ),
        bare.pid: ("cannot run effectbench (ModuleNotFoundError", "install this project there"),
    }
    argv = ["run", "--pack", "mockmed", "--baseline", "screen_only", "--trials", "1"]
    argv += ["--executor", "dask", "--scheduler", address, "--progress", "off"]
    try:
        client.wait_for_workers(4, timeout=120)
        pids = client.run(os.getpid)
        for left in (4, 3):
            _wait_for(client, left)
            err = _refusal(argv, capsys)
            named = err.split("Dask worker ", 1)[1].split(" ", 1)[0]
            proc = changed if pids[named] == changed.pid else bare
            assert all(part in err for part in expected.pop(proc.pid)), err
            _stop(proc)
        assert not expected  # each of the two was refused in turn
    finally:
        _stop(changed)
        _stop(bare)
    _wait_for(client, 2)


def _wait_for(client: Client, workers: int) -> None:
    deadline = time.monotonic() + 60
    while len(client.scheduler_info()["workers"]) != workers:
        assert time.monotonic() < deadline, "a stopped worker did not leave the scheduler"
        time.sleep(0.1)


class _KillAWorker:
    """A progress hook that SIGKILLs one worker process once ``after`` rows have arrived."""

    def __init__(self, pid: int, after: int) -> None:
        self.pid, self.after, self.seen = pid, after, 0

    def start(self, total: int, finished: Sequence[Outcome]) -> None:
        pass

    def update(self, outcome: Outcome) -> None:
        self.seen += 1
        if self.seen == self.after:
            os.kill(self.pid, signal.SIGKILL)

    def close(self) -> None:
        pass


def test_a_worker_killed_mid_run_loses_no_episode(cluster: LocalCluster, client: Client) -> None:
    pack = get_pack("mockmed")
    sut = SlowHalt(0.03)
    plan = RunPlan.build(sut, pack, trials=4)
    victim = next(iter(client.run(os.getpid).values()))
    run = execute(plan, DaskExecutor(cluster.scheduler_address), progress=_KillAWorker(victim, 5))
    assert not psutil.pid_exists(victim) or psutil.Process(victim).status() == psutil.STATUS_ZOMBIE
    assert len(run.rows) == 36 and not run.dropped
    _same(run, evaluate(sut, pack, trials=4))


def test_an_episode_that_keeps_losing_its_worker_becomes_an_infrastructure_drop(
    cluster: LocalCluster, client: Client
) -> None:
    pack = get_pack("mockmed")
    run = execute(
        RunPlan.build(KillsItsWorker("mockmed::ok"), pack, trials=1),
        DaskExecutor(cluster.scheduler_address),
    )
    drops = {(d.task_id, d.trial): d for d in run.dropped}
    drop = drops.pop(("mockmed::ok", 0))
    assert drop.reason is DropReason.INFRASTRUCTURE
    assert "lost 2 times" in drop.detail  # the first loss was re-queued once (INFRA_RETRIES)
    # Any other episode the scheduler had placed on a worker that died with it is re-queued
    # too; on a loaded machine one can share both deaths and be dropped the same way. What
    # must hold: no episode is lost without a drop, and every drop is a lost worker.
    assert all(
        d.reason is DropReason.INFRASTRUCTURE and "was lost 2 times" in d.detail
        for d in drops.values()
    )
    assert len(run.rows) + len(run.dropped) == 9
    assert {(r.task_id, r.trial) for r in run.rows}.isdisjoint(drops)


def test_an_unreachable_scheduler_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    argv = ["run", "--pack", "mockmed", "--baseline", "screen_only", "--trials", "1"]
    argv += ["--executor", "dask", "--scheduler", f"tcp://{LOOPBACK}:{port}"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == (
        f"effectbench: cannot reach the Dask scheduler at tcp://{LOOPBACK}:{port}: "
        "Connection refused\n"
    )
    with pytest.raises(UsageError, match="--executor dask needs --scheduler"):
        main(["--verbose", "run", "--baseline", "screen_only", "--executor", "dask"])


def _start_scheduler(tmp_path: Path, *args: str) -> tuple[subprocess.Popen[bytes], str]:
    """``dask scheduler ARGS`` with a scheduler file: its process and address once it listens."""
    info = tmp_path / "scheduler.json"
    proc = subprocess.Popen(
        [DASK, "scheduler", *args, "--scheduler-file", str(info)],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            return proc, str(json.loads(info.read_text())["address"])
        except (OSError, ValueError, KeyError):
            time.sleep(0.05)
    _stop(proc)
    raise AssertionError("the Dask scheduler did not start")


def _scheduler(tmp_path: Path) -> tuple[subprocess.Popen[bytes], str]:
    return _start_scheduler(
        tmp_path, "--host", LOOPBACK, "--port", "0", "--dashboard-address", f"{LOOPBACK}:0"
    )


def test_a_scheduler_lost_mid_run_stops_resumably_and_the_resume_completes_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scheduler, address = _scheduler(tmp_path)
    worker = _extra_worker(address, {"PYTHONPATH": str(TESTS)}, tmp_path)
    journal = tmp_path / "run.journal"
    argv = ["run", "--pack", "mockmed", "--sut", "scale_support.agents:slow_halt", "--trials", "4"]
    argv += ["--progress", "off", "--json"]

    def kill_scheduler_after_five_rows() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if journal.is_file() and journal.read_bytes().count(b"\n") >= 6:
                scheduler.send_signal(signal.SIGKILL)
                return
            time.sleep(0.005)

    killer = threading.Thread(target=kill_scheduler_after_five_rows)
    killer.start()
    try:
        status = main(
            [*argv, "--executor", "dask", "--scheduler", address, "--journal", str(journal)]
        )
    finally:
        killer.join()
        _stop(worker)
        _stop(scheduler)
    out, err = capsys.readouterr()
    assert status == 2 and out == "" and err.count("\n") == 1
    kept = journal.read_bytes().count(b"\n") - 1
    assert err == (
        f"effectbench: lost the Dask scheduler at {address}; {kept} of 36 episodes are in "
        f"{journal}; continue with --resume {journal}\n"
    )
    assert 5 <= kept < 36
    assert main([*argv, "--resume", str(journal)]) == 0  # finished here, on the local executor
    resumed = untimed_results(capsys.readouterr().out)
    assert main(argv) == 0
    assert resumed == untimed_results(capsys.readouterr().out)


def test_the_documented_deployment_runs_against_a_scheduler_with_the_documented_options() -> None:
    section = (TESTS.parent / "docs" / "long-runs.md").read_text()
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#", 1)[0].strip() for line in block.replace("\\\n", " ").splitlines()]
    scheduler, worker, run = commands
    assert scheduler.startswith("dask scheduler ") and worker.startswith("dask worker tcp://")
    words = shlex.split(run)
    assert words[0] == ".venv/bin/effectbench"
    args = build_parser().parse_args(words[1:])
    assert (args.command, args.executor) == ("submit", "dask")
    assert args.scheduler == worker.split()[2]  # the run points at the scheduler the worker joins


def _listening(proc: subprocess.Popen[bytes]) -> list[tuple[str, int]]:
    """Every TCP address ``proc`` and its children listen on."""
    root = psutil.Process(proc.pid)
    return [
        (conn.laddr.ip, conn.laddr.port)
        for p in [root, *root.children(recursive=True)]
        for conn in p.net_connections(kind="inet")
        if conn.status == psutil.CONN_LISTEN
    ]


def test_the_documented_deployment_listens_only_on_the_addresses_it_names(tmp_path: Path) -> None:
    """Attacks the documented deployment's exposure: the page's own scheduler and worker
    commands (its addresses made this machine's loopback, one worker process) must listen
    on nothing but the address each names: no dashboard or comm port on every interface."""
    section = (TESTS.parent / "docs" / "long-runs.md").read_text()
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    scheduler_cmd, worker_cmd, _ = [
        line.split("#", 1)[0].strip() for line in block.replace("\\\n", " ").splitlines()
    ]
    here = {"10.0.0.5": LOOPBACK, "10.0.0.6": LOOPBACK, ":8786": ":0", ":8787": ":0"}
    for documented, local in here.items():
        scheduler_cmd = scheduler_cmd.replace(documented, local)
    argv = shlex.split(scheduler_cmd.replace("--port 8786", "--port 0"))
    assert argv[:2] == ["dask", "scheduler"]
    scheduler, address = _start_scheduler(tmp_path, *argv[2:])
    worker = None
    try:
        for documented, local in {**here, "tcp://127.0.0.1:0": address}.items():
            worker_cmd = worker_cmd.replace(documented, local)
        argv = shlex.split(worker_cmd.replace("--nworkers 4", "--nworkers 1"))
        worker = subprocess.Popen(
            [DASK, *argv[1:], "--local-directory", str(tmp_path)],
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        with Client(address, set_as_default=False, timeout=60) as client:  # type: ignore[no-untyped-call]
            client.wait_for_workers(1, timeout=120)
        listening = _listening(scheduler) + _listening(worker)
        assert len(listening) >= 3  # the scheduler, the nanny and its worker process at least
        assert {ip for ip, _ in listening} == {LOOPBACK}, listening
    finally:
        if worker is not None:
            _stop(worker)
        _stop(scheduler)


@pytest.mark.parametrize("lie", ["labels", "pickle"])
def test_a_hostile_worker_cannot_change_labels_or_run_code_in_the_driver(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lie: str
) -> None:
    """Attacks the driver from a worker that passes the same-code check (this project's files,
    its task function swapped in memory): relabelling every silent wrong effect a success,
    and answering with a pickle that runs code where it is loaded (sent as a pickle whatever
    the client asked for). Either refuses the run in one line, before the lie reaches the
    journal; neither the answer nor the type the worker reports for it is loaded here. (Dask's
    other messages still pickle, task errors among them: docs/long-runs.md.)"""
    scheduler, address = _scheduler(tmp_path)
    mark = tmp_path / "planted"
    rogue = _extra_worker(
        address,
        {
            "PYTHONPATH": str(TESTS),
            "EFFECTBENCH_ROGUE": lie,
            "EFFECTBENCH_ROGUE_MARK": str(mark),
        },
        tmp_path,
        "--preload",
        "scale_support.rogue_worker",
    )
    journal = tmp_path / "run.journal"
    argv = ["run", "--pack", "mockmed", "--baseline", "screen_only", "--trials", "1"]
    argv += ["--executor", "dask", "--scheduler", address, "--progress", "off"]
    try:
        status = main([*argv, "--journal", str(journal), "--json"])
    finally:
        _stop(rogue)
        _stop(scheduler)
    out, err = capsys.readouterr()
    assert not mark.exists()  # the worker's pickle never ran in the driver
    assert "scale_support.rogue_answer" not in sys.modules  # not even its type was loaded
    assert (status, out, err.count("\n")) == (1, "", 1), (status, out[:300], err)
    assert "the run is refused" in err and "docs/long-runs.md" in err, err
    rows = [json.loads(line) for line in journal.read_text().splitlines()[1:]]
    assert all(
        r["row"]["outcome"] != "success" for r in rows if r["row"]["task_id"] != "mockmed::ok"
    )


def test_the_documented_tls_cluster_admits_only_holders_of_its_certificates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Attacks a cluster secured as docs/long-runs.md says (TLS, certificates of one CA, each
    side's own): a client with no certificate, and one with a certificate of another CA,
    are turned away; the run with the cluster's certificate completes."""
    mine, stranger = certificates(tmp_path, "cluster"), certificates(tmp_path, "stranger")
    flags = ["--tls-ca-file", str(mine["ca"]), "--tls-cert", str(mine["cert"])]
    flags += ["--tls-key", str(mine["key"])]
    scheduler, address = _start_scheduler(
        tmp_path,
        "--protocol",
        "tls",
        "--host",
        LOOPBACK,
        "--port",
        "0",
        "--no-dashboard",
        "--dashboard-address",
        f"{LOOPBACK}:0",
        *flags,
    )
    worker = None
    try:
        assert address.startswith("tls://")
        worker = _extra_worker(address, {}, tmp_path, "--protocol", "tls", *flags)
        argv = ["run", "--pack", "mockmed", "--baseline", "screen_only", "--trials", "1"]
        argv += ["--executor", "dask", "--scheduler", address, "--progress", "off", "--json"]
        err = _refusal(argv, capsys)
        assert "needs this client's TLS certificate" in err

        async def identity(holder: dict[str, Path]) -> Any:
            security = distributed.Security(  # type: ignore[no-untyped-call]
                tls_ca_file=str(mine["ca"]),
                tls_client_cert=str(holder["cert"]),
                tls_client_key=str(holder["key"]),
            )
            ssl = security.get_connection_args("client")  # type: ignore[no-untyped-call]
            comm = await connect(address, timeout=10, **ssl)  # type: ignore[no-untyped-call]
            try:
                await comm.write({"op": "identity"})
                return await comm.read()
            finally:
                await comm.close()

        assert asyncio.run(identity(mine))["type"] == "Scheduler"
        with pytest.raises((OSError, TimeoutError)):
            asyncio.run(identity(stranger))
        tls = {
            "distributed.comm.tls.ca-file": str(mine["ca"]),
            "distributed.comm.tls.client.cert": str(mine["cert"]),
            "distributed.comm.tls.client.key": str(mine["key"]),
        }
        with dask.config.set(tls):
            assert main(argv) == 0
        assert json.loads(capsys.readouterr().out)["n_episodes"] == 9
    finally:
        if worker is not None:
            _stop(worker)
        _stop(scheduler)
