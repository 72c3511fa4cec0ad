"""The vendor agent loops of examples/, offline: recorded sessions replayed on real episodes.

Each loop (Anthropic's computer tool, OpenAI's computer use) plays a clinic task through
``effectbench mcp`` on the web and on the desktop from a recorded session and completes
it: the row is a success and carries the metered model calls, whose cost is the
session's usage at the model's price. The session's first call fails transiently and is
tried again after a backoff; the model's context never holds more than ``--history``
screenshots; the tool each model takes is the one sent. On the outage sessions the
loops retry, then abort: an ``agent_error`` drop on disk, never a row.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from effectbench.mcp.paths import record_path

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "examples" / "traces"
sys.path.insert(0, str(ROOT / "examples"))
import agent_kit  # noqa: E402
import anthropic_computer_agent as claude_loop  # noqa: E402
import openai_computer_agent as openai_loop  # noqa: E402

LOOPS = {"anthropic": claude_loop, "openai": openai_loop}


def _played(
    vendor: str, trace: str, record_dir: Path, monkeypatch: pytest.MonkeyPatch, code: int = 0
) -> tuple[list[dict[str, Any]], list[float], str]:
    """Replay ``trace`` with ``vendor``'s loop (exiting ``code``); return the requests it
    made, the backoff delays it waited and what it printed."""
    made: list[Any] = []
    real = LOOPS[vendor].ReplayClient

    def keep(trace: dict[str, Any]) -> Any:
        client = real(trace)
        made.append(client)
        return client

    monkeypatch.setattr(LOOPS[vendor], "ReplayClient", keep)
    waited: list[float] = []
    argv = ["--dry-run", str(TRACES / trace), "--record-dir", str(record_dir)]
    assert LOOPS[vendor].main(argv, sleep=waited.append) == code
    (client,) = made
    return client.replay.requests, waited, ""


def _record(record_dir: Path, vendor: str, substrate: str) -> dict[str, Any]:
    system = f"{vendor}-computer-agent"  # the loop's default --system
    path = record_path(record_dir, system, f"clinic::clean_draft@{substrate}", 0)
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _expected_cost(trace: str, price: tuple[float, float]) -> float:
    turns = json.loads((TRACES / trace).read_text())["turns"]
    usages = [t["response"]["usage"] for t in turns if "response" in t]
    return (
        float(sum(u["input_tokens"] * price[0] + u["output_tokens"] * price[1] for u in usages))
        / 1e6
    )


def _most_screenshots(vendor: str, requests: list[dict[str, Any]]) -> int:
    """The most screenshots the model's context held at any request."""
    if vendor == "anthropic":  # the whole conversation is sent each time
        return max(json.dumps(r["messages"]).count('"type": "image"') for r in requests)
    most = chain = 0  # chained on the server: a request adds to the chain it continues
    for r in requests:
        text = json.dumps(r["input"])
        sent = text.count('"input_image"') + text.count('"computer_call_output"')
        chain = chain + sent if "previous_response_id" in r else sent
        most = max(most, chain)
    return most


def _check_completed(
    vendor: str, substrate: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace = f"{vendor}_clean_draft_{substrate}_t0.json"
    requests, waited, _ = _played(vendor, trace, tmp_path, monkeypatch)
    record = _record(tmp_path, vendor, substrate)
    assert "row" in record, record
    row = record["row"]
    assert row["outcome"] == "success" and row["agent"]["reported_success"] is True
    assert row["arm"] == f"{vendor}-computer-agent"
    recorded = json.loads((TRACES / trace).read_text())
    model = recorded["model"]
    price = agent_kit.price_of(model, recorded.get("price"))
    turns = [t for t in json.loads((TRACES / trace).read_text())["turns"] if "response" in t]
    assert len(row["model_calls"]) == len(turns)  # the failed call is retried, not metered
    assert {c["model"] for c in row["model_calls"]} == {model}
    assert row["cost_usd"] == pytest.approx(_expected_cost(trace, price), rel=1e-6)
    assert row["cost_usd"] > 0 and row["env_fingerprint"]["cost_reported_by"] == "submitter"
    assert len(waited) == 1 and 0 < waited[0] <= agent_kit.BACKOFF_S  # one backoff, then on
    assert len(requests) == len(turns) + 1
    assert _most_screenshots(vendor, requests) <= 3  # --history 3: never more screenshots
    if vendor == "anthropic":
        assert {r["betas"][0] for r in requests} == {
            claude_loop.BETAS[claude_loop.tool_version(model)]
        }
        assert requests[0]["tools"][0]["type"] == claude_loop.tool_version(model)
    else:
        tool = requests[0]["tools"][0]
        assert tool["type"] == openai_loop.TOOLS[model]
        assert ("display_width" in tool) == (tool["type"] == openai_loop.PREVIEW)


@pytest.mark.parametrize(
    ("vendor", "substrate"),
    [
        pytest.param(vendor, substrate, marks=getattr(pytest.mark, group))
        for substrate, group in (("web", "web"), ("desktop", "desktop"))
        for vendor in ("anthropic", "openai")
    ],
)
def test_each_loop_completes_a_clinic_task_and_records_its_usage(
    vendor: str, substrate: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _check_completed(vendor, substrate, tmp_path, monkeypatch)


@pytest.mark.web
@pytest.mark.parametrize("vendor", ["anthropic", "openai"])
def test_an_outage_leaves_an_agent_error_drop_never_a_row(
    vendor: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    requests, waited, _ = _played(
        vendor, f"{vendor}_outage.json", tmp_path, monkeypatch, code=agent_kit.ABORTED
    )
    record = _record(tmp_path, vendor, "web")
    assert "row" not in record, record
    assert record["dropped"]["reason"] == "agent_error"
    assert "the model API failed after 6 tries" in record["dropped"]["detail"]
    assert len(requests) == 1 + agent_kit.RETRIES
    assert len(waited) == agent_kit.RETRIES
    assert all(
        b >= a * 0.99 or b >= agent_kit.BACKOFF_CAP_S / 2
        for a, b in zip(waited, waited[1:], strict=False)
    )


def test_each_model_gets_the_tool_it_takes() -> None:
    assert claude_loop.tool_version("claude-opus-4-5-20251101") == "computer_20251124"
    assert claude_loop.tool_version("claude-sonnet-4-6") == "computer_20251124"
    assert claude_loop.tool_version("claude-sonnet-4-5") == "computer_20250124"
    assert claude_loop.tool_version("claude-opus-4-1-20250805") == "computer_20250124"
    assert claude_loop.tool_version("claude-opus-4-20250514") == "computer_20250124"
    with pytest.raises(SystemExit, match="--tool-version"):
        claude_loop.tool_version("claude-next")
    assert claude_loop.tool_version("claude-next", "computer_20251124") == "computer_20251124"
    screen = {"width": 1024, "height": 640}
    assert openai_loop.computer_tool("computer-use-preview-2025-03-11", None, screen, "web") == {
        "type": "computer_use_preview",
        "display_width": 1024,
        "display_height": 640,
        "environment": "browser",
    }
    assert openai_loop.computer_tool("gpt-5.4", None, screen, "desktop") == {"type": "computer"}
    with pytest.raises(SystemExit, match="--tool"):
        openai_loop.computer_tool("gpt-4o", None, screen, "web")


def test_prices_are_known_or_given() -> None:
    assert agent_kit.price_of("claude-opus-4-5-20251101", None) == (5.0, 25.0)
    assert agent_kit.price_of("claude-opus-4-1", None) == (15.0, 75.0)
    assert agent_kit.price_of("anything", "2.5,10") == (2.5, 10.0)
    with pytest.raises(SystemExit, match="--price"):
        agent_kit.price_of("gpt-5.4", None)
    meter = agent_kit.Meter("m", 3.0, 15.0)
    meter.add(1_000_000, 100_000, 1.0)
    assert meter.cost_usd == pytest.approx(4.5)


class _Status(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(f"HTTP {code}")
        self.status_code = code


class APIConnectionError(Exception):
    """Named as both vendors' clients name a dropped connection."""


def test_transient_failures_are_retried_with_growing_waits_and_others_are_outages() -> None:
    waited: list[float] = []
    answers: list[Exception | str] = [_Status(529), APIConnectionError("reset"), _Status(503), "ok"]

    def call() -> str:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert agent_kit.call_with_retries(call, sleep=waited.append) == "ok"
    assert len(waited) == 3 and waited[2] > waited[0]
    for code in (400, 401, 403):
        tries: list[int] = []

        def refused(code: int = code, tries: list[int] = tries) -> str:
            tries.append(code)
            raise _Status(code)

        with pytest.raises(agent_kit.Outage, match=f"HTTP {code}"):
            agent_kit.call_with_retries(refused, sleep=waited.append)
        assert tries == [code]  # not transient: no second try


def test_the_conversation_keeps_the_last_screenshots_only() -> None:
    shot = claude_loop._image(b"png")
    messages = [{"role": "user", "content": [{"type": "text", "text": "go"}, shot]}]
    for i in range(5):
        use = {"type": "tool_use", "id": f"t{i}", "name": "computer", "input": {}}
        messages.append({"role": "assistant", "content": [use]})
        result = claude_loop._result(f"t{i}", b"png")
        messages.append({"role": "user", "content": [result]})
    kept = claude_loop.bounded(messages, 2)
    assert json.dumps(kept).count('"image"') == 2
    assert json.dumps(kept).count(claude_loop.DROPPED_SHOT) == 4
    assert kept[-1] == messages[-1] and kept[-3] == messages[-3]  # the newest two untouched
    assert json.dumps(messages).count('"image"') == 6  # the history itself is kept whole
