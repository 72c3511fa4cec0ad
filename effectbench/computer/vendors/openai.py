"""OpenAI's computer use (Responses API): ``computer_call`` items and their outputs.

A ``computer_call`` carries one ``action`` or a batched ``actions`` list; every
action of a batch is checked before the first one runs. Actions: ``click {x, y,
button}``, ``double_click {x, y}``, ``drag {path: [{x, y}, ...]}``, ``keypress
{keys: [...]}``, ``move {x, y}``, ``scroll {x, y, scroll_x, scroll_y}`` (pixels),
``type {text}``, ``wait`` and ``screenshot``. The loop answers with a
``computer_call_output`` holding the screenshot (:func:`call_output`).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

from effectbench.computer import ActionError, ComputerEnv, Display, checks
from effectbench.computer.keys import combo_of
from effectbench.computer.vendors import Call, Plan, ToolOutput, fields, mapping, perform

ACTIONS = (
    "click",
    "double_click",
    "drag",
    "keypress",
    "move",
    "scroll",
    "type",
    "wait",
    "screenshot",
)
"""The action types of a ``computer_call``."""

WAIT_S = 1.0
"""How long ``wait`` (which carries no duration) waits."""

_BUTTONS = {"left": "left", "right": "right", "wheel": "middle", "middle": "middle"}
_NAV_BUTTONS = {"back": "alt+Left", "forward": "alt+Right"}
"""Mouse back/forward do what they do in a browser: history navigation."""


def tool_definition(display: Display, environment: str = "browser") -> dict[str, Any]:
    """Return the ``tools`` entry that declares computer use for ``display``."""
    return {
        "type": "computer_use_preview",
        "display_width": display.width,
        "display_height": display.height,
        "environment": environment,
    }


def _xy(display: Display, action: Mapping[str, Any]) -> tuple[int, int]:
    return checks.point(display, action["x"], action["y"])


def _pixels_to_notches(value: object, what: str) -> int:
    px = checks.integer(value, what)
    if px == 0:
        return 0
    notches = max(1, (abs(px) + checks.PIXELS_PER_NOTCH // 2) // checks.PIXELS_PER_NOTCH)
    return checks.notches(notches if px > 0 else -notches, what)


def _plan_one(display: Display, raw: object) -> list[Call]:
    action = mapping(raw, "a computer_call action")
    kind = action.get("type")
    if kind not in ACTIONS:
        raise ActionError(f"unknown computer_call action type {kind!r}")
    act = {k: v for k, v in action.items() if k != "type"}
    if kind == "click":
        fields(act, kind, {"x", "y"}, {"button"})
        raw_button = act.get("button", "left")
        if raw_button in _NAV_BUTTONS:
            _xy(display, act)
            return [("key", (_NAV_BUTTONS[raw_button],))]
        if raw_button not in _BUTTONS:
            raise ActionError(f"unknown click button {raw_button!r}")
        return [("click", (*_xy(display, act), _BUTTONS[raw_button], 1))]
    if kind == "double_click":
        fields(act, kind, {"x", "y"}, set())
        return [("click", (*_xy(display, act), "left", 2))]
    if kind == "drag":
        fields(act, kind, {"path"}, set())
        points = act["path"]
        if not isinstance(points, Sequence) or isinstance(points, str):
            raise ActionError(f"drag path must be a list of {{x, y}}, got {points!r}")
        pairs = []
        for p in points:
            m = mapping(p, "a drag point")
            fields(m, "a drag point", {"x", "y"}, set())
            pairs.append((m["x"], m["y"]))
        return [("drag", (checks.path(display, pairs), "left"))]
    if kind == "keypress":
        fields(act, kind, {"keys"}, set())
        keys = act["keys"]
        if not isinstance(keys, list):
            raise ActionError(f"keypress keys must be a list, got {keys!r}")
        return [("key", (combo_of(keys).xdotool(),))]
    if kind == "move":
        fields(act, kind, {"x", "y"}, set())
        return [("move", _xy(display, act))]
    if kind == "scroll":
        fields(act, kind, {"x", "y", "scroll_x", "scroll_y"}, set())
        dx = _pixels_to_notches(act["scroll_x"], "scroll_x")
        dy = _pixels_to_notches(act["scroll_y"], "scroll_y")
        return [("scroll", (*_xy(display, act), dx, dy))]
    if kind == "type":
        fields(act, kind, {"text"}, set())
        return [("type", (checks.text(act["text"]),))]
    fields(act, str(kind), set(), set())
    return [("wait", (WAIT_S,))] if kind == "wait" else []


def plan(display: Display, call: object) -> Plan:
    """Check a ``computer_call`` (one ``action`` or a batched ``actions`` list)."""
    item = mapping(call, "a computer_call")
    if item.get("type", "computer_call") != "computer_call":
        raise ActionError(f"not a computer_call item: type {item.get('type')!r}")
    single, batch = item.get("action"), item.get("actions")
    if (single is None) == (batch is None):
        raise ActionError("a computer_call carries exactly one of action or actions")
    actions = [single] if single is not None else batch
    if not isinstance(actions, list) or not actions:
        raise ActionError("actions must be a non-empty list")
    calls: list[Call] = []
    for raw in actions:
        calls.extend(_plan_one(display, raw))
    return Plan(calls)


def run(env: ComputerEnv, call: object) -> ToolOutput:
    """Check and perform a ``computer_call``; the output is the screenshot after it."""
    return perform(env, plan(env.display, call))


def call_output(
    call: Mapping[str, Any], png: bytes, acknowledge: Sequence[Mapping[str, Any]] = ()
) -> dict[str, Any]:
    """Return the ``computer_call_output`` input item answering ``call`` with ``png``.

    ``acknowledge`` lists the call's ``pending_safety_checks`` the operator accepted;
    none are accepted by default.
    """
    output: dict[str, Any] = {
        "type": "computer_call_output",
        "call_id": call.get("call_id"),
        "output": {
            "type": "computer_screenshot",
            "image_url": "data:image/png;base64," + base64.b64encode(png).decode("ascii"),
        },
    }
    if acknowledge:
        output["acknowledged_safety_checks"] = [dict(c) for c in acknowledge]
    return output
