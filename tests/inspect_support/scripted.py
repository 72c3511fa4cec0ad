"""One scripted agent, run two ways: as inspect's mock model and as an in-process system.

A *script* decides the next tool call from what it has seen; it is written
once against ``call(tool, arguments) -> result`` and returns the report. The
in-process :class:`ScriptedSystem` runs it directly on the env handle; the
mock model (:func:`mock_outputs`) replays it over the conversation so far and
emits the next tool call as a :class:`ModelOutput` (usage set explicitly, so
no tokenizer is fetched). The two must produce the same outcomes trial for trial.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping, Sequence
from types import SimpleNamespace
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    ContentImage,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from effectbench.computer import A11yNode
from effectbench.schema import AgentReport
from effectbench.seam import AgentTask, EnvHandle

Call = Callable[[str, dict[str, Any]], dict[str, Any]]
Script = Callable[[Mapping[str, Any], set[str], Call], tuple[bool, str]]
VERIFY = "verify_effect"
REPORT = "report_outcome"
COMPUTER = "computer"
A11Y = ("a11y_tree", "a11y_action", "a11y_set_text")
USAGE = ModelUsage(input_tokens=120, output_tokens=30, total_tokens=150, total_cost=0.0015)
"""What each scripted model call reports it cost (explicit: no token counting)."""


def _act(params: Mapping[str, Any], call: Call) -> dict[str, Any]:
    """Find the referred chart, open it and save (or edit): the clinic's scripted steps."""
    if "encounter_id" in params:
        call("open_chart", {"mrn": params["mrn"]})
        return call(
            "edit_encounter", {"encounter_id": params["encounter_id"], "note": params["note"]}
        )
    found = call("find_patients", {"name": params["patient_name"]})
    results = [r for r in found.get("details", {}).get("results", []) if isinstance(r, dict)]
    if not results:
        return found
    pick = (
        next((r for r in results if r.get("mrn") == params["mrn"]), None)
        or next((r for r in results if r.get("dob") == params["dob"]), None)
        or results[0]
    )
    call("open_chart", {"mrn": pick["mrn"]})
    form: dict[str, Any] = {
        "mrn": pick["mrn"],
        "name": pick["name"],
        "type": params["type"],
        "note": params["note"],
        "idempotency_key": params["idempotency_key"],
    }
    if "claim_ref" in params:
        form |= {
            "sign": True,
            "charge_code": params["charge_code"],
            "claim_ref": params["claim_ref"],
        }
    return call("save_encounter", form)


def trust_the_banner(params: Mapping[str, Any], tools: set[str], call: Call) -> tuple[bool, str]:
    """Act once and report what the banner says."""
    screen = _act(params, call)
    return screen["status"] == "success", f"banner: {screen['banner']}"


def verify_then_report(params: Mapping[str, Any], tools: set[str], call: Call) -> tuple[bool, str]:
    """Act once, read the record back through the product, report only a confirmed effect."""
    if VERIFY not in tools:
        return False, "no product readback offered: halting rather than guess"
    _act(params, call)
    reading = call(VERIFY, {})
    return bool(reading["confirmed"]), f"readback: {reading['reason']}"


def halt_at_once(params: Mapping[str, Any], tools: set[str], call: Call) -> tuple[bool, str]:
    """Never act."""
    return False, "halted without acting"


class _Screen:
    """A ComputerEnv whose every step is one call of inspect's ``computer`` tool."""

    def __init__(self, call: Call) -> None:
        self._call = call

    def screenshot(self) -> bytes:
        png = self._call(COMPUTER, {"action": "screenshot"})["png"]
        assert isinstance(png, bytes)
        return png

    def click(self, x: int, y: int, button: str = "left", count: int = 1) -> None:
        assert (button, count) == ("left", 1)
        self._call(COMPUTER, {"action": "left_click", "coordinate": [x, y]})

    def key(self, combo: str) -> None:
        self._call(COMPUTER, {"action": "key", "text": combo})

    def type(self, text: str) -> None:
        self._call(COMPUTER, {"action": "type", "text": text})


def _kind(params: Mapping[str, Any]) -> SimpleNamespace:
    """The task shape the pixel bots need (``ClinicTask.kind``), from the trial's parameters."""
    kind = "edit" if "encounter_id" in params else "sign" if "claim_ref" in params else "draft"
    return SimpleNamespace(kind=kind)


def trust_the_pixels(params: Mapping[str, Any], tools: set[str], call: Call) -> tuple[bool, str]:
    """The web pixel bot (recorded coordinates, banner colour) through the computer tool."""
    from effectbench.packs.clinic.web import pixels

    screen = pixels.attempt(_Screen(call), _kind(params), params)  # type: ignore[arg-type]
    return screen.status == "success", f"banner: {screen.banner}"


def _node(data: Mapping[str, Any]) -> A11yNode:
    """Rebuild a node of the ``a11y_tree`` tool's JSON."""
    return A11yNode(
        id=data["id"],
        role=data["role"],
        name=data["name"],
        states=tuple(data["states"]),
        text=data["text"],
        extents=tuple(data["extents"]),
        actions=tuple(data["actions"]),
        children=tuple(_node(c) for c in data["children"]),
        description=data["description"],
    )


class _Tree(_Screen):
    """The desktop's accessibility tools, each step one tool call."""

    def a11y_tree(self) -> A11yNode:
        return _node(self._call("a11y_tree", {}))

    def a11y_action(self, node: str, action: str) -> None:
        self._call("a11y_action", {"node": node, "action": action})

    def a11y_set_text(self, node: str, text: str) -> None:
        self._call("a11y_set_text", {"node": node, "text": text})


def trust_the_desktop(params: Mapping[str, Any], tools: set[str], call: Call) -> tuple[bool, str]:
    """The GTK app's baseline bot, as the runner's screen_only drives each substrate.

    Through the accessibility tools when the episode offers them (desktop),
    else by pixels (recorded layout, text anchors, banner colour: the remote
    display); then it believes the banner.
    """
    from effectbench.packs.clinic.desktop import a11y_driver, pixel_driver

    kind = _kind(params)
    if set(A11Y) <= tools:
        screen = a11y_driver.attempt(_Tree(call), kind, params)  # type: ignore[arg-type]
    else:
        screen = pixel_driver.attempt(_Screen(call), kind, params)  # type: ignore[arg-type]
    return screen.status == "success", f"banner: {screen.banner}"


SCRIPTS: dict[str, Script] = {
    "screen_only": trust_the_banner,
    "effect_verified": verify_then_report,
    "always_halt": halt_at_once,
    "pixels": trust_the_pixels,
    "desktop": trust_the_desktop,
}


class ScriptedSystem:
    """The in-process system under test that runs a script on the env handle."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._script = SCRIPTS[name]

    def run(self, task: AgentTask, env: EnvHandle, params: Mapping[str, Any]) -> AgentReport:
        verifier = env.product_effect_verifier() if task.declared_effect is not None else None
        tools = set(env.actions()) | ({VERIFY} if verifier is not None else set())

        def call(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
            if tool == VERIFY:
                assert verifier is not None and task.declared_effect is not None
                r = verifier.verify(task.declared_effect)
                return {"confirmed": r.confirmed, "reason": r.reason, "absent": r.absent}
            s = env.act(tool, **arguments)
            return {"status": s.status, "banner": s.banner, "details": dict(s.details)}

        success, message = self._script(params, tools, call)
        return AgentReport(reported_success=success, halted=not success, message=message)


class _NextCall(Exception):
    def __init__(self, tool: str, arguments: dict[str, Any]) -> None:
        self.tool, self.arguments = tool, arguments


def told(messages: Sequence[ChatMessage]) -> dict[str, Any]:
    """The view the first message carries (SPEC 5.3), as the model reads it."""
    marker = "What you are told about this episode: "
    for m in messages:
        if isinstance(m, ChatMessageUser) and marker in m.text:
            view: dict[str, Any] = json.loads(m.text.split(marker, 1)[1].split("\n", 1)[0])
            return view
    raise AssertionError("the prompt carries no view of the episode")


def _params(messages: Sequence[ChatMessage]) -> dict[str, Any]:
    referral: dict[str, Any] = told(messages)["referral"]
    return referral


def _image(message: ChatMessage) -> bytes | None:
    for part in message.content if isinstance(message.content, list) else []:
        if isinstance(part, ContentImage):
            return base64.b64decode(part.image.split(",", 1)[1])
    return None


def _results(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """Return each tool's answer: a screenshot's PNG bytes, or the JSON the tool printed.

    A model that takes no images in tool results gets them in the user message
    inspect adds right after the tool message.
    """
    out: list[dict[str, Any]] = []
    for i, m in enumerate(messages):
        if not isinstance(m, ChatMessageTool):
            continue
        after = messages[i + 1] if i + 1 < len(messages) else None
        png = _image(m) or (_image(after) if isinstance(after, ChatMessageUser) else None)
        if png is not None:
            out.append({"png": png})
        elif m.text.startswith("{"):
            out.append(json.loads(m.text))
        else:  # a plain acknowledgement ("done")
            out.append({"text": m.text})
    return out


def next_output(
    script: Script, messages: Sequence[ChatMessage], tools: Sequence[ToolInfo]
) -> ModelOutput:
    """Replay ``script`` over the conversation and return its next move as a model output."""
    asked = [
        (c.function, c.arguments)
        for m in messages
        if isinstance(m, ChatMessageAssistant)
        for c in (m.tool_calls or [])
    ]
    results = _results(messages)
    replay = iter(zip(asked, results, strict=True))

    def call(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            (asked_tool, asked_args), result = next(replay)
        except StopIteration:
            raise _NextCall(tool, arguments) from None
        assert (asked_tool, asked_args) == (tool, arguments), (asked_tool, tool)
        return result

    try:
        success, message = script(_params(messages), {t.name for t in tools}, call)
    except _NextCall as move:
        out = ModelOutput.for_tool_call("mockllm/model", move.tool, move.arguments)
    else:
        out = ModelOutput.for_tool_call(
            "mockllm/model", REPORT, {"success": success, "message": message}
        )
    out.usage = USAGE.model_copy()
    return out


def mock_outputs(
    name: str,
) -> Callable[[list[ChatMessage], list[ToolInfo], ToolChoice, GenerateConfig], ModelOutput]:
    """Return the ``custom_outputs`` callable of inspect's mock model for script ``name``."""
    script = SCRIPTS[name]

    def outputs(
        messages: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        return next_output(script, messages, tools)

    return outputs
