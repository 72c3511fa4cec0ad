"""OSWorld's ``computer_13`` action space: dicts of ``action_type`` and ``parameters``.

``{"action_type": "CLICK", "parameters": {"x": 10, "y": 20}}``; ``WAIT``,
``DONE`` and ``FAIL`` may also come as bare strings. ``DONE`` is the agent's
report of success, ``FAIL`` its halt. Key names are pyautogui's (``"enter"``,
``"ctrl"``). ``SCROLL`` follows pyautogui: positive ``dy`` scrolls up, positive
``dx`` right. OSWorld's other action space, agent-written pyautogui code, is
refused: any other string is treated as code and never executed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
    return _PLANNERS.get(kind, _plan_ending)(display, kind, params)


def _plan_move(display: Display, kind: str, params: Mapping[str, Any]) -> Plan:
    fields(params, kind, {"x", "y"}, set())
    return Plan([("move", checks.point(display, params["x"], params["y"]))])


def _plan_click(display: Display, kind: str, params: Mapping[str, Any]) -> Plan:
    fields(params, kind, set(), {"button", "x", "y", "num_clicks"})
    button = checks.button(params.get("button", "left"))
    count = checks.clicks(params.get("num_clicks", 1))
    return Plan([("click", (*_optional_xy(display, params), button, count))])


def _plan_fixed_click(display: Display, kind: str, params: Mapping[str, Any]) -> Plan:
    """``RIGHT_CLICK`` or ``DOUBLE_CLICK``."""
    fields(params, kind, set(), {"x", "y"})
    button, count = ("right", 1) if kind == "RIGHT_CLICK" else ("left", 2)
    return Plan([("click", (*_optional_xy(display, params), button, count))])


def _plan_button(display: Display, kind: str, params: Mapping[str, Any]) -> Plan:
    """``MOUSE_DOWN`` or ``MOUSE_UP``."""
    fields(params, kind, set(), {"button"})
    step = "mouse_down" if kind == "MOUSE_DOWN" else "mouse_up"
    return Plan([(step, (checks.button(params.get("button", "left")),))])


def _plan_drag(display: Display, kind: str, params: Mapping[str, Any]) -> Plan:
    fields(params, kind, {"x", "y"}, set())
    end = checks.point(display, params["x"], params["y"])
    return Plan([("drag", ([(HERE, HERE), end], "left"))])


def _plan_scroll(display: Display, kind: str, params: Mapping[str, Any]) -> Plan:
    fields(params, kind, set(), {"dx", "dy"})
    dx = checks.notches(params.get("dx", 0), "dx")
    dy = checks.notches(params.get("dy", 0), "dy")
    return Plan([("scroll", (HERE, HERE, dx, -dy))])


def _plan_typing(display: Display, kind: str, params: Mapping[str, Any]) -> Plan:
    fields(params, kind, {"text"}, set())
    return Plan([("type", (checks.text(params["text"]),))])


def _plan_key(display: Display, kind: str, params: Mapping[str, Any]) -> Plan:
    """``PRESS``, ``KEY_DOWN`` or ``KEY_UP``."""
    step = {"PRESS": "key", "KEY_DOWN": "key_down", "KEY_UP": "key_up"}[kind]
    call: Call = (step, (_key(params, kind),))
    return Plan([call])


def _plan_hotkey(display: Display, kind: str, params: Mapping[str, Any]) -> Plan:
    fields(params, kind, {"keys"}, set())
    keys = params["keys"]
    if not isinstance(keys, list):
        raise ActionError(f"HOTKEY keys must be a list, got {keys!r}")
    return Plan([("key", (combo_of(keys).xdotool(),))])


def _plan_ending(display: Display, kind: str, params: Mapping[str, Any]) -> Plan:
    """``WAIT``, ``DONE`` or ``FAIL`` (the last two end the episode with a report)."""
    fields(params, kind, set(), set())
    if kind == "WAIT":
        return Plan([("wait", (WAIT_S,))])
    if kind == "DONE":
        return Plan(report=AgentReport(reported_success=True, halted=False, message="DONE"))
    return Plan(report=AgentReport(reported_success=False, halted=True, message="FAIL"))


_PLANNERS: dict[str, Callable[[Display, str, Mapping[str, Any]], Plan]] = {
    "MOVE_TO": _plan_move,
    "CLICK": _plan_click,
    "RIGHT_CLICK": _plan_fixed_click,
    "DOUBLE_CLICK": _plan_fixed_click,
    "MOUSE_DOWN": _plan_button,
    "MOUSE_UP": _plan_button,
    "DRAG_TO": _plan_drag,
    "SCROLL": _plan_scroll,
    "TYPING": _plan_typing,
    "PRESS": _plan_key,
    "KEY_DOWN": _plan_key,
    "KEY_UP": _plan_key,
    "HOTKEY": _plan_hotkey,
}
"""How each action but WAIT, DONE and FAIL is checked and planned."""


def run(env: ComputerEnv, action: object) -> ToolOutput:
    """Check and perform one ``computer_13`` action; ``DONE``/``FAIL`` return a report."""
    return perform(env, plan(env.display, action))
