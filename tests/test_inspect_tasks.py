"""The packs as inspect tasks: same outcomes as in process, the one truth table, teardown always.

Runs inspect's own mock model (``mockllm``) with a scripted policy, offline:
every output sets its usage, so inspect never counts tokens with a tokenizer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ModelOutput, get_model
from inspect_support.faults import make_unreadable
from inspect_support.scripted import USAGE, ScriptedSystem, mock_outputs

from effectbench import packs
from effectbench.baselines import get_baseline
from effectbench.errors import InfrastructureError, UsageError
from effectbench.integrations.inspect_ai import SCORER_NAME, effectbench_task
from effectbench.integrations.inspect_ai.episodes import (
    INFRASTRUCTURE_KEY,
    close_pools,
    live_count,
)
from effectbench.integrations.inspect_ai.tasks import metric_values, select_tasks
from effectbench.metrics import episode_frame, summarize
from effectbench.packs.clinic import ClinicProvider
from effectbench.packs.mockmed import MockMedProvider
from effectbench.run.runner import INFRA_RETRIES, evaluate
from effectbench.schema import Split, Substrate, TaskSpec
from effectbench.seam import Episode

SUPPORT = Path(__file__).resolve().parent / "inspect_support"
TRIALS = 2


@pytest.fixture(autouse=True)
def _no_leftovers() -> Iterator[None]:
    yield
    assert live_count() == 0, "an episode outlived its sample"
    close_pools()


def _eval(task: Any, policy: Any, tmp_path: Path, **options: Any) -> EvalLog:
    model = get_model("mockllm/model", custom_outputs=policy)
    options.setdefault("epochs", TRIALS)
    (log,) = inspect_eval(task, model=model, display="none", log_dir=str(tmp_path), **options)
    return log


def _trials(log: EvalLog) -> dict[tuple[str, int], dict[str, Any]]:
    """Return each scored trial's score metadata by (task_id, trial)."""
    assert log.samples is not None
    tasks = (log.eval.metadata or {})["effectbench"]["samples"]  # opaque sample ids -> tasks
    out = {}
    for s in log.samples:
        assert s.scores is not None, s.error
        meta = s.scores[SCORER_NAME].metadata
        assert meta is not None
        out[(tasks[str(s.id)], s.epoch - 1)] = meta
    return out


@pytest.mark.parametrize("policy", ["screen_only", "effect_verified"])
def test_inspect_eval_matches_the_in_process_system_trial_for_trial(
    policy: str, tmp_path: Path
) -> None:
    log = _eval("effectbench/clinic", mock_outputs(policy), tmp_path)
    assert log.status == "success"
    assert log.eval.task == "effectbench/clinic"
    got = _trials(log)
    with ClinicProvider() as pack:
        dev = [
            t for t in pack.tasks() if t.split is Split.DEV and t.substrate is Substrate.API
        ]  # the inspect task's default: the API level
        scripted = evaluate(ScriptedSystem(policy), pack, trials=TRIALS, tasks=dev)
        shipped = evaluate(get_baseline(policy, pack), pack, trials=TRIALS, tasks=dev)
    assert not scripted.dropped and not shipped.dropped
    assert len(got) == len(scripted.rows) == len(dev) * TRIALS
    for mine, theirs in zip(scripted.rows, shipped.rows, strict=True):
        assert (mine.outcome, mine.swer_variant) == (theirs.outcome, theirs.swer_variant)
        meta = got[(mine.task_id, mine.trial)]
        assert meta["outcome"] == mine.outcome.value, mine.task_id
        assert meta["swer_variant"] == mine.swer_variant.value, mine.task_id
        assert meta["reading"] == mine.oracle.model_dump(mode="json"), mine.task_id
        row = meta["row"]
        assert row["agent"]["reported_success"] == mine.agent.reported_success
        assert (row["seed"], row["trial"], row["arm"]) == (mine.seed, mine.trial, "mockllm/model")
    assert log.results is not None
    (score,) = log.results.scores
    logged = {name: m.value for name, m in score.metrics.items()}
    assert logged == pytest.approx(metric_values(summarize(episode_frame(shipped.rows))))
    assert logged["swer_n"] == len(dev) * TRIALS


def test_each_trial_is_a_fresh_episode_with_its_own_payload(tmp_path: Path) -> None:
    log = _eval("effectbench/clinic", mock_outputs("screen_only"), tmp_path, limit=1, epochs=3)
    trials = _trials(log)
    for (_, trial), meta in trials.items():
        assert meta["row"]["trial"] == meta["row"]["seed"] == trial
    assert sorted(t for _, t in trials) == [0, 1, 2]
    assert log.samples is not None
    prompts = {s.messages[1].text for s in log.samples}
    assert len(prompts) == 3, "every trial must carry its own trial-unique payload"


def test_the_tools_are_the_packs_actions_and_the_products_readback(tmp_path: Path) -> None:
    log = _eval("effectbench/clinic", mock_outputs("effect_verified"), tmp_path, limit=1)
    assert log.samples is not None
    sample = log.samples[0]
    called = {
        c.function for m in sample.messages if m.role == "assistant" for c in m.tool_calls or []
    }
    assert called <= {
        "find_patients",
        "open_chart",
        "save_encounter",
        "verify_effect",
        "report_outcome",
    }
    assert {"save_encounter", "verify_effect", "report_outcome"} <= called
    events = [e for e in sample.events if e.event == "model"]
    offered = {t.name for t in events[0].tools}
    assert offered == {
        "find_patients",
        "open_chart",
        "save_encounter",
        "edit_encounter",
        "verify_effect",
        "report_outcome",
    }


def test_an_agent_that_crashes_is_not_scored_and_the_episode_is_torn_down(
    tmp_path: Path,
) -> None:
    """The model's provider failing mid-episode: the sample errors, unscored (never a halt),
    and its episode is torn down all the same."""
    calls = {"n": 0}
    script = mock_outputs("screen_only")

    def crashes(*args: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("model provider exploded")
        return script(*args)

    log = _eval("effectbench/clinic", crashes, tmp_path, limit=1, epochs=1)
    assert log.status == "success"
    assert log.samples is not None
    (sample,) = log.samples
    assert sample.error is not None and "exploded" in sample.error.message
    assert not sample.scores
    assert INFRASTRUCTURE_KEY not in sample.store  # the harness around the agent failed


def test_the_action_tools_declare_their_typed_parameters(tmp_path: Path) -> None:
    """Each API action is a tool with the env's named, typed parameters, the required ones
    required; a call that does not fit is a tool error the model sees, not a crash."""
    calls = {"n": 0}

    def mistyped_first(*args: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            out = ModelOutput.for_tool_call("mockllm/model", "find_patients", {"name": 5})
        else:
            out = ModelOutput.for_tool_call(
                "mockllm/model", "report_outcome", {"success": False, "message": "stop"}
            )
        out.usage = USAGE.model_copy()
        return out

    log = _eval("effectbench/clinic", mistyped_first, tmp_path, limit=1, epochs=1)
    assert log.samples is not None
    (sample,) = log.samples
    assert sample.error is None and sample.scores is not None
    model_events = [e for e in sample.events if e.event == "model"]
    tools = {t.name: t.parameters for t in model_events[0].tools}
    save = tools["save_encounter"]
    assert sorted(save.required) == ["mrn", "name", "note", "type"]
    assert save.properties["sign"].type == "boolean" and save.properties["note"].type == "string"
    assert tools["edit_encounter"].properties["encounter_id"].type == ["integer", "string"]
    assert tools["find_patients"].required == ["name"]
    refused = next(m for m in sample.messages if m.role == "tool")
    assert refused.error is not None and "is not of type 'string'" in refused.error.message


class _Broken(MockMedProvider):
    """MockMed whose provisioning, health or oracle fails (harness failures, never the agent's)."""

    mode = ""
    provisioned = 0

    @contextmanager
    def provision(self, task: TaskSpec, trial: int, params: Mapping[str, Any]) -> Iterator[Episode]:
        type(self).provisioned += 1
        if self.mode == "provision":
            raise InfrastructureError("browser did not start")
        with super().provision(task, trial, params) as episode:
            if self.mode == "health":
                episode = dataclasses.replace(episode, health=lambda: "display died")
            if self.mode == "unreadable":
                make_unreadable(episode.oracle, "record locked")
            yield episode


@pytest.fixture
def broken() -> Iterator[type[_Broken]]:
    _Broken.provisioned = 0
    with packs.register("broken", _Broken):
        yield _Broken


def test_a_failed_provisioning_is_retried_then_the_sample_errors_unscored(
    broken: type[_Broken], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(broken, "mode", "provision")
    log = _eval(
        effectbench_task("broken"), mock_outputs("always_halt"), tmp_path, limit=2, epochs=1
    )
    assert log.samples is not None and len(log.samples) == 2
    for sample in log.samples:
        assert sample.error is not None and "browser did not start" in sample.error.message
        assert not sample.scores
        assert sample.store[INFRASTRUCTURE_KEY] == "browser did not start"
    assert broken.provisioned == 2 * (1 + INFRA_RETRIES)


@pytest.mark.parametrize("mode", ["health", "unreadable"])
def test_harness_failures_after_the_agent_are_never_scored_against_it(
    mode: str, broken: type[_Broken], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(broken, "mode", mode)
    log = _eval(
        effectbench_task("broken"), mock_outputs("always_halt"), tmp_path, limit=1, epochs=1
    )
    assert log.samples is not None
    (sample,) = log.samples
    if mode == "health":
        assert sample.error is not None and "display died" in sample.error.message
        assert not sample.scores
        assert sample.store[INFRASTRUCTURE_KEY] == "display died"
    else:
        assert sample.error is None and sample.scores is not None
        score = sample.scores[SCORER_NAME]
        assert score.value == "dropped"
        assert score.metadata is not None
        assert score.metadata["dropped"] == {
            "reason": "oracle_unreadable",
            "detail": "record locked",
        }


def test_a_bad_split_or_substrate_is_a_clear_error() -> None:
    pack = ClinicProvider()
    with pytest.raises(UsageError, match="unknown split 'prod'"):
        select_tasks(pack, "prod", None)
    with pytest.raises(UsageError, match="unknown substrate 'holo'"):
        select_tasks(pack, "dev", "holo")
    assert {t.substrate.value for t in select_tasks(pack, "dev", None)} == {"api"}
    assert {t.task_id for t in select_tasks(pack, "test", "all")} == {
        t.task_id for t in pack.tasks() if t.split is Split.TEST
    }
    with pytest.raises(UsageError, match="unknown display 'retina'"):
        effectbench_task("clinic", display="retina")
