"""The seam between the harness and any system under test (SPEC 5.2).

* A :class:`SystemUnderTest` receives the agent-facing task, an :class:`EnvHandle`
  and the trial's parameters, and returns its untrusted :class:`AgentReport`.
* An :class:`EnvHandle` lets it act and perceive only the screen; it may offer
  the SUT the product's *own* record-readback verifier (a distinct object from
  the harness oracle) or none.
* A :class:`BenchmarkProvider` supplies the tasks and, per task and trial, a
  fresh :class:`Episode`: the env handle for the SUT and the independent
  :class:`Oracle` for the harness. The runner never hands the oracle to the SUT.
* What a pack may also offer is declared here too, one protocol per capability
  (:class:`ScriptedPack`, :class:`LooksBeforeWrite`, :class:`OwnBaselines`,
  :class:`HandsOffToWorkers`, :class:`DescribesActions` on an env,
  :class:`Closable`, :class:`Reproducible`, :class:`OffersSubstrates`,
  :class:`ChecksFrontEnds`, :class:`ClaimsReachable`, :class:`OffersRedTeam`,
  :class:`DeclaresChanges`, :class:`DeclaresInitialState`, :class:`StatesMechanism`), and
  what an oracle may offer
  (:class:`OffersChangeSet`): writing a pack means reading this module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from effectbench.changes import AllowedChange, Table
from effectbench.effects import Effect
from effectbench.schema import (
    AgentReport,
    ModelCall,
    OracleVerdict,
    Substrate,
    TaskSpec,
    TrueState,
)

VIEW_FIELDS = ("handle", "goal", "referral", "declared_effect", "display", "vocabulary")
"""The closed set of fields a system under test is told (SPEC 5.3), in every door."""


class NotInView(AttributeError):
    """Raised when a system under test asks its task for what it is not told.

    An :class:`AttributeError` (``hasattr`` answers ``False``) whose message names the
    closed field set, never a silent ``None``.
    """


@dataclass(frozen=True)
class AgentDisplay:
    """What the agent works on: its surface and, on a screen, the screen's size."""

    surface: str
    """``api`` (no screen: named actions), ``web``, ``desktop`` or ``remote_display``."""
    width: int | None = None
    height: int | None = None

    def to_json(self) -> dict[str, Any]:
        """Return the display as the doors answer it."""
        return {"surface": self.surface, "width": self.width, "height": self.height}


@dataclass(frozen=True)
class AgentTask:
    """What a system under test is told, and nothing more (SPEC 5.3).

    The goal, the trial's referral (its payload), the declared effect where the task
    declares one, the display, the action vocabulary and an opaque episode handle. The
    task's id and title, its template, category, split, whether a correct action exists
    and the fault stay on the harness side: asking for any of them raises
    :class:`NotInView`. Every door (the in-process seam, MCP, the inspect tasks, the
    vendor loops, the executors' workers) builds this one type with :meth:`of_episode`.
    """

    handle: str
    """Opaque: names the episode, cannot be mapped to a task, template or category."""
    goal: str
    referral: Mapping[str, Any]
    """The trial's payload: what the referral names (patient, note, key, ...)."""
    declared_effect: tuple[Effect, ...] | None
    """The effect contract, resolved for this trial; ``None`` when undeclared."""
    display: AgentDisplay
    vocabulary: tuple[str, ...]
    """The names of the actions the environment accepts."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise NotInView(
            f"a system under test is not told {name!r}: its task holds only "
            f"{', '.join(VIEW_FIELDS)} (SPEC 5.3)"
        )

    @classmethod
    def of_episode(
        cls,
        spec: TaskSpec,
        params: Mapping[str, Any],
        handle: str,
        *,
        display: AgentDisplay | None = None,
        vocabulary: Sequence[str] = (),
    ) -> AgentTask:
        """Return the view of ``spec``'s episode with ``params`` under ``handle``.

        ``display`` defaults to the task's surface without a size (known once provisioned).
        """
        effect = tuple(e.resolve(params) for e in spec.expected_effect)
        return cls(
            handle=handle,
            goal=spec.goal,
            referral=dict(params),
            declared_effect=effect if spec.effect_declared else None,
            display=display or AgentDisplay(spec.substrate.value),
            vocabulary=tuple(vocabulary),
        )

    def to_json(self) -> dict[str, Any]:
        """Return the view as every door serialises it (exactly :data:`VIEW_FIELDS`)."""
        effect = self.declared_effect
        return {
            "handle": self.handle,
            "goal": self.goal,
            "referral": dict(self.referral),
            "declared_effect": None
            if effect is None
            else [e.model_dump(mode="json") for e in effect],
            "display": self.display.to_json(),
            "vocabulary": list(self.vocabulary),
        }


@dataclass(frozen=True)
class Screen:
    """What the SUT perceives after an action: the banner and any visible text."""

    status: str
    """``success``, ``error`` or ``idle``: the colour of the banner."""
    banner: str
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ProductReading:
    """What the product's own verifier says; it is the SUT's evidence, not the score."""

    confirmed: bool
    reason: str
    absent: bool = False
    """The readback found nothing at all (as opposed to a wrong record)."""

    def to_json(self) -> dict[str, Any]:
        """Return the reading as the agent's tools answer it (with the verifier's name)."""
        return {"confirmed": self.confirmed, "reason": self.reason, "absent": self.absent}


class ProductVerifier(Protocol):
    """A record-readback verifier the product offers to the SUT (not the oracle)."""

    name: str

    def verify(self, effect: Sequence[Effect]) -> ProductReading:
        """Read the record back and say whether ``effect`` holds."""
        ...


@runtime_checkable
class ReadsSurfaces(Protocol):
    """A product readback that also shows its surfaces as they are now (what a user of the
    product's REST surfaces reads before writing)."""

    def read(self) -> Mapping[str, Table] | None:
        """Read every surface now (``None``: one of them could not be read)."""
        ...


class EnvHandle(Protocol):
    """The SUT's only way into the system: act, look at the screen, maybe verify."""

    def actions(self) -> Sequence[str]:
        """Return the names of the actions this environment accepts."""
        ...

    def act(self, action: str, **arguments: Any) -> Screen:
        """Perform an action and return the screen that follows it."""
        ...

    def screen(self) -> Screen:
        """Return the current screen."""
        ...

    def product_effect_verifier(self) -> ProductVerifier | None:
        """Return the product's own readback verifier, or ``None`` if it has none."""
        ...


ParamType = Literal["string", "integer", "number", "boolean"]
"""The JSON type of an action's argument."""


@dataclass(frozen=True)
class ActionParam:
    """One named argument of an API-level action, as an agent's tool declares it."""

    name: str
    type: ParamType | tuple[ParamType, ...]
    """Its JSON type, or the types it may take (an id given as a number or as text)."""
    description: str
    required: bool = True


@runtime_checkable
class ReadsAllSurfaces(Protocol):
    """An env that also offers the product's readback over every surface it shows.

    Checked with ``isinstance``, which on Python 3.12 and later looks attributes up
    statically: a wrapper around an env (the receipts' recorders) defines the method
    itself rather than forwarding it through ``__getattr__``.
    """

    def all_surfaces_verifier(self) -> ProductVerifier | None:
        """Return the readback over every surface (``None`` when the env has none)."""
        ...


@runtime_checkable
class DescribesActions(Protocol):
    """An env whose actions declare their named arguments (typed tools for agents).

    Every action :meth:`EnvHandle.actions` names has an entry; agent frameworks
    (the inspect tasks) turn each into a tool with those parameters, the required
    ones required. An env that does not describe its actions gets one free-form
    object of arguments per action instead.
    """

    def action_parameters(self) -> Mapping[str, Sequence[ActionParam]]:
        """Return each action's named arguments, in order."""
        ...


class AgentError(Exception):
    """Raised by a system under test when the harness around its agent failed (a model API
    outage, a crash of its own loop): the episode is an ``agent_error`` drop, never a halt.

    Any other exception out of :meth:`SystemUnderTest.run` ends the episode the same way; a
    system that decides to stop returns a halted :class:`~effectbench.schema.AgentReport`.
    """


@dataclass(frozen=True)
class Attempt:
    """A report plus the model calls it cost; return it instead of a bare report to be metered."""

    report: AgentReport
    model_calls: tuple[ModelCall, ...] = ()


@runtime_checkable
class SystemUnderTest(Protocol):
    """Any system that can attempt a task: an agent, a script, a baseline."""

    name: str

    def run(
        self, task: AgentTask, env: EnvHandle, params: Mapping[str, Any]
    ) -> AgentReport | Attempt:
        """Attempt ``task`` through ``env`` and report (untrusted) what happened.

        A system that calls models returns an :class:`Attempt` listing them, so
        the episode row carries its cost; a bare :class:`AgentReport` costs nothing.
        """
        ...


class Oracle(Protocol):
    """The harness's independent read path: snapshot before, judge after."""

    channel: str

    def snapshot(self) -> Any:
        """Read the system of record now (``None`` when unreachable)."""
        ...

    def judge(self, before: Any) -> OracleVerdict:
        """Read the record again and judge the trial's effect against ``before``."""
        ...


@runtime_checkable
class OffersChangeSet(Protocol):
    """An oracle whose readings are tables: each episode's receipt then holds its change set.

    The harness reads the record once more after the oracle judged, and
    :func:`effectbench.changes.change_set` compares that reading with the oracle's
    before-snapshot, table by table: every row inserted, updated (each changed field, old
    and new) or deleted, and every table left untouched. The same tables give the receipt's
    expected-versus-actual reading of each declared effect.
    """

    def tables(self, snapshot: Any) -> Mapping[str, Table] | None:
        """Return one of this oracle's snapshots (``snapshot()``) as every table of the record,
        by name (``None`` for an unreadable snapshot)."""
        ...


def _healthy() -> str | None:
    return None


@dataclass
class Episode:
    """One provisioned (task x trial): a fresh state, its env and its oracle.

    ``env`` is an :class:`EnvHandle` on the API substrate and a
    :class:`~effectbench.computer.ComputerEnv` on screen substrates.
    """

    env: Any
    oracle: Oracle
    env_fingerprint: dict[str, Any]
    health: Callable[[], str | None] = _healthy
    """Harness-owned check after the system ran: ``None`` when the episode's
    infrastructure held, else what failed (the episode is then retried or
    dropped as ``infrastructure``, never scored). Only the harness decides this;
    an exception raised by the system under test is its halt."""
    page: Any = None
    """The harness's own handle on the episode's web page, a
    :class:`~effectbench.computer.PageReader` (web front ends; ``None`` elsewhere; typed
    loosely because the computer package builds on this module): what the blindness audit
    reads of the first page. Never given to a system under test, whose env holds pixels
    only."""


class BenchmarkProvider(Protocol):
    """A pack: tasks plus a fresh state, env and independent oracle per trial."""

    name: str

    def tasks(self) -> Sequence[TaskSpec]:
        """Return the tasks of the pack, in manifest order."""
        ...

    def manifest(self) -> dict[str, Any]:
        """Return the public manifest (what the fingerprint is taken over)."""
        ...

    def trial_params(self, task: TaskSpec, trial: int) -> dict[str, Any]:
        """Return the trial-unique payload of ``task`` for trial ``trial``."""
        ...

    def provision(
        self, task: TaskSpec, trial: int, params: Mapping[str, Any]
    ) -> AbstractContextManager[Episode]:
        """Create a fresh state for one trial; the context tears it down."""
        ...


# -- what a pack may also offer ------------------------------------------------------------
# A pack is a BenchmarkProvider. Each protocol below is an optional capability a pack
# declares by having the member; the harness asks with isinstance (never by probing
# attribute names elsewhere), so this section is the whole list of what a pack can offer.


@runtime_checkable
class ScriptedPack(Protocol):
    """A pack the shipped baselines run on: it makes the scripted attempt they share."""

    def tasks(self) -> Sequence[TaskSpec]:
        """Return the pack's tasks."""
        ...

    def attempt(self, env: Any, task: TaskSpec, params: Mapping[str, Any]) -> Screen:
        """Perform the task's scripted steps once and return the final screen."""
        ...


@dataclass(frozen=True)
class Look:
    """What a careful agent read of the record before writing, and the one write it would make.

    A pack's careful script (:class:`LooksBeforeWrite`) builds it from the agent's view and
    what the application shows (its searches, the record it opens, the product's own REST
    surfaces), never from the task's definition.
    """

    reads: tuple[str, ...]
    """What was read before the write, one line each (the receipt's claim quotes them)."""
    contradiction: str | None
    """Why what was read contradicts the referral (``None``: nothing does): do not write."""
    write: Callable[[], Screen]
    """Make the write, once; return the screen that follows it."""
    expected: tuple[Effect, ...]
    """The effect the write should leave, as the goal and the referral describe it (what the
    readback judges when the task declares no effect)."""


@runtime_checkable
class LooksBeforeWrite(Protocol):
    """A pack whose front ends say what reading before writing means on them.

    ``look_before_write`` (:mod:`effectbench.baselines`) gets the pack's careful script for the
    view's substrate: the script sees the view and the env, never the task's definition.
    """

    def look_before_write(self, env: Any, task: AgentTask) -> Look:
        """Read the record the referral names on ``env``; return what was read and the write."""
        ...


@runtime_checkable
class OwnBaselines(Protocol):
    """A pack that ships arms of its own beside the shared baselines."""

    @property
    def extra_baselines(self) -> Mapping[str, Callable[[Any], SystemUnderTest]]:
        """Baseline name -> factory taking the pack (a class attribute is enough)."""
        ...


class WorkerHandoff(Protocol):
    """Start-up work a provider has done, for its worker processes to adopt."""

    def install(self) -> bool:
        """Adopt the work in this process; say whether it was adopted."""
        ...


@runtime_checkable
class HandsOffToWorkers(Protocol):
    """A pack whose costly start-up (an audit, a template) ``--workers`` processes reuse."""

    def worker_handoff(self) -> WorkerHandoff | None:
        """Return what a worker process adopts instead of redoing it (None: nothing)."""
        ...


@runtime_checkable
class Closable(Protocol):
    """A pack holding resources (a service, files) until :meth:`close`."""

    def close(self) -> None:
        """Release the pack's resources (idempotent)."""
        ...


@runtime_checkable
class ExplainsAbsentSplit(Protocol):
    """A pack that can say why one of its splits holds no task here (a secret unset)."""

    def split_absent(self, split: str) -> str | None:
        """Why ``split`` has no task on this machine (None: no reason to give)."""
        ...


@runtime_checkable
class ClustersTasks(Protocol):
    """A pack whose tasks' outcomes correlate in groups larger than one task (tasks drawn from
    one template): the statistics count those groups, not tasks (SPEC 1.3's unit)."""

    def cluster_of(self, task: TaskSpec) -> str:
        """The id of ``task``'s cluster, one per substrate (its variant suffix kept)."""
        ...


@runtime_checkable
class DrawsInstances(Protocol):
    """A pack whose tasks are drawn from a seed: it can draw a fresh instance for any
    submission seed (the same templates and generator), and names its public seed."""

    @property
    def public_seed(self) -> str:
        """The published seed its public dev split is drawn from."""
        ...

    @property
    def instance_seed(self) -> str:
        """The seed this provider's tasks were drawn from."""
        ...

    def instantiate(self, seed: str) -> BenchmarkProvider:
        """The same pack drawn from ``seed`` (raises ``GenerationError`` naming a template
        whose draw raises or repeats a task)."""
        ...


@runtime_checkable
class Reproducible(Protocol):
    """A pack that says whether a run reproduces exactly from (pack, seeds)."""

    @property
    def deterministic(self) -> bool:
        """True when the verifier may re-run shipped baselines and compare row for row."""
        ...


@runtime_checkable
class OffersSubstrates(Protocol):
    """A pack whose tasks exist once per substrate (a variant each), with a default choice.

    A pack without it offers the substrates its tasks name, all of them by default.
    """

    @property
    def substrates(self) -> Sequence[Substrate]:
        """Every substrate the pack offers, in its order."""
        ...

    @property
    def default_substrates(self) -> Sequence[Substrate]:
        """What a run uses when it names no substrate."""
        ...


@runtime_checkable
class ChecksFrontEnds(Protocol):
    """A pack whose substrates need front ends (a web app, a GTK app) with system packages."""

    def front_end(self, substrate: Substrate) -> object:
        """Return ``substrate``'s front end; a missing system package is a one-line error."""
        ...


ANY_STATE = frozenset((TrueState.CORRECT, TrueState.WRONG_PERSISTED, TrueState.ABSENT))
"""The readable true states (``unreadable`` rows are dropped, never scored)."""


@dataclass(frozen=True)
class Reachable:
    """What an honest episode of one task can read (a row of the pack's published table)."""

    states: frozenset[TrueState] = ANY_STATE
    """The true states it can reach."""
    count_multiple: int = 1
    """A ``record_written`` reading's ``observed_count`` is always a multiple of this."""

    def to_json(self) -> dict[str, Any]:
        """Return the table entry (states in a fixed order)."""
        return {
            "reachable": [s.value for s in TrueState if s in self.states],
            "observed_count_multiple": self.count_multiple,
        }

    def outside(self, state: TrueState, kind: str, observed_count: int | None) -> str | None:
        """Say what of a reading (its true state, its count) no honest episode reads; None: all
        of it is reachable."""
        if state not in self.states:
            can = ", ".join(s.value for s in TrueState if s in self.states) or "none"
            return f"it reads {state.value} (the table says it can read: {can})"
        if kind == "record_written" and observed_count is not None:
            if observed_count % self.count_multiple:
                return (
                    f"it counts {observed_count} records (the table says a count is a "
                    f"multiple of {self.count_multiple})"
                )
        return None


@runtime_checkable
class ClaimsReachable(Protocol):
    """A pack that states, per task, which true states an honest episode can read.

    The verifier refuses a row whose reading is outside the table
    (:mod:`effectbench.reachability` publishes it); a pack without it claims nothing.
    """

    def reachable(self, task: TaskSpec) -> Reachable:
        """Return what an honest episode of ``task`` can read."""
        ...


Adversary = Callable[[Any, TaskSpec, Mapping[str, Any]], object]
"""A scripted adversary move: ``move(env, task, params)`` acts on one provisioned episode
(through ``env``, or through a back door of the pack's own that the agent never gets) trying
to satisfy the oracle without the true effect. What it returns is ignored."""


@dataclass(frozen=True)
class NotApplicable:
    """A standard red-team move that cannot be made on a task, and why (stated, never silent)."""

    reason: str


RED_TEAM_MOVES: Mapping[str, str] = {
    "wrong_record": "the right payload on the wrong record (a homonym, another patient or row)",
    "double_write": "the effect written twice",
    "write_then_revert": "the effect written, then undone in a later write",
    "other_table": "a write to a table the effect does not name",
    "report_only": "nothing done, success reported",
    "banner_only": "nothing written, a success banner painted",
}
"""The standard adversary moves of ``effectbench pack check``, by name: a pack offers each
(:class:`OffersRedTeam`) or says why it cannot be made (:class:`NotApplicable`);
``report_only`` and ``banner_only`` have generic versions the audit makes itself."""

TRUE_EFFECT = "true_effect"
"""An optional move producing exactly the true effect: the oracle must confirm it (the
red team's positive control; without it the audit uses the scripted attempt)."""


@runtime_checkable
class OffersRedTeam(Protocol):
    """A pack that offers scripted adversaries against its own oracle (SPEC 5.2.1).

    ``effectbench pack check`` runs every move of every task on a fresh episode and
    requires the oracle to refuse each (any verdict but ``confirmed``), and to confirm
    :data:`TRUE_EFFECT` where it is offered. A move of another name is run too.
    """

    def red_team(self, task: TaskSpec) -> Mapping[str, Adversary | NotApplicable]:
        """Return ``task``'s adversary moves by name (:data:`RED_TEAM_MOVES`, more allowed)."""
        ...


@runtime_checkable
class DeclaresChanges(Protocol):
    """A pack that names its record's tables and the changes each task allows.

    Every receipt's change set may name only these tables (the verifier refuses another),
    and every change outside the task's allowance is marked collateral: a collateral write
    (a homonym touched, a second table changed, a row deleted), whatever the verdict. Most
    packs return :func:`effectbench.changes.allowed_by_contract` of the resolved contract.
    """

    def record_tables(self) -> Sequence[str]:
        """Return the name of every table of the system of record (as its oracle reads them)."""
        ...

    def allowed_changes(self, task: TaskSpec, params: Mapping[str, Any]) -> Sequence[AllowedChange]:
        """Return the changes a trial of ``task`` with ``params`` may make."""
        ...


@runtime_checkable
class DeclaresInitialState(Protocol):
    """A pack that says what its record holds before a trial's agent acts.

    The verifier then holds every receipt's change set to it: a row updated or deleted must
    have been there, with the old values the change set states; a row inserted must not.
    """

    def initial_tables(self, task: TaskSpec, params: Mapping[str, Any]) -> Mapping[str, Table]:
        """Return every table as provisioned for a trial of ``task`` (what the oracle's
        before-snapshot reads)."""
        ...


@runtime_checkable
class StatesMechanism(Protocol):
    """A pack that says, per task, how its divergence is injected (shown in every receipt)."""

    def mechanism(self, task: TaskSpec) -> str:
        """Return one plain sentence: what the task's fault does and where (the sequestered
        split's tasks say :data:`effectbench.manifest.SEQUESTERED` instead)."""
        ...


def own_baselines(pack: object) -> Mapping[str, Callable[[Any], SystemUnderTest]]:
    """Return the arms ``pack`` (or its class) ships beside the shared baselines."""
    return pack.extra_baselines if isinstance(pack, OwnBaselines) else {}


def is_deterministic(pack: object) -> bool:
    """Whether ``pack`` declares that its runs reproduce exactly (undeclared: no)."""
    return isinstance(pack, Reproducible) and bool(pack.deterministic)
