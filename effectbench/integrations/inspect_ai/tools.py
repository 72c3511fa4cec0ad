"""The agent's tools for one episode: the pack's actions, the product's readback, a report.

* at the API level, one tool per action the env accepts (``EnvHandle.actions()``),
  with the action's named arguments as typed parameters (the required ones
  required) when the env describes them (:class:`~effectbench.seam.DescribesActions`,
  as every shipped pack's does; otherwise one object of named arguments), returning
  the screen that follows; on a screen substrate, inspect's ``computer`` tool on the
  episode's :class:`~effectbench.computer.ComputerEnv` (:mod:`.computer_tool`),
  and on the desktop the app's accessibility tree (``a11y_tree``,
  ``a11y_action``, ``a11y_set_text``);
* ``verify_effect`` when the product offers its own readback and the task
  declares an effect: the product's verifier, never the harness oracle;
* ``report_outcome(success, message)``: the agent's (untrusted) report.

Every tool closes over the env handle only; the oracle is out of reach.
"""

from __future__ import annotations

import json
from typing import Any

from inspect_ai.tool import Tool, ToolDef, ToolError, ToolParam, ToolParams

from effectbench.computer import ComputerEnv
from effectbench.integrations.inspect_ai.computer_tool import accessibility_tools, computer_tool
from effectbench.integrations.inspect_ai.episodes import LiveEpisode
from effectbench.schema import AgentReport
from effectbench.seam import DescribesActions, Screen

REPORT_TOOL = "report_outcome"
VERIFY_TOOL = "verify_effect"


def screen_text(screen: Screen) -> str:
    """Return a screen as the JSON text a tool hands the model."""
    return json.dumps(
        {"status": screen.status, "banner": screen.banner, "details": dict(screen.details)},
        default=str,
        sort_keys=True,
    )


def _action_tool(live: LiveEpisode, action: str) -> Tool:
    """One action as a tool: its declared parameters when the env describes them."""
    env = live.episode.env
    described = env.action_parameters() if isinstance(env, DescribesActions) else None

    async def run(**kwargs: Any) -> str:
        arguments = kwargs if described is not None else kwargs.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise ToolError("arguments must be an object of named arguments")
        screen: Screen = await live.act(live.env.act, action, **arguments)  # logged
        return screen_text(screen)

    if described is not None:
        params = described.get(action, ())
        parameters = ToolParams(
            properties={
                p.name: ToolParam(
                    type=list(p.type) if isinstance(p.type, tuple) else p.type,
                    description=p.description,
                )
                for p in params
            },
            required=[p.name for p in params if p.required],
        )
    else:  # a pack whose env does not describe its actions: one object of named arguments
        parameters = ToolParams(
            properties={
                "arguments": ToolParam(
                    type="object",
                    description=f"The named arguments of '{action}'.",
                    additionalProperties=True,
                    default={},
                )
            },
            required=[],
        )
    return ToolDef(
        run,
        name=action,
        description=f"Perform the application's '{action}' action and return the screen that "
        "follows (status, banner, details).",
        parameters=parameters,
    ).as_tool()


def _verify_tool(live: LiveEpisode) -> Tool:
    async def run() -> str:
        verifier = live.verifier
        effect = live.agent_task.declared_effect
        assert verifier is not None and effect is not None
        reading = await live.act(verifier.verify, effect)
        return json.dumps({"verifier": verifier.name, **reading.to_json()})

    return ToolDef(
        run,
        name=VERIFY_TOOL,
        description="Read the record back through the application's own readback and say "
        "whether this task's declared effect holds.",
        parameters=ToolParams(),
    ).as_tool()


def _report_tool(live: LiveEpisode) -> Tool:
    async def run(success: bool, message: str = "") -> str:
        live.report = AgentReport(
            reported_success=bool(success), halted=not success, message=str(message)
        )
        await live.run(live.recording.reported)  # the screen the agent reported on
        return "report recorded"

    return ToolDef(
        run,
        name=REPORT_TOOL,
        description="Finish the task: report whether you achieved its goal (success=true) or "
        "stopped without achieving it (success=false), with a short message.",
        parameters=ToolParams(
            properties={
                "success": ToolParam(type="boolean", description="Whether the goal was achieved."),
                "message": ToolParam(type="string", description="What happened.", default=""),
            },
            required=["success"],
        ),
    ).as_tool()


def is_screen(live: LiveEpisode) -> bool:
    """Say whether the episode is on a screen substrate (the agent holds a ComputerEnv)."""
    return isinstance(live.env, ComputerEnv)


def episode_tools(live: LiveEpisode) -> list[Tool]:
    """Return the episode's tools: its actions (or the computer on a screen), readback, report."""
    if is_screen(live):
        tools = [computer_tool(live), *accessibility_tools(live)]
    else:
        tools = [_action_tool(live, name) for name in live.env.actions()]
    if live.verifier is not None and live.agent_task.declared_effect is not None:
        tools.append(_verify_tool(live))
    tools.append(_report_tool(live))
    return tools
