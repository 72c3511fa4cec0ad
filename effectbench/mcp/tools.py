"""The tools of one MCP episode: what ``tools/list`` answers, and each call's checked arguments.

An episode's tools follow from what is known before it is provisioned: the action
vocabulary (:mod:`.vocabulary`), whether the task declares its effect (then the
product's readback, ``verify_effect``, is offered) and whether the substrate exposes
an accessibility tree (desktop: ``a11y_*``). :func:`episode_tools` lists them in
the order ``tools/list`` gives them; each tool's arguments are a strict pydantic
model (:func:`arguments`), which is both the schema the client is shown and the check
a call passes before anything is done, so the list the server's front answers first
(:mod:`.front`) and the one the SDK's server answers later are the same by
construction.

The answers of a call are MCP ``CallToolResult`` objects as JSON (:func:`text_result`,
:func:`image_result`, :func:`error_result`), built here for the front and for the SDK
alike. This module imports no MCP SDK (pydantic only).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    create_model,
)

from effectbench.mcp.vocabulary import ActionTool, Param, Vocabulary

TASK_TOOL = "task"
VERIFY_TOOL = "verify_effect"
"""The product's own readback (when the task declares its effect), never the oracle."""
A11Y_TOOLS = ("a11y_tree", "a11y_action", "a11y_set_text")
"""The extra tools of an episode whose env exposes its accessibility tree (desktop)."""
MAX_REPORTED_CALLS = 10_000
"""Model calls one ``report`` may list."""
MAX_ERRORS_SHOWN = 5
"""Argument errors a refusal names (the rest are counted)."""


class ReportedCall(BaseModel):
    """One model call as ``report`` lists it (its cost is the submitter's word)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: Annotated[StrictStr, Field(min_length=1, max_length=200)]
    input_tokens: Annotated[StrictInt, Field(ge=0)]
    output_tokens: Annotated[StrictInt, Field(ge=0)]
    cost_usd: Annotated[StrictInt | StrictFloat, Field(ge=0, allow_inf_nan=False)]
    latency_s: Annotated[StrictInt | StrictFloat, Field(ge=0, allow_inf_nan=False)] = 0.0
    note: Annotated[StrictStr, Field(max_length=500)] = ""


_OWN = (
    ActionTool(
        TASK_TOOL, "The goal, declared effect, referral, display size and action vocabulary."
    ),
    ActionTool("screenshot", "The screen now, as a PNG image."),
    ActionTool(
        "report",
        "End the episode: success, or halted, and why; model_calls lists the model calls you "
        "made (their cost goes into the row as yours).",
        (
            Param("success", StrictBool, "Whether the task is done."),
            Param("halted", StrictBool, "Whether you stopped without doing it."),
            Param("message", StrictStr, "Why, in a sentence.", required=False),
            Param(
                "model_calls",
                Annotated[list[ReportedCall], Field(max_length=MAX_REPORTED_CALLS)],
                "The model calls the agent made in this episode: model, input_tokens, "
                "output_tokens, cost_usd (and latency_s, note); the row's cost is their sum.",
                required=False,
            ),
        ),
    ),
    ActionTool(
        "abort",
        "End the episode because the harness around the agent failed (a model API outage, a "
        "crash): it is dropped as agent_error and may be run again; never a halt.",
        (
            Param(
                "reason",
                Annotated[StrictStr, Field(min_length=1, max_length=2000)],
                "What failed around the agent.",
            ),
        ),
    ),
)
OWN_TOOLS = frozenset(tool.name for tool in _OWN)
"""The episode's own tools (task, report, abort): not actions of its vocabulary."""

_READBACK = ActionTool(
    VERIFY_TOOL,
    "Read the record back through the application's own readback and say whether this "
    "task's declared effect holds (the product's word, not the score).",
)
_A11Y = (
    ActionTool(
        A11Y_TOOLS[0],
        "The application's accessibility tree (role, name, states, text, extents, actions per "
        "node) as JSON; node ids are valid for this episode.",
    ),
    ActionTool(
        A11Y_TOOLS[1],
        "Perform a node's accessibility action.",
        (
            Param("node", StrictStr, "A node id from a11y_tree."),
            Param("action", StrictStr, "The action's name (default click).", required=False),
        ),
    ),
    ActionTool(
        A11Y_TOOLS[2],
        "Replace the text of an editable node.",
        (
            Param("node", StrictStr, "A node id from a11y_tree."),
            Param("text", StrictStr, "The new text."),
        ),
    ),
)


def episode_tools(vocabulary: Vocabulary, readback: bool, a11y: bool) -> tuple[ActionTool, ...]:
    """Return an episode's tools in listing order: its own, the actions, then the extras."""
    return (*_OWN, *vocabulary.tools, *((_READBACK,) if readback else ()), *(_A11Y if a11y else ()))


@cache
def arguments(tool: ActionTool) -> type[BaseModel]:
    """Return the model of ``tool``'s arguments (an argument left out is ``None``)."""
    fields: dict[str, Any] = {}
    for p in tool.params:
        if p.required:
            fields[p.name] = (Annotated[p.annotation, Field(description=p.description)], ...)
        else:
            fields[p.name] = (
                Annotated[p.annotation | None, Field(description=p.description)],
                None,
            )
    model: type[BaseModel] = create_model(f"{tool.name}Arguments", **fields)
    return model


def listing(tools: Sequence[ActionTool]) -> dict[str, Any]:
    """Return the ``tools/list`` result for ``tools``."""
    return {
        "tools": [
            {
                "name": t.name,
                "description": t.description,
                "inputSchema": arguments(t).model_json_schema(),
            }
            for t in tools
        ]
    }


def checked(tool: ActionTool, given: Mapping[str, Any] | None) -> dict[str, Any]:
    """Return ``given`` checked against ``tool``'s arguments, as plain JSON data.

    An argument left out is not in the result; a bad one raises :class:`ValueError`
    naming each wrong argument (its value is the caller's, never repeated).
    """
    try:
        model = arguments(tool).model_validate(dict(given or {}))
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        said = [f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in errors]
        more = len(said) - MAX_ERRORS_SHOWN
        listed = "; ".join(said[:MAX_ERRORS_SHOWN]) + (f"; and {more} more" if more > 0 else "")
        raise ValueError(f"invalid arguments for {tool.name}: {listed}") from None
    return model.model_dump(mode="json", exclude_none=True)


def text_result(text: str) -> dict[str, Any]:
    """A call's answer: one text block."""
    return {"content": [{"type": "text", "text": text}], "isError": False}


def image_result(png: bytes) -> dict[str, Any]:
    """A call's answer: one PNG image."""
    data = base64.b64encode(png).decode("ascii")
    return {"content": [{"type": "image", "data": data, "mimeType": "image/png"}], "isError": False}


def error_result(message: str) -> dict[str, Any]:
    """A call refused (bad arguments, an action the harness refuses, the episode over)."""
    return {"content": [{"type": "text", "text": message}], "isError": True}
