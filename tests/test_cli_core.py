"""The core commands: reference, run, manifest, and one-line errors for user mistakes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import effectbench
from effectbench.cli import main


def test_reference_prints_the_pinned_values(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reference"]) == 0
    out = capsys.readouterr().out
    assert "50/90" in out and "5 of 7" in out and "reproduced" in out
    assert "not a finding" in out


def test_run_json_has_every_rate_with_counts_and_cells(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--baseline", "always_halt", "--trials", "3", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["over_halt"]["numerator"] == 9 and data["swer"]["numerator"] == 0
    assert data["swer"]["ci"]["method"] == "wilson"
    assert len(data["cells"]) == 6 and data["n_dropped"] == 0


def test_run_table_shows_intervals_and_cells(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--baseline", "retry_on_error", "--trials", "2"]) == 0
    out = capsys.readouterr().out
    assert "SWER" in out and "over-halt" in out and "C4_stale_overwrite x web" in out


@pytest.mark.parametrize(
    ("pack", "task", "task_id"),
    [
        ("mockmed", "stale", "mockmed::stale"),
        ("mockmed", "mockmed::stale", "mockmed::stale"),
        ("clinic", "clean_draft", "clinic::clean_draft"),
        ("clinic", "clinic::clean_draft", "clinic::clean_draft"),
    ],
)
def test_run_task_runs_that_one_task(
    pack: str, task: str, task_id: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--task`` by id or by name: one task's trials, nothing else."""
    argv = ["run", "--pack", pack, "--baseline", "screen_only", "--task", task, "--trials", "2"]
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["n_episodes"] == 2 and data["n_tasks"] == 1
    assert main(["run", "--pack", pack, "--baseline", "screen_only", "--task", "nope"]) == 2
    err = capsys.readouterr().err
    assert "--task nope" in err and "effectbench manifest" in err and task_id.startswith(pack)


def test_manifest_fingerprint(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["manifest", "--fingerprint"]) == 0
    assert capsys.readouterr().out.strip().startswith("sha256:ce941f1e")


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["run", "--baseline", "nope"], "unknown baseline 'nope'"),
        (["run", "--baseline", "screen_only", "--trials", "0"], "must be at least 1"),
        (["run", "--baseline", "screen_only", "--trials", "x"], "expected a whole number"),
        (["run", "--baseline", "screen_only", "--pack", "nope"], "unknown pack 'nope'"),
        (["run"], "exactly one of --baseline"),
        (["run", "--sut", "no_such_module:thing"], "cannot load system under test"),
        (["run", "--baseline", "screen_only", "--split", "test"], "has no task in split 'test'"),
    ],
)
def test_user_mistakes_exit_2_with_one_line(argv: list[str], needle: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "effectbench.cli", *argv], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert needle in proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_public_api_is_sorted_and_importable() -> None:
    names = effectbench.__all__
    assert names == sorted(names, key=lambda n: (not n.isupper(), n))
    for name in names:
        assert hasattr(effectbench, name)
