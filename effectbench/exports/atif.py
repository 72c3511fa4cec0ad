"""ATIF trajectories of a bundle: one per episode, validated by the ``atif`` models (v1.8).

A trajectory holds what the receipt recorded: the task's opaque handle, each action the agent
took through its env as an agent step with its tool call (an API action's screen as the call's
observation), the key frames as observations referenced by their sha256 (the files stay in the
bundle's ``frames/``), the agent's claim as the last agent step, the final metrics (tokens and
cost the row reports), and in ``extra`` the oracle's reading, the effects, the change set and
the outcome. A bundle of format 1 has no receipts: its trajectories hold the claim and the
outcome only, and say so in ``notes``.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from effectbench.exports.files import json_bytes
from effectbench.exports.source import BundleSource, Episode
from effectbench.extras import require

SCHEMA_VERSION = "ATIF-v1.8"
NO_RECEIPTS = (
    "bundle format 1: no receipts, so this trajectory holds the agent's claim and the outcome "
    "only (no actions, observations or frames)"
)

UNSIGNED = "an unsigned preview: accepted by the verifier with --allow-unsigned, never ranked"


def _at(started: str, t: float) -> str | None:
    """The ISO time ``t`` seconds after ``started`` (None when the row has no start)."""
    if not started:
        return None
    try:
        return (datetime.fromisoformat(started) + timedelta(seconds=t)).isoformat()
    except ValueError:
        return None


def _frame_result(name: str, role: str, t: float) -> dict[str, Any]:
    digest = name.split(".", 1)[0]
    return {
        "content": f"key frame ({role}): frames/{name}",
        "extra": {"frame": f"frames/{name}", "sha256": digest, "role": role, "t": t},
    }


def _steps(episode: Episode) -> list[dict[str, Any]]:
    row = episode.row
    receipt = episode.receipt
    start = row.started_at
    steps: list[dict[str, Any]] = [
        {
            "source": "user",
            "message": f"EffectBench task {episode.handle}, trial {row.trial} (the agent's view "
            "is not part of the bundle)",
        }
    ]
    frames = list(receipt.frames) if receipt is not None else []

    def frames_of(role: str) -> list[dict[str, Any]]:
        return [_frame_result(f.name, f.role, f.t) for f in frames if f.role == role]

    first = frames_of("first")
    if first:
        steps.append({"source": "system", "message": "the first screen", "observation":
                      {"results": first}, "timestamp": _at(start, 0.0)})  # fmt: skip
    if receipt is not None:
        for i, action in enumerate(receipt.actions):
            data = action.model_dump(mode="json", exclude_none=True)
            t = float(data.pop("t"))
            kind = data.pop("kind")
            shown = data.pop("shown", None)
            error = data.pop("error", None)
            name = str(data.pop("name", None) or kind)
            arguments = data.pop("arguments", None) or {}
            call_id = f"action-{i}"
            step: dict[str, Any] = {
                "source": "agent",
                "message": f"{kind} {name}" if name != kind else kind,
                "timestamp": _at(start, t),
                "tool_calls": [
                    {
                        "tool_call_id": call_id,
                        "function_name": name,
                        "arguments": {**arguments, **data},
                        "extra": {"kind": kind, "t": t},
                    }
                ],
            }
            said = []
            if shown is not None:
                said.append(f"status: {shown['status']}; banner: {shown['banner']}")
            if error is not None:
                said.append(f"refused by the harness: {error}")
            if said:
                step["observation"] = {
                    "results": [{"source_call_id": call_id, "content": "\n".join(said)}]
                }
            steps.append(step)
    claim = row.agent
    report_step: dict[str, Any] = {
        "source": "agent",
        "message": claim.message,
        "extra": {"claim": claim.model_dump(mode="json")},
    }
    reported = frames_of("report")
    if reported:
        report_step["observation"] = {"results": reported}
    if row.model_calls:
        report_step["metrics"] = {
            "prompt_tokens": sum(c.input_tokens for c in row.model_calls),
            "completion_tokens": sum(c.output_tokens for c in row.model_calls),
            "cost_usd": row.cost_usd,
        }
    steps.append(report_step)
    last = frames_of("last")
    if last:
        steps.append({"source": "system", "message": "the screen after the oracle read the "
                      "record", "observation": {"results": last}})  # fmt: skip
    for n, step in enumerate(steps, start=1):
        step["step_id"] = n
        if step.get("timestamp", "") is None:
            del step["timestamp"]
    return steps


def trajectory(source: BundleSource, episode: Episode) -> dict[str, Any]:
    """Return the ATIF trajectory of one episode, as JSON data validated by ``atif``."""
    require("export", "atif", what="effectbench export --format atif")
    from atif import Trajectory

    row = episode.row
    receipt = episode.receipt
    steps = _steps(episode)
    outcome: dict[str, Any] = {
        "episode_handle": episode.trial_handle,
        "task_handle": episode.handle,
        "trial": row.trial,
        "substrate": str(row.substrate),
        "outcome": str(row.outcome),
        "swer_variant": str(row.swer_variant),
        "reason": row.reason,
        "reference_outcome": str(episode.reference),
        "reading": row.oracle.model_dump(mode="json"),
        "receipt": receipt is not None,
        "bundle": source.name,
        **source.verified.details(),
    }
    if receipt is not None:
        outcome["effects"] = (
            None
            if receipt.effects is None
            else [e.model_dump(mode="json") for e in receipt.effects]
        )
        outcome["changes"] = (
            None if receipt.changes is None else receipt.changes.model_dump(mode="json")
        )
        outcome["collateral"] = receipt.collateral
        outcome["truth"] = receipt.truth.model_dump(mode="json")
        outcome["observations"] = receipt.observations
        if receipt.note:
            outcome["note"] = receipt.note
    tokens_in = sum(c.input_tokens for c in row.model_calls)
    tokens_out = sum(c.output_tokens for c in row.model_calls)
    data: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "session_id": episode.trial_handle,
        "agent": {
            "name": source.header.system.name,
            "version": source.agent_version,
            "model_name": source.model,
            "extra": {"harness": source.harness, "baseline": source.header.system.baseline},
        },
        "steps": steps,
        "final_metrics": {
            "total_prompt_tokens": tokens_in,
            "total_completion_tokens": tokens_out,
            "total_cost_usd": row.cost_usd,
            "total_steps": len(steps),
            "extra": {"latency_s": row.latency_s, "model_calls": len(row.model_calls)},
        },
        "extra": {"effectbench": outcome},
    }
    notes = [NO_RECEIPTS] if receipt is None else []
    if source.verified.unsigned_preview:
        notes.append(UNSIGNED)
    if notes:
        data["notes"] = "; ".join(notes)
    validated = Trajectory.model_validate(data)
    dumped: dict[str, Any] = validated.to_json_dict(exclude_none=True)
    return dumped


def export_atif(source: BundleSource) -> list[tuple[str, bytes]]:
    """Return the ATIF files of one bundle: ``<bundle>/<episode handle>.json`` per episode."""
    return [
        (f"{source.name}/{e.trial_handle}.json", json_bytes(trajectory(source, e)))
        for e in source.episodes
    ]


__all__ = ["NO_RECEIPTS", "SCHEMA_VERSION", "UNSIGNED", "export_atif", "trajectory"]
