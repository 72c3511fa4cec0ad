"""A record directory keeps every attempt, and ``submit --from-records`` says what it can rank.

Records are written by the writer the MCP episode server uses, from in-process
MockMed episodes (no browser): every attempt at a (task, trial) has its own
file; reading them back applies the one attempts rule (the first completed
attempt counts, only a re-runnable drop may be followed by another, nothing
removed, renamed or moved); the episode server writes a leaving client's drop
before the episode is torn down, even while it is still being provisioned; and
``submit --from-records`` prints the drops by reason and whether the verifier
would rank the bundle, with its findings.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from effectbench.attempts import Ending
from effectbench.baselines import get_baseline
from effectbench.cli import main
from effectbench.errors import DataError, UsageError
from effectbench.mcp.paths import record_path
from effectbench.mcp.records import claim_attempt, read_records, write_record
from effectbench.mcp.server import LEFT, EpisodeServer
from effectbench.packs.mockmed import MockMedProvider
from effectbench.run.runner import DroppedEpisode, run_episode
from effectbench.schema import DropReason, EpisodeRecord, TaskSpec
from effectbench.seam import Episode
from verifier.api import VerifyOptions, verify_bundle
from verifier.report import Status

SYSTEM = "screen_only"
OUTAGE = "model API unreachable (connection refused)"


@pytest.fixture
def pack() -> MockMedProvider:
    return MockMedProvider()


def _row(pack: MockMedProvider, task: TaskSpec, trial: int) -> EpisodeRecord:
    row = run_episode(get_baseline(SYSTEM, pack), pack, task, trial, trial)
    assert isinstance(row, EpisodeRecord)
    return row


def _drop(task: TaskSpec, trial: int, reason: DropReason = DropReason.AGENT_ERROR) -> Any:
    return DroppedEpisode(task.task_id, trial, reason, OUTAGE)


def _fill(pack: MockMedProvider, records: Path, trials: int = 3, skip: Any = ()) -> None:
    for task in pack.tasks():
        for trial in range(trials):
            if (task.task_id, trial) not in skip:
                write_record(records, task.task_id, trial, _row(pack, task, trial))


def test_every_attempt_is_its_own_file_and_reads_back_as_the_runs_attempts(
    pack: MockMedProvider, tmp_path: Path
) -> None:
    ok, dup = pack.tasks()[0], pack.tasks()[2]
    write_record(tmp_path, ok.task_id, 0, _drop(ok, 0), system=SYSTEM)
    write_record(tmp_path, ok.task_id, 0, _row(pack, ok, 0))
    write_record(tmp_path, dup.task_id, 1, _drop(dup, 1, DropReason.INFRASTRUCTURE), SYSTEM)
    write_record(tmp_path, dup.task_id, 1, _drop(dup, 1), system=SYSTEM)
    assert record_path(tmp_path, SYSTEM, ok.task_id, 0, 1).is_file()
    assert record_path(tmp_path, SYSTEM, ok.task_id, 0, 2).is_file()
    run = read_records(tmp_path, pack).run
    assert [(a.task_id, a.trial, a.attempt, a.ending) for a in run.attempts] == [
        (ok.task_id, 0, 1, Ending.AGENT_ERROR),
        (dup.task_id, 1, 1, Ending.INFRASTRUCTURE),
    ]
    assert [r.task_id for r in run.rows] == [ok.task_id]
    assert [(d.task_id, d.reason) for d in run.dropped] == [(dup.task_id, DropReason.AGENT_ERROR)]
    assert run.attempt_of() == {(ok.task_id, 0): 2, (dup.task_id, 1): 2}
    assert run.n_attempts == 4


def test_a_completed_attempt_is_never_followed_by_another(
    pack: MockMedProvider, tmp_path: Path
) -> None:
    """Claiming a new attempt is refused once one completed; a record dir holding one
    anyway (written some other way) is refused as a whole."""
    task = pack.tasks()[0]
    write_record(tmp_path, task.task_id, 0, _row(pack, task, 0))
    with pytest.raises(UsageError, match="already completed .attempt 1"):
        claim_attempt(tmp_path, SYSTEM, task.task_id, 0)
    second = record_path(tmp_path, SYSTEM, task.task_id, 0, 2)
    second.write_bytes(
        record_path(tmp_path, SYSTEM, task.task_id, 0, 1)
        .read_bytes()
        .replace(b'"attempt": 1', b'"attempt": 2')
    )
    with pytest.raises(DataError, match="the first completed attempt counts") as refused:
        read_records(tmp_path, pack)
    assert refused.value.file == str(record_path(tmp_path, SYSTEM, task.task_id, 0, 1))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ("final", "a final drop, yet the cell ran again"),
        ("gap", "attempt 1 is missing"),
        ("renamed", "says attempt 1 but its file name says 3"),
        ("moved", "its file name of another cell"),
    ],
)
def test_pruned_renamed_or_moved_attempts_are_refused(
    pack: MockMedProvider, tmp_path: Path, edit: str, message: str
) -> None:
    task, other = pack.tasks()[0], pack.tasks()[1]
    reason = DropReason.ORACLE_UNREADABLE if edit == "final" else DropReason.AGENT_ERROR
    first = _drop(task, 0, reason)
    write_record(tmp_path, task.task_id, 0, first, system=SYSTEM)
    write_record(tmp_path, task.task_id, 0, _row(pack, task, 0))
    if edit == "gap":
        write_record(tmp_path, task.task_id, 1, _drop(task, 1), system=SYSTEM)
        write_record(tmp_path, task.task_id, 1, _row(pack, task, 1))
        record_path(tmp_path, SYSTEM, task.task_id, 1, 1).unlink()
    elif edit == "renamed":
        renamed = record_path(tmp_path, SYSTEM, task.task_id, 0, 3)
        record_path(tmp_path, SYSTEM, task.task_id, 0, 1).rename(renamed)
    elif edit == "moved":
        data = record_path(tmp_path, SYSTEM, task.task_id, 0, 2).read_bytes()
        record_path(tmp_path, SYSTEM, other.task_id, 0, 2).write_bytes(data)
    with pytest.raises(DataError, match=message):
        read_records(tmp_path, pack)


class _SlowToStart(MockMedProvider):
    """MockMed whose provisioning waits for the test (an episode still starting)."""

    gate = threading.Event()
    entered = threading.Event()

    @contextmanager
    def provision(self, task: TaskSpec, trial: int, params: Mapping[str, Any]) -> Iterator[Episode]:
        self.entered.set()
        assert self.gate.wait(60)
        with super().provision(task, trial, params) as episode:
            yield episode


def test_a_client_leaving_during_provisioning_has_its_drop_written_before_teardown(
    tmp_path: Path,
) -> None:
    """The drop is on disk while the episode is still being provisioned (the SDK's client
    kills its server two seconds after leaving); the episode then ends as that drop."""
    _SlowToStart.gate.clear()
    _SlowToStart.entered.clear()
    pack = _SlowToStart()
    task = pack.tasks()[0]
    server = EpisodeServer(pack, task, 0, tmp_path, name=SYSTEM)
    server.start()
    path = record_path(tmp_path, SYSTEM, task.task_id, 0, 1)
    assert json.loads(path.read_text())["dropped"]["reason"] == "agent_error"  # from the start
    assert _SlowToStart.entered.wait(30)
    leaving = threading.Thread(target=server.stop, kwargs={"timeout": 60})
    leaving.start()
    deadline = time.monotonic() + 10
    while LEFT not in path.read_text() and time.monotonic() < deadline:
        time.sleep(0.01)
    written = json.loads(path.read_text())
    assert written == {
        "attempt": 1,
        "system": SYSTEM,
        "dropped": {"task_id": task.task_id, "trial": 0, "reason": "agent_error", "detail": LEFT},
    }
    assert not server.finished.is_set()  # still provisioning: nothing torn down yet
    _SlowToStart.gate.set()
    leaving.join(60)
    assert server.finished.is_set()
    final = json.loads(path.read_text())
    assert "row" not in final and final["dropped"]["reason"] == "agent_error"
    assert LEFT in final["dropped"]["detail"]
    assert sorted(tmp_path.iterdir()) == [path]


def _submit(
    records: Path, out: Path, capsys: pytest.CaptureFixture[str], *more: str, trials: int = 3
) -> tuple[int, str]:
    capsys.readouterr()
    code = main(
        ["submit", "--pack", "mockmed", "--from-records", str(records), "--name", "my agent"]
        + ["--out", str(out), "--trials", str(trials), *more]
    )
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_submit_from_records_counts_the_drops_and_says_what_keeps_it_from_the_board(
    pack: MockMedProvider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An outage left a drop: the bundle is written, the drop counted, the verifier's drop
    cap named; the episode run again, the same command says it can be ranked once signed."""
    records = tmp_path / "records"
    flaky = pack.tasks()[3]
    _fill(pack, records, skip={(flaky.task_id, 1)})
    write_record(records, flaky.task_id, 1, _drop(flaky, 1), system=SYSTEM)
    code, said = _submit(records, tmp_path / "o1", capsys)
    assert code == 0, said
    assert "26 rows, 1 dropped (1 agent_error)" in said
    assert "cannot be ranked as it is" in said and "pack.drop_cap:" in said
    assert "may be run again" in said
    write_record(records, flaky.task_id, 1, _row(pack, flaky, 1))
    code, said = _submit(records, tmp_path / "o2", capsys)
    assert code == 0, said
    assert "27 rows, 0 dropped; 1 earlier attempt kept" in said
    assert "can be ranked once signed: effectbench sign" in said
    (bundle,) = (tmp_path / "o2").iterdir()
    report = verify_bundle(bundle, VerifyOptions(allow_unsigned=True))
    assert report.status is Status.PREVIEW, report.finding_ids()
    assert report.submission is not None and report.submission.run.n_attempts == 28


def test_too_few_trials_are_named_with_the_option_of_each_door(
    pack: MockMedProvider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = tmp_path / "records"
    _fill(pack, records, trials=2)
    code, said = _submit(records, tmp_path / "out", capsys, trials=2)
    assert code == 0 and "cannot be ranked" in said
    assert "pack.min_trials:" in said and "--trials 3" in said and "--epochs 3" in said


def test_a_run_whose_every_episode_dropped_is_a_bundle_never_ranked(
    pack: MockMedProvider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not a preview at SWER 0: no score is printed, and the verifier refuses it."""
    records = tmp_path / "records"
    for task in pack.tasks():
        for trial in range(3):
            write_record(records, task.task_id, trial, _drop(task, trial), system=SYSTEM)
    code, said = _submit(records, tmp_path / "out", capsys)
    assert code == 0, said
    assert "0 rows, 27 dropped (27 agent_error)" in said and "no episode could be scored" in said
    assert "SWER" not in said and "cannot be ranked" in said
    (bundle,) = (tmp_path / "out").iterdir()
    report = verify_bundle(bundle, VerifyOptions(allow_unsigned=True))
    assert report.status is Status.REFUSED
    assert {"structure.empty", "pack.drop_cap"} <= report.finding_ids()


def test_two_systems_in_one_folder_each_keep_their_attempts(
    pack: MockMedProvider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A second system's attempt at a cell is its own first attempt, never "already
    completed"; ``submit`` takes the system ``--name`` names, and refuses in one line
    when the name is none of them."""
    records = tmp_path / "records"
    _fill(pack, records)
    other = get_baseline("effect_verified", pack)
    task = pack.tasks()[0]
    number, path = claim_attempt(records, other.name, task.task_id, 0)
    assert number == 1 and path == record_path(records, other.name, task.task_id, 0, 1)
    for t in pack.tasks():
        for trial in range(3):
            row = run_episode(other, pack, t, trial, trial)
            if (t.task_id, trial) == (task.task_id, 0):
                from effectbench.mcp.records import finish_attempt

                finish_attempt(path, other.name, 1, row)
            else:
                write_record(records, t.task_id, trial, row)
    assert read_records(records, pack, _wanted(SYSTEM)).run.arm == SYSTEM
    chosen = read_records(records, pack, _wanted(other.name)).run
    assert chosen.arm == other.name and len(chosen.rows) == 27 and not chosen.attempts
    code, said = _submit(records, tmp_path / "out", capsys)
    assert code == 2 and "holds the records of 2 systems" in said and "--name" in said
    assert len(said.strip().splitlines()) == 1
    code, said = _submit_as(records, tmp_path / "out", capsys, SYSTEM)
    assert code == 0 and "27 rows, 0 dropped" in said, said


def _wanted(system: str, trials: int = 3) -> Any:
    from effectbench.mcp.records import Wanted
    from effectbench.schema import Split

    return Wanted(trials, Split.DEV, system=system)


def _submit_as(
    records: Path, out: Path, capsys: pytest.CaptureFixture[str], name: str
) -> tuple[int, str]:
    capsys.readouterr()
    code = main(
        ["submit", "--pack", "mockmed", "--from-records", str(records), "--name", name]
        + ["--out", str(out), "--trials", "3"]
    )
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.mark.parametrize(
    ("stray", "options", "message"),
    [
        ("trial", [], "outside trials 0..2 (--trials 3)"),
        ("split", ["--split", "test"], "outside the test split"),
        ("substrate", ["--substrate", "api"], "--trials"),
    ],
)
def test_submit_from_records_honours_trials_split_and_substrate(
    pack: MockMedProvider,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    stray: str,
    options: list[str],
    message: str,
) -> None:
    """A stray trial-3 file is named, never a fourth trial; a record of another split or
    substrate than the options say is refused the same way, in one line."""
    records = tmp_path / "records"
    _fill(pack, records)
    if stray == "trial":
        task = pack.tasks()[4]
        write_record(records, task.task_id, 3, _row(pack, task, 3))
        options = []
    elif stray == "substrate":  # MockMed is on the web substrate only: api is not offered
        message = "has no 'api' substrate"
    code, said = _submit(records, tmp_path / "out", capsys, *options)
    assert code == 2 and message in said, said
    assert len(said.strip().splitlines()) == 1
    if stray == "trial":
        assert record_path(records, SYSTEM, pack.tasks()[4].task_id, 3).name in said
    held = 3 if stray == "trial" else 2
    code, said = _submit(records, tmp_path / "o2", capsys, trials=5)
    assert code == 2 and f"hold trials 0..{held}, not --trials 5" in said


def test_a_deeply_nested_hand_edited_record_is_one_line(
    pack: MockMedProvider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = tmp_path / "records"
    task = pack.tasks()[0]
    path = write_record(records, task.task_id, 0, _row(pack, task, 0))
    text = path.read_text()
    deep = '"env_fingerprint": {"deep": ' + "[" * 100_000 + "]" * 100_000 + ", "
    path.write_text(text.replace('"env_fingerprint": {', deep, 1))
    code, said = _submit(records, tmp_path / "out", capsys)
    assert code != 0 and "Traceback" not in said and "RecursionError" not in said
    assert len(said.strip().splitlines()) == 1 and path.name in said


def test_a_missing_trial_is_no_attempt(
    pack: MockMedProvider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A cell never run is named as missing; ``pack.attempts`` counts only real attempts."""
    records = tmp_path / "records"
    gone = pack.tasks()[2]
    _fill(pack, records, skip={(gone.task_id, 1)})
    code, said = _submit(records, tmp_path / "out", capsys)
    assert code == 0 and "pack.missing_trials:" in said, said
    (bundle,) = (tmp_path / "out").iterdir()
    report = verify_bundle(bundle, VerifyOptions(allow_unsigned=True))
    assert "pack.missing_trials" in report.finding_ids()
    assert "pack.attempts" not in report.finding_ids()
    assert report.submission is not None and report.submission.run.n_attempts == 26


def test_a_client_asking_for_a_completed_cell_is_told_so_as_an_mcp_error(tmp_path: Path) -> None:
    """The refusal reaches the client (its first request's error), not a closed connection."""
    import sys

    from mcp.shared.exceptions import MCPError

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
    import mcp_screen_agent

    pack = MockMedProvider()
    task = pack.tasks()[0]
    write_record(tmp_path, task.task_id, 0, _row(pack, task, 0))
    command = [sys.executable, "-m", "effectbench.cli", "mcp", "--pack", "mockmed"]
    command += ["--task", task.task_id, "--record-dir", str(tmp_path), "--system", "screen_only"]
    episode = mcp_screen_agent.McpEpisode(command)
    try:
        with pytest.raises(MCPError, match=r"already completed \(attempt 1"):
            episode.call("task")
    finally:
        episode.close()
    assert len(list(tmp_path.glob("*.json"))) == 1  # nothing claimed, nothing written
