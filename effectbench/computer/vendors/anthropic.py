"""Anthropic's computer-use tool (``computer_20250124``, ``computer_20251124``).

A ``tool_use`` block's ``input`` is one action: ``{"action": "left_click",
"coordinate": [x, y]}``. Coordinates are in the display size the tool was
declared with (wrap the env in :func:`effectbench.computer.scaling.fit` when
that differs from the screen). ``key`` and ``hold_key`` take xdotool syntax;
a ``text`` on a click or scroll names modifiers held during it (``"shift"``).
``zoom`` (``computer_20251124``) returns a region at full resolution.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from effectbench.computer import ActionError, ComputerEnv, Display, checks
from effectbench.computer.keys import parse_combo, parse_keys
from effectbench.computer.vendors import HERE, Call, Plan, ToolOutput, fields, mapping, perform

COMPUTER_20250124 = "computer_20250124"
COMPUTER_20251124 = "computer_20251124"

_BASE_ACTIONS = (
    "key",
    "hold_key",
    "type",
    "cursor_position",
    "mouse_move",
    "left_mouse_down",
    "left_mouse_up",
    "left_click",
    "left_click_drag",
    "right_click",
    "middle_click",
    "double_click",
    "triple_click",
    "scroll",
    "wait",
    "screenshot",
)
ACTIONS: dict[str, tuple[str, ...]] = {
    COMPUTER_20250124: _BASE_ACTIONS,
    COMPUTER_20251124: (*_BASE_ACTIONS, "zoom"),
}
"""The actions of each tool version."""

_CLICKS = {
    "left_click": ("left", 1),
    "right_click": ("right", 1),
    "middle_click": ("middle", 1),
    "double_click": ("left", 2),
    "triple_click": ("left", 3),
}
_SCROLL = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


def tool_definition(display: Display, version: str = COMPUTER_20251124) -> dict[str, Any]:
    """Return the ``tools`` entry that declares the computer tool for ``display``."""
    tool: dict[str, Any] = {
        "type": version,
        "name": "computer",
        "display_width_px": display.width,
        "display_height_px": display.height,
    }
    if version == COMPUTER_20251124:
        tool["enable_zoom"] = True
    return tool


def _coordinate(display: Display, value: object, what: str = "coordinate") -> tuple[int, int]:
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise ActionError(f"{what} must be [x, y], got {value!r}")
    return checks.point(display, value[0], value[1])


def _here_or(display: Display, value: object) -> tuple[Any, Any]:
    """Return the checked coordinate, or "where the pointer is" when none is given."""
    return (HERE, HERE) if value is None else _coordinate(display, value)


def _held(text: object) -> list[str]:
    """Return the modifiers a click or scroll ``text`` asks to hold."""
    if text is None:
        return []
    combo = parse_combo(text)
    if combo.key is not None:
        raise ActionError(f"only modifiers may be held during a click or scroll, got {text!r}")
    return list(combo.modifiers)


def _with_modifiers(mods: list[str], calls: list[Call]) -> list[Call]:
    downs: list[Call] = [("key_down", (m,)) for m in mods]
    ups: list[Call] = [("key_up", (m,)) for m in reversed(mods)]
    return [*downs, *calls, *ups]


def plan(display: Display, tool_input: object, version: str = COMPUTER_20251124) -> Plan:
    """Check one action against ``version``'s schema and ``display``; return its plan."""
    if version not in ACTIONS:
        raise ActionError(f"unknown computer tool version {version!r}")
    data: Mapping[str, Any] = mapping(tool_input, "a computer action")
    name = data.get("action")
    if name not in ACTIONS[version]:
        raise ActionError(f"unknown action {name!r} for {version}")
    act = {k: v for k, v in data.items() if k != "action"}
    return _PLANNERS.get(name, _plan_zoom)(display, name, act)


def _plan_key(display: Display, name: str, act: dict[str, Any]) -> Plan:
    fields(act, name, {"text"}, set())
    return Plan([("key", (c.xdotool(),)) for c in parse_keys(act["text"])])


def _plan_hold_key(display: Display, name: str, act: dict[str, Any]) -> Plan:
    fields(act, name, {"text", "duration"}, set())
    combo = parse_combo(act["text"]).xdotool()
    seconds = checks.seconds(act["duration"])
    return Plan([("key_down", (combo,)), ("wait", (seconds,)), ("key_up", (combo,))])


def _plan_type(display: Display, name: str, act: dict[str, Any]) -> Plan:
    fields(act, name, {"text"}, set())
    return Plan([("type", (checks.text(act["text"]),))])


def _plan_observe(display: Display, name: str, act: dict[str, Any]) -> Plan:
    """``cursor_position`` or ``screenshot``."""
    fields(act, name, set(), set())
    return Plan(observe="cursor" if name == "cursor_position" else "screenshot")


def _plan_mouse_move(display: Display, name: str, act: dict[str, Any]) -> Plan:
    fields(act, name, {"coordinate"}, set())
    return Plan([("move", _coordinate(display, act["coordinate"]))])


def _plan_button(display: Display, name: str, act: dict[str, Any]) -> Plan:
    """``left_mouse_down`` or ``left_mouse_up``, after a move when a coordinate is given."""
    fields(act, name, set(), {"coordinate"})
    calls: list[Call] = []
    if act.get("coordinate") is not None:
        calls.append(("move", _coordinate(display, act["coordinate"])))
    calls.append(("mouse_down" if name == "left_mouse_down" else "mouse_up", ("left",)))
    return Plan(calls)


def _plan_click(display: Display, name: str, act: dict[str, Any]) -> Plan:
    fields(act, name, set(), {"coordinate", "text"})
    button, count = _CLICKS[name]
    at = _here_or(display, act.get("coordinate"))
    return Plan(_with_modifiers(_held(act.get("text")), [("click", (*at, button, count))]))


def _plan_drag(display: Display, name: str, act: dict[str, Any]) -> Plan:
    fields(act, name, {"start_coordinate", "coordinate"}, set())
    start = _coordinate(display, act["start_coordinate"], "start_coordinate")
    end = _coordinate(display, act["coordinate"])
    return Plan([("drag", ([start, end], "left"))])


def _plan_scroll(display: Display, name: str, act: dict[str, Any]) -> Plan:
    fields(act, name, {"scroll_direction", "scroll_amount"}, {"coordinate", "text"})
    direction = act["scroll_direction"]
    if direction not in _SCROLL:
        raise ActionError(f"scroll_direction must be up, down, left or right, got {direction!r}")
    amount = checks.notches(act["scroll_amount"], "scroll_amount")
    if amount < 0:
        raise ActionError(f"scroll_amount must not be negative, got {amount}")
    ux, uy = _SCROLL[direction]
    at = _here_or(display, act.get("coordinate"))
    call: Call = ("scroll", (*at, ux * amount, uy * amount))
    return Plan(_with_modifiers(_held(act.get("text")), [call]))


def _plan_wait(display: Display, name: str, act: dict[str, Any]) -> Plan:
    fields(act, name, {"duration"}, set())
    return Plan([("wait", (checks.seconds(act["duration"]),))])


def _plan_zoom(display: Display, name: str, act: dict[str, Any]) -> Plan:
    fields(act, name, {"region"}, set())
    region = act["region"]
    if not isinstance(region, list | tuple) or len(region) != 4:
        raise ActionError(f"region must be [x0, y0, x1, y1], got {region!r}")
    x0, y0 = checks.point(display, region[0], region[1])
    x1, y1 = (checks.integer(v, "region") for v in region[2:])
    if not (x0 < x1 <= display.width and y0 < y1 <= display.height):
        raise ActionError(f"region {list(region)} is not a box on the screen")
    return Plan(observe="zoom", region=(x0, y0, x1, y1))


_PLANNERS: dict[str, Callable[[Display, str, dict[str, Any]], Plan]] = {
    "key": _plan_key,
    "hold_key": _plan_hold_key,
    "type": _plan_type,
    "cursor_position": _plan_observe,
    "screenshot": _plan_observe,
    "mouse_move": _plan_mouse_move,
    "left_mouse_down": _plan_button,
    "left_mouse_up": _plan_button,
    **dict.fromkeys(_CLICKS, _plan_click),
    "left_click_drag": _plan_drag,
    "scroll": _plan_scroll,
    "wait": _plan_wait,
    "zoom": _plan_zoom,
}
"""How each action is checked and planned."""


def run(env: ComputerEnv, tool_input: object, version: str = COMPUTER_20251124) -> ToolOutput:
    """Check and perform one Anthropic computer action on ``env``."""
    return perform(env, plan(env.display, tool_input, version))
