"""The MCP tools of one episode, over stdio (the ``mcp`` SDK, major version 2)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from pydantic import StrictBool, StrictFloat, StrictInt, StrictStr

from effectbench.computer import ActionError
from effectbench.mcp.front import INSTRUCTIONS, SERVER_NAME, version
from effectbench.mcp.server import ACTIONS, EpisodeOver, EpisodeServer
from effectbench.mcp.transport import bounded_stdio
from effectbench.schema import Substrate


def _answer(result: Any) -> Image | str:
    kind, value = result
    if kind == "image":
        return Image(data=value, format="png")
    return str(value)


async def _call(episode: EpisodeServer, name: str, arguments: dict[str, Any]) -> Any:
    try:
        return await episode.call(name, arguments)
    except (ActionError, EpisodeOver) as exc:
        raise ToolError(str(exc)) from None


def build(episode: EpisodeServer) -> MCPServer:
    """Return the server whose tools are ``episode``."""
    app: MCPServer = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, version=version())

    @app.tool(name="task", description="The goal, declared effect, referral and display size.")
    async def task() -> str:
        try:
            return json.dumps(await episode.task_info(), sort_keys=True)
        except (ActionError, EpisodeOver) as exc:
            raise ToolError(str(exc)) from None

    @app.tool(name="screenshot", description="The screen now, as a PNG image.")
    async def screenshot() -> Image:
        image = _answer(await _call(episode, "screenshot", {}))
        assert isinstance(image, Image)
        return image

    @app.tool(name="report", description="End the episode: success, or halted, and why.")
    async def report(success: StrictBool, halted: StrictBool, message: StrictStr = "") -> str:
        await _call(episode, "report", {"success": success, "halted": halted, "message": message})
        return "reported; the harness judges the record"

    for action in ACTIONS:
        app.tool(name=action, description=f"Computer action {action!r} (Anthropic's schema).")(
            _action_tool(episode, action)
        )
    if episode.task.substrate is Substrate.DESKTOP:
        _accessibility_tools(app, episode)
    return app


def _accessibility_tools(app: MCPServer, episode: EpisodeServer) -> None:
    """The desktop's AT-SPI tools: read the app's tree, act on and type into its nodes."""

    @app.tool(
        name="a11y_tree",
        description="The application's accessibility tree (role, name, states, text, "
        "extents, actions per node) as JSON; node ids are valid for this episode.",
    )
    async def a11y_tree() -> str:
        return str(_answer(await _call(episode, "a11y_tree", {})))

    @app.tool(name="a11y_action", description="Perform a node's accessibility action.")
    async def a11y_action(node: StrictStr, action: StrictStr = "click") -> str:
        return str(_answer(await _call(episode, "a11y_action", {"node": node, "action": action})))

    @app.tool(name="a11y_set_text", description="Replace the text of an editable node.")
    async def a11y_set_text(node: StrictStr, text: StrictStr) -> str:
        return str(_answer(await _call(episode, "a11y_set_text", {"node": node, "text": text})))


def _action_tool(episode: EpisodeServer, action: str) -> Any:
    async def computer_action(
        coordinate: list[StrictInt] | None = None,
        text: StrictStr | None = None,
        scroll_direction: StrictStr | None = None,
        scroll_amount: StrictInt | None = None,
        duration: StrictInt | StrictFloat | None = None,
        start_coordinate: list[StrictInt] | None = None,
        region: list[StrictInt] | None = None,
    ) -> Image | str:
        arguments = {
            k: v
            for k, v in {
                "coordinate": coordinate,
                "text": text,
                "scroll_direction": scroll_direction,
                "scroll_amount": scroll_amount,
                "duration": duration,
                "start_coordinate": start_coordinate,
                "region": region,
            }.items()
            if v is not None
        }
        return _answer(await _call(episode, action, arguments))

    computer_action.__name__ = action
    return computer_action


async def serve(app: MCPServer, episode: EpisodeServer) -> None:
    """Serve ``app`` (the started ``episode``) over stdio until the client leaves; then its row.

    :func:`effectbench.mcp.front.serve` runs this once the episode is prepared: the
    ``initialize`` it already answered arrives first, as from the client. The wire is
    :func:`effectbench.mcp.transport.bounded_stdio` (bounded messages, a JSON-RPC error
    for each malformed one); the SDK's server runs on its streams.
    """
    try:
        server = app._lowlevel_server  # the SDK's stdio runner takes no transport of ours
        async with bounded_stdio() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        await asyncio.to_thread(episode.stop)
