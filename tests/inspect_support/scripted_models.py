"""Registers a scripted mock model with inspect for command-line tests (on PYTHONPATH only).

``inspect eval ... --model scripted/NAME`` then runs inspect's own mock model
(``mockllm``) with script ``NAME`` of :mod:`scripted` as its outputs. inspect imports this
module itself, through the ``inspect_ai`` entry point of the dist-info beside it
(``effectbench_test_models-0.dist-info``, found on ``PYTHONPATH`` as an installed package's
would be), when it first looks a model provider up: only a process that runs inspect pays
for importing it (a ``sitecustomize`` would make every Python process of a test pay, about
two seconds each).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from inspect_ai.model import GenerateConfig, modelapi  # noqa: E402
from inspect_ai.model._providers.mockllm import MockLLM  # noqa: E402
from scripted import mock_outputs  # noqa: E402


@modelapi(name="scripted")
class ScriptedMock(MockLLM):
    """inspect's mock model whose outputs are the named script."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig | None = None,
        **model_args: Any,
    ) -> None:
        super().__init__(
            model_name,
            base_url,
            api_key,
            config or GenerateConfig(),
            custom_outputs=mock_outputs(model_name),
        )
