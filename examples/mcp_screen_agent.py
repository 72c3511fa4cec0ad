"""A scripted pixel-level agent that plays one EffectBench episode over MCP (stdio).

It starts ``effectbench mcp`` as a subprocess, asks ``task`` for what an agent is told
(the goal, the referral, the display, an opaque episode handle: never the task's name),
reads what the referral asks for as a clerk would (an encounter id to edit, a claim to
sign, otherwise a new draft), then drives the clinic's app only through the server's tools:
``screenshot`` and the computer actions, under the names of the vocabulary the
server speaks (Anthropic's ``left_click``, OpenAI's ``click``, OSWorld's
``CLICK``). It clicks the fixed layout's recorded coordinates and trusts the
banner's colour, like an RPA bot (the same steps as the shipped pixel
baselines, :mod:`effectbench.packs.clinic.web.pixels` on the web and
:mod:`effectbench.packs.clinic.desktop.pixel_driver` on the GTK app), and reports.
It never sees the row: the server judges the record and keeps it in the record dir.

    python examples/mcp_screen_agent.py --task partial_note --trial 0 --record-dir runs/
    python examples/mcp_screen_agent.py --task partial_note --substrate desktop --vocabulary openai
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from types import SimpleNamespace
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client

from effectbench.computer import ActionError, Display, MouseButton
from effectbench.packs.clinic.desktop import pixel_driver
from effectbench.packs.clinic.web import pixels
from effectbench.seam import ProductVerifier


class McpEpisode:
    """A synchronous handle on one MCP episode server (its event loop runs in a thread)."""

    def __init__(self, command: Sequence[str]) -> None:
        self._params = StdioServerParameters(command=command[0], args=list(command[1:]))
        self._loop = asyncio.new_event_loop()
        self._ready: Future[ClientSession] = Future()
        self._closed: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._loop.run_until_complete, args=(self._main(),))
        self._thread.start()
        self._session = self._ready.result(timeout=120)

    async def _main(self) -> None:
        self._closed = asyncio.Event()
        try:
            async with stdio_client(self._params) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    self._ready.set_result(session)
                    await self._closed.wait()
        except BaseException as exc:  # noqa: BLE001 - surfaced to the caller
            if not self._ready.done():
                self._ready.set_exception(exc)

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        """Call a tool; return PNG bytes or text; a tool error raises ActionError."""
        future = asyncio.run_coroutine_threadsafe(
            self._session.call_tool(name, arguments or {}), self._loop
        )
        result = future.result(timeout=300)
        block = result.content[0] if result.content else None
        if result.is_error:
            raise ActionError(getattr(block, "text", "tool error"))
        if block is not None and block.type == "image":
            return base64.b64decode(block.data)
        return getattr(block, "text", "")

    def close(self) -> None:
        """Disconnect (the server then writes the row, if it has not already)."""
        if self._closed is not None:
            self._loop.call_soon_threadsafe(self._closed.set)
        self._thread.join(timeout=120)
        self._loop.close()


_OPENAI_BUTTONS = {"left": "left", "right": "right", "middle": "wheel"}


class McpScreen:
    """A :class:`~effectbench.computer.ComputerEnv` whose every call is an MCP tool call.

    ``vocabulary`` is the one the server was started with (``--vocabulary``): each
    step is sent under that vendor's action names and schema.
    """

    def __init__(
        self, episode: McpEpisode, display: Display, vocabulary: str = "anthropic"
    ) -> None:
        self._episode = episode
        self.display = display
        self.vocabulary = vocabulary
        self._pointer = (0, 0)

    def screenshot(self) -> bytes:
        data: bytes = self._episode.call("screenshot")
        return data

    def _act(self, action: str, **arguments: Any) -> None:
        self._episode.call(action, arguments)

    def _say(
        self,
        anthropic: tuple[str, dict[str, Any]],
        openai: tuple[str, dict[str, Any]],
        computer_13: tuple[str, dict[str, Any]],
    ) -> None:
        name, arguments = {"anthropic": anthropic, "openai": openai, "computer_13": computer_13}[
            self.vocabulary
        ]
        self._act(name, **arguments)

    def click(self, x: int, y: int, button: MouseButton = "left", count: int = 1) -> None:
        name = {("left", 1): "left_click", ("left", 2): "double_click", ("left", 3): "triple_click"}
        if self.vocabulary == "openai" and count > 1:
            if (button, count) != ("left", 2):
                raise ActionError(f"OpenAI's computer use has no {count}-fold {button} click")
            self._act("double_click", x=x, y=y)
        else:
            self._say(
                (name.get((button, count), f"{button}_click"), {"coordinate": [x, y]}),
                ("click", {"x": x, "y": y, "button": _OPENAI_BUTTONS[button]}),
                ("CLICK", {"x": x, "y": y, "button": button, "num_clicks": count}),
            )
        self._pointer = (x, y)

    def move(self, x: int, y: int) -> None:
        self._say(
            ("mouse_move", {"coordinate": [x, y]}),
            ("move", {"x": x, "y": y}),
            ("MOVE_TO", {"x": x, "y": y}),
        )
        self._pointer = (x, y)

    def drag(self, path: Sequence[tuple[int, int]], button: MouseButton = "left") -> None:
        start, end = list(path[0]), list(path[-1])
        self._say(
            ("left_click_drag", {"start_coordinate": start, "coordinate": end}),
            ("drag", {"path": [{"x": x, "y": y} for x, y in path]}),
            ("DRAG_TO", {"x": end[0], "y": end[1]}),
        )

    def mouse_down(self, button: MouseButton = "left") -> None:
        self._act("MOUSE_DOWN" if self.vocabulary == "computer_13" else "left_mouse_down")

    def mouse_up(self, button: MouseButton = "left") -> None:
        self._act("MOUSE_UP" if self.vocabulary == "computer_13" else "left_mouse_up")

    def cursor_position(self) -> tuple[int, int]:
        return self._pointer

    def type(self, text: str) -> None:
        self._say(("type", {"text": text}), ("type", {"text": text}), ("TYPING", {"text": text}))

    def key(self, combo: str) -> None:
        keys = combo.split("+") if combo != "+" else ["+"]
        self._say(
            ("key", {"text": combo}),
            ("keypress", {"keys": keys}),
            ("HOTKEY", {"keys": keys}) if len(keys) > 1 else ("PRESS", {"key": combo}),
        )

    def key_down(self, key: str) -> None:
        self._act("hold_key", text=key, duration=0)

    def key_up(self, key: str) -> None:
        """Keys held through MCP are released when hold_key ends."""

    def scroll(self, x: int, y: int, dx: int, dy: int) -> None:
        direction, amount = ("down", dy) if dy > 0 else ("up", -dy)
        self._say(
            (
                "scroll",
                {"coordinate": [x, y], "scroll_direction": direction, "scroll_amount": amount},
            ),
            ("scroll", {"x": x, "y": y, "scroll_x": dx * 100, "scroll_y": dy * 100}),
            ("SCROLL", {"dx": dx, "dy": -dy}),
        )

    def wait(self, seconds: float) -> None:
        self._say(("wait", {"duration": seconds}), ("wait", {}), ("WAIT", {}))

    def product_effect_verifier(self) -> ProductVerifier | None:
        return None  # a screen-trusting agent reads no record


def workflow(referral: dict[str, Any]) -> Any:
    """What the referral asks for: an encounter to edit, a claim to sign, or a new draft (the
    ``kind`` the clinic's scripted drivers read)."""
    if "encounter_id" in referral:
        return SimpleNamespace(kind="edit")
    return SimpleNamespace(kind="sign" if "claim_ref" in referral else "draft")


def speaks(actions: Sequence[str]) -> str:
    """Which vendor's names the server's actions are (OSWorld's, Anthropic's or OpenAI's)."""
    if "CLICK" in actions:
        return "computer_13"
    return "anthropic" if "left_click" in actions else "openai"


def play(command: Sequence[str]) -> str:
    """Play one episode with the pixel, screen-trusting policy; return what it reported."""
    episode = McpEpisode(command)
    try:
        info = json.loads(episode.call("task"))
        task = workflow(info["referral"])
        display = Display(info["display"]["width"], info["display"]["height"])
        env = McpScreen(episode, display, speaks(info["vocabulary"]))
        if info["display"]["surface"] == "web":
            screen = pixels.attempt(env, task, info["referral"])
        else:  # the GTK app on a desktop or a remote display: its own recorded layout
            screen = pixel_driver.attempt(env, task, info["referral"])
        ok = screen.status == "success"
        episode.call(
            "report", {"success": ok, "halted": not ok, "message": f"banner: {screen.banner}"}
        )
        return "success" if ok else "halted"
    finally:
        episode.close()


def main(argv: Sequence[str] | None = None) -> int:
    """Start the episode server for one task and trial, and play it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", required=True)
    parser.add_argument("--trial", type=int, default=0)
    parser.add_argument("--record-dir", default="effectbench-records")
    parser.add_argument("--system", default="mcp-screen-agent")
    parser.add_argument("--substrate", default="web", help="web, desktop or remote_display")
    parser.add_argument("--vocabulary", default="anthropic", help="anthropic, openai, computer_13")
    args = parser.parse_args(argv)
    command = [sys.executable, "-m", "effectbench.cli", "mcp", "--pack", "clinic"]
    command += ["--substrate", args.substrate, "--task", args.task, "--trial", str(args.trial)]
    command += ["--record-dir", args.record_dir, "--system", args.system]
    command += ["--vocabulary", args.vocabulary]
    print(play(command))
    return 0


if __name__ == "__main__":
    sys.exit(main())
