"""A complete computer-use agent loop: Anthropic's computer tool on one EffectBench episode.

The model sees the episode's screen and acts through Anthropic's computer-use
tool (``computer_20251124``); each ``tool_use`` is forwarded to the episode's
MCP server (``effectbench mcp``), whose answer (a screenshot, a text, or a
tool error) goes back as the ``tool_result``. The model ends the episode with
a ``report`` tool. The harness judges the record and writes the row to the
record directory; the agent never sees it.

Run for real (``pip install 'effectbench[agent]'``, ``ANTHROPIC_API_KEY`` set)::

    python examples/anthropic_computer_agent.py --task clean_draft --trial 0 --record-dir runs/

or offline, replaying a recorded session (no key, no network, no client library)::

    cd examples && python anthropic_computer_agent.py --dry-run traces/anthropic_clean_draft_t0.json
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mcp_screen_agent import McpEpisode  # noqa: E402

from effectbench.computer import ActionError, Display  # noqa: E402
from effectbench.computer.vendors.anthropic import COMPUTER_20251124, tool_definition  # noqa: E402

MODEL = "claude-sonnet-4-5"
BETA = "computer-use-2025-11-24"
MAX_TURNS = 60
REPORT_TOOL = {
    "name": "report",
    "description": "End the episode: say whether the task succeeded, or that you halted, and why.",
    "input_schema": {
        "type": "object",
        "properties": {
            "success": {"type": "boolean"},
            "halted": {"type": "boolean"},
            "message": {"type": "string"},
        },
        "required": ["success", "halted", "message"],
    },
}


class ReplayClient:
    """Stands in for ``anthropic.Anthropic`` and answers with a recorded session's turns."""

    def __init__(self, trace: dict[str, Any]) -> None:
        self._turns = list(trace["turns"])
        self.beta = SimpleNamespace(messages=SimpleNamespace(create=self._create))

    def _create(self, **_: Any) -> Any:
        if not self._turns:
            raise RuntimeError("the recorded session has no more turns")
        turn = self._turns.pop(0)
        blocks = [SimpleNamespace(**b) for b in turn["content"]]
        return SimpleNamespace(content=blocks, stop_reason=turn["stop_reason"])


def _client() -> Any:
    try:
        import anthropic
    except ImportError:
        raise SystemExit("install the agent extra: pip install 'effectbench[agent]'") from None
    if not os.environ.get("ANTHROPIC_API_KEY"):
        raise SystemExit("set ANTHROPIC_API_KEY (or use --dry-run TRACE)")
    return anthropic.Anthropic()


def _block(block: Any) -> dict[str, Any]:
    """An assistant content block as the request's message history needs it."""
    if block.type == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    return {"type": "text", "text": getattr(block, "text", "")}


def _result(tool_use_id: str, answer: Any, error: str | None = None) -> dict[str, Any]:
    if error is not None:
        content: Any = [{"type": "text", "text": error}]
        return {
            "type": "tool_result",
            "tool_use_id": tool_use_id,
            "content": content,
            "is_error": True,
        }
    if isinstance(answer, bytes):
        data = base64.b64encode(answer).decode("ascii")
        content = [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}
        ]
    else:
        content = [{"type": "text", "text": str(answer)}]
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}


def run_agent(client: Any, episode: McpEpisode, model: str = MODEL) -> str:
    """The loop: model turn, forward each tool use, answer, until the model reports."""
    info = json.loads(episode.call("task"))
    display = Display(info["display"]["width"], info["display"]["height"])
    first = episode.call("screenshot")
    prompt = (
        f"{info['goal']}\nReferral and payload: {json.dumps(info['referral'])}\n"
        f"Declared effect: {json.dumps(info['declared_effect'])}\n"
        "Act only on what you see. Call `report` once when you are done or must halt."
    )
    messages: list[dict[str, Any]] = [
        {
            "role": "user",
            "content": [{"type": "text", "text": prompt}, _result("", first)["content"][0]],
        }
    ]
    tools = [tool_definition(display, COMPUTER_20251124), REPORT_TOOL]
    for _ in range(MAX_TURNS):
        reply = client.beta.messages.create(
            model=model, max_tokens=2048, tools=tools, messages=messages, betas=[BETA]
        )
        messages.append({"role": "assistant", "content": [_block(b) for b in reply.content]})
        uses = [b for b in reply.content if b.type == "tool_use"]
        if not uses:
            return "ended without a report"
        results = []
        for use in uses:
            if use.name == "report":
                episode.call("report", dict(use.input))
                return "reported"
            args = dict(use.input)
            action = args.pop("action", None)
            try:
                results.append(_result(use.id, episode.call(str(action), args)))
            except ActionError as exc:
                results.append(_result(use.id, None, error=str(exc)))
        messages.append({"role": "user", "content": results})
    return "turn limit reached"


def main(argv: Sequence[str] | None = None) -> int:
    """Start one episode server and run the agent on it (or replay a recorded session)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", help="a clinic task name or id (web substrate)")
    parser.add_argument("--trial", type=int, default=0)
    parser.add_argument("--record-dir", default="effectbench-records")
    parser.add_argument("--system", default="anthropic-computer-agent")
    parser.add_argument("--model", default=MODEL)
    parser.add_argument("--dry-run", metavar="TRACE", help="replay a recorded session offline")
    args = parser.parse_args(argv)
    if args.dry_run:
        trace = json.loads(Path(args.dry_run).read_text(encoding="utf-8"))
        client: Any = ReplayClient(trace)
        task, trial = (
            args.task or trace["task"],
            trace["trial"] if args.task is None else args.trial,
        )
    else:
        if not args.task:
            parser.error("--task is required unless --dry-run")
        client, task, trial = _client(), args.task, args.trial
    command = [sys.executable, "-m", "effectbench.cli", "mcp", "--pack", "clinic"]
    command += ["--substrate", "web", "--task", task, "--trial", str(trial)]
    command += ["--record-dir", args.record_dir, "--system", args.system]
    episode = McpEpisode(command)
    try:
        print(run_agent(client, episode, args.model))
    finally:
        episode.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
