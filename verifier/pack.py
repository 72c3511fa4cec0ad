"""The ``pack`` family: the declared pack, and each row's agreement with its task and trials.

:func:`check_pack` runs once per submission (the pack is known, its fingerprint,
seeds, trials and split); :func:`facts_findings` compares a row with its task's
facts (run once per distinct combination by :mod:`verifier.rows`);
:func:`check_missing_trials` compares the (task, trial) pairs without a row
with ``run.n_dropped``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from effectbench.bundle import SubmissionHeader
from effectbench.effects import contract_hash
from effectbench.errors import UsageError
from effectbench.findings import CheckId
from effectbench.manifest import fingerprint
from effectbench.packs import get_pack
from effectbench.seam import BenchmarkProvider
from verifier.report import FindingSink
from verifier.rowschema import Problem

MIN_RANKED_TRIALS = 3
"""Trials per task a ranked entry needs (fewer cannot show pass^k or stability)."""


@dataclass(frozen=True)
class TaskFacts:
    """What the pack says about one task, as a row must repeat it."""

    index: int
    """The task's position in the pack split."""
    category: str
    substrate: str
    correct_action_available: bool
    expected_effect_hash: str
    """``effectbench.effects.contract_hash`` of the task's primary effect."""


def pack_tasks(pack: BenchmarkProvider, split: str) -> dict[str, TaskFacts]:
    """Return the facts of every task of ``pack`` in ``split``, by task id."""
    out: dict[str, TaskFacts] = {}
    for task in pack.tasks():
        if task.split.value != split:
            continue
        out[task.task_id] = TaskFacts(
            index=len(out),
            category=task.category.value,
            substrate=task.substrate.value,
            correct_action_available=task.correct_action_available,
            expected_effect_hash=contract_hash(task.expected_effect[0]),
        )
    return out


def check_pack(
    header: SubmissionHeader, sink: FindingSink, file: str, fields: Mapping[str, str]
) -> tuple[BenchmarkProvider | None, dict[str, TaskFacts] | None]:
    """Check the pack declaration; return the pack and its task facts when it is known.

    ``fields`` maps a header field (``pack.name``...) to its name in ``file``.
    """
    ref = header.pack
    try:
        pack = get_pack(ref.name)
    except UsageError as exc:
        sink.emit(CheckId.PACK_UNKNOWN, exc.diagnostics(), file, None, fields["pack.name"])
        return None, None
    actual = fingerprint(pack.manifest())
    if ref.fingerprint != actual:
        sink.emit(
            CheckId.PACK_FINGERPRINT,
            f"pack {ref.name!r} has fingerprint {actual} here, the submission declares "
            f"{ref.fingerprint}; run against the released pack (effectbench manifest "
            "--fingerprint)",
            file,
            None,
            fields["pack.fingerprint"],
        )
    _check_trials(header, sink, file, fields)
    tasks = pack_tasks(pack, ref.split.value)
    if not tasks:
        sink.emit(
            CheckId.PACK_SPLIT,
            f"pack {ref.name!r} has no task in split {ref.split.value!r}",
            file,
            None,
            "pack.split",
        )
    return pack, tasks


def _check_trials(
    header: SubmissionHeader, sink: FindingSink, file: str, fields: Mapping[str, str]
) -> None:
    trials = header.trials_per_task
    if len(header.seeds) != trials:
        sink.emit(
            CheckId.PACK_SEEDS,
            f"{trials} trials per task need {trials} seeds, the submission lists "
            f"{len(header.seeds)}",
            file,
            None,
            fields["seeds"],
        )
    elif len(set(header.seeds)) != len(header.seeds):
        sink.emit(
            CheckId.PACK_SEEDS, "seeds repeat; each trial needs its own seed", file, None, "seeds"
        )
    if trials < MIN_RANKED_TRIALS:
        sink.emit(
            CheckId.PACK_MIN_TRIALS,
            f"{trials} trials per task; a leaderboard entry needs at least {MIN_RANKED_TRIALS} "
            f"(re-run with --trials {MIN_RANKED_TRIALS} or more)",
            file,
            None,
            fields["trials_per_task"],
        )


def facts_findings(row: Mapping[str, Any], facts: TaskFacts) -> list[Problem]:
    """Return a finding for each fact of the task that the row does not repeat."""
    pairs = (
        ("category", CheckId.PACK_CATEGORY, facts.category),
        ("substrate", CheckId.PACK_SUBSTRATE, facts.substrate),
        (
            "correct_action_available",
            CheckId.PACK_CORRECT_ACTION_AVAILABLE,
            facts.correct_action_available,
        ),
        ("expected_effect_hash", CheckId.PACK_EFFECT_HASH, facts.expected_effect_hash),
    )
    return [
        (
            check,
            field,
            f"task {row['task_id']!r} has {field} {want!r} in the pack, "
            f"the row says {row[field]!r}",
        )
        for field, check, want in pairs
        if row[field] != want
    ]


def check_missing_trials(
    missing: Sequence[tuple[str, int]], n_dropped: int, sink: FindingSink, file: str
) -> None:
    """Refuse when the (task, trial) pairs without a row are not ``run.n_dropped`` in number."""
    if len(missing) == n_dropped:
        return
    shown = ", ".join(f"{t} trial {i}" for t, i in missing[:5])
    sink.emit(
        CheckId.PACK_MISSING_TRIALS,
        f"{len(missing)} declared (task, trial) pairs have no row"
        + (f" ({shown}{', ...' if len(missing) > 5 else ''})" if missing else "")
        + f", but run.n_dropped is {n_dropped}; every task needs "
        f"exactly trials_per_task rows",
        file,
    )
