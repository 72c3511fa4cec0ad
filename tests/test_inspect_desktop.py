"""The clinic's desktop and remote-display variants as inspect tasks.

Each sample gets a real X session: the GTK app on Xvfb with its own D-Bus and
accessibility bus (the agent gets inspect's ``computer`` tool through XTest
and screenshots, and the app's AT-SPI tree through ``a11y_tree``,
``a11y_action`` and ``a11y_set_text``), or on Xvnc seen through one RFB
connection (the ``computer`` tool only). The runner's screen-only bot runs as
inspect's mock model (by accessibility on the desktop, by pixels over RFB, as
the runner drives each) and must reach the same outcomes as the runner on the
same variants, trial for trial. Kept lean: one sample per substrate, a control
and a fault; the full ladders run in ``benchmarks/bench_desktop.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from inspect_support.screens import assert_same_as_the_runner, eval_clinic
from support.screens import left_since, processes_now

from effectbench.baselines import get_baseline
from effectbench.integrations.inspect_ai.episodes import close_pools, live_count
from effectbench.packs.clinic import ClinicProvider
from effectbench.run.runner import evaluate
from effectbench.screens._supervisor import command_line

pytestmark = pytest.mark.desktop

A11Y = {"a11y_tree", "a11y_action", "a11y_set_text", "report_outcome"}
TASKS = ("clinic::clean_draft@desktop", "clinic::partial_note@remote_display")
"""A control on the desktop, a partial save (C1) behind a green banner over VNC."""


@pytest.fixture(autouse=True)
def _no_leftovers() -> Iterator[None]:
    before = processes_now()
    yield
    assert live_count() == 0
    close_pools()
    left = left_since(before)
    assert left == set(), f"a process of an X session outlived its sample: {_named(left)}"


def _named(pids: set[int]) -> dict[int, str]:
    """Return each process's command line (what a leftover was), or "gone" once it has ended."""
    named = {}
    for pid in sorted(pids):
        raw = command_line(pid)
        named[pid] = raw.replace(b"\0", b" ").decode(errors="replace").strip()[:200] or "gone"
    return named


@pytest.mark.slow
def test_the_desktop_pixel_bot_through_inspects_computer_tool_matches_the_runner(
    tmp_path: Path,
) -> None:
    with ClinicProvider() as pack:
        tasks = [t for t in pack.tasks() if t.task_id in TASKS]
        assert len(tasks) == len(TASKS)
        shipped = evaluate(get_baseline("screen_only", pack), pack, trials=1, tasks=tasks)
    got = eval_clinic("desktop", "desktop,remote_display", TASKS, 1, tmp_path)
    for (task_id, _), trial in got.items():
        desktop = task_id.endswith("@desktop")
        if desktop:
            # The accessibility driver acts through the tree; it looks at the screen only to
            # wait until the banner it read is painted (a11y_driver.concluded).
            assert trial.tools == A11Y | {"computer"}, trial.tools
            assert trial.computer_actions == {"screenshot"}, trial.computer_actions
        else:
            assert trial.tools == {"computer", "report_outcome"}, trial.tools
    assert_same_as_the_runner(got, shipped)
    assert [got[(t, 0)].meta["outcome"] for t in TASKS] == ["success", "silent_wrong_effect"]
