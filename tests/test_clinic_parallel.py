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
from effectbench.parallel import evaluate_parallel
from effectbench.runner import evaluate
from effectbench.schema import AgentReport
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
    serial = evaluate(sut, pack, trials=2)
    parallel = evaluate_parallel(sut, pack, trials=2, workers=2)
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
