"""``--workers N``: episodes run in worker processes give the rows of a serial run."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from effectbench.baselines import get_baseline
from effectbench.cli import main
from effectbench.errors import UsageError
from effectbench.packs.clinic import ClinicProvider
from effectbench.packs.clinic.attestation import ATTESTATION, AuditHandoff, audits_run
from effectbench.packs.clinic.oracle import SqliteOracle
from effectbench.run.parallel import evaluate_parallel
from effectbench.run.runner import evaluate
from effectbench.schema import AgentReport, Substrate
from effectbench.seam import AgentTask, EnvHandle

TIMINGS = ("latency_s", "started_at", "finished_at")


def _untimed(rows: list[Any]) -> list[dict[str, Any]]:
    out = []
    for row in rows:
        data = row.to_row()
        for key in TIMINGS:
            data.pop(key)
        out.append(data)
    return out


@pytest.fixture(scope="module")
def pack() -> Iterator[ClinicProvider]:
    provider = ClinicProvider()
    yield provider
    provider.close()


def test_two_workers_give_the_serial_rows(pack: ClinicProvider) -> None:
    sut = get_baseline("effect_verified_all", pack)
    api = [t for t in pack.tasks() if t.substrate is Substrate.API]  # web: test_clinic_web
    serial = evaluate(sut, pack, trials=2, tasks=api)
    parallel = evaluate_parallel(sut, pack, trials=2, tasks=api, workers=2)
    assert parallel.arm == serial.arm and parallel.pack == serial.pack
    assert len(parallel.rows) == 60 and not parallel.dropped
    assert _untimed(parallel.rows) == _untimed(serial.rows)


def test_the_run_command_takes_workers(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", "--pack", "clinic", "--baseline", "screen_only", "--trials", "2", "--json"]
    assert main(argv) == 0
    serial = json.loads(capsys.readouterr().out)
    assert main([*argv, "--workers", "2"]) == 0
    parallel = json.loads(capsys.readouterr().out)
    for block in (serial, parallel):
        block.pop("latency_mean_s", None)
        block.pop("latency_p95_s", None)
    # run covers the public dev split: 17 of its 27 tasks fool screen_only, 2 trials each
    assert parallel["swer"] == serial["swer"] == {**serial["swer"], "numerator": 34}
    assert serial["n_episodes"] == 54
    assert parallel["outcome_counts"] == serial["outcome_counts"]
    assert parallel["cells"] == serial["cells"]
    assert parallel["n_dropped"] == serial["n_dropped"] == 0


class _Unpicklable:
    name = "unpicklable"

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def run(self, task: AgentTask, env: EnvHandle, params: Mapping[str, Any]) -> AgentReport:
        return AgentReport(reported_success=False, halted=True)


def test_an_unpicklable_system_is_refused_before_any_worker_starts(pack: ClinicProvider) -> None:
    with pytest.raises(UsageError, match="picklable"):
        evaluate_parallel(_Unpicklable(), pack, trials=1, workers=2)


class _ReportsAudits:
    """Halts at once; its report says how many audits its own process ran."""

    name = "reports_audits"

    def run(self, task: AgentTask, env: EnvHandle, params: Mapping[str, Any]) -> AgentReport:
        return AgentReport(reported_success=False, halted=True, message=f"audits {audits_run()}")


class _OtherOracle(SqliteOracle):
    """An oracle other than the one a worker's pack is built with."""


class _ForeignHandoff(ClinicProvider):
    """A parent whose handoff was keyed by other code than the workers load."""

    def worker_handoff(self) -> AuditHandoff:
        handoff = super().worker_handoff()
        assert handoff is not None
        return AuditHandoff(handoff.owner, "sha256:" + "0" * 64, handoff.results)


def _audits_in_workers(provider: ClinicProvider) -> set[str]:
    tasks = list(provider.tasks())[:4]
    run = evaluate_parallel(_ReportsAudits(), provider, trials=1, tasks=tasks, workers=2)
    assert len(run.rows) == 4
    return {row.agent.message for row in run.rows}


def test_workers_adopt_the_parents_audit_instead_of_running_it(pack: ClinicProvider) -> None:
    assert audits_run() >= 1  # the parent ran the audit the flags come from
    assert _audits_in_workers(pack) == {"audits 0"}


def test_workers_audit_for_themselves_when_the_handoff_key_differs() -> None:
    foreign = _ForeignHandoff()
    try:
        assert _audits_in_workers(foreign) == {"audits 1"}
    finally:
        foreign.close()


def test_a_handoff_is_installed_only_under_this_processes_key(pack: ClinicProvider) -> None:
    handoff = pack.worker_handoff()
    assert handoff is not None and handoff.key == ATTESTATION.key
    assert handoff.results == pack.audit
    assert AuditHandoff(ATTESTATION.owner, "sha256:" + "0" * 64, {}).install() is False
    # This process already holds its own audit: a handoff never replaces it.
    assert handoff.install() is False
    other = ClinicProvider(oracle_factory=_OtherOracle)
    try:
        assert other.worker_handoff() is None  # workers rebuild the default oracle only
    finally:
        other.close()
