"""The MCP server of one episode, over stdio (the ``mcp`` SDK's low-level server, major 2).

Its tools are :func:`effectbench.mcp.tools.episode_tools`: the list it answers and the
check each call's arguments pass are :mod:`.tools`' (the same the server's front answers
before this module is imported), and every answer is built there too. A call's
arguments are checked before it reaches the episode; a refused one is a tool error
(``isError``) naming the wrong arguments, with nothing done.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server

from effectbench.computer import ActionError
from effectbench.mcp.front import INSTRUCTIONS, SERVER_NAME, version
from effectbench.mcp.server import EpisodeOver, EpisodeServer
from effectbench.mcp.tools import (
    TASK_TOOL,
    checked,
    error_result,
    image_result,
    listing,
    text_result,
)
from effectbench.mcp.transport import bounded_stdio


def answer(result: Any) -> dict[str, Any]:
    """Return what the episode thread answered as a call's result."""
    kind, value = result
    if kind == "image":
        return image_result(value)
    return text_result(str(value))


async def call_tool(episode: EpisodeServer, name: str, given: Any) -> dict[str, Any]:
    """Check one call's arguments, perform it on ``episode`` and return its result."""
    tool = next((t for t in episode.tools if t.name == name), None)
    if tool is None:
        return error_result(f"no tool named {name!r} in this episode (tools/list names them)")
    try:
        arguments = checked(tool, given if isinstance(given, dict) else {})
        if name == TASK_TOOL:
            return text_result(json.dumps(await episode.task_info(), sort_keys=True))
        return answer(await episode.call(name, arguments))
    except (ValueError, ActionError, EpisodeOver) as exc:
        return error_result(str(exc))
    except Exception as exc:  # noqa: BLE001 - the screen failed under the call: the agent is told
        return error_result(f"{name} failed: {type(exc).__name__}: {exc}")


def build(episode: EpisodeServer) -> Server[Any]:
    """Return the low-level server whose tools are ``episode``'s."""
    listed = types.ListToolsResult.model_validate(listing(episode.tools))

    async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return listed

    async def on_call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        result = await call_tool(episode, params.name, params.arguments)
        return types.CallToolResult.model_validate(result)

    server: Server[Any] = Server(
        SERVER_NAME,
        version=version(),
        instructions=INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )
    return server


async def serve(app: Server[Any], episode: EpisodeServer) -> None:
    """Serve ``app`` (the started ``episode``) over stdio until the client leaves; then its
    attempt is written.

    :func:`effectbench.mcp.front.serve` runs this once the episode is prepared: the
    ``initialize`` it already answered arrives first, as from the client. The wire is
    :func:`effectbench.mcp.transport.bounded_stdio` (bounded messages, a JSON-RPC error
    for each malformed one); the SDK's server runs on its streams.
    """
    try:
        async with bounded_stdio() as (read_stream, write_stream):
            await app.run(read_stream, write_stream, app.create_initialization_options())
    finally:
        await asyncio.to_thread(episode.stop)
