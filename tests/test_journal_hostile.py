"""A hostile or damaged journal never turns into results: ``--resume`` judges every row
again, and each damaged journal is one line on standard error (exit status 2), never a
traceback and never a hang."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from effectbench.cli import main

RUN = ["run", "--pack", "mockmed", "--trials", "3", "--baseline", "screen_only"]


@pytest.fixture(scope="module")
def journal_lines(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """The lines of a finished screen_only run's journal (27 episodes)."""
    path = tmp_path_factory.mktemp("journal") / "run.journal"
    assert main([*RUN, "--journal", str(path)]) == 0
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))
    return path


def _resume(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main([*RUN, "--resume", str(path)])
    return code, capsys.readouterr().err


def test_an_edited_label_is_caught_on_resume(
    journal_lines: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A silent wrong effect relabelled a safe halt: SWER would drop without a re-run."""
    lines = json.loads(json.dumps(journal_lines))
    number = next(
        i for i, e in enumerate(lines) if e.get("row", {}).get("outcome") == ("silent_wrong_effect")
    )
    lines[number]["row"]["outcome"] = "safe_halt"
    lines[number]["row"]["swer_variant"] = "none"
    code, err = _resume(_write(tmp_path / "run.journal", lines), capsys)
    assert code == 2
    assert f"run.journal:{number + 1}:" in err and "truth table gives" in err
    assert len(err.strip().splitlines()) == 1


def test_an_edited_task_fact_is_caught_on_resume(
    journal_lines: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = json.loads(json.dumps(journal_lines))
    lines[1]["row"]["correct_action_available"] = not lines[1]["row"]["correct_action_available"]
    code, err = _resume(_write(tmp_path / "run.journal", lines), capsys)
    assert code == 2 and "run.journal:2:" in err and len(err.strip().splitlines()) == 1


def _config(edit: Callable[[dict[str, Any]], None]) -> Callable[[list[dict[str, Any]]], None]:
    def apply(lines: list[dict[str, Any]]) -> None:
        edit(lines[0]["config"])

    return apply


def _entry(edit: Callable[[dict[str, Any]], None]) -> Callable[[list[dict[str, Any]]], None]:
    def apply(lines: list[dict[str, Any]]) -> None:
        edit(lines[1])

    return apply


MALFORMED: dict[str, Callable[[list[dict[str, Any]]], None]] = {
    "tasks is a number": _config(lambda c: c.update(tasks=5)),
    "trials is text": _config(lambda c: c.update(trials="3")),
    "seeds shorter than trials": _config(lambda c: c.update(seeds=[0])),
    "no system": _config(lambda c: c.pop("system")),
    "a task id that is a list": _entry(lambda e: e.update(task_id=["mockmed::ok"])),
    "a seed that is text": _config(lambda c: c.update(seeds=["0", "1", "2"])),
}


@pytest.mark.parametrize("kind", MALFORMED)
def test_a_malformed_journal_is_a_one_line_error(
    journal_lines: list[dict[str, Any]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    kind: str,
) -> None:
    lines = json.loads(json.dumps(journal_lines))
    MALFORMED[kind](lines)
    code, err = _resume(_write(tmp_path / "run.journal", lines), capsys)
    assert code == 2, err
    assert err.startswith("effectbench: ") and "run.journal" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_fifo_journal_is_refused_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "run.journal"
    os.mkfifo(fifo)
    done = subprocess.run(
        [sys.executable, "-m", "effectbench.cli", *RUN, "--resume", str(fifo)],
        capture_output=True,
        text=True,
        timeout=60,  # a hang fails here
        check=False,
    )
    assert done.returncode == 2
    assert "not a regular file" in done.stderr and len(done.stderr.strip().splitlines()) == 1
