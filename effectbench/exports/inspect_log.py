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

import tempfile
from pathlib import Path
from typing import Any

from effectbench.exports.source import BundleSource, Episode
from effectbench.extras import require

TASK = "effectbench/export"
"""The task name of an exported log."""
SCORER = "effectbench_oracle"
METADATA_KEY = "effectbench_export"


def _sample(episode: Episode) -> Any:
    from inspect_ai.log import EvalSample
    from inspect_ai.scorer import Score

    row = episode.row
    claim = row.agent
    metadata: dict[str, Any] = {
        "trial": row.trial,
        "substrate": str(row.substrate),
        "episode_handle": episode.trial_handle,
        "reading": row.oracle.model_dump(mode="json"),
        "receipt": None if episode.receipt is None else episode.receipt.to_json(),
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
    digest = (source.verified.content_hash or source.name).removeprefix("sha256:")[:22]
    metrics = {
        name: EvalMetric(name=name, value=getattr(results, name).rate)
        for name in ("swer", "over_halt", "task_success", "screen_success")
    }
    spec = EvalSpec(
        eval_id=f"export-{digest}",
        run_id=f"export-{digest}",
        task_id=f"export-{digest}",
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
            _sample(e) for e in sorted(source.episodes, key=lambda e: (e.handle, e.row.trial))
        ],
        results=EvalResults(
            total_samples=len(source.episodes),
            completed_samples=len(source.episodes),
            scores=[EvalScore(name=SCORER, scorer=SCORER, metrics=metrics)],
        ),
        stats=EvalStats(started_at=source.started_at, completed_at=source.finished_at),
    )


def export_inspect(source: BundleSource) -> list[tuple[str, bytes]]:
    """Return the Inspect log of one bundle: ``<bundle>.json`` (inspect's JSON log format)."""
    from inspect_ai.log import write_eval_log

    log = eval_log(source)
    with tempfile.TemporaryDirectory(prefix="effectbench-export-") as tmp:
        path = Path(tmp) / f"{source.name}.json"
        write_eval_log(log, str(path), format="json")
        return [(path.name, path.read_bytes())]


__all__ = ["METADATA_KEY", "SCORER", "TASK", "eval_log", "export_inspect"]
