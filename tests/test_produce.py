"""Producing bundles as a library (``effectbench.produce``): the drop list written and read back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError
from support.bundles import make_bundle, read_submission, write_submission

from effectbench.baselines import get_baseline
from effectbench.bundle import RunInfo, Submission, SystemInfo
from effectbench.packs import get_pack
from effectbench.produce import bundle_folder, make_submission
from effectbench.produce import write_submission as write_bundle_folder
from effectbench.run.runner import DroppedEpisode, RunResult, evaluate
from effectbench.schema import DropReason, Split
from verifier.api import VerifyOptions, verify_bundle


def _run_with_drops() -> RunResult:
    """A real run whose rows of two (task, trial) pairs are replaced by drops."""
    pack = get_pack("mockmed")
    run = evaluate(get_baseline("effect_verified", pack), pack, trials=3)
    gone = {
        ("mockmed::stale", 1): DropReason.INFRASTRUCTURE,
        ("mockmed::ok", 2): DropReason.ORACLE_UNREADABLE,
    }
    return RunResult(
        arm=run.arm,
        pack=run.pack,
        rows=[r for r in run.rows if (r.task_id, r.trial) not in gone],
        dropped=[
            DroppedEpisode(task_id=t, trial=i, reason=why, detail=f"{why.value} in the test")
            for (t, i), why in gone.items()
        ],
    )


def test_make_submission_lists_every_drop_and_the_verifier_reads_it(tmp_path: Path) -> None:
    pack = get_pack("mockmed")
    run = _run_with_drops()
    submission = make_submission(
        run,
        pack,
        SystemInfo(name="Dropping system"),
        trials=3,
        split=Split.DEV,
        started_at="2026-01-01T00:00:00+00:00",
        finished_at="2026-01-01T00:01:00+00:00",
    )
    folder = write_bundle_folder(bundle_folder(tmp_path, "Dropping system"), submission, run.rows)
    assert folder.name.startswith("20") and folder.name.endswith("_dropping-system")
    data = json.loads((folder / "submission.json").read_text())
    assert data["run"]["n_dropped"] == 2
    assert data["run"]["dropped"] == [
        {
            "task_id": "mockmed::stale",
            "trial": 1,
            "reason": "infrastructure",
            "detail": "infrastructure in the test",
        },
        {
            "task_id": "mockmed::ok",
            "trial": 2,
            "reason": "oracle_unreadable",
            "detail": "oracle_unreadable in the test",
        },
    ]
    assert data["seeds"] == [0, 1, 2] and data["pack"]["split"] == "dev"
    read_back = Submission.model_validate(data)
    assert [(d.task_id, d.trial, d.reason) for d in read_back.run.dropped] == [
        ("mockmed::stale", 1, DropReason.INFRASTRUCTURE),
        ("mockmed::ok", 2, DropReason.ORACLE_UNREADABLE),
    ]
    report = verify_bundle(folder, VerifyOptions(allow_unsigned=True))
    # The list is read and matches the missing pairs exactly; MockMed is deterministic, so an
    # honest run drops nothing there and the drops are over the cap (and only that).
    assert report.finding_ids() == {"pack.drop_cap"}, report.finding_ids()
    assert report.submission is not None and len(report.submission.run.dropped) == 2


def test_a_drop_list_and_a_count_that_disagree_are_refused(tmp_path: Path) -> None:
    drop = {"task_id": "mockmed::ok", "trial": 0, "reason": "unknown"}
    with pytest.raises(ValidationError, match="reason"):
        RunInfo.model_validate({"n_dropped": 1, "dropped": [{**drop, "reason": "bored"}]})
    folder = make_bundle(tmp_path / "b", declare_baseline=False)
    data = read_submission(folder)
    data["run"]["n_dropped"] = 3  # older bundles gave a count only: no longer enough
    write_submission(folder, data)
    report = verify_bundle(folder, VerifyOptions(allow_unsigned=True))
    assert "pack.dropped_list" in report.finding_ids()
