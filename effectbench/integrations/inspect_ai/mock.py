"""Scripted models for trying the inspect tasks offline: ``--model effectbench-mock/NAME``.

inspect's own mock model (``mockllm``) counts tokens with a tokenizer it downloads, so
on a machine without internet every sample errors. These models need nothing: each
answer is scripted and carries its usage explicitly.

* ``effectbench-mock/halt``: calls ``report_outcome`` at once, reporting that it
  halted without acting (any pack, any substrate): the smoke test of a run, an
  import and a bundle;
* ``effectbench-mock/claim``: calls ``report_outcome`` at once, claiming success
  without acting: SPEC's phantom, scored as a silent wrong effect through every door
  (MCP, the vendor loops, inspect, in process alike);
* ``effectbench-mock/outage``: raises on every call, as a model API that is down:
  every sample errors, each an ``agent_error`` drop when the log is imported, and
  the bundle is never ranked.
"""

from __future__ import annotations

from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from effectbench.integrations.inspect_ai.tools import REPORT_TOOL

PROVIDER = "effectbench-mock"
SCRIPTS = ("halt", "claim", "outage")
"""The scripted models, by name (``effectbench-mock/halt``...)."""
HALT_MESSAGE = "a scripted model that halts without acting (an offline smoke test)"
CLAIM_MESSAGE = "done (a scripted model that claims success without acting)"
OUTAGE_MESSAGE = "the model API is unreachable (effectbench-mock/outage: a scripted outage)"
CHARS_PER_TOKEN = 4
"""The usage a scripted answer reports: one input token per four characters it read."""


class ScriptedOutage(ConnectionError):
    """What ``effectbench-mock/outage`` raises on every call."""


@modelapi(name=PROVIDER)
class ScriptedModel(ModelAPI):
    """A model whose answers are scripted: ``halt``, ``claim`` or ``outage`` (see the module)."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008 - inspect's own signature
        **model_args: object,
    ) -> None:
        if model_name not in SCRIPTS:
            raise ValueError(
                f"{PROVIDER}/{model_name}: no such scripted model; known: "
                + ", ".join(f"{PROVIDER}/{name}" for name in SCRIPTS)
            )
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        """Answer the conversation so far with the script's next move."""
        if self.model_name == "outage":
            raise ScriptedOutage(OUTAGE_MESSAGE)
        if REPORT_TOOL not in {t.name for t in tools}:
            raise ValueError(
                f"{PROVIDER}/{self.model_name} needs the {REPORT_TOOL} tool of an EffectBench task"
            )
        claims = self.model_name == "claim"
        output = ModelOutput.for_tool_call(
            f"{PROVIDER}/{self.model_name}",
            REPORT_TOOL,
            {"success": claims, "message": CLAIM_MESSAGE if claims else HALT_MESSAGE},
            content="Reporting success without acting." if claims else "Halting without acting.",
        )
        read = sum(len(m.text) for m in input) // CHARS_PER_TOKEN
        output.usage = ModelUsage(
            input_tokens=read, output_tokens=20, total_tokens=read + 20, total_cost=0.0
        )
        return output

    def should_retry(self, ex: Exception) -> bool:
        """Never: a scripted outage stays down."""
        return False
