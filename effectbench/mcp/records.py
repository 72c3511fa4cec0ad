"""A record directory of MCP episodes, read back as a run (for ``submit --from-records``).

Each episode server writes one file, ``<task>__t<trial>.json``, holding either
``{"row": ..., "receipt": ...}`` (the scored row and its receipt, whose key frames go
into the folder's ``frames/``) or ``{"dropped": ...}`` (an episode whose
infrastructure failed). Reading checks every file against the row contract and
the pack: one system, known tasks of one split, no trial twice. A problem is a
:class:`~effectbench.errors.DataError` naming the file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from effectbench.bundle import MAX_TRIALS
from effectbench.errors import DataError, UsageError
from effectbench.mcp.paths import record_path
from effectbench.receipts.collect import evidence_of, with_evidence
from effectbench.receipts.files import FRAMES_DIR, evidence_from_json, evidence_json, write_frames
from effectbench.runner import DroppedEpisode, RunResult
from effectbench.schema import DropReason, EpisodeRecord, Split
from effectbench.seam import BenchmarkProvider


@dataclass(frozen=True)
class Records:
    """The run a record directory holds."""

    run: RunResult
    trials: int
    split: Split


def write_record(record_dir: Path, task_id: str, trial: int, outcome: Any) -> Path:
    """Write one episode's row (or drop) atomically; return the file."""
    record_dir.mkdir(parents=True, exist_ok=True)
    path = record_path(record_dir, task_id, trial)
    if isinstance(outcome, DroppedEpisode):
        data: dict[str, Any] = {
            "dropped": {
                "task_id": outcome.task_id,
                "trial": outcome.trial,
                "reason": outcome.reason.value,
                "detail": outcome.detail,
            }
        }
    else:
        data = {"row": outcome.to_row()}
        evidence = evidence_of(outcome)
        if evidence is not None:
            write_frames(record_dir / FRAMES_DIR, evidence.frames)
            data["receipt"] = evidence_json(evidence)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DataError(f"not a readable episode record: {exc}", file=str(path)) from None
    if not isinstance(data, dict) or set(data) not in ({"row"}, {"row", "receipt"}, {"dropped"}):
        raise DataError(
            "an episode record holds a 'row' (with its 'receipt') or 'dropped'", file=str(path)
        )
    return data


def read_records(record_dir: Path, pack: BenchmarkProvider) -> Records:
    """Read every record of ``record_dir`` as one run of one system on ``pack``."""
    if not record_dir.is_dir():
        raise UsageError(f"--from-records {record_dir}: not a folder")
    files = sorted(record_dir.glob("*.json"))
    if not files:
        raise UsageError(f"--from-records {record_dir}: no episode records (*.json)")
    tasks = {t.task_id: t for t in pack.tasks()}
    rows: list[EpisodeRecord] = []
    dropped: list[DroppedEpisode] = []
    seen: set[tuple[str, int]] = set()
    for path in files:
        data = _load(path)
        try:
            if "row" in data:
                record = EpisodeRecord.model_validate(data["row"])
                key, arm = (record.task_id, record.trial), record.arm
                if "receipt" in data:
                    found = evidence_from_json(data["receipt"], record_dir / FRAMES_DIR, str(path))
                    with_evidence(record, found)
            else:
                d = data["dropped"]
                drop = DroppedEpisode(
                    str(d["task_id"]), int(d["trial"]), DropReason(d["reason"]), str(d["detail"])
                )
                key, arm = (drop.task_id, drop.trial), None
        except (ValidationError, KeyError, TypeError, ValueError) as exc:
            first = str(exc).splitlines()[0]
            raise DataError(f"not a valid episode record: {first}", file=str(path)) from None
        if key[0] not in tasks:
            raise DataError(f"task {key[0]!r} is not in pack {pack.name!r}", file=str(path))
        if not 0 <= key[1] < MAX_TRIALS:
            raise DataError(
                f"trial {key[1]} is outside 0..{MAX_TRIALS - 1} (a bundle holds at most "
                f"{MAX_TRIALS} trials per task)",
                file=str(path),
            )
        if key in seen:
            raise DataError(f"task {key[0]!r} trial {key[1]} is recorded twice", file=str(path))
        seen.add(key)
        if arm is not None and rows and arm != rows[0].arm:
            raise DataError(f"system {arm!r} differs from {rows[0].arm!r}", file=str(path))
        if "row" in data:
            rows.append(record)
        else:
            dropped.append(drop)
    if not rows:
        raise UsageError(
            f"--from-records {record_dir}: every episode was dropped; nothing to score"
        )
    splits = {tasks[t].split for t, _ in seen}
    if len(splits) != 1:
        raise DataError("the records mix the dev and test splits", file=str(record_dir))
    order = {tid: i for i, tid in enumerate(tasks)}
    rows.sort(key=lambda r: (order[r.task_id], r.trial))
    run = RunResult(arm=rows[0].arm, pack=pack.name, rows=rows, dropped=dropped)
    return Records(run=run, trials=1 + max(t for _, t in seen), split=splits.pop())
