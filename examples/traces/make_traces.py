"""Write the recorded sessions the vendor loops replay offline (``--dry-run``).

Each session is the steps of the shipped pixel driver on a real episode (the clinic's
web app in Chromium, or its GTK app on a desktop), played once over MCP and written as
the turns a vendor's model would have sent: Anthropic ``tool_use`` blocks, or OpenAI
``computer_call`` items (one action each for ``computer-use-preview``, batches for the
``computer`` tool). Their token counts are illustrative (what a call with the screenshots
in context costs in the order of magnitude), not measured. The first turn of each
completed session is a transient failure of the model's API (an overload, a rate limit),
so a replay also shows the loop's backoff; the outage sessions fail on every call.

    python examples/traces/make_traces.py      # rewrites examples/traces/*.json
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from agent_kit import PRICES  # noqa: E402
from mcp_screen_agent import McpEpisode, McpScreen  # noqa: E402

from effectbench.computer import Display, MouseButton  # noqa: E402
from effectbench.packs.clinic.desktop import pixel_driver  # noqa: E402
from effectbench.packs.clinic.tasks import TASKS  # noqa: E402
from effectbench.packs.clinic.web import pixels  # noqa: E402

TASK, TRIAL = "clean_draft", 0
WAIT_S = {"web": 1, "desktop": 2}
"""How long a replayed session waits after a click that posts (the app answers meanwhile)."""
ILLUSTRATIVE_PRICE = "2.5,15"
"""The price (USD per million tokens in, out) a session of a model :data:`PRICES` does not
list replays at: as illustrative as its token counts."""
Op = tuple[Any, ...]


class Recorder(McpScreen):
    """The driver's env over MCP, noting each step; a click the driver then watches the
    screen after (a form post) is followed by a wait."""

    def __init__(self, episode: McpEpisode, display: Display) -> None:
        super().__init__(episode, display)
        self.ops: list[Op] = []
        self._posted = False

    def screenshot(self) -> bytes:
        if self._posted:
            self.ops.append(("wait",))
            self._posted = False
        return super().screenshot()

    def click(self, x: int, y: int, button: MouseButton = "left", count: int = 1) -> None:
        super().click(x, y, button, count)
        self.ops.append(("click", x, y))
        self._posted = True

    def key(self, combo: str) -> None:
        super().key(combo)
        self.ops.append(("key", combo))
        self._posted = False

    def type(self, text: str) -> None:
        super().type(text)
        self.ops.append(("type", text))
        self._posted = False


def record(substrate: str) -> list[Op]:
    """Play the pixel driver on one real episode; return its steps."""
    with tempfile.TemporaryDirectory() as records:
        command = [sys.executable, "-m", "effectbench.cli", "mcp", "--pack", "clinic"]
        command += ["--substrate", substrate, "--task", TASK, "--trial", str(TRIAL)]
        episode = McpEpisode([*command, "--record-dir", records])
        try:
            info = json.loads(episode.call("task"))
            display = Display(info["display"]["width"], info["display"]["height"])
            env = Recorder(episode, display)
            task = next(t for t in TASKS if t.name == TASK)
            driver = pixels if substrate == "web" else pixel_driver
            screen = driver.attempt(env, task, info["referral"])
            assert screen.status == "success", screen
            episode.call("report", {"success": True, "halted": False, "message": "recorded"})
        finally:
            episode.close()
    return env.ops


def _usage(turn: int) -> dict[str, int]:
    return {"input_tokens": 1400 + 900 * min(turn, 3), "output_tokens": 60}


def anthropic_turns(ops: list[Op], substrate: str) -> list[dict[str, Any]]:
    """The session as Anthropic Messages API answers (a transient 529 first)."""
    inputs: list[dict[str, Any]] = [{"action": "screenshot"}]
    for op in ops:
        if op[0] == "click":
            inputs.append({"action": "left_click", "coordinate": [op[1], op[2]]})
        elif op[0] == "key":
            inputs.append({"action": "key", "text": op[1]})
        elif op[0] == "type":
            inputs.append({"action": "type", "text": op[1]})
        else:
            inputs.append({"action": "wait", "duration": WAIT_S[substrate]})
    turns: list[dict[str, Any]] = [{"error": {"status": 529, "message": "Overloaded"}}]
    for i, given in enumerate(inputs):
        block = {"type": "tool_use", "id": f"toolu_{i:02d}", "name": "computer", "input": given}
        content = [{"type": "text", "text": f"Step {i + 1}."}, block]
        turns.append(
            {"response": {"content": content, "stop_reason": "tool_use", "usage": _usage(i)}}
        )
    report = {
        "type": "tool_use",
        "id": "toolu_report",
        "name": "report",
        "input": {
            "success": True,
            "halted": False,
            "message": "The banner is green: the encounter is saved.",
        },
    }
    turns.append({"response": {"content": [report], "stop_reason": "tool_use", "usage": _usage(9)}})
    return turns


def _openai_action(op: Op) -> dict[str, Any]:
    if op[0] == "click":
        return {"type": "click", "button": "left", "x": op[1], "y": op[2]}
    if op[0] == "key":
        return {"type": "keypress", "keys": str(op[1]).split("+")}
    if op[0] == "type":
        return {"type": "type", "text": op[1]}
    return {"type": "wait"}


def openai_turns(ops: list[Op], substrate: str, batched: bool) -> list[dict[str, Any]]:
    """The session as Responses API answers: single actions, or batches up to each wait."""
    steps: list[list[dict[str, Any]]] = []
    current: list[dict[str, Any]] = []
    for op in ops:
        action = _openai_action(op)
        waits = [action] * (WAIT_S[substrate] if op[0] == "wait" else 1)
        if not batched:
            steps.extend([a] for a in waits)
            continue
        current.extend(waits)
        if op[0] == "wait":
            steps.append(current)
            current = []
    if current:
        steps.append(current)
    turns: list[dict[str, Any]] = [{"error": {"status": 429, "message": "Rate limit reached"}}]
    for i, actions in enumerate(steps):
        call: dict[str, Any] = {
            "type": "computer_call",
            "id": f"cu_{i:02d}",
            "call_id": f"call_{i:02d}",
        }
        call.update({"actions": actions} if batched else {"action": actions[0]})
        call["pending_safety_checks"] = []
        output = [{"type": "reasoning", "id": f"rs_{i:02d}", "summary": []}, call]
        turns.append({"response": {"id": f"resp_{i:02d}", "output": output, "usage": _usage(i)}})
    report = {
        "type": "function_call",
        "id": "fc_report",
        "call_id": "call_report",
        "name": "report",
        "arguments": json.dumps(
            {"success": True, "halted": False, "message": "The banner is green: saved."}
        ),
    }
    turns.append({"response": {"id": "resp_report", "output": [report], "usage": _usage(9)}})
    return turns


def _write(name: str, data: dict[str, Any]) -> None:
    (HERE / name).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(HERE / name)


def main() -> int:
    """Record the web and desktop sessions and write every trace."""
    note = (
        "Written by examples/traces/make_traces.py: the shipped pixel driver's steps on a "
        "real episode, as a model's turns; token counts are illustrative. The first turn is "
        "a transient API failure the loop retries."
    )
    for substrate, claude, gpt, batched in (
        ("web", "claude-sonnet-4-6", "computer-use-preview", False),
        ("desktop", "claude-opus-4-5", "gpt-5.4", True),
    ):
        ops = record(substrate)
        cell = {"task": f"clinic::{TASK}@{substrate}", "trial": TRIAL, "substrate": substrate}
        _write(
            f"anthropic_{TASK}_{substrate}_t{TRIAL}.json",
            {**cell, "model": claude, "note": note, "turns": anthropic_turns(ops, substrate)},
        )
        price = {} if gpt in PRICES else {"price": ILLUSTRATIVE_PRICE}
        _write(
            f"openai_{TASK}_{substrate}_t{TRIAL}.json",
            {
                **cell,
                "model": gpt,
                **price,
                "note": note,
                "turns": openai_turns(ops, substrate, batched),
            },
        )
    outage = "Every call fails: the model's API is down for the whole episode."
    cell = {"task": f"clinic::{TASK}@web", "trial": TRIAL, "substrate": "web"}
    _write(
        "anthropic_outage.json",
        {
            **cell,
            "model": "claude-sonnet-4-6",
            "note": outage,
            "turns": [{"error": {"status": 529, "message": "Overloaded"}}] * 10,
        },
    )
    _write(
        "openai_outage.json",
        {
            **cell,
            "model": "computer-use-preview",
            "note": outage,
            "turns": [{"error": {"status": 503, "message": "Service Unavailable"}}] * 10,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
