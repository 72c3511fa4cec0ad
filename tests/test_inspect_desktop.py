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

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model
from inspect_support.scripted import mock_outputs

from effectbench.baselines import get_baseline
from effectbench.integrations.inspect_ai import SCORER_NAME
from effectbench.integrations.inspect_ai.episodes import close_pools, live_count
from effectbench.packs.clinic import ClinicProvider
from effectbench.runner import evaluate
from effectbench.screens._supervisor import descendants

A11Y = {"a11y_tree", "a11y_action", "a11y_set_text", "report_outcome"}
TASKS = ("clinic::clean_draft@desktop", "clinic::partial_note@remote_display")
"""A control on the desktop, a partial save (C1) behind a green banner over VNC."""


@pytest.fixture(autouse=True)
def _no_leftovers() -> Iterator[None]:
    before = set(descendants(os.getpid()))
    yield
    assert live_count() == 0
    close_pools()
    left = set(descendants(os.getpid())) - before
    assert left == set(), "a process of an X session outlived its sample"


@pytest.mark.slow
def test_the_desktop_pixel_bot_through_inspects_computer_tool_matches_the_runner(
    tmp_path: Path,
) -> None:
    with ClinicProvider() as pack:
        tasks = [t for t in pack.tasks() if t.task_id in TASKS]
        assert len(tasks) == len(TASKS)
        shipped = evaluate(get_baseline("screen_only", pack), pack, trials=1, tasks=tasks)
    model = get_model("mockllm/model", custom_outputs=mock_outputs("desktop"))
    (log,) = inspect_eval(
        "effectbench/clinic",
        model=model,
        task_args={"substrate": "desktop,remote_display", "display": "native"},
        sample_id=list(TASKS),
        epochs=1,
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success" and log.samples is not None
    got = {}
    for sample in log.samples:
        assert sample.error is None and sample.scores is not None, sample.error
        meta = sample.scores[SCORER_NAME].metadata
        assert meta is not None
        got[str(sample.id)] = meta
        calls = {
            c.function for m in sample.messages if m.role == "assistant" for c in m.tool_calls or []
        }
        desktop = str(sample.id).endswith("@desktop")
        assert calls == (A11Y if desktop else {"computer", "report_outcome"}), calls
    assert not shipped.dropped and len(shipped.rows) == len(got) == len(TASKS)
    for row in shipped.rows:
        meta = got[row.task_id]
        assert (meta["outcome"], meta["swer_variant"]) == (
            row.outcome.value,
            row.swer_variant.value,
        )
        assert meta["reading"] == row.oracle.model_dump(mode="json"), row.task_id
        assert meta["row"]["substrate"] == row.substrate.value
    assert [got[t]["outcome"] for t in TASKS] == ["success", "silent_wrong_effect"]
