"""Durable runs: the run journal, --resume, refusals, and progress on long runs."""

from __future__ import annotations

import io
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from scale_support.agents import (
    BROKEN_TASK,
    RAISING_TASK,
    BrokenProvisioning,
    KillsItsWorker,
    RaisesOnOneTask,
)
from support.journal import untimed, untimed_bundle, untimed_results

from effectbench.baselines import get_baseline
from effectbench.cli import main
from effectbench.errors import DataError
from effectbench.metrics import episode_frame, summarize
from effectbench.packs.mockmed import MockMedProvider
from effectbench.run.executors import RunStopped, execute
from effectbench.run.executors.local import LocalExecutor
from effectbench.run.executors.progress import ProgressReport, progress_for
from effectbench.run.journal import Journal, read_journal
from effectbench.run.runner import RunPlan, RunResult, evaluate

RUN = ["run", "--pack", "mockmed", "--trials", "3", "--progress", "off", "--json"]
EFFECTBENCH = str(Path(sys.executable).with_name("effectbench"))


def test_a_journal_holds_every_row_and_a_finished_run_resumes_to_the_same_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    journal = tmp_path / "run.journal"
    argv = [*RUN, "--baseline", "screen_only"]
    assert main([*argv, "--journal", str(journal)]) == 0
    first = untimed_results(capsys.readouterr().out)
    written = journal.read_bytes()
    contents = read_journal(journal)
    assert len(contents.entries) == 27 and contents.torn_line is None
    assert contents.config["system"] == "screen_only" and contents.config["seeds"] == [0, 1, 2]
    assert main([*argv, "--resume", str(journal)]) == 0
    assert untimed_results(capsys.readouterr().out) == first
    assert journal.read_bytes() == written  # nothing ran again, nothing was appended


def test_a_torn_last_line_is_cut_off_and_its_episode_runs_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    journal = tmp_path / "run.journal"
    argv = [*RUN, "--baseline", "effect_verified"]
    assert main([*argv, "--journal", str(journal)]) == 0
    first = untimed_results(capsys.readouterr().out)
    whole = journal.read_bytes().splitlines(keepends=True)
    torn = b"".join(whole[:-1]) + whole[-1][: len(whole[-1]) // 2]  # killed mid-write
    journal.write_bytes(torn)
    assert main([*argv, "--resume", str(journal)]) == 0
    out, err = capsys.readouterr()
    assert err == f"effectbench: {journal}:{len(whole)}: last line was cut off mid-write; " + (
        "its episode runs again\n"
    )
    assert untimed_results(out) == first
    again = journal.read_bytes().splitlines(keepends=True)
    assert again[:-1] == whole[:-1] and len(again) == len(whole)
    redone, original = orjson.loads(again[-1]), orjson.loads(whole[-1])
    assert untimed([redone["row"]]) == untimed([original["row"]])


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (["--baseline", "effect_verified"], "system"),
        (["--trials", "4"], "seeds"),
        (["--pack", "clinic"], "pack fingerprint"),
    ],
)
def test_a_resume_with_another_configuration_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: list[str], named: str
) -> None:
    journal = tmp_path / "run.journal"
    argv = [*RUN, "--baseline", "screen_only"]
    assert main([*argv, "--journal", str(journal)]) == 0
    capsys.readouterr()
    written = journal.read_bytes()
    assert main([*argv, *change, "--resume", str(journal)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"effectbench: {journal}: this journal is of another run configuration")
    assert f"{named} " in err
    assert journal.read_bytes() == written


class _NextVersion(MockMedProvider):
    """MockMed with one task retitled: the same pack name at another version (fingerprint)."""

    def manifest(self) -> dict[str, Any]:
        manifest = super().manifest()
        manifest["tasks"][0]["title"] += " (revised)"
        return manifest


def test_a_resume_with_another_seed_list_or_pack_version_is_refused(tmp_path: Path) -> None:
    pack = MockMedProvider()
    sut = get_baseline("screen_only", pack)
    path = tmp_path / "run.journal"
    Journal.create(path, RunPlan.build(sut, pack, trials=2)).close()
    with pytest.raises(DataError, match=r"seeds \[0,1\] there, \[5,6\] now"):
        Journal.resume(path, RunPlan.build(sut, pack, trials=2, seeds=[5, 6]))
    other = _NextVersion()
    with pytest.raises(DataError, match="pack fingerprint"):
        Journal.resume(path, RunPlan.build(get_baseline("screen_only", other), other, trials=2))
    Journal.resume(path, RunPlan.build(sut, pack, trials=2)).close()  # the same run resumes


def _journal_of(tmp_path: Path, baseline: str, name: str) -> Path:
    path = tmp_path / name
    assert main([*RUN, "--baseline", baseline, "--journal", str(path)]) == 0
    return path


def _not_a_journal(tmp_path: Path) -> Path:
    path = tmp_path / "episodes.jsonl"
    path.write_bytes(b'{"episode_id": "x", "task_id": "mockmed::ok"}\n')
    return path


def _empty(tmp_path: Path) -> Path:
    path = tmp_path / "empty.journal"
    path.write_bytes(b"")
    return path


def _cut_in_header(tmp_path: Path) -> Path:
    path = _journal_of(tmp_path, "screen_only", "cut.journal")
    path.write_bytes(path.read_bytes()[:40])
    return path


def _spliced(tmp_path: Path) -> Path:
    ours = _journal_of(tmp_path, "screen_only", "ours.journal")
    other = _journal_of(tmp_path, "screen_only", "other.journal")
    lines = ours.read_bytes().splitlines(keepends=True)
    lines[5] = other.read_bytes().splitlines(keepends=True)[5]
    ours.write_bytes(b"".join(lines))
    return ours


def _damaged(tmp_path: Path) -> Path:
    path = _journal_of(tmp_path, "screen_only", "damaged.journal")
    lines = path.read_bytes().splitlines(keepends=True)
    lines[3] = lines[3][:20] + b"\n"
    path.write_bytes(b"".join(lines))
    return path


def _bad_row_and_torn_tail(tmp_path: Path) -> Path:
    path = _journal_of(tmp_path, "screen_only", "bad-row.journal")
    lines = path.read_bytes().splitlines(keepends=True)
    lines[6] = lines[6].replace(b'"outcome":"', b'"outcome":"edited-')
    lines[-1] = lines[-1][:30]  # and a torn last line, which a refusal must not cut off
    path.write_bytes(b"".join(lines))
    return path


def _repeated(tmp_path: Path) -> Path:
    path = _journal_of(tmp_path, "screen_only", "repeated.journal")
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join([*lines, lines[2]]))
    return path


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (_not_a_journal, ":1: not an EffectBench run journal"),
        (_empty, ": the journal is empty"),
        (_cut_in_header, ": the journal is cut off inside its header"),
        (_spliced, ":6: entry of another run"),
        (_damaged, ":4: not a journal entry"),
        (_repeated, ":29: repeats mockmed::"),
        (_bad_row_and_torn_tail, ":7: outcome: not an episode row"),
    ],
)
def test_a_journal_that_is_not_this_runs_is_one_line_and_exit_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    make: Callable[[Path], Path],
    message: str,
) -> None:
    path = make(tmp_path)
    capsys.readouterr()
    before = path.read_bytes()
    assert main([*RUN, "--baseline", "screen_only", "--resume", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"effectbench: {path}{message}"), err
    assert path.read_bytes() == before  # a refused journal is never changed


def test_a_journal_is_never_overwritten_and_a_missing_one_is_not_resumed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _journal_of(tmp_path, "screen_only", "run.journal")
    capsys.readouterr()
    before = path.read_bytes()
    assert main([*RUN, "--baseline", "screen_only", "--journal", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"effectbench: journal {path} already exists: continue it with --resume {path}, "
        "or choose another --journal\n"
    )
    assert path.read_bytes() == before
    missing = tmp_path / "nothing.journal"
    assert main([*RUN, "--baseline", "screen_only", "--resume", str(missing)]) == 2
    assert capsys.readouterr().err == f"effectbench: no journal at {missing}\n"


def test_harness_drops_are_journalled_and_a_resume_attempts_them_again_keeping_both(
    tmp_path: Path,
) -> None:
    """The benchmark's harness failing (infrastructure) and the agent's own harness failing
    (an exception: agent_error) are drops with their reason, never halts; a resume runs those
    cells again, appends the new attempts and keeps the old ones as earlier attempts."""
    pack = BrokenProvisioning()
    plan = RunPlan.build(RaisesOnOneTask(), pack, trials=2)
    path = tmp_path / "run.journal"
    with Journal.create(path, plan) as journal:
        run = execute(plan, LocalExecutor(), journal=journal)
    broken = "record service did not start"
    agent = "system under test raised RuntimeError: the agent's own bug"
    assert sorted((d.task_id, d.trial, d.reason.value, d.detail) for d in run.dropped) == sorted(
        [(BROKEN_TASK, t, "infrastructure", broken) for t in (0, 1)]
        + [(RAISING_TASK, t, "agent_error", agent) for t in (0, 1)]
    )
    assert not [r for r in run.rows if r.task_id in (BROKEN_TASK, RAISING_TASK)]
    assert run.attempts == [] and run.n_attempts == 18
    entries = [orjson.loads(line) for line in path.read_bytes().splitlines()[1:]]
    assert (
        sorted(e["drop"]["reason"] for e in entries if "drop" in e)
        == ["agent_error"] * 2 + ["infrastructure"] * 2
    )
    written = path.read_bytes()
    with Journal.resume(path, plan) as journal:
        again = execute(plan, LocalExecutor(), journal=journal)
    assert path.read_bytes().startswith(written)  # appended, never rewritten
    assert len(path.read_bytes().splitlines()) == len(written.splitlines()) + 4
    assert untimed(again.rows) == untimed(run.rows)
    assert [(d.task_id, d.trial, d.reason) for d in again.dropped] == [
        (d.task_id, d.trial, d.reason) for d in run.dropped
    ]
    assert sorted(
        (a.task_id, a.trial, a.attempt, a.ending.value) for a in again.attempts
    ) == sorted(
        [(BROKEN_TASK, t, 1, "infrastructure") for t in (0, 1)]
        + [(RAISING_TASK, t, 1, "agent_error") for t in (0, 1)]
    )
    assert again.n_attempts == 22
    assert again.attempt_of() == {(d.task_id, d.trial): 2 for d in run.dropped}
    contents = read_journal(path)  # the journal itself reads back both attempts of each cell
    assert len(contents.earlier) == 4 and len(contents.earlier_attempts()) == 4


def test_a_journal_line_replacing_a_counted_attempt_is_refused(tmp_path: Path) -> None:
    """An episode whose attempt counts (a row) may not appear again: editing one in is caught."""
    plan = RunPlan.build(
        get_baseline("screen_only", MockMedProvider()), MockMedProvider(), trials=1
    )
    path = tmp_path / "run.journal"
    with Journal.create(path, plan) as journal:
        execute(plan, LocalExecutor(), journal=journal)
    lines = path.read_bytes().splitlines()
    path.write_bytes(b"\n".join([*lines, lines[1]]) + b"\n")
    with pytest.raises(DataError, match="whose attempt counts"):
        read_journal(path)


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def test_a_run_killed_at_random_points_and_resumed_gives_the_uninterrupted_bundle(
    tmp_path: Path,
) -> None:
    submit = ["submit", "--pack", "clinic", "--baseline", "screen_only", "--trials", "4"]
    submit += ["--name", "durable", "--progress", "off"]
    killed, whole = tmp_path / "killed", tmp_path / "whole"
    killed.mkdir()
    whole.mkdir()
    total = 27 * 4
    points = sorted(random.Random(14).sample(range(1, total - 10), 3))
    journal = killed / "no journal yet"
    for i, point in enumerate(points):
        how = [] if i == 0 else ["--resume", str(journal)]  # submit journals by default
        proc = subprocess.Popen(
            [EFFECTBENCH, *submit, "--out", str(killed), *how],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 120
        while _lines(journal) < 1 + point and proc.poll() is None and time.monotonic() < deadline:
            journal = next(killed.glob("*_durable.journal"), journal)  # beside the bundle
            time.sleep(0.001)
        os.killpg(proc.pid, signal.SIGKILL)  # the run and anything it started
        assert proc.wait() == -signal.SIGKILL, f"the run ended before kill point {point}"
        assert 1 + point <= _lines(journal) < 1 + total
    assert main([*submit, "--out", str(killed), "--resume", str(journal)]) == 0
    assert main([*submit, "--out", str(whole)]) == 0
    [resumed_bundle] = [p for p in killed.iterdir() if p.is_dir()]
    [whole_bundle] = [p for p in whole.iterdir() if p.is_dir()]
    assert untimed_bundle(resumed_bundle) == untimed_bundle(whole_bundle)
    assert journal == killed / f"{resumed_bundle.name}.journal"
    assert not journal.exists() and list(whole.iterdir()) == [whole_bundle]  # rows in the bundle


def _finished_run() -> RunResult:
    pack = MockMedProvider()
    return evaluate(get_baseline("screen_only", pack), pack, trials=2)


def test_progress_lines_show_done_rate_eta_and_swer_beside_over_halt() -> None:
    run = _finished_run()
    now = [0.0]
    out = io.StringIO()
    progress = ProgressReport(out, bar=False, interval=30, clock=lambda: now[0])
    progress.start(len(run.rows), [])
    for row in run.rows:
        now[0] += 5.0
        progress.update(row)
    progress.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 3  # 90 s of episodes, one line per 30 s
    res = summarize(episode_frame(run.rows))
    assert lines[-1] == (
        f"progress: 18/18 episodes, 12.0/min, ETA 00:00, SWER {res.swer.numerator}/18 "
        f"({res.swer.rate:.1%}), over-halt {res.over_halt.numerator}/18 (0.0%)"
    )
    assert lines[0].startswith("progress: 6/18 episodes, 12.0/min, ETA 01:00, SWER ")


def test_progress_bar_redraws_one_line_and_counts_resumed_episodes_as_done() -> None:
    run = _finished_run()
    now = [0.0]
    out = io.StringIO()
    progress = ProgressReport(out, bar=True, clock=lambda: now[0])
    progress.start(len(run.rows), run.rows[:10])  # ten came from a journal
    for row in run.rows[10:]:
        now[0] += 1.0
        progress.update(row)
    text = out.getvalue()
    assert "\n" not in text and text.startswith("\r[#############")
    assert text.rsplit("\r", 1)[1].startswith("[" + "#" * 24 + "] 18/18 episodes, 60.0/min")
    progress.close()
    assert out.getvalue().endswith("\n")
    assert isinstance(progress_for("auto", io.StringIO()), ProgressReport)
    assert progress_for("off") is None


def test_a_local_worker_process_that_dies_stops_the_run_resumably(tmp_path: Path) -> None:
    pack = MockMedProvider()
    plan = RunPlan.build(KillsItsWorker("mockmed::ok"), pack, trials=2)
    path = tmp_path / "run.journal"
    with Journal.create(path, plan) as journal, pytest.raises(RunStopped) as stopped:
        execute(plan, LocalExecutor(2), journal=journal)
    kept = len(read_journal(path).entries)
    assert str(stopped.value) == (
        "a worker process of --workers died (killed, or out of memory); "
        f"{kept} of 18 episodes are in {path}; continue with --resume {path}"
    )
    assert stopped.value.exit_code == 2
