"""What a system under test is told (SPEC 5.3): one closed view, the same through every door.

The MCP ``task`` answer is built without provisioning (:meth:`EpisodeServer.describe`), so
every pack's C1 task, C6 task and refusal control is checked on every substrate it offers;
the stdio round trip is in ``test_mcp.py``. The in-process seam, the inspect samples and the
runner are checked here too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from effectbench.computer import Display
from effectbench.integrations.inspect_ai.tasks import effectbench_task
from effectbench.mcp.server import EpisodeServer
from effectbench.packs import get_pack
from effectbench.run.runner import run_episode
from effectbench.run.view import handle_for
from effectbench.schema import AgentReport, Category, EpisodeRecord, Split, Substrate, TaskSpec
from effectbench.seam import VIEW_FIELDS, AgentTask, BenchmarkProvider, EnvHandle, NotInView

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "docs" / "agent-view.schema.json").read_text())
BEHAVIOUR = ("halt", "refusal", "control", "partial", "duplicate", "homonym", "stale")
"""Words that would name what the task tests (SPEC 5.3: never in the view, the goal aside)."""
PACKS = ("clinic", "ticketing", "clinic-generated", "ticketing-generated", "mockmed")


def _chosen(pack: BenchmarkProvider) -> Iterator[TaskSpec]:
    """A C1 task, a C6 task and a refusal control of each substrate the pack offers."""
    seen: set[tuple[Substrate, str]] = set()
    for task in pack.tasks():
        if task.split is not Split.DEV:
            continue
        kind = (
            "refusal"
            if task.category is Category.CONTROL and not task.correct_action_available
            else task.category.value
        )
        if kind in (
            "refusal",
            Category.C1_PARTIAL_SAVE.value,
            Category.C6_WRONG_RECORD_HOMONYM.value,
        ):
            if (task.substrate, kind) not in seen:
                seen.add((task.substrate, kind))
                yield task


def _template(task: TaskSpec) -> str:
    """The task's name within its pack (a generated task's template), without the substrate."""
    name = task.task_id.split("::", 1)[1].split("@", 1)[0]
    return name.rsplit("-", 1)[0] if re.search(r"-[0-9a-f]{10}$", name) else name


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


def _leaks(told: Mapping[str, Any], task: TaskSpec) -> list[str]:
    """What in ``told`` (the goal aside) names the task, its template or its behaviour."""
    found = []
    for text in _strings({k: v for k, v in told.items() if k != "goal"}):
        low = text.lower()
        for needle in (task.task_id, task.title, _template(task)):
            if needle.lower() in low:
                found.append(f"{needle!r} in {text!r}")
        for word in BEHAVIOUR:
            if re.search(rf"\b{word}", low):
                found.append(f"{word!r} in {text!r}")
    return found


@pytest.mark.desktop  # the desktop front end (PyGObject) says its display before provisioning
@pytest.mark.parametrize("name", PACKS)
def test_the_mcp_task_answer_is_the_closed_view_and_names_nothing(
    name: str, tmp_path: Path
) -> None:
    pack = get_pack(name)
    chosen = list(_chosen(pack))
    wanted = {Category.C1_PARTIAL_SAVE, Category.C6_WRONG_RECORD_HOMONYM, Category.CONTROL}
    if name == "mockmed":  # the anchor has no C6 task and no refusal control
        wanted = {Category.C1_PARTIAL_SAVE}
    assert {t.category for t in chosen} >= wanted
    for task in chosen:
        server = EpisodeServer(pack, task, 0, tmp_path)
        told = server.describe(Display(1024, 768))
        assert set(told) == set(VIEW_FIELDS), task.task_id
        jsonschema.validate(told, SCHEMA)
        assert told["display"]["surface"] == task.substrate.value
        assert not _leaks(told, task), (task.task_id, _leaks(told, task))
        assert told["handle"] == handle_for(task.task_id, 0) != handle_for(task.task_id, 1)


def test_a_planted_title_is_found_by_the_same_check() -> None:
    """The check above can fail: a view carrying the title, or a behaviour word, is caught."""
    task = next(t for t in get_pack("clinic").tasks() if t.category is Category.C1_PARTIAL_SAVE)
    view = AgentTask.of_episode(task, {"note": "n"}, "ep-" + "0" * 20).to_json()
    assert not _leaks(view, task)
    assert _leaks({**view, "referral": {"note": task.title}}, task)
    assert _leaks({**view, "referral": {"note": "expect a partial save"}}, task)


def test_asking_the_view_for_what_it_does_not_hold_names_the_closed_set() -> None:
    task = get_pack("mockmed").tasks()[0]
    view = AgentTask.of_episode(task, {}, handle_for(task.task_id, 0))
    for hidden in ("title", "task_id", "category", "correct_action_available", "split"):
        with pytest.raises(NotInView, match="handle, goal, referral, declared_effect, display"):
            getattr(view, hidden)
        assert not hasattr(view, hidden)
    assert task.task_id not in view.handle and view.handle.startswith("ep-")


class _Witness:
    """Halts, keeping what it was told."""

    name = "witness"

    def __init__(self) -> None:
        self.told: list[AgentTask] = []

    def run(self, task: AgentTask, env: EnvHandle, params: Mapping[str, Any]) -> AgentReport:
        self.told.append(task)
        return AgentReport(reported_success=False, halted=True, message="looked")


def test_the_runner_hands_the_system_the_closed_view_with_the_env_vocabulary() -> None:
    pack = get_pack("clinic")
    witness = _Witness()
    task = next(t for t in pack.tasks() if t.substrate is Substrate.API)
    row = run_episode(witness, pack, task, 2, 2)
    assert isinstance(row, EpisodeRecord)
    (told,) = witness.told
    assert told.handle == handle_for(task.task_id, 2)
    assert told.referral == pack.trial_params(task, 2)
    assert told.display.surface == "api" and told.display.width is None
    assert told.vocabulary and all(isinstance(a, str) for a in told.vocabulary)
    assert list(told.to_json()) == list(VIEW_FIELDS)
    jsonschema.validate(told.to_json(), SCHEMA)


def test_inspect_samples_carry_an_opaque_id_and_no_metadata() -> None:
    task = effectbench_task("clinic")
    meta = (task.metadata or {})["effectbench"]
    for sample in task.dataset:
        assert not sample.metadata
        assert str(sample.id).startswith("s-") and "::" not in str(sample.id)
        assert meta["samples"][str(sample.id)] in meta["tasks"]
