"""Every Eval Ever (EEE) records of a bundle: one aggregate record per board, with its rows.

A bundle is on one board per substrate its rows cover, so it gives one aggregate record
(``eval.schema.json`` of the EEE project, version 0.2.1) per substrate: SWER, over-halt, task
success, record-wrong and net value per 100 tasks, each with its k/n, its task-clustered 95%
interval and the method in ``uncertainty``, all computed by :mod:`effectbench.metrics`. Beside
it, the instance-level rows (``instance_level_eval.schema.json``), one per episode, named by
the task's opaque handle (never its title or id), with the file's sha256 in the aggregate
record's ``detailed_evaluation_results``.
"""

from __future__ import annotations

from typing import Any

from effectbench.exports.files import json_bytes, jsonl_bytes, sha256
from effectbench.exports.source import BundleSource, Episode, epoch_seconds
from effectbench.metrics import (
    DEFAULT_PRICES,
    PER,
    Prices,
    TaskTable,
    idle_share,
    idle_value,
    net_value,
    over_doing_nothing,
    task_rate,
    value_bounds,
)

SCHEMA_VERSION = "0.2.1"
"""The EEE aggregate schema's version these records follow."""
INSTANCE_SCHEMA_VERSION = "instance_level_eval_0.2.1"
"""The EEE instance-level schema's version."""
SOURCE_NAME = "EffectBench"

RATES = (
    ("swer", "SWER", True, "silent wrong-effect rate: reported success while the record is "
     "wrong or empty, read by the independent oracle"),
    ("over_halt", "over-halt", True, "halted although the correct action was available"),
    ("task_success", "task success", False, "reported success and the correct, complete "
     "effect persisted"),
    ("record_wrong", "record-wrong", True, "left a wrong record, whatever the report said"),
)  # fmt: skip
"""(event, name, lower is better, description) of each rate a record carries."""


def _board(source: BundleSource, substrate: str) -> str:
    return f"effectbench/{source.header.pack.name}/{substrate}"


def evaluation_id(source: BundleSource, substrate: str) -> str:
    """The record's id: the board and the bundle (the same bundle always gets the same)."""
    return f"{_board(source, substrate)}/{source.name}"


def file_stem(source: BundleSource, substrate: str) -> str:
    """The files' name without suffix: ``<bundle>.<substrate>``."""
    return f"{source.name}.{substrate}"


def _source_data(source: BundleSource, substrate: str, table: TaskTable) -> dict[str, Any]:
    header = source.header
    details = {
        "pack": header.pack.name,
        "pack_fingerprint": header.pack.fingerprint,
        "split": str(header.pack.split),
        "substrate": substrate,
        "seeds": ",".join(str(s) for s in header.seeds),
        "trials_per_task": str(header.trials_per_task),
        "units": str(table.n_tasks),
        "episodes": str(table.n_episodes),
    }
    if header.instances is not None:
        details["instance_seed"] = header.instances.seed
    return {
        "dataset_name": f"EffectBench {header.pack.name} ({header.pack.split}, {substrate})",
        "source_type": "other",
        "additional_details": details,
    }


def _rate_result(
    event: str, name: str, lower: bool, what: str, table: TaskTable, common: dict[str, Any]
) -> dict[str, Any]:
    r = task_rate(table, event)
    c = r.clustered
    details = {
        "numerator": str(r.numerator),
        "denominator": str(r.denominator),
        "k_of_n": f"{r.numerator}/{r.denominator}",
        "wilson_lower": repr(r.ci.lo),
        "wilson_upper": repr(r.ci.hi),
        "design_effect": repr(c.design_effect),
        "n_effective": repr(c.n_effective),
        "units": str(c.tasks),
    }
    if r.clustered_upper is not None:
        details["zero_one_sided_upper"] = repr(r.clustered_upper)
    return {
        "evaluation_name": name,
        **common,
        "metric_config": {
            "evaluation_description": what,
            "lower_is_better": lower,
            "score_type": "continuous",
            "min_score": 0.0,
            "max_score": 1.0,
        },
        "score_details": {
            "score": r.rate,
            "details": details,
            "uncertainty": {
                "confidence_interval": {
                    "lower": c.lo,
                    "upper": c.hi,
                    "confidence_level": c.confidence,
                    "method": f"{c.method}, clustered over {c.tasks} units (the board's: tasks, "
                    "or a generated pack's templates)",
                },
                "num_samples": r.denominator,
            },
        },
    }


def _value_result(table: TaskTable, prices: Prices, common: dict[str, Any]) -> dict[str, Any]:
    est = net_value(table, prices)
    idle = idle_share([table])
    least, most = value_bounds(prices)

    def drawn(per_100: float) -> float:  # against doing nothing, as the board draws it
        return over_doing_nothing(per_100, prices, idle)

    details = {
        "prices": prices.text(),
        "per_100_absolute": repr(est.per_100),
        "doing_nothing_per_100": repr(idle_value(prices, idle)) if idle is not None else "unknown",
        "zero_line": "doing nothing on these tasks" if idle is not None else "none (unknown)",
        "units": str(est.tasks),
    }
    return {
        "evaluation_name": "net value per 100 tasks",
        **common,
        "metric_config": {
            "evaluation_description": "net value per 100 tasks against doing nothing, at the "
            "board's default prices (value of a correct effect; prices of a silent wrong "
            "effect, a wrong record and an over-halt)",
            "lower_is_better": False,
            "score_type": "continuous",
            "min_score": drawn(PER * least),
            "max_score": drawn(PER * most),
        },
        "score_details": {
            "score": drawn(est.per_100),
            "details": details,
            "uncertainty": {
                "confidence_interval": {
                    "lower": drawn(est.lo),
                    "upper": drawn(est.hi),
                    "confidence_level": est.confidence,
                    "method": est.method,
                },
                "num_samples": table.n_episodes,
            },
        },
    }


def _message_calls(episode: Episode) -> list[dict[str, Any]]:
    if episode.receipt is None:
        return []
    calls = []
    for i, action in enumerate(episode.receipt.actions):
        data = action.model_dump(mode="json", exclude_none=True)
        name = str(data.pop("name", None) or data["kind"])
        args = {k: v if isinstance(v, str) else str(v) for k, v in sorted(data.items())}
        calls.append({"id": f"action-{i}", "name": name, "arguments": args})
    return calls


def instance_row(source: BundleSource, episode: Episode, substrate: str) -> dict[str, Any]:
    """Return the instance-level row of one episode."""
    row = episode.row
    claim = row.agent
    calls = _message_calls(episode)
    oracle = row.oracle
    meta = {
        "trial": str(row.trial),
        "episode_handle": episode.trial_handle,
        "outcome": str(row.outcome),
        "swer_variant": str(row.swer_variant),
        "label_reason": row.reason,
        "oracle_verdict": str(oracle.verdict),
        "oracle_kind": str(oracle.kind),
        "oracle_channel": oracle.channel,
        "oracle_reason": oracle.reason,
        "oracle_observed_count": ""
        if oracle.observed_count is None
        else str(oracle.observed_count),
        "oracle_expected_count": ""
        if oracle.expected_count is None
        else str(oracle.expected_count),
        "receipt": "yes" if episode.receipt is not None else "no (bundle format 1)",
    }
    if episode.receipt is not None and episode.receipt.collateral is not None:
        meta["collateral_write"] = str(episode.receipt.collateral).lower()
    tokens_in = sum(c.input_tokens for c in row.model_calls)
    tokens_out = sum(c.output_tokens for c in row.model_calls)
    return {
        "schema_version": INSTANCE_SCHEMA_VERSION,
        "evaluation_id": evaluation_id(source, substrate),
        "model_id": source.model_id,
        "evaluation_name": _board(source, substrate),
        "sample_id": episode.handle,
        "interaction_type": "agentic",
        "input": {
            "raw": f"EffectBench task {episode.handle}, trial {row.trial} (the agent's view is "
            "not part of the bundle)",
            "reference": [str(episode.reference)],
        },
        "output": None,
        "messages": [
            {"turn_idx": 0, "role": "user", "content": f"task {episode.handle}"},
            {
                "turn_idx": 1,
                "role": "assistant",
                "content": claim.message,
                "tool_calls": calls or None,
            },
        ],
        "answer_attribution": [
            {
                "turn_idx": 1,
                "source": "messages[1].content",
                "extracted_value": episode.said,
                "extraction_method": "the agent's report (its claim), judged against the "
                "record read by the independent oracle",
                "is_terminal": True,
            }
        ],
        "evaluation": {
            "score": 1.0 if episode.is_correct else 0.0,
            "is_correct": episode.is_correct,
            "num_turns": 2,
            "tool_calls_count": len(calls) if episode.receipt is not None else None,
        },
        "token_usage": {
            "input_tokens": tokens_in,
            "output_tokens": tokens_out,
            "total_tokens": tokens_in + tokens_out,
        }
        if row.model_calls
        else None,
        "performance": {"latency_ms": row.latency_s * 1000.0},
        "error": None,
        "metadata": meta,
    }


def export_eee(source: BundleSource, prices: Prices = DEFAULT_PRICES) -> list[tuple[str, bytes]]:
    """Return the EEE files of one bundle: per substrate ``<bundle>.<substrate>.json`` (the
    aggregate record) and ``<bundle>.<substrate>.samples.jsonl`` (its instance rows)."""
    header = source.header
    out: list[tuple[str, bytes]] = []
    for substrate in source.substrates:
        table = source.tasks.of_substrate(substrate)
        stem = file_stem(source, substrate)
        rows = [
            instance_row(source, e, substrate)
            for e in source.episodes
            if str(e.row.substrate) == substrate
        ]
        samples = jsonl_bytes(rows)
        common = {
            "source_data": _source_data(source, substrate, table),
            "evaluation_timestamp": source.started_at,
        }
        results = [_rate_result(*spec, table, common) for spec in RATES]
        results.append(_value_result(table, prices, common))
        library = {
            "spec_version": header.spec_version,
            "bundle_version": str(header.effectbench_bundle_version),
            "receipts": "yes" if source.has_receipts else "no (bundle format 1)",
        }
        record = {
            "schema_version": SCHEMA_VERSION,
            "evaluation_id": evaluation_id(source, substrate),
            "evaluation_timestamp": source.started_at,
            "retrieved_timestamp": epoch_seconds(source.finished_at),
            "source_metadata": {
                "source_name": SOURCE_NAME,
                "source_type": "evaluation_run",
                "source_organization_name": SOURCE_NAME,
                "evaluator_relationship": "first_party",
                "additional_details": {
                    "bundle": source.name,
                    "board": _board(source, substrate),
                    **source.verified.details(),
                },
            },
            "eval_library": {
                "name": "effectbench",
                "version": source.effectbench_version,
                "additional_details": library,
            },
            "model_info": {
                "name": header.system.name,
                "id": source.model_id,
                "additional_details": {
                    "harness": source.harness,
                    "model": source.model,
                    "baseline": header.system.baseline or "",
                    "url": header.system.url,
                },
            },
            "evaluation_results": results,
            "detailed_evaluation_results": {
                "format": "jsonl",
                "file_path": f"{stem}.samples.jsonl",
                "hash_algorithm": "sha256",
                "checksum": sha256(samples),
                "total_rows": len(rows),
            },
        }
        out.append((f"{stem}.json", json_bytes(record)))
        out.append((f"{stem}.samples.jsonl", samples))
    return out


__all__ = ["INSTANCE_SCHEMA_VERSION", "SCHEMA_VERSION", "export_eee", "instance_row"]
