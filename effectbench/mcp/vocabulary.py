"""The computer actions an MCP episode serves, under one vendor's names and schema.

``effectbench mcp --vocabulary NAME`` picks one of :data:`VOCABULARIES`:

* ``anthropic``: Anthropic's computer-use actions (``computer_20251124``): one tool per
  action (``left_click {coordinate, text}``, ``type {text}``, ``scroll
  {scroll_direction, scroll_amount, coordinate, text}``...), performed by
  :mod:`effectbench.computer.vendors.anthropic`;
* ``openai``: OpenAI's ``computer_call`` action types (``click {x, y, button}``,
  ``keypress {keys}``, ``drag {path}``...), performed by
  :mod:`effectbench.computer.vendors.openai`;
* ``computer_13``: OSWorld's ``computer_13`` (``CLICK {button, x, y, num_clicks}``,
  ``TYPING {text}``, ``HOTKEY {keys}``...; ``DONE`` reports success and ``FAIL``
  halts, as ``report`` does), performed by :mod:`effectbench.computer.vendors.osworld`.

Each tool declares its parameters, the required ones as required, typed strictly
(no ``"5"`` for a number). The vendor's translator checks every value against the
screen before anything is done, so a bad action is a tool error with no effect.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, StrictStr

from effectbench.computer import ComputerEnv
from effectbench.computer.vendors import ToolOutput, anthropic, openai, osworld
from effectbench.mcp import VOCABULARY_NAMES

Point = Annotated[list[StrictInt], Field(min_length=2, max_length=2, description="[x, y]")]
Seconds = StrictInt | StrictFloat


class PathPoint(BaseModel):
    """One point of an OpenAI ``drag`` path."""

    model_config = ConfigDict(extra="forbid")

    x: StrictInt
    y: StrictInt


@dataclass(frozen=True)
class Param:
    """One parameter of an action tool."""

    name: str
    annotation: Any
    description: str
    required: bool = True


@dataclass(frozen=True)
class ActionTool:
    """One action offered as an MCP tool."""

    name: str
    description: str
    params: tuple[Param, ...] = ()


Perform = Callable[[ComputerEnv, str, Mapping[str, Any]], ToolOutput]


@dataclass(frozen=True)
class Vocabulary:
    """A vendor's action tools and how one is performed on the episode's screen."""

    name: str
    summary: str
    tools: tuple[ActionTool, ...]
    perform: Perform

    def tool(self, name: str) -> ActionTool | None:
        """Return the action tool called ``name``, if this vocabulary has one."""
        return next((t for t in self.tools if t.name == name), None)


# --------------------------------------------------------------------------- anthropic

_XY = Param("coordinate", Point, "Where, in the display's pixels: [x, y].")
_XY_HERE = Param(
    "coordinate", Point, "Where, [x, y]; where the pointer is when left out.", required=False
)
_HELD = Param(
    "text", StrictStr, "Modifier keys held meanwhile (xdotool syntax, 'shift').", required=False
)
_ANTHROPIC = (
    ActionTool(
        "key",
        "Press a key or combination (xdotool syntax: 'Return', 'ctrl+s').",
        (Param("text", StrictStr, "The key or combination."),),
    ),
    ActionTool(
        "hold_key",
        "Hold a key or combination for a while.",
        (
            Param("text", StrictStr, "The key or combination."),
            Param("duration", Seconds, "Seconds."),
        ),
    ),
    ActionTool("type", "Type text.", (Param("text", StrictStr, "The text."),)),
    ActionTool("cursor_position", "Where the pointer is, as 'X=..,Y=..'."),
    ActionTool("mouse_move", "Move the pointer.", (_XY,)),
    ActionTool("left_mouse_down", "Press the left button (after moving, if given).", (_XY_HERE,)),
    ActionTool("left_mouse_up", "Release the left button (after moving, if given).", (_XY_HERE,)),
    *(
        ActionTool(name, f"{label} (then a screenshot).", (_XY_HERE, _HELD))
        for name, label in (
            ("left_click", "Click the left button"),
            ("right_click", "Click the right button"),
            ("middle_click", "Click the middle button"),
            ("double_click", "Double-click"),
            ("triple_click", "Triple-click"),
        )
    ),
    ActionTool(
        "left_click_drag",
        "Drag with the left button from start_coordinate to coordinate.",
        (
            Param("start_coordinate", Point, "From [x, y]."),
            Param("coordinate", Point, "To [x, y]."),
        ),
    ),
    ActionTool(
        "scroll",
        "Scroll the wheel.",
        (
            Param("scroll_direction", Literal["up", "down", "left", "right"], "Which way."),
            Param("scroll_amount", StrictInt, "How many notches."),
            _XY_HERE,
            _HELD,
        ),
    ),
    ActionTool("wait", "Let time pass.", (Param("duration", Seconds, "Seconds."),)),
    ActionTool(
        "zoom",
        "A region of the screen at full resolution.",
        (
            Param(
                "region",
                Annotated[list[StrictInt], Field(min_length=4, max_length=4)],
                "[x0, y0, x1, y1]",
            ),
        ),
    ),
)


def _anthropic(env: ComputerEnv, name: str, args: Mapping[str, Any]) -> ToolOutput:
    return anthropic.run(env, {"action": name, **args}, anthropic.COMPUTER_20251124)


# --------------------------------------------------------------------------- openai

_X = Param("x", StrictInt, "x in the display's pixels.")
_Y = Param("y", StrictInt, "y in the display's pixels.")
_OPENAI = (
    ActionTool(
        "click",
        "Click a button at (x, y).",
        (
            _X,
            _Y,
            Param(
                "button",
                Literal["left", "right", "wheel", "back", "forward"],
                "Which button (default left).",
                required=False,
            ),
        ),
    ),
    ActionTool("double_click", "Double-click at (x, y).", (_X, _Y)),
    ActionTool(
        "drag",
        "Drag with the left button along a path of points.",
        (Param("path", list[PathPoint], "The points, [{x, y}, ...], first to last."),),
    ),
    ActionTool(
        "keypress",
        "Press keys together ('CTRL', 'A').",
        (Param("keys", list[StrictStr], "The keys, pressed together."),),
    ),
    ActionTool("move", "Move the pointer to (x, y).", (_X, _Y)),
    ActionTool(
        "scroll",
        "Scroll at (x, y) by pixels.",
        (
            _X,
            _Y,
            Param("scroll_x", StrictInt, "Pixels right (negative: left)."),
            Param("scroll_y", StrictInt, "Pixels down (negative: up)."),
        ),
    ),
    ActionTool("type", "Type text.", (Param("text", StrictStr, "The text."),)),
    ActionTool("wait", "Wait a moment."),
)


def _openai(env: ComputerEnv, name: str, args: Mapping[str, Any]) -> ToolOutput:
    action = {"type": name, **args}
    return openai.run(env, {"type": "computer_call", "action": action})


# --------------------------------------------------------------------------- computer_13

_OX = Param("x", StrictInt, "x in the display's pixels.")
_OY = Param("y", StrictInt, "y in the display's pixels.")
_OX_HERE = Param("x", StrictInt, "x; where the pointer is when left out.", required=False)
_OY_HERE = Param("y", StrictInt, "y; where the pointer is when left out.", required=False)
_BUTTON = Param(
    "button", Literal["left", "right", "middle"], "Which button (default left).", required=False
)
_KEY = Param("key", StrictStr, "A key name ('enter', 'ctrl').")
_COMPUTER_13 = (
    ActionTool("MOVE_TO", "Move the pointer to (x, y).", (_OX, _OY)),
    ActionTool(
        "CLICK",
        "Click (num_clicks times) at (x, y).",
        (
            _BUTTON,
            _OX_HERE,
            _OY_HERE,
            Param("num_clicks", StrictInt, "1, 2 or 3 (default 1).", required=False),
        ),
    ),
    ActionTool("MOUSE_DOWN", "Press a button.", (_BUTTON,)),
    ActionTool("MOUSE_UP", "Release a button.", (_BUTTON,)),
    ActionTool("RIGHT_CLICK", "Right-click at (x, y).", (_OX_HERE, _OY_HERE)),
    ActionTool("DOUBLE_CLICK", "Double-click at (x, y).", (_OX_HERE, _OY_HERE)),
    ActionTool("DRAG_TO", "Drag from the pointer to (x, y).", (_OX, _OY)),
    ActionTool(
        "SCROLL",
        "Scroll by wheel notches (positive dy: up, positive dx: right).",
        (
            Param("dx", StrictInt, "Notches right.", required=False),
            Param("dy", StrictInt, "Notches up.", required=False),
        ),
    ),
    ActionTool("TYPING", "Type text.", (Param("text", StrictStr, "The text."),)),
    ActionTool("PRESS", "Press and release a key.", (_KEY,)),
    ActionTool("KEY_DOWN", "Hold a key down.", (_KEY,)),
    ActionTool("KEY_UP", "Release a held key.", (_KEY,)),
    ActionTool(
        "HOTKEY",
        "Press keys together (['ctrl', 'c']).",
        (Param("keys", list[StrictStr], "The keys."),),
    ),
    ActionTool("WAIT", "Wait a moment."),
    ActionTool("DONE", "End the episode: the task is done (as report with success)."),
    ActionTool("FAIL", "End the episode: the task cannot be done (as report with halted)."),
)


def _computer_13(env: ComputerEnv, name: str, args: Mapping[str, Any]) -> ToolOutput:
    return osworld.run(env, {"action_type": name, "parameters": dict(args)})


VOCABULARIES: dict[str, Vocabulary] = {
    "anthropic": Vocabulary(
        "anthropic",
        "Anthropic computer-use actions (computer_20251124)",
        _ANTHROPIC,
        _anthropic,
    ),
    "openai": Vocabulary("openai", "OpenAI computer-use computer_call actions", _OPENAI, _openai),
    "computer_13": Vocabulary(
        "computer_13", "OSWorld computer_13 actions", _COMPUTER_13, _computer_13
    ),
}
"""Every vocabulary ``effectbench mcp --vocabulary`` serves, by name."""
assert tuple(VOCABULARIES) == VOCABULARY_NAMES
DEFAULT = VOCABULARY_NAMES[0]


def plain(value: Any) -> Any:
    """Return a validated argument as plain JSON data (a path's points as objects)."""
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value
