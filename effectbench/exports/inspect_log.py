"""An Inspect log of a bundle: one sample per episode, readable by ``inspect view``.

The log is built with inspect_ai's own models (:class:`inspect_ai.log.EvalLog`) and written with
:func:`inspect_ai.log.write_eval_log` in its JSON format (whose bytes depend on the data only;
the ``.eval`` archive stamps its members with the clock). Samples are named by the task's
opaque handle and their epochs are the trials (epoch ``trial + 1``); each sample's score is
the episode's outcome, its target the outcome the truth table gives the desired behaviour,
and its metadata the receipt (the evidence; frames named by their sha256 in the bundle's
``frames/``) and the oracle's reading. The task is ``effectbench/export``, not one of the
tasks ``import-inspect`` reads: an exported log is a view of a bundle, not a new run.
"""

from __future__ import annotations

import contextlib
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from effectbench.exports.files import sha256
from effectbench.exports.source import BundleSource, Episode
from effectbench.extras import require
from effectbench.manifest import SEQUESTERED

TASK = "effectbench/export"
"""The task name of an exported log."""
SCORER = "effectbench_oracle"
METADATA_KEY = "effectbench_export"


def receipt_json(source: BundleSource, episode: Episode) -> dict[str, Any] | None:
    """The receipt a sample's metadata holds: as the bundle has it, but for a sequestered
    (``test``) split's, whose task id, episode id (a hash of the task id) and title are
    replaced by the published handles and ``[sequestered]`` (never a test task's id)."""
    if episode.receipt is None:
        return None
    data: dict[str, Any] = episode.receipt.to_json()
    if source.sequestered:
        data["task_id"] = episode.handle
        data["episode_id"] = episode.trial_handle
        data["task"] = {**data["task"], "title": SEQUESTERED}
    return data


def _sample(source: BundleSource, episode: Episode) -> Any:
    from inspect_ai.log import EvalSample
    from inspect_ai.scorer import Score

    row = episode.row
    claim = row.agent
    metadata: dict[str, Any] = {
        "trial": row.trial,
        "substrate": str(row.substrate),
        "episode_handle": episode.trial_handle,
        "reading": row.oracle.model_dump(mode="json"),
        "receipt": receipt_json(source, episode),
    }
    if episode.receipt is None:
        metadata["note"] = "bundle format 1: no receipt; the claim and the outcome only"
    return EvalSample(
        id=episode.handle,
        epoch=row.trial + 1,
        input=f"EffectBench task {episode.handle} (the agent's view is not part of the bundle)",
        target=str(episode.reference),
        scores={
            SCORER: Score(
                value=str(row.outcome),
                answer=f"{episode.said}: {claim.message}",
                explanation=row.reason,
                metadata={"swer_variant": str(row.swer_variant), "correct": episode.is_correct},
            )
        },
        metadata=metadata,
        uuid=episode.trial_handle,
        started_at=row.started_at or None,
        completed_at=row.finished_at or None,
        total_time=row.latency_s,
    )


def log_id(source: BundleSource) -> str:
    """The log's id: 22 hex digits of the bundle's content hash (of its name when unknown)."""
    named = source.verified.content_hash or sha256(source.name.encode())
    return named.removeprefix("sha256:")[:22]


def log_name(source: BundleSource) -> str:
    """``<bundle>/<start>_effectbench-export_<id>.json``: Inspect lists a JSON log only under
    a name that starts with its time (``inspect view`` and ``list_eval_logs`` read it so)."""
    stamp = "1970-01-01T00-00-00+00-00"
    if source.started_at:
        with contextlib.suppress(ValueError):
            start = datetime.fromisoformat(source.started_at).astimezone(UTC)
            stamp = start.strftime("%Y-%m-%dT%H-%M-%S+00-00")
    return f"{source.name}/{stamp}_{TASK.replace('/', '-')}_{log_id(source)}.json"


def eval_log(source: BundleSource) -> Any:
    """Return the :class:`inspect_ai.log.EvalLog` of one bundle."""
    require("inspect", "inspect_ai", what="effectbench export --format inspect")
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalMetric,
        EvalResults,
        EvalScore,
        EvalSpec,
        EvalStats,
    )

    header = source.header
    results = source.results
    digest = log_id(source)
    metrics = {
        name: EvalMetric(name=name, value=getattr(results, name).rate)
        for name in ("swer", "over_halt", "task_success", "screen_success")
    }
    spec = EvalSpec(
        eval_id=digest,
        run_id=digest,
        task_id=digest,
        created=source.started_at or "1970-01-01T00:00:00+00:00",
        task=TASK,
        task_version=header.spec_version,
        dataset=EvalDataset(
            name=f"{header.pack.name} ({header.pack.split})",
            samples=len({e.handle for e in source.episodes}),
        ),
        model=f"{source.harness}/{source.model}",
        config=EvalConfig(epochs=header.trials_per_task),
        packages={"effectbench": source.effectbench_version},
        metadata={
            METADATA_KEY: {
                "bundle": source.name,
                "system": header.system.model_dump(mode="json"),
                "harness": source.harness,
                "model": source.model,
                "pack": header.pack.model_dump(mode="json"),
                "substrates": source.substrates,
                "seeds": header.seeds,
                "spec_version": header.spec_version,
                "receipts": source.has_receipts,
                **source.verified.details(),
            }
        },
    )
    return EvalLog(
        status="success",
        eval=spec,
        samples=[
            _sample(source, e)
            for e in sorted(source.episodes, key=lambda e: (e.handle, e.row.trial))
        ],
        results=EvalResults(
            total_samples=len(source.episodes),
            completed_samples=len(source.episodes),
            scores=[EvalScore(name=SCORER, scorer=SCORER, metrics=metrics)],
        ),
        stats=EvalStats(started_at=source.started_at, completed_at=source.finished_at),
    )


def export_inspect(source: BundleSource) -> list[tuple[str, bytes]]:
    """Return the Inspect log of one bundle, :func:`log_name` (inspect's JSON log format)."""
    from inspect_ai.log import write_eval_log

    log = eval_log(source)
    with tempfile.TemporaryDirectory(prefix="effectbench-export-") as tmp:
        path = Path(tmp) / "log.json"
        write_eval_log(log, str(path), format="json")
        return [(log_name(source), path.read_bytes())]


__all__ = [
    "METADATA_KEY",
    "SCORER",
    "TASK",
    "eval_log",
    "export_inspect",
    "log_id",
    "log_name",
    "receipt_json",
]
