"""The MCP tools of one episode, over stdio (the ``mcp`` SDK, major version 2)."""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from pydantic import Field, StrictBool, StrictStr

from effectbench.computer import ActionError
from effectbench.mcp.front import INSTRUCTIONS, SERVER_NAME, version
from effectbench.mcp.server import (
    MAX_REPORTED_CALLS,
    VERIFY_TOOL,
    EpisodeOver,
    EpisodeServer,
    ReportedCall,
)
from effectbench.mcp.transport import bounded_stdio
from effectbench.mcp.vocabulary import ActionTool, plain
from effectbench.schema import Substrate

ModelCalls = Annotated[
    list[ReportedCall],
    Field(
        max_length=MAX_REPORTED_CALLS,
        description="The model calls the agent made in this episode: model, input_tokens, "
        "output_tokens, cost_usd (and latency_s, note); the row's cost is their sum.",
    ),
]


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

    @app.tool(
        name="task",
        description="The goal, declared effect, referral, display size and action vocabulary.",
    )
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

    @app.tool(
        name="report",
        description="End the episode: success, or halted, and why; model_calls lists the model "
        "calls you made (their cost goes into the row as yours).",
    )
    async def report(
        success: StrictBool,
        halted: StrictBool,
        message: StrictStr = "",
        model_calls: ModelCalls | None = None,
    ) -> str:
        calls = [c.model_dump() for c in model_calls or []]
        arguments = {"success": success, "halted": halted, "message": message}
        return str(_answer(await _call(episode, "report", {**arguments, "model_calls": calls})))

    @app.tool(
        name="abort",
        description="End the episode because the harness around the agent failed (a model API "
        "outage, a crash): it is dropped as agent_error and may be run again; never a halt.",
    )
    async def abort(reason: Annotated[StrictStr, Field(min_length=1, max_length=2000)]) -> str:
        return str(_answer(await _call(episode, "abort", {"reason": reason})))

    for action in episode.vocabulary.tools:
        app.tool(name=action.name, description=action.description)(_action_tool(episode, action))
    if episode.agent_task.declared_effect is not None:
        _readback_tool(app, episode)
    if episode.task.substrate is Substrate.DESKTOP:
        _accessibility_tools(app, episode)
    return app


def _readback_tool(app: MCPServer, episode: EpisodeServer) -> None:
    @app.tool(
        name=VERIFY_TOOL,
        description="Read the record back through the application's own readback and say "
        "whether this task's declared effect holds (the product's word, not the score).",
    )
    async def verify_effect() -> str:
        return str(_answer(await _call(episode, VERIFY_TOOL, {})))


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


def _action_tool(episode: EpisodeServer, action: ActionTool) -> Any:
    """Return the tool function of one action: its parameters as the vendor's schema says."""

    async def computer_action(**arguments: Any) -> Image | str:
        given = {k: plain(v) for k, v in arguments.items() if v is not None}
        return _answer(await _call(episode, action.name, given))

    parameters = [
        inspect.Parameter(
            p.name,
            inspect.Parameter.KEYWORD_ONLY,
            annotation=Annotated[p.annotation, Field(description=p.description)]
            if p.required
            else Annotated[p.annotation | None, Field(description=p.description)],
            default=inspect.Parameter.empty if p.required else None,
        )
        for p in action.params
    ]
    computer_action.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        parameters, return_annotation=Image | str
    )
    computer_action.__name__ = action.name
    return computer_action


async def serve(app: MCPServer, episode: EpisodeServer) -> None:
    """Serve ``app`` (the started ``episode``) over stdio until the client leaves; then its
    attempt is written.

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
