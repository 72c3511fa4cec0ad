"""The clinic's web variants as inspect tasks: inspect's computer tool on the real browser page.

The pixel bot the shipped web baselines use (recorded coordinates, banner
colour, screenshots only) runs as inspect's mock model through the ``computer``
tool, on real headless Chromium; it must reach the same outcomes as the same
bot run in process by the runner, trial for trial.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from inspect_support.screens import assert_same_as_the_runner, eval_clinic
from support.screens import browsers_gone

from effectbench.baselines import get_baseline
from effectbench.integrations.inspect_ai.episodes import close_pools, live_count, release_thread
from effectbench.packs.clinic import ClinicProvider
from effectbench.run.runner import RunResult, evaluate
from effectbench.schema import Category

TASKS = (
    "clinic::clean_draft@web",
    "clinic::refusal_stale@web",
    "clinic::partial_note@web",
    "clinic::duplicate_submit@web",
    "clinic::optimistic_rollback@web",
    "clinic::stale_encounter_list@web",
    "clinic::double_click@web",
    "clinic::homonym_dob@web",
    "clinic::wrong_encounter_edit@web",
)
"""A control, a refusal control and one task of each fault category (C1-C7), over the
draft, sign and edit shapes: the smallest set that reaches every part of the web ladder."""
TRIALS = 1


@pytest.fixture(autouse=True)
def _no_leftovers() -> Iterator[None]:
    from effectbench.screens.browser import chromium_pids

    before = chromium_pids()  # an earlier test's (the main thread's shared browser)
    yield
    assert live_count() == 0
    close_pools()
    assert browsers_gone(before=before) == [], "a browser outlived the run"


@pytest.mark.web
def test_the_pixel_bot_through_inspects_computer_tool_matches_the_runner(tmp_path: Path) -> None:
    def in_process() -> RunResult:
        try:
            with ClinicProvider() as pack:
                tasks = [t for t in pack.tasks() if t.task_id in TASKS]
                assert len(tasks) == len(TASKS)
                assert {t.category for t in tasks} == set(Category)
                sut = get_baseline("screen_only", pack)
                return evaluate(sut, pack, trials=TRIALS, tasks=tasks)
        finally:
            release_thread()

    # Playwright's sync client claims the thread it runs in: keep it off the test's own.
    with ThreadPoolExecutor(1) as worker:
        shipped = worker.submit(in_process).result()
    got = eval_clinic("pixels", "web", TASKS, TRIALS, tmp_path)
    assert len(got) == len(TASKS) * TRIALS
    assert all(t.tools == {"computer", "report_outcome"} for t in got.values())
    assert {"success", "silent_wrong_effect"} <= assert_same_as_the_runner(got, shipped)
