"""The MCP episode server over stdio, its record directory and ``submit --from-records``.

Driven by the scripted pixel agent of examples/mcp_screen_agent.py: its row
equals the in-process run of the shipped screen_only pixel baseline, in every
action vocabulary; bad input is a tool error; a client that aborts or leaves
(before reporting, or while the episode is still starting) leaves an
``agent_error`` drop and never a halt; an episode run again keeps both attempts;
reported model calls are the row's cost; ``effectbench mcp`` refuses an unknown
task, trial or substrate, and a cell whose attempt completed.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from support.mcp import server_command

from effectbench.attempts import Ending
from effectbench.baselines import ScreenOnly
from effectbench.cli import main
from effectbench.computer import ActionError, Display
from effectbench.mcp import front
from effectbench.mcp.paths import record_path
from effectbench.mcp.records import read_records, write_record
from effectbench.mcp.server import ENDED, LEFT, EpisodeServer
from effectbench.packs.clinic import ClinicProvider
from effectbench.packs.clinic.web import pixels
from effectbench.run.runner import run_episode
from effectbench.schema import (
    COST_REPORTED_KEY,
    COST_REPORTED_VALUE,
    HARNESS_KEY,
    EpisodeRecord,
    Substrate,
    TaskSpec,
)
from effectbench.screens.browser import shared_browser

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
import mcp_screen_agent  # noqa: E402

from effectbench.seam import VIEW_FIELDS  # noqa: E402

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


def _record(
    record_dir: Path, task_id: str, trial: int, attempt: int = 1, system: str = "mcp-agent"
) -> dict[str, Any]:
    path = record_path(record_dir, system, task_id, trial, attempt)
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def test_the_example_client_over_stdio_writes_the_in_process_row(
    pack: ClinicProvider, tmp_path: Path
) -> None:
    """The same pixel agent, over MCP and in process, leaves the same row (timing aside)."""
    command = server_command("partial_note", 1, tmp_path, "--system", "screen_only")
    assert mcp_screen_agent.play(command) == "success"
    task = _task(pack, "partial_note")
    over_mcp = _record(tmp_path, task.task_id, 1, system="screen_only")["row"]
    # the door records its client (the harness) in the row; the rest is the in-process row
    assert over_mcp["env_fingerprint"].pop("harness")["name"] == "mcp"
    in_process = run_episode(ScreenOnly(pack), pack, task, 1, 1)
    assert _strip(over_mcp) == _strip(in_process.to_row())  # type: ignore[union-attr]
    assert over_mcp["outcome"] == "silent_wrong_effect"


def test_bad_input_is_a_tool_error_and_a_second_report_is_refused(tmp_path: Path) -> None:
    """Off-screen points, unknown keys, control characters, a second report."""
    episode = mcp_screen_agent.McpEpisode(server_command("clean_draft", 0, tmp_path))
    try:
        info = json.loads(episode.call("task"))
        assert info["display"] == {"surface": "web", "width": 1024, "height": 640}
        assert "note" in info["referral"] and "left_click" in info["vocabulary"]
        for name, args, message in (
            ("left_click", {"coordinate": [1024, 5]}, "off the screen"),
            ("key", {"text": "ctrl+Hyperdrive"}, "unknown key name"),
            ("type", {"text": "a\x1b[2Jb"}, "control character"),
            ("scroll", {"coordinate": [5, 5], "scroll_direction": "sideways"}, "scroll_amount"),
            ("left_click_drag", {"coordinate": [5, 5]}, "start_coordinate"),
            ("abort", {"reason": ""}, "at least 1 character"),
            ("report", {"success": True, "halted": True}, "not both"),
        ):
            with pytest.raises(ActionError, match=message):
                episode.call(name, args)
        assert episode.call("screenshot")[:8] == b"\x89PNG\r\n\x1a\n"
        answer = episode.call("report", {"success": False, "halted": True, "message": "unsure"})
        assert answer == ENDED["report"]  # the same words whatever the outcome
        with pytest.raises(ActionError, match="already ended"):
            episode.call("report", {"success": True, "halted": False})
        with pytest.raises(ActionError, match="already ended"):
            episode.call("left_click", {"coordinate": [5, 5]})
    finally:
        episode.close()
    row = _record(tmp_path, "clinic::clean_draft@web", 0)["row"]
    assert row["agent"] == {"reported_success": False, "halted": True, "message": "unsure"}
    assert row["outcome"] == "over_halt"
    assert COST_REPORTED_KEY not in row["env_fingerprint"]  # no model calls were reported


@pytest.mark.parametrize("vocabulary", ["openai", "computer_13"])
def test_every_vocabulary_plays_the_task_to_the_same_row(
    pack: ClinicProvider, tmp_path: Path, vocabulary: str
) -> None:
    """The pixel agent speaking OpenAI's or OSWorld's action names leaves Anthropic's row."""
    command = server_command(
        "partial_note", 1, tmp_path, "--system", "screen_only", "--vocabulary", vocabulary
    )
    assert mcp_screen_agent.play(command) == "success"
    task = _task(pack, "partial_note")
    over_mcp = _record(tmp_path, task.task_id, 1, system="screen_only")["row"]
    assert over_mcp["env_fingerprint"].pop("harness")["name"] == "mcp"  # the door's client
    in_process = run_episode(ScreenOnly(pack), pack, task, 1, 1)
    assert _strip(over_mcp) == _strip(in_process.to_row())  # type: ignore[union-attr]


def _tools(episode: mcp_screen_agent.McpEpisode) -> dict[str, dict[str, Any]]:
    listed = asyncio.run_coroutine_threadsafe(episode._session.list_tools(), episode._loop).result(
        timeout=60
    )
    return {tool.name: tool.input_schema for tool in listed.tools}


@pytest.mark.parametrize(
    ("vocabulary", "required"),
    [
        (
            "anthropic",
            {
                "key": ["text"],
                "left_click": [],
                "left_click_drag": ["start_coordinate", "coordinate"],
                "scroll": ["scroll_direction", "scroll_amount"],
                "zoom": ["region"],
            },
        ),
        (
            "openai",
            {"click": ["x", "y"], "drag": ["path"], "keypress": ["keys"], "wait": []},
        ),
        (
            "computer_13",
            {"MOVE_TO": ["x", "y"], "CLICK": [], "TYPING": ["text"], "DONE": [], "FAIL": []},
        ),
    ],
)
def test_each_action_tool_declares_its_required_parameters(
    tmp_path: Path, vocabulary: str, required: dict[str, list[str]]
) -> None:
    """Every vendor's actions as tools, with their schema; the endings and readback beside."""
    command = server_command("clean_draft", 0, tmp_path, "--vocabulary", vocabulary)
    episode = mcp_screen_agent.McpEpisode(command)
    try:
        tools = _tools(episode)
        for name, params in required.items():
            assert sorted(tools[name].get("required", [])) == sorted(params), name
        assert tools["abort"]["required"] == ["reason"]
        assert tools["report"]["required"] == ["success", "halted"]
        assert "model_calls" in tools["report"]["properties"]
        assert "verify_effect" in tools  # the task declares its effect; the web app reads it
        episode.call("report", {"success": False, "halted": True, "message": "looked only"})
    finally:
        episode.close()


def test_the_product_readback_is_offered_where_the_task_declares_its_effect(
    tmp_path: Path,
) -> None:
    """``verify_effect`` reads the app's own REST readback; an undeclared task has none."""
    episode = mcp_screen_agent.McpEpisode(server_command("clean_draft", 2, tmp_path))
    try:
        before = json.loads(episode.call("verify_effect"))
        assert before["confirmed"] is False and before["verifier"] == "rest:encounters"
        info = json.loads(episode.call("task"))
        display = Display(info["display"]["width"], info["display"]["height"])
        screen = pixels.attempt(
            mcp_screen_agent.McpScreen(episode, display),
            mcp_screen_agent.workflow(info["referral"]),
            info["referral"],
        )
        assert screen.status == "success"
        after = json.loads(episode.call("verify_effect"))
        assert after["confirmed"] is True, after
        episode.call("report", {"success": True, "halted": False, "message": "read back"})
    finally:
        episode.close()
    row = _record(tmp_path, "clinic::clean_draft@web", 2)["row"]
    assert row["outcome"] == "success"
    undeclared = mcp_screen_agent.McpEpisode(server_command("clean_draft_undeclared", 0, tmp_path))
    try:
        assert "verify_effect" not in _tools(undeclared)
        undeclared.call("report", {"success": False, "halted": True, "message": "no"})
    finally:
        undeclared.close()


def test_a_report_with_model_calls_carries_their_cost_marked_as_reported(
    tmp_path: Path,
) -> None:
    """The row's model calls and cost are the report's; bad usage is a tool error."""
    episode = mcp_screen_agent.McpEpisode(server_command("clean_draft", 1, tmp_path))
    calls = [
        {
            "model": "claude-sonnet-4-5",
            "input_tokens": 1200,
            "output_tokens": 80,
            "cost_usd": 0.0048,
        },
        {
            "model": "claude-sonnet-4-5",
            "input_tokens": 2500,
            "output_tokens": 40,
            "cost_usd": 0.0081,
            "latency_s": 1.5,
            "note": "second turn",
        },
    ]
    try:
        for bad in (
            [{**calls[0], "input_tokens": -1}],
            [{**calls[0], "cost_usd": "0.01"}],
            [{**calls[0], "price": 1}],
            [{"model": "x", "input_tokens": 1, "output_tokens": 1}],
        ):
            with pytest.raises(ActionError, match=r"invalid arguments for report: model_calls\.0"):
                episode.call("report", {"success": False, "halted": True, "model_calls": bad})
        answer = episode.call(
            "report", {"success": False, "halted": True, "message": "halt", "model_calls": calls}
        )
        assert answer == ENDED["report"]  # the same words whatever the outcome
    finally:
        episode.close()
    row = _record(tmp_path, "clinic::clean_draft@web", 1)["row"]
    assert row["cost_usd"] == pytest.approx(0.0048 + 0.0081)
    assert [
        (c["index"], c["model"], c["input_tokens"], c["output_tokens"]) for c in row["model_calls"]
    ] == [
        (0, "claude-sonnet-4-5", 1200, 80),
        (1, "claude-sonnet-4-5", 2500, 40),
    ]
    assert (
        row["model_calls"][1]["latency_s"] == 1.5 and row["model_calls"][1]["note"] == "second turn"
    )
    assert row["env_fingerprint"][COST_REPORTED_KEY] == COST_REPORTED_VALUE
    # the client's initialize named it: the harness the row records, submit's default
    from mcp.client.session import DEFAULT_CLIENT_INFO

    client = {"name": DEFAULT_CLIENT_INFO.name, "version": DEFAULT_CLIENT_INFO.version}
    assert row["env_fingerprint"][HARNESS_KEY] == client
    assert EpisodeRecord.from_json(json.dumps(row)).cost_usd == row["cost_usd"]


def _drop(record_dir: Path, task_id: str, trial: int, attempt: int = 1) -> dict[str, Any]:
    record = _record(record_dir, task_id, trial, attempt)
    assert "row" not in record, record  # never a halt row
    assert record["dropped"]["reason"] == "agent_error", record
    return dict(record["dropped"])


def test_abort_is_an_agent_error_drop_and_running_the_cell_again_keeps_both_attempts(
    pack: ClinicProvider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An outage reported through ``abort``; the episode run again; a third run refused."""
    episode = mcp_screen_agent.McpEpisode(server_command("partial_note", 0, tmp_path))
    try:
        episode.call("task")
        answer = episode.call("abort", {"reason": "model API unreachable (HTTP 529 overloaded)"})
        assert answer == ENDED["abort"]
        with pytest.raises(ActionError, match="already ended"):
            episode.call("screenshot")
    finally:
        episode.close()
    drop = _drop(tmp_path, "clinic::partial_note@web", 0)
    assert "aborted: model API unreachable (HTTP 529 overloaded)" in drop["detail"]
    assert mcp_screen_agent.play(server_command("partial_note", 0, tmp_path)) == "success"
    assert sorted(p.name for p in tmp_path.glob("*.json")) == [
        "mcp-agent~clinic_partial_note@web__t0__a1.json",
        "mcp-agent~clinic_partial_note@web__t0__a2.json",
    ]
    assert _drop(tmp_path, "clinic::partial_note@web", 0) == drop  # attempt 1 is untouched
    assert _record(tmp_path, "clinic::partial_note@web", 0, 2)["row"]["outcome"] == (
        "silent_wrong_effect"
    )
    run = read_records(tmp_path, pack).run
    assert [(a.attempt, a.ending) for a in run.attempts] == [(1, Ending.AGENT_ERROR)]
    assert len(run.rows) == 1 and not run.dropped and run.n_attempts == 2
    assert main(["mcp", "--task", "partial_note", "--record-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "already completed (attempt 2" in err and len(err.strip().splitlines()) == 1


def test_a_client_that_leaves_before_reporting_leaves_an_agent_error_drop(
    tmp_path: Path,
) -> None:
    """Acting, then disconnecting without ``report``: the harness around the agent failed."""
    episode = mcp_screen_agent.McpEpisode(server_command("clean_draft", 0, tmp_path))
    try:
        episode.call("task")
        episode.call("left_click", {"coordinate": [174, 127]})
    finally:
        episode.close()
    drop = _drop(tmp_path, "clinic::clean_draft@web", 0)
    assert LEFT in drop["detail"]


def test_a_client_that_leaves_during_provisioning_leaves_an_agent_error_drop(
    tmp_path: Path,
) -> None:
    """The official SDK's client leaves right after ``initialize`` (the episode still
    starting) and kills the server two seconds later: the drop is on disk all the same,
    whatever the load, since the attempt's file is claimed before ``initialize`` is answered."""

    async def leave_at_once() -> None:
        params = StdioServerParameters(
            command=sys.executable, args=server_command("clean_draft", 0, tmp_path)[1:]
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()

    # on a thread of its own: this one may hold the in-process runs' browser loop
    client = threading.Thread(target=asyncio.run, args=(leave_at_once(),))
    client.start()
    client.join(120)
    drop = _drop(tmp_path, "clinic::clean_draft@web", 0)
    assert drop["detail"]


def test_a_screen_other_than_the_display_the_agent_was_told_is_the_harnesss_drop(
    pack: ClinicProvider, tmp_path: Path
) -> None:
    """``task`` tells the front end's display before the episode is provisioned; a screen
    that turns out otherwise drops the episode as ``infrastructure`` (never the agent's)."""
    episode = EpisodeServer(pack, _task(pack, "edit_note"), 0, tmp_path, timeout_s=60)
    assert episode.display == Display(1024, 640) and episode.task_answer() is not None
    episode.agent.display = Display(800, 600)  # a front end that says one size, shows another
    episode.start()
    assert episode.finished.wait(120)
    dropped = _record(tmp_path, "clinic::edit_note@web", 0)["dropped"]
    assert dropped["reason"] == "infrastructure"
    assert "told a 800x600 display" in dropped["detail"] and "1024x640" in dropped["detail"]


def test_a_client_silent_until_the_timeout_is_a_recorded_halt(
    pack: ClinicProvider, tmp_path: Path
) -> None:
    """An episode timeout: the agent was there and never ended it, a halt judged by the oracle."""
    silent = EpisodeServer(pack, _task(pack, "edit_note"), 0, tmp_path, timeout_s=0.2)
    silent.start()
    assert silent.finished.wait(120)
    row = _record(tmp_path, "clinic::edit_note@web", 0)["row"]
    assert row["agent"]["halted"] and "timed out" in row["agent"]["message"]


_GATED_SERVER = """
import asyncio, pathlib, sys, time
from effectbench.mcp.front import Early, serve
from effectbench.mcp.server import EpisodeServer
from effectbench.mcp.tools import listing
from effectbench.packs import get_pack
from effectbench.schema import Substrate
from effectbench.variants import named_tasks

gate, substrate, vocabulary, task = sys.argv[1:5]
pack = get_pack("clinic")
(spec,) = named_tasks(pack, task, (Substrate(substrate),))
episode = EpisodeServer(pack, spec, 0, pathlib.Path(gate).parent, vocabulary=vocabulary)

def start():  # never provisions: the SDK serves the episode's tools, the screen never opens
    while not gate.exists():  # the SDK is not started until the test says so
        time.sleep(0.01)
    from effectbench.mcp.app import build, serve as run
    app = build(episode)
    return lambda: asyncio.run(run(app, episode))

gate = pathlib.Path(gate)
serve(lambda: Early(listing(episode.tools), episode.task_answer()), start)
"""


def _send(process: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()


def _initialize(version: str) -> dict[str, Any]:
    params = {"protocolVersion": version, "capabilities": {"roots": {"listChanged": True}}}
    params["clientInfo"] = {"name": "test", "version": "0"}
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}


def _gated(tmp_path: Path, *argv: str) -> tuple[subprocess.Popen[bytes], Path]:
    gate = tmp_path / "prepared"
    process = subprocess.Popen(
        [sys.executable, "-c", _GATED_SERVER, str(gate), *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    return process, gate


def _ended(process: subprocess.Popen[bytes]) -> str:
    """Close the wire, wait for the server to end; return its stderr (it must hold no
    mismatch between an early answer and the SDK's)."""
    try:
        _, err = process.communicate(timeout=120)  # stdin closed: the server ends
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    said = err.decode()
    assert process.returncode == 0, said
    assert front.MISMATCH not in said, said
    return said


@pytest.mark.parametrize("version", [*front.HANDSHAKE_VERSIONS, "2099-01-01"])
def test_initialize_is_answered_before_the_episode_is_prepared_as_the_sdk_answers_it(
    tmp_path: Path, version: str
) -> None:
    """The answer comes while the SDK is still being prepared; then the SDK takes over.

    The SDK's own answer to the same ``initialize`` (replayed to it) is compared
    with the early one inside the server; a difference is written on stderr.
    """
    process, gate = _gated(tmp_path, "web", "anthropic", "clean_draft")
    assert process.stdout is not None
    _send(process, _initialize(version))
    answer = json.loads(process.stdout.readline())
    assert not gate.exists()  # answered while start() still waits
    assert answer == {"jsonrpc": "2.0", "id": 1, "result": front.initialize_result(version)}
    assert answer["result"]["protocolVersion"] == (
        version if version in front.HANDSHAKE_VERSIONS else front.HANDSHAKE_VERSIONS[-1]
    )
    gate.touch()
    _send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    _sdk_served(process, 2)
    _ended(process)


def _sdk_served(process: subprocess.Popen[bytes], ident: int) -> None:
    """Send a call only the SDK answers and read its answer (the next message on the wire:
    the SDK's answers to the requests answered early are not passed on). The SDK answers in
    order, so every request before it has had the SDK's answer, compared inside the server."""
    assert process.stdout is not None
    call = {"name": "no_such_tool", "arguments": {}}
    _send(process, {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": call})
    refused = json.loads(process.stdout.readline())
    assert refused["id"] == ident, refused
    assert refused["result"]["isError"] and "no tool named 'no_such_tool'" in str(refused)


@pytest.mark.parametrize(
    ("substrate", "vocabulary", "task"),
    [
        ("web", "anthropic", "clean_draft"),
        ("web", "openai", "clean_draft_undeclared"),
        # the desktop's tools are listed from its pack, which needs PyGObject (desktop extra)
        pytest.param("desktop", "computer_13", "clean_draft", marks=pytest.mark.desktop),
    ],
)
def test_the_tool_list_and_the_task_are_answered_before_the_sdk_as_it_answers_them(
    tmp_path: Path, substrate: str, vocabulary: str, task: str
) -> None:
    """An agent's first steps (the tools, the task) are answered from the plan while the SDK
    is still being started, the episode not provisioned; the SDK's own answers to the same
    requests (replayed to it once it serves) are compared inside the server, and hold the
    same: one list and one task, whoever answers."""
    process, gate = _gated(tmp_path, substrate, vocabulary, task)
    assert process.stdout is not None
    _send(process, _initialize("2025-06-18"))
    _send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    _send(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    call = {"name": "task", "arguments": {}}
    _send(process, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call})
    answers = [json.loads(process.stdout.readline()) for _ in range(3)]
    assert not gate.exists()  # all three answered before the SDK was even started
    assert [a["id"] for a in answers] == [1, 2, 3]
    names = [tool["name"] for tool in answers[1]["result"]["tools"]]
    assert names[:4] == ["task", "screenshot", "report", "abort"]
    assert ("verify_effect" in names) is (task == "clean_draft")
    assert ("a11y_tree" in names) is (substrate == "desktop")
    told = json.loads(answers[2]["result"]["content"][0]["text"])
    assert set(told) == set(VIEW_FIELDS) and told["display"]["surface"] == substrate
    actions = set(names) - {"task", "screenshot", "report", "abort"}
    assert told["vocabulary"] and set(told["vocabulary"]) <= actions
    assert {k: told["display"][k] for k in ("width", "height")} == {
        "web": {"width": 1024, "height": 640}
    }.get(substrate, {"width": 1024, "height": 768})
    gate.touch()
    _sdk_served(process, 4)
    _ended(process)


def test_a_client_that_leaves_right_after_initialize_leaves_an_agent_error_drop(
    tmp_path: Path,
) -> None:
    """Closing the wire before the episode is even provisioned: a drop, never a halt row."""
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
    assert LEFT in _drop(tmp_path, "clinic::clean_draft@web", 0)["detail"]
    assert front.MISMATCH not in err.decode()


def test_a_client_killed_while_its_episode_starts_leaves_its_drop_and_no_traceback(
    tmp_path: Path,
) -> None:
    """The client dies (both ends of its wire closed) with a ``task`` call still waiting on
    the episode's start: the drop says the client left, never a cancelled future's state, and
    the server writes no traceback for the pipe it can no longer write to."""
    process = subprocess.Popen(
        server_command("clean_draft", 0, tmp_path),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stdin is not None
    _send(process, _initialize("2025-06-18"))
    assert json.loads(process.stdout.readline())["id"] == 1
    _send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    _send(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    call = {"name": "task", "arguments": {}}
    _send(process, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call})
    process.stdout.close()  # killed: nobody reads the answers any more
    process.stdin.close()
    assert process.stderr is not None
    said = process.stderr.read().decode()  # until the server exits and closes it
    process.wait(timeout=300)
    assert process.returncode == 0, said
    assert "Traceback" not in said and "BrokenPipeError" not in said, said
    detail = _drop(tmp_path, "clinic::clean_draft@web", 0)["detail"]
    assert LEFT in detail and "InvalidStateError" not in detail


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
        + ["--out", str(out), "--trials", "3"]
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


@pytest.mark.parametrize("text", ["clinic::clean_draft", "clean_draft", "clinic::clean_draft@web"])
def test_a_base_task_id_with_a_substrate_names_its_variant(pack: ClinicProvider, text: str) -> None:
    """The manifest's base id is accepted with ``--substrate`` (mcp, run, submit alike)."""
    from effectbench.variants import named_tasks

    (task,) = named_tasks(pack, text, (Substrate.WEB,))
    assert task.task_id == "clinic::clean_draft@web"
    (api,) = named_tasks(pack, "clinic::clean_draft", (Substrate.API,))
    assert api.task_id == "clinic::clean_draft"
