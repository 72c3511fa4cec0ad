"""inspect's ``computer()`` tool, mapped onto an episode's :class:`ComputerEnv`.

The tool keeps inspect's own name, description and parameters, so model
providers with native computer use (Anthropic, OpenAI) substitute their tool
for it exactly as they do for inspect's sandboxed one; but each action runs on
the episode's screen (browser page, X display or VNC session) instead of in a
container. inspect's actions are Anthropic's ``computer_20251124`` vocabulary,
so each one is checked and performed by EffectBench's Anthropic translator, in
the display size inspect declares to those models (:data:`INSPECT_DISPLAY`),
scaled onto the env's own display (or, with the task's ``display=native``, in
the env's own size, for models that take the size from the prompt). A refused
action is a tool error to the model (:class:`~effectbench.computer.ActionError`),
never a harness failure;
actions that would leave the application (``navigate``, ``open_web_browser``,
the back and forward buttons) are refused.

On the desktop substrate the env also exposes the app's accessibility tree
(:class:`~effectbench.computer.AccessibleComputerEnv`); the agent then gets the
same three tools as over MCP (``a11y_tree``, ``a11y_action``,
``a11y_set_text``), with each node's extents in the display the agent is told.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from inspect_ai.tool import (
    ContentImage,
    ContentText,
    Tool,
    ToolDef,
    ToolError,
    ToolParam,
    ToolParams,
    ToolResult,
    computer,
)

from effectbench.computer import A11yNode, AccessibleComputerEnv, ActionError, ComputerEnv, Display
from effectbench.computer.scaling import ScaledComputer, fit
from effectbench.computer.vendors import ToolOutput
from effectbench.computer.vendors import perform as run_plan
from effectbench.computer.vendors.anthropic import COMPUTER_20251124, plan
from effectbench.integrations.inspect_ai.episodes import LiveEpisode

INSPECT_DISPLAY = Display(1366, 768)
"""The display size inspect declares to models with native computer use."""
DISPLAYS = ("inspect", "native")
"""The task's ``display`` choices: inspect's declared size, or the env's own."""
REFUSED = ("back_click", "forward_click", "open_web_browser", "navigate")
"""inspect actions that would take the agent out of the application under test."""


def anthropic_steps(args: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Return one inspect computer call as Anthropic computer actions, in order.

    inspect's extras over Anthropic's schema become plain actions: ``repeat``
    on ``key`` repeats it, ``type`` at a ``coordinate`` clicks there first, and
    ``press_enter`` presses Return after typing.
    """
    step = {k: v for k, v in args.items() if v is not None}
    action = step.get("action")
    if action in REFUSED:
        raise ActionError(f"{action} is not offered: the episode is one application's screen")
    repeat = step.pop("repeat", None)
    press_enter = bool(step.pop("press_enter", False))
    if repeat is not None and action != "key":
        raise ActionError(f"repeat applies to the key action only, not {action!r}")
    if press_enter and action != "type":
        raise ActionError(f"press_enter applies to the type action only, not {action!r}")
    if action == "key" and repeat is not None:
        if not isinstance(repeat, int) or isinstance(repeat, bool) or not 1 <= repeat <= 100:
            raise ActionError(f"repeat must be a whole number from 1 to 100, got {repeat!r}")
        return [step] * repeat
    steps = []
    if action == "type" and "coordinate" in step:
        steps.append({"action": "left_click", "coordinate": step.pop("coordinate")})
    steps.append(step)
    if press_enter:
        steps.append({"action": "key", "text": "Return"})
    return steps


def _content(output: ToolOutput) -> ContentText | ContentImage:
    if output.image is not None:
        data = base64.b64encode(output.image).decode("ascii")
        return ContentImage(image=f"data:image/png;base64,{data}")
    return ContentText(text=output.text or "")


def perform(env: ComputerEnv, calls: Sequence[Mapping[str, Any]]) -> ContentText | ContentImage:
    """Check every call first (nothing is done if one is malformed), then perform them in order.

    Returns what the last one observes (a screenshot, or the pointer position).
    """
    plans = [
        plan(env.display, step, COMPUTER_20251124)
        for call in calls
        for step in anthropic_steps(call)
    ]
    if not plans:
        raise ActionError("no action given")
    outputs = [run_plan(env, p) for p in plans]
    return _content(outputs[-1])


def screen_view(live: LiveEpisode) -> ComputerEnv:
    """Return the episode's screen in the display the agent is told (``live.display``)."""
    env: ComputerEnv = live.env
    return fit(env, INSPECT_DISPLAY if live.display == "inspect" else None)


def computer_tool(live: LiveEpisode) -> Tool:
    """Return inspect's ``computer`` tool bound to the episode's screen."""
    template = ToolDef(computer())
    env = screen_view(live)

    async def execute(
        action: str | None = None,
        coordinate: list[int] | None = None,
        duration: int | None = None,
        region: list[int] | None = None,
        scroll_amount: int | None = None,
        scroll_direction: str | None = None,
        start_coordinate: list[int] | None = None,
        text: str | None = None,
        repeat: int | None = None,
        press_enter: bool | None = None,
        actions: list[dict[str, object]] | None = None,
    ) -> ToolResult:
        if actions is not None:
            if action is not None or not isinstance(actions, list):
                raise ToolError("give either one action or a list of actions")
            calls: list[Mapping[str, Any]] = [a for a in actions if isinstance(a, Mapping)]
            if len(calls) != len(actions):
                raise ToolError("every entry of actions must be an object")
        else:
            calls = [
                {
                    "action": action,
                    "coordinate": coordinate,
                    "duration": duration,
                    "region": region,
                    "scroll_amount": scroll_amount,
                    "scroll_direction": scroll_direction,
                    "start_coordinate": start_coordinate,
                    "text": text,
                    "repeat": repeat,
                    "press_enter": press_enter,
                }
            ]
        return await live.act(perform, env, calls)

    return ToolDef(
        execute,
        name=template.name,
        description=template.description,
        parameters=template.parameters,
    ).as_tool()


def declared_tree(node: A11yNode, view: ComputerEnv) -> A11yNode:
    """Return ``node``'s tree with every extent in ``view``'s display (unknown extents kept)."""
    x, y, w, h = node.extents
    extents = node.extents
    if isinstance(view, ScaledComputer) and x >= 0 and y >= 0 and w > 0 and h > 0:
        x0, y0 = view.to_declared(x, y)
        x1, y1 = view.to_declared(x + w - 1, y + h - 1)
        extents = (x0, y0, x1 - x0 + 1, y1 - y0 + 1)
    children = tuple(declared_tree(c, view) for c in node.children)
    return dataclasses.replace(node, extents=extents, children=children)


def _tree_text(env: AccessibleComputerEnv, view: ComputerEnv) -> str:
    tree = declared_tree(env.a11y_tree(), view)
    return json.dumps(dataclasses.asdict(tree), sort_keys=True)


def accessibility_tools(live: LiveEpisode) -> list[Tool]:
    """Return the desktop's accessibility tools, or none when the env has no tree to give."""
    env = live.env
    if not isinstance(env, AccessibleComputerEnv):
        return []
    view = screen_view(live)

    async def guarded(fn: Callable[[str, str], None], node: str, value: str) -> str:
        await live.act(fn, node, value)
        return "done"

    async def a11y_tree() -> str:
        text: str = await live.act(_tree_text, env, view)
        return text

    async def a11y_action(node: str, action: str = "click") -> str:
        return await guarded(env.a11y_action, str(node), str(action))

    async def a11y_set_text(node: str, text: str) -> str:
        return await guarded(env.a11y_set_text, str(node), str(text))

    node = ToolParam(type="string", description="A node id from a11y_tree.")
    return [
        ToolDef(
            a11y_tree,
            name="a11y_tree",
            description="The application's accessibility tree as JSON: per node its id, role, "
            "name, states, text, extents (x, y, width, height on the screen you are shown), "
            "actions and children. Node ids hold for this episode.",
            parameters=ToolParams(),
        ).as_tool(),
        ToolDef(
            a11y_action,
            name="a11y_action",
            description="Perform one of a node's accessibility actions (default 'click').",
            parameters=ToolParams(
                properties={
                    "node": node,
                    "action": ToolParam(
                        type="string", description="One of the node's actions.", default="click"
                    ),
                },
                required=["node"],
            ),
        ).as_tool(),
        ToolDef(
            a11y_set_text,
            name="a11y_set_text",
            description="Replace the text of an editable node.",
            parameters=ToolParams(
                properties={
                    "node": node,
                    "text": ToolParam(type="string", description="The node's new text."),
                },
                required=["node", "text"],
            ),
        ).as_tool(),
    ]
