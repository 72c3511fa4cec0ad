"""What a worker may answer for a cell, and how the driver re-judges it (any executor).

A worker answers in plain text (:func:`~effectbench.run.executors.worker.to_wire`),
which the driver reads strictly as a row or drop of the cell it asked for, and
:func:`~effectbench.run.runner.rejudge` builds each row again from its readings
with the one truth table: a label, identity or derived number changed on the
way refuses the run before the row is journalled.
"""

from __future__ import annotations

import pickle
from collections.abc import Generator, Sequence
from pathlib import Path

import pytest

from effectbench.baselines import get_baseline
from effectbench.packs import get_pack
from effectbench.run.executors import execute
from effectbench.run.executors.worker import (
    MAX_ANSWER_CHARS,
    ForgedRow,
    Outcome,
    WorkerMismatch,
    from_wire,
    to_wire,
)
from effectbench.run.journal import Journal, read_journal
from effectbench.run.runner import Cell, DroppedEpisode, RunPlan, evaluate, rejudge
from effectbench.schema import DropReason, EpisodeRecord, SwerVariant
from effectbench.schema import Outcome as Label


@pytest.fixture(scope="module")
def plan() -> RunPlan:
    pack = get_pack("mockmed")
    return RunPlan.build(get_baseline("screen_only", pack), pack, trials=1)


@pytest.fixture(scope="module")
def rows(plan: RunPlan) -> dict[str, EpisodeRecord]:
    run = evaluate(plan.sut, plan.provider, trials=1)
    return {row.task_id: row for row in run.rows}


def _cell(row: EpisodeRecord) -> Cell:
    return Cell(row.task_id, row.trial, row.seed or 0)


def test_an_answer_is_read_back_as_the_row_or_drop_it_was(rows: dict[str, EpisodeRecord]) -> None:
    row = rows["mockmed::partial"]
    assert from_wire(to_wire(row), _cell(row), "w") == row
    drop = DroppedEpisode(row.task_id, 0, DropReason.INFRASTRUCTURE, "the display died")
    assert from_wire(to_wire(drop), _cell(row), "w") == drop
    with pytest.raises(WorkerMismatch, match="other code"):
        from_wire(to_wire(WorkerMismatch("a worker with other code")), _cell(row), "w")


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (pickle.dumps("row"), "a bytes, not text"),
        ({"row": {}}, "a dict, not text"),
        ("verdict\n{}", "unknown kind 'verdict'"),
        ("row\n{not json", "no valid 'row'"),
        ('drop\n{"reason": "infrastructure", "reason": "oracle_unreadable", "detail": ""}', "dup"),
        ('drop\n{"reason": "tired", "detail": ""}', "no valid 'drop'"),
        ("row\n" + "x" * MAX_ANSWER_CHARS, "characters (at most"),
    ],
)
def test_a_worker_answer_that_is_not_a_plain_row_or_drop_is_refused(
    rows: dict[str, EpisodeRecord], answer: object, says: str
) -> None:
    """Attacks the driver's reading of answers: other types, unknown kinds, bad JSON, bulk."""
    with pytest.raises(ForgedRow, match="the run is refused") as refused:
        from_wire(answer, _cell(rows["mockmed::ok"]), "a worker")
    assert says in str(refused.value)


def test_a_row_of_another_cell_is_refused(rows: dict[str, EpisodeRecord]) -> None:
    other = rows["mockmed::partial"]
    with pytest.raises(ForgedRow, match="with the row of mockmed::partial trial 0"):
        from_wire(to_wire(other), _cell(rows["mockmed::ok"]), "a worker")


def test_rejudge_finds_what_was_changed_after_the_episode(
    plan: RunPlan, rows: dict[str, EpisodeRecord]
) -> None:
    """Each change a worker could make to a row without changing its readings is named."""
    row = rows["mockmed::partial"]
    task = next(t for t in plan.tasks if t.task_id == row.task_id)
    cell, arm = _cell(row), plan.sut.name
    assert rejudge(arm, task, cell, row) == ""
    changes: dict[str, dict[str, object]] = {
        "outcome": {"outcome": Label.SUCCESS, "swer_variant": SwerVariant.NONE},
        "category": {"category": "control"},
        "correct_action_available": {"correct_action_available": not row.correct_action_available},
        "seed": {"seed": 7},
        "episode_id": {"arm": "someone_else", "episode_id": f"someone_else::{row.task_id}::t0"},
        "cost_usd": {"cost_usd": 1.5},
    }
    for field, update in changes.items():
        changed = EpisodeRecord.model_validate({**row.to_row(), **update})
        assert rejudge(arm, task, cell, changed).startswith(field), field
    stranger = DroppedEpisode("mockmed::ok", 0, DropReason.INFRASTRUCTURE, "")
    assert "a drop of mockmed::ok" in rejudge(arm, task, cell, stranger)


class _Relabels:
    """An executor whose rows come back with every silent wrong effect called a success."""

    name = "relabelling"

    def run(self, plan: RunPlan, cells: Sequence[Cell]) -> Generator[tuple[Cell, Outcome]]:
        honest = evaluate(plan.sut, plan.provider, trials=len(plan.seeds))
        by_key = {(r.task_id, r.trial): r for r in honest.rows}
        for cell in cells:
            row = by_key[cell.key]
            if row.outcome is Label.SILENT_WRONG_EFFECT:
                update = {"outcome": "success", "swer_variant": "none"}
                row = EpisodeRecord.model_validate({**row.to_row(), **update})
            yield cell, row


def test_a_relabelled_row_refuses_the_run_before_the_journal_keeps_it(
    plan: RunPlan, tmp_path: Path
) -> None:
    path = tmp_path / "run.journal"
    with Journal.create(path, plan) as journal:
        with pytest.raises(ForgedRow, match="outcome is 'success' where its readings give"):
            execute(plan, _Relabels(), journal=journal)
    kept = read_journal(path).outcomes()
    assert list(kept) == [("mockmed::ok", 0)]  # the rows before the first relabelled one
