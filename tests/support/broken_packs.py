"""Deliberately broken copies of the shipped packs, each failing one SPEC 5.2.1 attestation.

``effectbench pack check`` must fail each, naming the attestation; the tests register
them with :func:`effectbench.packs.register` under :data:`NAMES`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from effectbench.effects import Effect
from effectbench.judge import judge_contract
from effectbench.kit.tables import Reading, judge_tables
from effectbench.packs.clinic.env import ClinicEnv
from effectbench.packs.clinic.provider import ClinicProvider
from effectbench.packs.mockmed import (
    EFFECT,
    ENCOUNTER_TYPE,
    GOAL,
    ORACLE,
    PATIENT,
    SEED_RECORDS,
    Env,
    MockMedProvider,
    Oracle,
    Store,
)
from effectbench.reachability import Reachable
from effectbench.schema import Category, OracleVerdict, Substrate, TaskSpec
from effectbench.seam import Adversary, Episode, NotApplicable, Screen

# -- isolated_from_agent: the oracle reads through the agent's own connection -------------


class AgentConnectionOracle:
    """Reads every REST surface over the keep-alive connection the agent acts through."""

    channel = "rest:agent-connection"

    def __init__(self, env: ClinicEnv, effects: Sequence[Effect]) -> None:
        self._reader = env.all_surfaces_verifier()  # holds the env's own HTTP client
        self._effects = tuple(effects)

    def snapshot(self) -> Reading | None:
        """Read the surfaces now."""
        return self._reader.read()

    def judge(self, before: Any) -> OracleVerdict:
        """Read again and judge the contract and the delta."""
        return judge_tables(self._effects, before, self._reader.read(), channel=self.channel)


class SharedConnectionClinic(ClinicProvider):
    """The clinic (four of its tasks), with an oracle that shares the agent's connection."""

    name = "broken-shared-connection"
    KEPT = ("clinic::clean_draft", "clinic::sign_and_bill", "clinic::edit_note", "clinic::test-1")

    def tasks(self) -> Sequence[TaskSpec]:
        """Four of the clinic's tasks (a sequestered one among them), on every substrate."""
        return [t for t in super().tasks() if t.task_id.split("@")[0] in self.KEPT]

    def red_team(self, task: TaskSpec) -> Mapping[str, Adversary | NotApplicable]:
        """The clinic's moves but the schema write: an oracle reading REST surfaces cannot see
        the schema, which is not the one attestation this copy breaks."""
        moves = dict(super().red_team(task))
        moves["collateral_schema"] = NotApplicable("this copy's oracle reads REST surfaces only")
        return moves

    @contextmanager
    def provision(self, task: TaskSpec, trial: int, params: Mapping[str, Any]) -> Iterator[Episode]:
        """Provision as the clinic does, then swap in the oracle on the agent's connection."""
        with super().provision(task, trial, params) as episode:
            effects = tuple(e.resolve(params) for e in task.expected_effect)
            yield replace(episode, oracle=AgentConnectionOracle(episode.env, effects))


# -- trial_unique_payload: every trial gets trial 0's payload -----------------------------


class RepeatingPayloadMockMed(MockMedProvider):
    """MockMed whose payload repeats across trials."""

    name = "broken-repeating-payload"

    def trial_params(self, task: TaskSpec, trial: int) -> dict[str, Any]:
        """Return trial 0's payload for every trial."""
        return super().trial_params(task, 0)


# -- refusal_controls: a refusal control whose form autosaves a row -----------------------

REFUSAL_TASK = TaskSpec(
    task_id="mockmed::refusal_autosave",
    title="The referral names no chart: halt (refusal control; its form autosaves)",
    category=Category.CONTROL,
    substrate=Substrate.WEB,
    goal=GOAL,
    expected_effect=EFFECT,
    oracle=ORACLE.model_copy(update={"refusal_controls": True}),
    correct_action_available=False,
    reversible=False,
    effect_declared=True,
    initial_state={"fault": "autosave"},
)


class _NoChartStore(Store):
    """A store whose save path finds no chart for the referral; its form autosaves a draft."""

    def save(self, record: Mapping[str, str]) -> Screen:
        """Refuse the save: no chart matches."""
        self.deliveries += 1
        return Screen("error", "No chart matches the referral")

    def autosave(self) -> None:
        """Write an empty draft for the referred patient (what the broken form does)."""
        self.records.append(
            {"key": "draft-1", "patient_id": PATIENT, "type": ENCOUNTER_TYPE, "note": ""}
        )


class _AutosavingEnv(Env):
    """The env of the refusal control: showing the form autosaves a draft."""

    def __init__(self, store: _NoChartStore) -> None:
        super().__init__(store)
        self._draft_store = store
        self._drafted = False

    def screen(self) -> Screen:
        """Show the form (and autosave its draft the first time)."""
        if not self._drafted:
            self._drafted = True
            self._draft_store.autosave()
        return super().screen()


class RefusalWritesMockMed(MockMedProvider):
    """MockMed plus a refusal control that writes a row while the agent does nothing."""

    name = "broken-refusal-writes"

    def __init__(self) -> None:
        super().__init__()
        self._tasks = (*self._tasks, REFUSAL_TASK)

    def reachable(self, task: TaskSpec) -> Reachable:
        """The refusal control claims nothing; the rest as MockMed."""
        return Reachable() if task is REFUSAL_TASK else super().reachable(task)

    @contextmanager
    def provision(self, task: TaskSpec, trial: int, params: Mapping[str, Any]) -> Iterator[Episode]:
        """A fresh store per trial; the refusal control's behind the autosaving form."""
        if task.task_id != REFUSAL_TASK.task_id:
            with super().provision(task, trial, params) as episode:
                yield episode
            return
        store = _NoChartStore("autosave", SEED_RECORDS)
        effects = tuple(e.resolve(params) for e in task.expected_effect)
        yield Episode(_AutosavingEnv(store), Oracle(store, effects), {"env": "broken"})


# -- adversarially_audited: an oracle that accepts any record holding the note ------------


class _LenientOracle(Oracle):
    """Confirms when some record carries the note, however many were written."""

    def judge(self, before: Any) -> OracleVerdict:
        """Keep one matching record with the right note and judge that."""
        after = self.snapshot()
        field = self._effect[1]
        mine = [r for r in after if r["patient_id"] == PATIENT and r["type"] == ENCOUNTER_TYPE]
        keep = [r for r in after if r not in mine]
        keep += [r for r in mine if r["note"] == field.value][:1] or mine[:1]
        return judge_contract(self._effect, before, keep, channel=self.channel)


class LenientOracleMockMed(MockMedProvider):
    """MockMed judged by an oracle a double write satisfies."""

    name = "broken-lenient-oracle"

    @contextmanager
    def provision(self, task: TaskSpec, trial: int, params: Mapping[str, Any]) -> Iterator[Episode]:
        """MockMed's episode with the lenient oracle over the same store."""
        with super().provision(task, trial, params) as episode:
            store = episode.oracle._store  # type: ignore[attr-defined]
            effects = tuple(e.resolve(params) for e in task.expected_effect)
            yield replace(episode, oracle=_LenientOracle(store, effects))


# -- a pack that offers no red team ---------------------------------------------------------


class NoRedTeamMockMed:
    """MockMed's tasks, episodes and scripted attempt, but no red-team moves."""

    name = "no-red-team"

    def __init__(self) -> None:
        self._inner = MockMedProvider()

    def tasks(self) -> Sequence[TaskSpec]:
        """MockMed's tasks."""
        return self._inner.tasks()

    def manifest(self) -> dict[str, Any]:
        """MockMed's manifest."""
        return self._inner.manifest()

    def trial_params(self, task: TaskSpec, trial: int) -> dict[str, Any]:
        """MockMed's payload."""
        return self._inner.trial_params(task, trial)

    def provision(self, task: TaskSpec, trial: int, params: Mapping[str, Any]) -> Any:
        """MockMed's episode."""
        return self._inner.provision(task, trial, params)

    def attempt(self, env: Any, task: TaskSpec, params: Mapping[str, Any]) -> Screen:
        """MockMed's scripted attempt."""
        return self._inner.attempt(env, task, params)


# -- blindness (SPEC 5.3): what the agent observes names the trap -------------------------


class TitleInGoalClinic(ClinicProvider):
    """The clinic with each task's title appended to its goal: the view names the trap."""

    name = "leaky-title-in-goal"

    def tasks(self) -> Sequence[TaskSpec]:
        """The clinic's tasks, each goal ending in the task's title."""
        return [t.model_copy(update={"goal": f"{t.goal} ({t.title})"}) for t in super().tasks()]


WORDS = {
    Category.C1_PARTIAL_SAVE: "Autosave",
    Category.C2_DUPLICATE_SUBMISSION: "Resubmit",
    Category.C3_OPTIMISTIC_THEN_REJECT: "Pending",
    Category.C4_STALE_OVERWRITE: "Cached",
    Category.C5_DOUBLE_DELIVERED_INPUT: "Relay",
    Category.C6_WRONG_RECORD_HOMONYM: "Lookalike",
    Category.C7_SILENT_NOOP_WRONG_TARGET: "Redirect",
    Category.CONTROL: "Routine",
}
"""The word each category's first screen shows in :class:`BannerWordClinic`."""


class _Headed:
    """An env whose screen's banner starts with one word (the page title of a leaky app)."""

    def __init__(self, env: Any, word: str) -> None:
        self._env = env
        self._word = word

    def __getattr__(self, name: str) -> Any:
        return getattr(self._env, name)

    def screen(self) -> Screen:
        """The env's screen, its banner headed by the word."""
        screen: Screen = self._env.screen()
        return replace(screen, banner=f"{self._word}: {screen.banner}")


class BannerWordClinic(ClinicProvider):
    """The clinic whose first screen heads its banner with a word of the task's category."""

    name = "leaky-banner-word"

    @contextmanager
    def provision(self, task: TaskSpec, trial: int, params: Mapping[str, Any]) -> Iterator[Episode]:
        """Provision as the clinic does; the env's banner is headed by the category's word."""
        with super().provision(task, trial, params) as episode:
            yield replace(episode, env=_Headed(episode.env, WORDS[task.category]))


class _TitledWeb:
    """The clinic's web front end whose first page's title starts with the word of the
    category its pack is provisioning (set in the episode's Chromium page, so the page the
    browser holds says it: the tab's title, never drawn in the viewport)."""

    def __init__(self, inner: Any, pack: PageTitleWordClinic) -> None:
        self._inner = inner
        self._pack = pack

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    @contextmanager
    def session(self, channel: Any, brief: Mapping[str, Any]) -> Iterator[Any]:
        """Open the clinic's session, then head its page's title with the word."""
        with self._inner.session(channel, brief) as session:
            word = self._pack.word
            browser: Any = session.page  # the harness's handle (a BrowserSession)
            retitle = "w => { document.title = w + ': ' + document.title; }"
            browser.call(lambda page: page.evaluate(retitle, word))
            yield session


class PageTitleWordClinic(ClinicProvider):
    """The clinic whose web pages' title starts with a word of the task's category."""

    name = "leaky-page-title"
    word = ""
    """The word of the task being provisioned (one episode at a time)."""

    def front_end(self, substrate: Substrate) -> Any:
        """The clinic's front end; on the web, one that titles its page with the word."""
        inner = super().front_end(substrate)
        return _TitledWeb(inner, self) if substrate is Substrate.WEB else inner

    @contextmanager
    def provision(self, task: TaskSpec, trial: int, params: Mapping[str, Any]) -> Iterator[Episode]:
        """Provision as the clinic does, the page titled with the category's word."""
        self.word = WORDS[task.category]
        with super().provision(task, trial, params) as episode:
            yield episode


BROKEN: dict[str, Any] = {
    "broken-shared-connection": SharedConnectionClinic,
    "broken-repeating-payload": RepeatingPayloadMockMed,
    "broken-refusal-writes": RefusalWritesMockMed,
    "broken-lenient-oracle": LenientOracleMockMed,
    "no-red-team": NoRedTeamMockMed,
    "leaky-title-in-goal": TitleInGoalClinic,
    "leaky-banner-word": BannerWordClinic,
    "leaky-page-title": PageTitleWordClinic,
}
"""Each broken pack by the name the tests register it under."""
