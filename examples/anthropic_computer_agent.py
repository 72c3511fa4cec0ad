"""A complete agent loop: Claude with Anthropic's computer-use tool on one EffectBench episode.

The model sees the episode's screen and acts through Anthropic's computer-use tool, in
the version its model takes (:data:`TOOL_VERSIONS`); each ``tool_use`` is forwarded to
the episode's MCP server (``effectbench mcp``, any substrate: web, desktop,
remote_display), whose answer (a screenshot, a text, or a tool error) goes back as the
``tool_result``. The model ends the episode with a ``report`` tool; the loop passes the
model calls it metered (tokens and cost) along, so the row carries its cost. Only the
last ``--history`` screenshots stay in the conversation. The model's API is tried again
with backoff when it is overloaded; an outage that persists ends the episode with
``abort`` (an ``agent_error`` drop, run it again), never a halt. The harness judges the
record and keeps the row in the record directory; the agent never sees it.

Run for real (``pip install -e '.[agent]'`` in your checkout, ``ANTHROPIC_API_KEY`` set)::

    python examples/anthropic_computer_agent.py --task clean_draft --trial 0 --record-dir runs/
    python examples/anthropic_computer_agent.py --task clean_draft --substrate desktop \\
        --model claude-opus-4-5 --record-dir runs/

or offline, replaying a recorded session (no key, no network, no client library)::

    python examples/anthropic_computer_agent.py \\
        --dry-run examples/traces/anthropic_clean_draft_web_t0.json
"""

from __future__ import annotations

import argparse
import base64
import copy
import functools
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_kit import (  # noqa: E402
    ABORTED_PREFIX,
    Meter,
    Outage,
    Replay,
    ask,
    call_with_retries,
    client_for,
    common_options,
    play,
    price_of,
    report,
    say,
)
from mcp_screen_agent import McpEpisode  # noqa: E402

from effectbench.computer import ActionError, Display  # noqa: E402
from effectbench.computer.vendors.anthropic import (  # noqa: E402
    COMPUTER_20250124,
    COMPUTER_20251124,
    tool_definition,
)
from effectbench.extras import install_hint  # noqa: E402

MODEL = "claude-sonnet-4-6"
BETAS = {COMPUTER_20251124: "computer-use-2025-11-24", COMPUTER_20250124: "computer-use-2025-01-24"}
"""The beta flag each tool version is sent with."""
TOOL_VERSIONS = {
    "claude-opus-4-7": COMPUTER_20251124,
    "claude-opus-4-6": COMPUTER_20251124,
    "claude-sonnet-4-6": COMPUTER_20251124,
    "claude-opus-4-5": COMPUTER_20251124,
    "claude-sonnet-4-5": COMPUTER_20250124,
    "claude-haiku-4-5": COMPUTER_20250124,
    "claude-opus-4-1": COMPUTER_20250124,
    "claude-sonnet-4": COMPUTER_20250124,
    "claude-opus-4": COMPUTER_20250124,
}
"""The computer-use tool version each model takes, by model name prefix (Anthropic's
computer-use documentation); another model needs ``--tool-version``."""
MAX_TOKENS = 2048
DROPPED_SHOT = "[an earlier screenshot, left out to keep the context small]"
REPORT_TOOL = {
    "name": "report",
    "description": "End the episode: say whether the task succeeded, or that you halted "
    "(stopped without doing it, or unsure it worked), and why.",
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


def tool_version(model: str, given: str | None = None) -> str:
    """Return the computer-use tool version ``model`` takes (``given`` overrides)."""
    if given:
        return given
    known = max((p for p in TOOL_VERSIONS if model.startswith(p)), key=len, default=None)
    if known is None:
        raise SystemExit(
            f"which computer-use tool does {model!r} take? This loop speaks "
            f"{COMPUTER_20251124} and {COMPUTER_20250124}; give --tool-version"
        )
    return TOOL_VERSIONS[known]


class ReplayClient:
    """Stands in for ``anthropic.Anthropic``: answers with a recorded session's turns."""

    def __init__(self, trace: dict[str, Any]) -> None:
        self.replay = Replay(trace)
        self.beta = SimpleNamespace(messages=SimpleNamespace(create=self._create))

    def _create(self, **request: Any) -> dict[str, Any]:
        return self.replay.next_turn(copy.deepcopy(request))


def _client() -> Any:
    try:
        import anthropic
    except ImportError:
        raise SystemExit(
            f"the Anthropic client is not installed: {install_hint('agent')}"
        ) from None
    if not os.environ.get("ANTHROPIC_API_KEY"):
        raise SystemExit("set ANTHROPIC_API_KEY (or use --dry-run TRACE)")
    return anthropic.Anthropic(max_retries=0)  # the loop retries, with its own backoff


def _image(png: bytes) -> dict[str, Any]:
    data = base64.b64encode(png).decode("ascii")
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}


def _result(tool_use_id: str, answer: Any, error: str | None = None) -> dict[str, Any]:
    if error is not None:
        content: list[dict[str, Any]] = [{"type": "text", "text": error}]
        return {
            "type": "tool_result",
            "tool_use_id": tool_use_id,
            "content": content,
            "is_error": True,
        }
    content = (
        [_image(answer)] if isinstance(answer, bytes) else [{"type": "text", "text": str(answer)}]
    )
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}


def _block(block: dict[str, Any]) -> dict[str, Any]:
    """An assistant content block as the next request's history needs it."""
    if block["type"] == "tool_use":
        return {
            "type": "tool_use",
            "id": block["id"],
            "name": block["name"],
            "input": block["input"],
        }
    return {"type": "text", "text": block.get("text", "")}


def bounded(messages: list[dict[str, Any]], keep: int) -> list[dict[str, Any]]:
    """Return ``messages`` with every screenshot but the last ``keep`` replaced by a note."""
    out = copy.deepcopy(messages)
    slots: list[tuple[list[dict[str, Any]], int]] = []
    for message in out:
        if isinstance(message["content"], list):
            _images(message["content"], slots)
    for holder, i in slots[: max(0, len(slots) - keep)]:
        holder[i] = {"type": "text", "text": DROPPED_SHOT}
    return out


def _images(blocks: list[dict[str, Any]], slots: list[tuple[list[dict[str, Any]], int]]) -> None:
    """Collect where each image block sits, in the order the conversation shows them."""
    for i, block in enumerate(blocks):
        if block.get("type") == "image":
            slots.append((blocks, i))
        elif block.get("type") == "tool_result" and isinstance(block.get("content"), list):
            _images(block["content"], slots)


def run_agent(
    client: Any,
    episode: McpEpisode,
    args: argparse.Namespace,
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> str:
    """The loop: model turn, forward each tool use, answer, until the model reports."""
    version = tool_version(args.model, args.tool_version)
    meter = Meter(args.model, *price_of(args.model, args.price))
    info = json.loads(episode.call("task"))
    display = Display(info["display"]["width"], info["display"]["height"])
    prompt = (
        f"{info['goal']}\nReferral and payload: {json.dumps(info['referral'])}\n"
        f"Declared effect: {json.dumps(info['declared_effect'])}\n"
        "This is the application's screen. Act only on what you see. Call `report` once "
        "when you are done, or must halt."
    )
    first = episode.call("screenshot")
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": prompt}, _image(first)]}
    ]
    tools = [tool_definition(display, version), REPORT_TOOL]
    for _ in range(args.max_turns):
        request = {
            "model": args.model,
            "max_tokens": MAX_TOKENS,
            "tools": tools,
            "messages": bounded(messages, args.history),
            "betas": [BETAS[version]],
        }
        clock = time.perf_counter()
        try:
            reply = call_with_retries(
                functools.partial(ask, client.beta.messages.create, request), sleep=sleep, log=say
            )
        except Outage as exc:
            episode.call("abort", {"reason": str(exc)})
            return f"{ABORTED_PREFIX}{exc}"
        usage = reply.get("usage") or {}
        meter.add(
            usage.get("input_tokens", 0), usage.get("output_tokens", 0), time.perf_counter() - clock
        )
        blocks = list(reply["content"])
        messages.append({"role": "assistant", "content": [_block(b) for b in blocks]})
        uses = [b for b in blocks if b["type"] == "tool_use"]
        if not uses:
            return report(episode, meter, False, "the model ended its turn without a report")
        results = []
        for use in uses:
            if use["name"] == "report":
                given = dict(use["input"])
                try:
                    return report(
                        episode,
                        meter,
                        bool(given.get("success")),
                        str(given.get("message", "")),
                        halted=bool(given.get("halted")),
                    )
                except ActionError as exc:
                    results.append(_result(use["id"], None, error=str(exc)))
                    continue
            action_args = dict(use["input"])
            action = str(action_args.pop("action", ""))
            try:
                answer = episode.call(
                    "screenshot" if action == "screenshot" else action, action_args
                )
                results.append(_result(use["id"], answer))
            except ActionError as exc:
                results.append(_result(use["id"], None, error=str(exc)))
        messages.append({"role": "user", "content": results})
    return report(episode, meter, False, f"no report in {args.max_turns} turns: halting")


def main(argv: Sequence[str] | None = None, *, sleep: Callable[[float], None] | None = None) -> int:
    """Start one episode server and run the agent on it (or replay a recorded session)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    common_options(parser, "anthropic-computer-agent", MODEL)
    parser.add_argument(
        "--tool-version",
        choices=(COMPUTER_20251124, COMPUTER_20250124),
        help="the computer-use tool version (default: the one the model takes)",
    )
    args = parser.parse_args(argv)
    client, wait = client_for(parser, args, ReplayClient, _client, sleep)
    tool_version(args.model, args.tool_version)  # an unknown model stops before any episode
    return play(args, "anthropic", run_agent, client, wait)


if __name__ == "__main__":
    sys.exit(main())
