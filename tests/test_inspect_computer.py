"""inspect's computer() tool on an episode's ComputerEnv: same schema, scaled, checked first."""

from __future__ import annotations

import asyncio
import base64
import functools
import json
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from inspect_ai.tool import ContentImage, ContentText, ToolDef, ToolError, ToolInfo
from inspect_ai.tool._tools._computer._computer import is_computer_tool_info
from support.computer import RecordingScreen

from effectbench.computer import A11yNode, ActionError, Display, images
from effectbench.integrations.inspect_ai.computer_tool import (
    INSPECT_DISPLAY,
    accessibility_tools,
    anthropic_steps,
    computer_tool,
    perform,
)
from effectbench.integrations.inspect_ai.episodes import LiveEpisode

SCREEN = Display(1024, 640)


def _live(env: RecordingScreen) -> Any:
    async def run(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    live = SimpleNamespace(episode=SimpleNamespace(env=env), env=env, run=run, display="inspect")
    live.act = functools.partial(LiveEpisode.act, live)  # type: ignore[arg-type]  # the real rule
    return live


def test_the_tool_is_inspects_computer_tool_so_native_computer_use_replaces_it() -> None:
    tool = ToolDef(computer_tool(_live(RecordingScreen(SCREEN))))
    info = ToolInfo(name=tool.name, description=tool.description, parameters=tool.parameters)
    assert is_computer_tool_info(info)


def test_inspect_extras_become_plain_anthropic_actions() -> None:
    assert (
        anthropic_steps({"action": "key", "text": "Tab", "repeat": 3})
        == [{"action": "key", "text": "Tab"}] * 3
    )
    assert anthropic_steps(
        {"action": "type", "text": "hi", "coordinate": [10, 20], "press_enter": True}
    ) == [
        {"action": "left_click", "coordinate": [10, 20]},
        {"action": "type", "text": "hi"},
        {"action": "key", "text": "Return"},
    ]
    for bad, message in (
        ({"action": "navigate", "text": "https://example.org"}, "navigate is not offered"),
        ({"action": "left_click", "repeat": 2}, "repeat applies to the key action only"),
        ({"action": "key", "text": "a", "repeat": 0}, "repeat must be a whole number"),
        ({"action": "scroll", "press_enter": True}, "press_enter applies to the type action"),
    ):
        with pytest.raises(ActionError, match=message):
            anthropic_steps(bad)


def test_clicks_are_scaled_from_inspects_display_and_screenshots_back_to_it() -> None:
    screen = RecordingScreen(SCREEN)
    tool = computer_tool(_live(screen))
    shot = asyncio.run(tool(action="left_click", coordinate=[683, 384]))
    assert ["click", 512, 320, "left", 1] in screen.calls
    assert isinstance(shot, ContentImage)
    png = base64.b64decode(shot.image.split(",", 1)[1])
    assert images.size(png) == (INSPECT_DISPLAY.width, INSPECT_DISPLAY.height)
    where = asyncio.run(tool(action="cursor_position"))
    assert isinstance(where, ContentText) and where.text == "X=683,Y=384"


def test_a_batch_with_one_bad_action_does_nothing_and_is_a_tool_error() -> None:
    screen = RecordingScreen(SCREEN)
    tool = computer_tool(_live(screen))
    batch = [
        {"action": "left_click", "coordinate": [10, 10]},
        {"action": "left_click", "coordinate": [5000, 10]},
    ]
    with pytest.raises(ToolError, match="5000"):
        asyncio.run(tool(actions=batch))
    assert screen.calls == []
    with pytest.raises(ActionError, match="no action given"):
        perform(screen, [])


class AccessibleScreen(RecordingScreen):
    """A recording screen with an accessibility tree of a window and two nodes."""

    def a11y_tree(self) -> A11yNode:
        save = A11yNode("1", "push button", "Save", (), "", (512, 320, 100, 40), ("click",))
        hidden = A11yNode("2", "label", "", (), "", (-1, -1, -1, -1), ())
        return A11yNode("0", "frame", "Clinic", (), "", (0, 0, 1024, 640), (), (save, hidden))

    def a11y_action(self, node: str, action: str) -> None:
        if node != "1":
            raise ActionError(f"no node {node!r}")
        self.calls.append(["a11y_action", node, action])

    def a11y_set_text(self, node: str, text: str) -> None:
        raise ActionError(f"node {node!r} is not editable")


def test_the_desktop_tree_is_in_the_display_the_agent_is_told() -> None:
    assert accessibility_tools(_live(RecordingScreen(SCREEN))) == []  # no tree, no tools
    screen = AccessibleScreen(SCREEN)
    tree, action, set_text = accessibility_tools(_live(screen))
    root = json.loads(str(asyncio.run(tree())))
    assert root["extents"] == [0, 0, 1366, 768]
    save, hidden = root["children"]
    assert save["extents"] == [683, 384, 133, 48] and save["actions"] == ["click"]
    assert hidden["extents"] == [-1, -1, -1, -1]  # unknown stays unknown
    assert asyncio.run(action(node="1")) == "done"
    assert screen.calls == [["a11y_action", "1", "click"]]
    with pytest.raises(ToolError, match="no node '9'"):
        asyncio.run(action(node="9"))
    with pytest.raises(ToolError, match="not editable"):
        asyncio.run(set_text(node="1", text="x"))
