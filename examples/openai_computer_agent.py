"""A complete agent loop: OpenAI's computer use (Responses API) on one EffectBench episode.

The model sees the episode's screen and answers with ``computer_call`` items (one
``action``, or a batch of ``actions``); the loop performs each action on the episode's
MCP server (``effectbench mcp --vocabulary openai``: the same action names and fields,
any substrate: web, desktop, remote_display) and answers with a
``computer_call_output`` holding the screenshot after it. The computer tool is the one
the model takes (:func:`computer_tool`: ``computer_use_preview`` for
``computer-use-preview``, the ``computer`` tool for the GPT-5.4 generation). The model
ends the episode with the ``report`` function; the loop passes the model calls it
metered (tokens and cost) along, so the row carries its cost. A pending safety check
(the model asking a person to confirm) is the agent's halt: nobody confirms during a
run. The conversation is chained on the server (``previous_response_id``) and started
afresh every ``--history`` screenshots, with the goal, the actions so far and the
screen now, so no more than that many screenshots are ever in the model's context.
The model's API is tried again with backoff when it is overloaded; an outage that
persists ends the episode with ``abort`` (an ``agent_error`` drop), never a halt.

Run for real (``pip install -e '.[agent]'`` in your checkout, ``OPENAI_API_KEY`` set)::

    python examples/openai_computer_agent.py --task clean_draft --trial 0 --record-dir runs/

or offline, replaying a recorded session (no key, no network, no client library)::

    python examples/openai_computer_agent.py \\
        --dry-run examples/traces/openai_clean_draft_web_t0.json
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

from effectbench.computer import ActionError  # noqa: E402
from effectbench.computer.vendors.openai import call_output  # noqa: E402
from effectbench.extras import install_hint  # noqa: E402

MODEL = "computer-use-preview"
PREVIEW, GA = "computer_use_preview", "computer"
TOOLS = {"computer-use-preview": PREVIEW, "gpt-5.4": GA, "gpt-5.5": GA}
"""The computer tool each model takes, by model name prefix (OpenAI's computer-use
documentation); another model needs ``--tool``."""
ENVIRONMENTS = {"web": "browser", "desktop": "ubuntu", "remote_display": "ubuntu"}
"""What ``computer_use_preview`` is told the screen is, by substrate."""
REPORT_FUNCTION = {
    "type": "function",
    "name": "report",
    "description": "End the episode: say whether the task succeeded, or that you halted "
    "(stopped without doing it, or unsure it worked), and why.",
    "parameters": {
        "type": "object",
        "properties": {
            "success": {"type": "boolean"},
            "halted": {"type": "boolean"},
            "message": {"type": "string"},
        },
        "required": ["success", "halted", "message"],
        "additionalProperties": False,
    },
    "strict": True,
}


def computer_tool(
    model: str, given: str | None, display: dict[str, Any], substrate: str
) -> dict[str, Any]:
    """Return the computer tool ``model`` takes (``given`` overrides), declared for the screen."""
    kind = given
    if kind is None:
        known = max((p for p in TOOLS if model.startswith(p)), key=len, default=None)
        if known is None:
            raise SystemExit(
                f"which computer tool does {model!r} take? This loop speaks {PREVIEW} and "
                f"{GA}; give --tool"
            )
        kind = TOOLS[known]
    if kind == GA:
        return {"type": GA}
    return {
        "type": PREVIEW,
        "display_width": display["width"],
        "display_height": display["height"],
        "environment": ENVIRONMENTS.get(substrate, "browser"),
    }


class ReplayClient:
    """Stands in for ``openai.OpenAI``: answers with a recorded session's turns."""

    def __init__(self, trace: dict[str, Any]) -> None:
        self.replay = Replay(trace)
        self.responses = SimpleNamespace(create=self._create)

    def _create(self, **request: Any) -> dict[str, Any]:
        return self.replay.next_turn(copy.deepcopy(request))


def _client() -> Any:
    try:
        import openai
    except ImportError:
        raise SystemExit(f"the OpenAI client is not installed: {install_hint('agent')}") from None
    if not os.environ.get("OPENAI_API_KEY"):
        raise SystemExit("set OPENAI_API_KEY (or use --dry-run TRACE)")
    return openai.OpenAI(max_retries=0)  # the loop retries, with its own backoff


def _image_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _opening(prompt: str, done: list[str], png: bytes) -> list[dict[str, Any]]:
    """The first input of a conversation: the task, what was done so far, the screen now."""
    text = prompt
    if done:
        text += "\n\nWhat you did so far (earlier screenshots are left out):\n" + "\n".join(done)
    return [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": text},
                {"type": "input_image", "image_url": _image_url(png)},
            ],
        }
    ]


def perform(episode: McpEpisode, call: dict[str, Any], done: list[str]) -> tuple[bytes, str | None]:
    """Perform a ``computer_call``'s actions in order; return the screen after them and the
    refusal that stopped them, if one did."""
    actions = (
        [call["action"]] if call.get("action") is not None else list(call.get("actions") or [])
    )
    shot: bytes | None = None
    for action in actions:
        fields = {k: v for k, v in action.items() if k != "type"}
        kind = str(action.get("type"))
        try:
            answer = episode.call("screenshot" if kind == "screenshot" else kind, fields)
        except ActionError as exc:
            done.append(f"- {kind} {json.dumps(fields)}: refused ({exc})")
            return episode.call("screenshot"), str(exc)
        done.append(f"- {kind} {json.dumps(fields)}")
        shot = answer if isinstance(answer, bytes) else None
    return (shot if shot is not None else episode.call("screenshot")), None


def run_agent(
    client: Any,
    episode: McpEpisode,
    args: argparse.Namespace,
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> str:
    """The loop: model turn, perform its computer calls, answer with screenshots, until report."""
    meter = Meter(args.model, *price_of(args.model, args.price))
    info = json.loads(episode.call("task"))
    tool = computer_tool(args.model, args.tool, info["display"], info["display"]["surface"])
    prompt = (
        f"{info['goal']}\nReferral and payload: {json.dumps(info['referral'])}\n"
        f"Declared effect: {json.dumps(info['declared_effect'])}\n"
        "This is the application's screen. Act only on what you see. Call the `report` "
        "function once when you are done, or must halt."
    )
    done: list[str] = []
    pending: list[dict[str, Any]] = _opening(prompt, done, episode.call("screenshot"))
    previous: str | None = None
    shots = 1
    png: bytes | None = None
    for _ in range(args.max_turns):
        request: dict[str, Any] = {
            "model": args.model,
            "tools": [tool, REPORT_FUNCTION],
            "input": pending,
            "truncation": "auto",
        }
        if previous is not None:
            request["previous_response_id"] = previous
        clock = time.perf_counter()
        try:
            reply = call_with_retries(
                functools.partial(ask, client.responses.create, request), sleep=sleep, log=say
            )
        except Outage as exc:
            episode.call("abort", {"reason": str(exc)})
            return f"{ABORTED_PREFIX}{exc}"
        usage = reply.get("usage") or {}
        meter.add(
            usage.get("input_tokens", 0), usage.get("output_tokens", 0), time.perf_counter() - clock
        )
        previous = str(reply["id"])
        pending = []
        for item in reply.get("output") or []:
            kind = item.get("type")
            if kind == "function_call":
                answer = _function(episode, meter, item)
                if answer.startswith("reported"):
                    return answer
                pending.append(
                    {
                        "type": "function_call_output",
                        "call_id": item.get("call_id"),
                        "output": answer,
                    }
                )
            elif kind == "computer_call":
                checks = item.get("pending_safety_checks") or []
                if checks:  # nobody confirms during a run: the agent stops here
                    asked = "; ".join(str(c.get("message") or c.get("code")) for c in checks)
                    return report(
                        episode, meter, False, f"the model asked a person to confirm: {asked}"
                    )
                png, refused = perform(episode, item, done)
                pending.append(call_output(item, png))
                if refused is not None:
                    note = f"The action was refused: {refused}"
                    pending.append(
                        {"role": "user", "content": [{"type": "input_text", "text": note}]}
                    )
                shots += 1
        if not pending:
            return report(episode, meter, False, "the model answered without an action or a report")
        if shots > args.history and png is not None:  # afresh: goal, actions so far, screen now
            pending, previous, shots = _opening(prompt, done, png), None, 1
    return report(episode, meter, False, f"no report in {args.max_turns} turns: halting")


def _function(episode: McpEpisode, meter: Meter, item: dict[str, Any]) -> str:
    """Answer a function call: ``report`` ends the episode (or is refused, saying why)."""
    if item.get("name") != "report":
        return f"there is no function {item.get('name')!r}; call report to end the episode"
    try:
        given = json.loads(item.get("arguments") or "{}")
    except ValueError:
        return "report takes a JSON object: success, halted, message"
    success = bool(given.get("success"))
    try:
        return report(
            episode, meter, success, str(given.get("message", "")), bool(given.get("halted"))
        )
    except ActionError as exc:
        return f"report refused: {exc}"


def main(argv: Sequence[str] | None = None, *, sleep: Callable[[float], None] | None = None) -> int:
    """Start one episode server and run the agent on it (or replay a recorded session)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    common_options(parser, "openai-computer-agent", MODEL)
    parser.add_argument(
        "--tool", choices=(PREVIEW, GA), help="the computer tool (default: the one the model takes)"
    )
    args = parser.parse_args(argv)
    client, wait = client_for(parser, args, ReplayClient, _client, sleep)
    computer_tool(args.model, args.tool, {"width": 1, "height": 1}, args.substrate)  # known?
    return play(args, "openai", run_agent, client, wait)


if __name__ == "__main__":
    sys.exit(main())
