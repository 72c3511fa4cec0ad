"""A scripted pixel-level agent that plays one EffectBench episode over MCP (stdio).

It starts ``effectbench mcp`` as a subprocess, asks ``task`` for the goal and
referral, then drives the clinic's web app only through the server's tools:
``screenshot`` and Anthropic-named computer actions (``left_click``, ``type``,
``key``). It clicks the fixed layout's recorded coordinates and trusts the
banner's colour, like an RPA bot (the same steps as the shipped pixel
baseline, :mod:`effectbench.packs.clinic.web.pixels`), and reports. It never
sees the row: the server judges the record and writes it to the record dir.

    python examples/mcp_screen_agent.py --task partial_note --trial 0 --record-dir runs/
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
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client

from effectbench.computer import ActionError, Display, MouseButton
from effectbench.packs.clinic.tasks import TASKS
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


class McpScreen:
    """A :class:`~effectbench.computer.ComputerEnv` whose every call is an MCP tool call."""

    def __init__(self, episode: McpEpisode, display: Display) -> None:
        self._episode = episode
        self.display = display
        self._pointer = (0, 0)

    def screenshot(self) -> bytes:
        data: bytes = self._episode.call("screenshot")
        return data

    def _act(self, action: str, **arguments: Any) -> None:
        self._episode.call(action, arguments)

    def click(self, x: int, y: int, button: MouseButton = "left", count: int = 1) -> None:
        name = {("left", 1): "left_click", ("left", 2): "double_click", ("left", 3): "triple_click"}
        action = name.get((button, count), f"{button}_click")
        self._act(action, coordinate=[x, y])
        self._pointer = (x, y)

    def move(self, x: int, y: int) -> None:
        self._act("mouse_move", coordinate=[x, y])
        self._pointer = (x, y)

    def drag(self, path: Sequence[tuple[int, int]], button: MouseButton = "left") -> None:
        self._act("left_click_drag", start_coordinate=list(path[0]), coordinate=list(path[-1]))

    def mouse_down(self, button: MouseButton = "left") -> None:
        self._act("left_mouse_down")

    def mouse_up(self, button: MouseButton = "left") -> None:
        self._act("left_mouse_up")

    def cursor_position(self) -> tuple[int, int]:
        return self._pointer

    def type(self, text: str) -> None:
        self._act("type", text=text)

    def key(self, combo: str) -> None:
        self._act("key", text=combo)

    def key_down(self, key: str) -> None:
        self._act("hold_key", text=key, duration=0)

    def key_up(self, key: str) -> None:
        """Keys held through MCP are released when hold_key ends."""

    def scroll(self, x: int, y: int, dx: int, dy: int) -> None:
        direction, amount = ("down", dy) if dy > 0 else ("up", -dy)
        self._act("scroll", coordinate=[x, y], scroll_direction=direction, scroll_amount=amount)

    def wait(self, seconds: float) -> None:
        self._act("wait", duration=seconds)

    def product_effect_verifier(self) -> ProductVerifier | None:
        return None  # a screen-trusting agent reads no record


def play(command: Sequence[str]) -> str:
    """Play one episode with the pixel, screen-trusting policy; return what it reported."""
    episode = McpEpisode(command)
    try:
        info = json.loads(episode.call("task"))
        name = info["task_id"].removeprefix("clinic::").split("@", 1)[0]
        task = next(t for t in TASKS if t.name == name)
        env = McpScreen(episode, Display(info["display"]["width"], info["display"]["height"]))
        screen = pixels.attempt(env, task, info["referral"])
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
    args = parser.parse_args(argv)
    command = [
        sys.executable,
        "-m",
        "effectbench.cli",
        "mcp",
        "--pack",
        "clinic",
        "--substrate",
        "web",
        "--task",
        args.task,
        "--trial",
        str(args.trial),
        "--record-dir",
        args.record_dir,
        "--system",
        args.system,
    ]
    print(play(command))
    return 0


if __name__ == "__main__":
    sys.exit(main())
