"""The MCP episode server over stdio, its record directory and ``submit --from-records``.

Driven by the scripted pixel agent of examples/mcp_screen_agent.py: its row
equals the in-process run of the shipped screen_only pixel baseline; bad input
is a tool error or a recorded halt; a client that leaves or never reports is a
recorded halt; ``effectbench mcp`` refuses an unknown task, trial or substrate.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.mcp import server_command

from effectbench.baselines import ScreenOnly
from effectbench.cli import main
from effectbench.computer import ActionError
from effectbench.mcp import front
from effectbench.mcp.records import read_records, write_record
from effectbench.mcp.server import EpisodeServer, record_path
from effectbench.packs.clinic import ClinicProvider
from effectbench.runner import run_episode
from effectbench.schema import Substrate, TaskSpec
from effectbench.screens.browser import shared_browser

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
import anthropic_computer_agent  # noqa: E402
import mcp_screen_agent  # noqa: E402

pytestmark = pytest.mark.web


@pytest.fixture(scope="module")
def pack() -> Iterator[ClinicProvider]:
    provider = ClinicProvider()
    yield provider
    provider.close()
    shared_browser().close()


def _task(pack: ClinicProvider, name: str) -> TaskSpec:
    return next(t for t in pack.tasks() if t.task_id == f"clinic::{name}@web")


def _strip(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in ("latency_s", "started_at", "finished_at")}


def _record(record_dir: Path, task_id: str, trial: int) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(record_path(record_dir, task_id, trial).read_text())
    return data


def test_the_example_client_over_stdio_writes_the_in_process_row(
    pack: ClinicProvider, tmp_path: Path
) -> None:
    """The same pixel agent, over MCP and in process, leaves the same row (timing aside)."""
    command = server_command("partial_note", 1, tmp_path, "--system", "screen_only")
    assert mcp_screen_agent.play(command) == "success"
    task = _task(pack, "partial_note")
    over_mcp = _record(tmp_path, task.task_id, 1)["row"]
    in_process = run_episode(ScreenOnly(pack), pack, task, 1, 1)
    assert _strip(over_mcp) == _strip(in_process.to_row())  # type: ignore[union-attr]
    assert over_mcp["outcome"] == "silent_wrong_effect"


def test_bad_input_is_a_tool_error_and_a_second_report_is_refused(tmp_path: Path) -> None:
    """Off-screen points, unknown keys, control characters, early and second reports."""
    episode = mcp_screen_agent.McpEpisode(server_command("clean_draft", 0, tmp_path))
    try:
        info = json.loads(episode.call("task"))
        assert info["display"] == {"width": 1024, "height": 640}
        assert "note" in info["referral"] and info["substrate"] == "web"
        for name, args, message in (
            ("left_click", {"coordinate": [1024, 5]}, "off the screen"),
            ("key", {"text": "ctrl+Hyperdrive"}, "unknown key name"),
            ("type", {"text": "a\x1b[2Jb"}, "control character"),
            ("scroll", {"coordinate": [5, 5], "scroll_direction": "sideways"}, "needs"),
            ("report", {"success": True, "halted": False}, "act before reporting success"),
            ("report", {"success": True, "halted": True}, "not both"),
        ):
            with pytest.raises(ActionError, match=message):
                episode.call(name, args)
        assert episode.call("screenshot")[:8] == b"\x89PNG\r\n\x1a\n"
        episode.call("report", {"success": False, "halted": True, "message": "unsure"})
        with pytest.raises(ActionError, match="already been reported"):
            episode.call("report", {"success": True, "halted": False})
        with pytest.raises(ActionError, match="already been reported"):
            episode.call("left_click", {"coordinate": [5, 5]})
    finally:
        episode.close()
    row = _record(tmp_path, "clinic::clean_draft@web", 0)["row"]
    assert row["agent"] == {"reported_success": False, "halted": True, "message": "unsure"}
    assert row["outcome"] == "over_halt"


def test_a_client_that_leaves_or_never_reports_is_a_recorded_halt(
    pack: ClinicProvider, tmp_path: Path
) -> None:
    """Disconnect mid-episode and an episode timeout: each a halt judged by the oracle."""
    left = EpisodeServer(pack, _task(pack, "clean_draft"), 0, tmp_path)
    left.start()
    left.stop()
    row = _record(tmp_path, "clinic::clean_draft@web", 0)["row"]
    assert row["agent"]["halted"] and "disconnected" in row["agent"]["message"]
    assert row["outcome"] == "over_halt"
    silent = EpisodeServer(pack, _task(pack, "edit_note"), 0, tmp_path, timeout_s=0.2)
    silent.start()
    assert silent.finished.wait(120)
    row = _record(tmp_path, "clinic::edit_note@web", 0)["row"]
    assert row["agent"]["halted"] and "timed out" in row["agent"]["message"]


_GATED_SERVER = """
import asyncio, pathlib, sys, time
from types import SimpleNamespace
from effectbench.mcp import front
from effectbench.schema import Substrate
gate = pathlib.Path(sys.argv[1])

def prepare():
    while not gate.exists():  # the episode is not prepared until the test says so
        time.sleep(0.01)
    from effectbench.mcp.app import build
    app = build(SimpleNamespace(task=SimpleNamespace(substrate=Substrate.WEB)))
    return lambda: asyncio.run(app.run_stdio_async())

front.serve(prepare)
"""


def _send(process: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()


def _initialize(version: str) -> dict[str, Any]:
    params = {"protocolVersion": version, "capabilities": {"roots": {"listChanged": True}}}
    params["clientInfo"] = {"name": "test", "version": "0"}
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}


@pytest.mark.parametrize("version", [*front.HANDSHAKE_VERSIONS, "2099-01-01"])
def test_initialize_is_answered_before_the_episode_is_prepared_as_the_sdk_answers_it(
    tmp_path: Path, version: str
) -> None:
    """The answer comes while the episode is still being prepared; then the SDK takes over.

    The SDK's own answer to the same ``initialize`` (replayed to it) is compared
    with the early one inside the server; a difference is written on stderr.
    """
    gate = tmp_path / "prepared"
    process = subprocess.Popen(
        [sys.executable, "-c", _GATED_SERVER, str(gate)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    try:
        _send(process, _initialize(version))
        answer = json.loads(process.stdout.readline())
        assert not gate.exists()  # answered while prepare() still waits
        assert answer == {"jsonrpc": "2.0", "id": 1, "result": front.initialize_result(version)}
        assert answer["result"]["protocolVersion"] == (
            version if version in front.HANDSHAKE_VERSIONS else front.HANDSHAKE_VERSIONS[-1]
        )
        gate.touch()
        _send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _send(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        listed = json.loads(process.stdout.readline())  # the SDK's answer to initialize is not
        assert listed["id"] == 2  # passed on: the next message is the answer to tools/list
        assert "screenshot" in {tool["name"] for tool in listed["result"]["tools"]}
        _, err = process.communicate(timeout=120)  # stdin closed: the server ends
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, err.decode()
    assert front.MISMATCH not in err.decode()


def test_a_client_that_leaves_right_after_initialize_is_a_recorded_halt(tmp_path: Path) -> None:
    """Leaving before the episode is even provisioned still ends in the episode's halt row."""
    process = subprocess.Popen(
        server_command("clean_draft", 0, tmp_path),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    _send(process, _initialize("2025-06-18"))
    assert json.loads(process.stdout.readline())["id"] == 1
    _, err = process.communicate(timeout=300)
    assert process.returncode == 0, err.decode()
    row = _record(tmp_path, "clinic::clean_draft@web", 0)["row"]
    assert row["agent"]["halted"] and "disconnected" in row["agent"]["message"]
    assert front.MISMATCH not in err.decode()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--task", "no_such_task"], "has no task 'no_such_task' on web"),
        (["--task", "clean_draft", "--trial", "-1"], "--trial must be 0 or more"),
        (["--task", "clean_draft", "--substrate", "api"], "serves one screen substrate"),
        (["--task", "clean_draft", "--substrate", "moon"], "unknown substrate 'moon'"),
        (["--task", "clean_draft", "--pack", "nope"], "nope"),
    ],
)
def test_mcp_refuses_an_unknown_task_trial_or_substrate(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``effectbench mcp`` with bad arguments exits 2 with one line, no server started."""
    assert main(["mcp", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_submit_from_records_makes_a_bundle_verify_accepts(
    pack: ClinicProvider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A record dir covering a split becomes a bundle that verify accepts as a preview.

    The records here are written by the same writer the MCP server uses, from
    in-process episodes on the api variants (3 trials of the dev split, the
    board's minimum; the MCP path itself is the first test of this module).
    """
    records = tmp_path / "records"
    tasks = [t for t in pack.tasks() if t.substrate is Substrate.API and t.split.value == "dev"]
    sut = ScreenOnly(pack)
    for task in tasks:
        for trial in range(3):
            write_record(records, task.task_id, trial, run_episode(sut, pack, task, trial, trial))
    assert read_records(records, pack).trials == 3
    out = tmp_path / "out"
    code = main(
        ["submit", "--pack", "clinic", "--from-records", str(records), "--name", "pixel bot"]
        + ["--out", str(out)]
    )
    assert code == 0
    (bundle,) = out.iterdir()
    capsys.readouterr()
    assert main(["verify", "--allow-unsigned", str(bundle)]) == 0
    assert "accepted" in capsys.readouterr().out
    # each record's receipt became the bundle's (one per row, in row order)
    rows = (bundle / "episodes.jsonl").read_bytes().splitlines()
    receipts = [json.loads(r) for r in (bundle / "receipts.jsonl").read_bytes().splitlines()]
    assert [r["episode_id"] for r in receipts] == [json.loads(r)["episode_id"] for r in rows]
    (records / "junk.json").write_text("[1, 2]")
    assert (
        main(
            ["submit", "--pack", "clinic", "--from-records", str(records)]
            + ["--name", "x", "--out", str(tmp_path / "o2")]
        )
        == 2
    )
    assert "junk.json" in capsys.readouterr().err


def test_the_vendor_agent_loop_replays_a_recorded_session_offline(tmp_path: Path) -> None:
    """The Anthropic computer-use loop, --dry-run: no key, no network, a real episode and row."""
    trace = ROOT / "examples" / "traces" / "anthropic_clean_draft_t0.json"
    argv = ["--dry-run", str(trace), "--record-dir", str(tmp_path)]
    assert anthropic_computer_agent.main(argv) == 0
    row = _record(tmp_path, "clinic::clean_draft@web", 0)["row"]
    assert row["arm"] == "anthropic-computer-agent" and row["outcome"] == "success"
    assert row["agent"]["reported_success"] is True
