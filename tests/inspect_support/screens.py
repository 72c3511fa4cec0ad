"""The GUI-substrate inspect tests' shared steps: run scripted samples, compare with the runner."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

from effectbench.integrations.inspect_ai import SCORER_NAME
from effectbench.run.runner import RunResult
from effectbench.run.view import handle_for
from inspect_support.scripted import mock_outputs


@dataclass
class Trial:
    """One scored sample run: its score metadata, the tools the model called, and how.

    ``computer_actions`` holds the ``action`` argument of every ``computer`` call.
    """

    meta: dict[str, Any]
    tools: set[str]
    computer_actions: set[str]


def eval_clinic(
    script: str, substrate: str, tasks: Sequence[str], trials: int, log_dir: Path
) -> dict[tuple[str, int], Trial]:
    """Run ``tasks`` of the clinic on ``substrate`` with the scripted mock model, natively sized.

    Every sample must finish without an error and be scored; returns each by (task, trial).
    """
    model = get_model("mockllm/model", custom_outputs=mock_outputs(script))
    (log,) = inspect_eval(
        "effectbench/clinic",
        model=model,
        task_args={"substrate": substrate, "display": "native"},
        sample_id=[handle_for(t, None) for t in tasks],  # samples are known by opaque ids
        epochs=trials,
        display="none",
        log_dir=str(log_dir),
    )
    assert log.status == "success" and log.samples is not None
    named = (log.eval.metadata or {})["effectbench"]["samples"]
    got = {}
    for sample in log.samples:
        assert sample.error is None and sample.scores is not None, sample.error
        meta = sample.scores[SCORER_NAME].metadata
        assert meta is not None
        calls = [c for m in sample.messages if m.role == "assistant" for c in m.tool_calls or []]
        got[(named[str(sample.id)], sample.epoch - 1)] = Trial(
            meta,
            {c.function for c in calls},
            {str(c.arguments.get("action")) for c in calls if c.function == "computer"},
        )
    return got


def assert_same_as_the_runner(got: dict[tuple[str, int], Trial], shipped: RunResult) -> set[str]:
    """Check every trial's outcome, SWER variant, reading and substrate against the runner's row.

    Returns the outcomes seen.
    """
    assert not shipped.dropped and len(got) == len(shipped.rows)
    outcomes = set()
    for row in shipped.rows:
        meta = got[(row.task_id, row.trial)].meta
        assert (meta["outcome"], meta["swer_variant"]) == (
            row.outcome.value,
            row.swer_variant.value,
        ), row.task_id
        assert meta["reading"] == row.oracle.model_dump(mode="json"), row.task_id
        assert meta["row"]["substrate"] == row.substrate.value
        outcomes.add(row.outcome.value)
    return outcomes
