"""OSWorld's ``computer_13`` action space: dicts of ``action_type`` and ``parameters``.

``{"action_type": "CLICK", "parameters": {"x": 10, "y": 20}}``; ``WAIT``,
``DONE`` and ``FAIL`` may also come as bare strings. ``DONE`` is the agent's
report of success, ``FAIL`` its halt. Key names are pyautogui's (``"enter"``,
``"ctrl"``). ``SCROLL`` follows pyautogui: positive ``dy`` scrolls up, positive
``dx`` right. OSWorld's other action space, agent-written pyautogui code, is
refused: any other string is treated as code and never executed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from effectbench.computer import ActionError, ComputerEnv, Display, checks
from effectbench.computer.keys import combo_of, parse_combo
from effectbench.computer.vendors import HERE, Call, Plan, ToolOutput, fields, mapping, perform
from effectbench.schema import AgentReport

ACTIONS = (
    "MOVE_TO",
    "CLICK",
    "MOUSE_DOWN",
    "MOUSE_UP",
    "RIGHT_CLICK",
    "DOUBLE_CLICK",
    "DRAG_TO",
    "SCROLL",
    "TYPING",
    "PRESS",
    "KEY_DOWN",
    "KEY_UP",
    "HOTKEY",
    "WAIT",
    "FAIL",
    "DONE",
)
"""The ``computer_13`` action types."""

WAIT_S = 1.0
"""How long ``WAIT`` (which carries no duration) waits."""


def _optional_xy(display: Display, params: Mapping[str, Any]) -> tuple[Any, Any]:
    has_x, has_y = params.get("x") is not None, params.get("y") is not None
    if has_x != has_y:
        raise ActionError("give both x and y, or neither")
    return checks.point(display, params["x"], params["y"]) if has_x else (HERE, HERE)


def _key(params: Mapping[str, Any], name: str) -> str:
    fields(params, name, {"key"}, set())
    return parse_combo(params["key"]).xdotool()


def plan(display: Display, action: object) -> Plan:
    """Check one ``computer_13`` action; return its plan."""
    if isinstance(action, str):
        if action not in ("WAIT", "DONE", "FAIL"):
            raise ActionError(
                "only computer_13 actions are accepted; agent-written code is never executed"
            )
        action = {"action_type": action}
    data = mapping(action, "a computer_13 action")
    fields(data, "a computer_13 action", {"action_type"}, {"parameters"})
    kind = data["action_type"]
    if kind not in ACTIONS:
        raise ActionError(f"unknown computer_13 action_type {kind!r}")
    params = mapping(data.get("parameters") or {}, "parameters")
    if kind == "MOVE_TO":
        fields(params, kind, {"x", "y"}, set())
        return Plan([("move", checks.point(display, params["x"], params["y"]))])
    if kind == "CLICK":
        fields(params, kind, set(), {"button", "x", "y", "num_clicks"})
        button = checks.button(params.get("button", "left"))
        count = checks.clicks(params.get("num_clicks", 1))
        return Plan([("click", (*_optional_xy(display, params), button, count))])
    if kind in ("RIGHT_CLICK", "DOUBLE_CLICK"):
        fields(params, kind, set(), {"x", "y"})
        button, count = ("right", 1) if kind == "RIGHT_CLICK" else ("left", 2)
        return Plan([("click", (*_optional_xy(display, params), button, count))])
    if kind in ("MOUSE_DOWN", "MOUSE_UP"):
        fields(params, kind, set(), {"button"})
        step = "mouse_down" if kind == "MOUSE_DOWN" else "mouse_up"
        return Plan([(step, (checks.button(params.get("button", "left")),))])
    if kind == "DRAG_TO":
        fields(params, kind, {"x", "y"}, set())
        end = checks.point(display, params["x"], params["y"])
        return Plan([("drag", ([(HERE, HERE), end], "left"))])
    if kind == "SCROLL":
        fields(params, kind, set(), {"dx", "dy"})
        dx = checks.notches(params.get("dx", 0), "dx")
        dy = checks.notches(params.get("dy", 0), "dy")
        return Plan([("scroll", (HERE, HERE, dx, -dy))])
    if kind == "TYPING":
        fields(params, kind, {"text"}, set())
        return Plan([("type", (checks.text(params["text"]),))])
    if kind in ("PRESS", "KEY_DOWN", "KEY_UP"):
        step = {"PRESS": "key", "KEY_DOWN": "key_down", "KEY_UP": "key_up"}[kind]
        call: Call = (step, (_key(params, kind),))
        return Plan([call])
    if kind == "HOTKEY":
        fields(params, kind, {"keys"}, set())
        keys = params["keys"]
        if not isinstance(keys, list):
            raise ActionError(f"HOTKEY keys must be a list, got {keys!r}")
        return Plan([("key", (combo_of(keys).xdotool(),))])
    fields(params, kind, set(), set())
    if kind == "WAIT":
        return Plan([("wait", (WAIT_S,))])
    if kind == "DONE":
        return Plan(report=AgentReport(reported_success=True, halted=False, message="DONE"))
    return Plan(report=AgentReport(reported_success=False, halted=True, message="FAIL"))


def run(env: ComputerEnv, action: object) -> ToolOutput:
    """Check and perform one ``computer_13`` action; ``DONE``/``FAIL`` return a report."""
    return perform(env, plan(env.display, action))
