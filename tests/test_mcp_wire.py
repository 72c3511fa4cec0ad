"""The MCP episode server's wire: what a hostile or broken client sends is answered.

A line that is not JSON, JSON that is not a JSON-RPC message and a line over the
size bound each get a JSON-RPC error (never silence); coordinates and flags are typed
strictly (no ``"5"`` or ``true`` as a coordinate); ``a11y_set_text`` applies the same
text rule as ``type``. The server is the real one, a subprocess over stdio."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from support.computer import RecordingScreen
from support.mcp import server_command as mcp_server_command

from effectbench.computer import A11yNode, ActionError, Display
from effectbench.mcp.paths import record_path
from effectbench.mcp.server import RemoteAgent, _Call
from effectbench.mcp.shape import MAX_DEPTH, MAX_MESSAGE_BYTES
from effectbench.mcp.transport import judge_line, recover_id
from effectbench.packs.mockmed import MockMedProvider
from effectbench.seam import AgentTask

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

import mcp_screen_agent  # noqa: E402


def _server(record_dir: Path) -> list[str]:
    return mcp_server_command("clean_draft", 0, record_dir)


def test_malformed_and_oversized_messages_are_answered_with_json_rpc_errors(
    tmp_path: Path,
) -> None:
    lines = [
        b"this is not json",
        b'{"jsonrpc": "2.0", "id": 7, "method": 5}',
        b'{"jsonrpc": "1.0", "id": "abc", "method": "ping"}',
        b"[1, 2, 3]",
        b'{"jsonrpc": "2.0", "id": 9, "method": "x", "params": ' + b"1" * MAX_MESSAGE_BYTES + b"}",
        b'{"jsonrpc": "2.0", "id": 3, "method": "ping"}',
    ]
    done = subprocess.run(
        _server(tmp_path),
        input=b"\n".join(lines) + b"\n",
        capture_output=True,
        timeout=180,
        check=False,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    errors = [(a.get("id"), a["error"]["code"]) for a in answers if "error" in a]
    assert errors == [(None, -32700), (7, -32600), ("abc", -32600), (None, -32600), (9, -32600)]
    too_long = answers[4]["error"]["message"]
    assert f"longer than {MAX_MESSAGE_BYTES} bytes" in too_long
    assert answers[5]["id"] == 3 and "result" in answers[5]  # the wire still works after them
    assert done.returncode == 0, done.stderr.decode()[-2000:]


def _ask(process: subprocess.Popen[bytes], message: dict[str, Any] | bytes) -> None:
    assert process.stdin is not None
    line = message if isinstance(message, bytes) else json.dumps(message).encode()
    process.stdin.write(line + b"\n")
    process.stdin.flush()


def _answer(process: subprocess.Popen[bytes], ident: int) -> dict[str, Any]:
    """Read the wire until the answer to request ``ident`` (notifications skipped)."""
    assert process.stdout is not None
    while line := process.stdout.readline():
        answer: dict[str, Any] = json.loads(line)
        if answer.get("id") == ident:
            return answer
    raise AssertionError(f"the wire closed before answering request {ident}")


@pytest.mark.web
def test_a_line_nested_100000_deep_is_answered_with_its_id_and_the_episode_goes_on(
    tmp_path: Path,
) -> None:
    """No parser recurses into the line: its id is found, the error names the limit, and
    the same episode then takes the agent's report and records its row."""
    deep = b"[" * 100_000 + b"]" * 100_000
    line = b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": ' + deep + b"}"
    process = subprocess.Popen(
        _server(tmp_path), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        params = {"protocolVersion": "2025-06-18", "capabilities": {}}
        params["clientInfo"] = {"name": "test", "version": "0"}
        _ask(process, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
        assert "result" in _answer(process, 1)
        _ask(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _ask(process, line)
        error = _answer(process, 2)["error"]
        assert error["code"] == -32600 and f"deeper than {MAX_DEPTH} levels" in error["message"]
        report = {"success": False, "halted": True, "message": "unsure"}
        call = {"name": "report", "arguments": report}
        _ask(process, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call})
        answered = _answer(process, 3)
        assert "result" in answered and not answered["result"].get("isError"), answered
        _, err = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, err.decode()[-2000:]
    record = json.loads(
        record_path(tmp_path, "mcp-agent", "clinic::clean_draft@web", 0, 1).read_text()
    )
    assert record["row"]["agent"]["halted"] is True


@pytest.mark.parametrize(
    ("line", "ident"),
    [
        (b'{"jsonrpc": "2.0", "id": 7, "params": [[[]]]}', 7),
        (b'{"params": {"id": 3, "x": "\\"id\\": 4"}, "id": "top"}', "top"),
        (b'{"\\u0069d": 11, "method": "x"', 11),
        (b'{"id": 12345678901234567890}', None),  # too long to be an id we echo
        (b'{"id": 1.5}', None),
        (b'{"id": {"nested": 1}}', None),
        (b'[{"id": 1}]', None),
        (b'{"method": "x", "params": [1, 2', None),
    ],
)
def test_the_id_of_a_line_is_recovered_without_parsing_it(line: bytes, ident: object) -> None:
    assert recover_id(line) == ident


def test_a_json_rpc_message_passes_the_wire_unchanged() -> None:
    assert judge_line(b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}') is None
    assert judge_line(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}') is None
    assert judge_line(b"\xff\xfe") is not None  # not UTF-8: a parse error


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("left_click", {"coordinate": ["5", 5]}),
        ("left_click", {"coordinate": [True, 5]}),
        ("left_click", {"coordinate": [5.5, 5]}),
        ("scroll", {"coordinate": [5, 5], "scroll_direction": "down", "scroll_amount": "3"}),
        ("report", {"success": "yes", "halted": False}),
    ],
)
def test_arguments_are_typed_strictly(tmp_path: Path, name: str, arguments: dict[str, Any]) -> None:
    episode = mcp_screen_agent.McpEpisode(_server(tmp_path))
    try:
        with pytest.raises(ActionError, match="validation error|valid"):
            episode.call(name, arguments)
        episode.call("report", {"success": False, "halted": True, "message": "done"})
    finally:
        episode.close()
    row = json.loads(next(tmp_path.glob("*.json")).read_text())["row"]
    assert row["agent"]["halted"] is True  # nothing the refused call carried was acted on


_MOCKMED = MockMedProvider()
TASK = AgentTask.of_episode(_MOCKMED.tasks()[0], {}, "ep-any")
"""Any agent-facing task (the accessibility tools never read it)."""


class _Desktop(RecordingScreen):
    """A desktop whose accessibility tools record what reaches them (the harness's checks
    sit before them)."""

    def __init__(self) -> None:
        super().__init__(Display(800, 600))
        self.typed: list[tuple[str, str]] = []

    def a11y_tree(self) -> A11yNode:
        raise AssertionError("not read here")

    def a11y_action(self, node: str, action: str) -> None:
        raise AssertionError("not acted here")

    def a11y_set_text(self, node: str, text: str) -> None:
        self.typed.append((node, text))


@pytest.mark.parametrize("text", ["a\x1b[2Jb", "note\ufffe", "hidden\U000e0041tag", "x\u202ey"])
def test_a11y_set_text_applies_the_text_rule_of_type(text: str) -> None:
    desktop = _Desktop()
    agent = RemoteAgent("mcp")
    call = _Call("a11y_set_text", {"node": "n1", "text": text}, Future())
    with pytest.raises(ActionError, match="cannot be typed"):
        agent._serve(TASK, desktop, call)
    assert desktop.typed == []
    fine = _Call("a11y_set_text", {"node": "n1", "text": "Zoë\tnote\n"}, Future())
    assert agent._serve(TASK, desktop, fine) == ("text", "done")
    assert desktop.typed == [("n1", "Zoë\tnote\n")]
