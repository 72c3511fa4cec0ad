"""``submit`` checks what the bundle will declare before it runs anything.

A name the bundle schema refuses, a trial count beyond a bundle's limit and a record
dir holding a huge trial number each end in one line on standard error and exit
status 2, with nothing run or written, and (for the records) in bounded memory."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from effectbench.baselines import ScreenOnly
from effectbench.cli import main
from effectbench.mcp.records import write_record
from effectbench.packs.clinic import ClinicProvider
from effectbench.run.runner import run_episode
from effectbench.schema import Substrate

MEMORY_BOUND = 64 * 1024 * 1024
"""Bytes Python may allocate while refusing a record dir (tracemalloc's peak)."""


def _submit(out: Path, *extra: str) -> int:
    return main(["submit", "--pack", "mockmed", "--out", str(out), *extra])


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--name", "Agent \ufffe", "--name: holds U+FFFE at position 6"),
        ("--name", "Agent \U000e0041", "--name: holds U+E0041 at position 6"),
        ("--name", "x" * 81, "--name: String should have at most 80 characters"),
        ("--description", "one\u202etwo", "--description: holds U+202E at position 3"),
        ("--url", "https://example.org/\x1b[2J", "--url: holds U+001B at position 20"),
    ],
)
def test_submit_with_a_declaration_the_schema_refuses_runs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str, said: str
) -> None:
    out = tmp_path / "out"
    args = ["--baseline", "screen_only", "--name", "ok", option, value]
    assert _submit(out, *args) == 2
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1, err
    assert not out.exists()  # no journal, no bundle: the run never started


def test_submit_with_more_trials_than_a_bundle_holds_runs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert _submit(out, "--baseline", "screen_only", "--name", "ok", "--trials", "1000000000") == 2
    err = capsys.readouterr().err
    assert "--trials 1000000000" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_submit_from_records_with_a_huge_trial_number_is_one_line_in_bounded_memory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = ClinicProvider()
    try:
        task = next(
            t for t in pack.tasks() if t.substrate is Substrate.API and t.split.value == "dev"
        )
        row = run_episode(ScreenOnly(pack), pack, task, 0, 0)
    finally:
        pack.close()
    records = tmp_path / "records"
    path = write_record(records, task.task_id, 0, row)
    data = json.loads(Path(path).read_text())
    data["row"]["trial"] = 10**12
    Path(path).write_text(json.dumps(data))
    out = tmp_path / "out"
    tracemalloc.start()
    try:
        code = main(
            ["submit", "--pack", "clinic", "--from-records", str(records), "--name", "x"]
            + ["--out", str(out)]
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == 2
    err = capsys.readouterr().err
    assert "trial 1000000000000 is outside" in err and len(err.strip().splitlines()) == 1
    assert peak < MEMORY_BOUND, peak
    assert not out.exists()
