"""Vendor action shapes translated onto :class:`~effectbench.computer.ComputerEnv`.

Each translator *plans* a vendor action (or a batch) first: every field is
checked against the vendor's schema and the env's display before anything is
done, so a malformed action (or a malformed action anywhere in a batch) is an
:class:`~effectbench.computer.ActionError` with no side effect. The plan is then
performed and answers what the vendor's loop expects: a screenshot, a text, or
the agent's end-of-episode :class:`~effectbench.schema.AgentReport`.

* :mod:`.anthropic`: Anthropic's computer-use tool (``computer_20250124``,
  ``computer_20251124`` with ``zoom``);
* :mod:`.openai`: OpenAI's ``computer_call`` actions (single or batched);
* :mod:`.osworld`: OSWorld's ``computer_13`` dicts (``FAIL`` halts, ``DONE`` reports).

None of them accepts agent-written code (pyautogui scripts): there is no path
from an action to an interpreter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from effectbench.computer import ActionError, ComputerEnv, images
from effectbench.schema import AgentReport


@dataclass(frozen=True)
class ToolOutput:
    """What one vendor action answers: an image, a text, or the agent's report."""

    image: bytes | None = None
    """PNG bytes (a screenshot or a zoomed region)."""
    text: str | None = None
    report: AgentReport | None = None
    """Set when the action ends the episode (OSWorld ``DONE`` / ``FAIL``)."""


Call = tuple[str, tuple[Any, ...]]
"""One env step: a method name and its (already checked) arguments."""


@dataclass
class Plan:
    """Checked env steps, then what to observe."""

    calls: list[Call] = field(default_factory=list)
    observe: str = "screenshot"
    """``screenshot``, ``cursor``, ``zoom`` (with ``region``) or ``none``."""
    region: tuple[int, int, int, int] | None = None
    report: AgentReport | None = None


HERE = "here"
"""A point argument meaning "where the pointer is when the step runs"."""


def _at(env: ComputerEnv, x: Any, y: Any) -> tuple[int, int]:
    if x == HERE:
        return env.cursor_position()
    return int(x), int(y)


def _zoom(env: ComputerEnv, region: tuple[int, int, int, int]) -> bytes:
    zoom = getattr(env, "zoom", None)
    if callable(zoom):
        data: bytes = zoom(region)
        return data
    return images.crop(env.screenshot(), region)


def perform(env: ComputerEnv, plan: Plan) -> ToolOutput:
    """Run a checked plan on ``env`` and return the observation it asks for."""
    for name, args in plan.calls:
        if name == "click":
            x, y = _at(env, args[0], args[1])
            env.click(x, y, button=args[2], count=args[3])
        elif name == "scroll":
            x, y = _at(env, args[0], args[1])
            env.scroll(x, y, args[2], args[3])
        elif name == "drag":
            start = _at(env, *args[0][0])
            env.drag([start, *args[0][1:]], button=args[1])
        elif name in ("move", "mouse_down", "mouse_up", "type", "key", "key_down", "key_up"):
            getattr(env, name)(*args)
        elif name == "wait":
            env.wait(args[0])
        else:  # pragma: no cover - plans are built in this package only
            raise ActionError(f"no env step {name!r}")
    if plan.report is not None:
        return ToolOutput(report=plan.report)
    if plan.observe == "cursor":
        x, y = env.cursor_position()
        return ToolOutput(text=f"X={x},Y={y}")
    if plan.observe == "zoom" and plan.region is not None:
        return ToolOutput(image=_zoom(env, plan.region))
    if plan.observe == "none":
        return ToolOutput()
    return ToolOutput(image=env.screenshot())


def fields(action: Mapping[str, Any], name: str, required: set[str], optional: set[str]) -> None:
    """Refuse an action missing a required field or carrying one its schema lacks."""
    missing = sorted(f for f in required if action.get(f) is None)
    if missing:
        raise ActionError(f"{name} needs {', '.join(missing)}")
    extra = sorted(k for k, v in action.items() if k not in required | optional and v is not None)
    if extra:
        raise ActionError(f"{name} takes no {', '.join(extra)}")


def mapping(value: object, what: str) -> Mapping[str, Any]:
    """Return ``value`` if it is a JSON object, else refuse it."""
    if not isinstance(value, Mapping):
        raise ActionError(f"{what} must be an object, got {value!r}")
    return value


__all__ = ["HERE", "Call", "Plan", "ToolOutput", "fields", "mapping", "perform"]
