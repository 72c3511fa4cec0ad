"""The pack kit's provider: everything a pack with a real system of record does alike.

:class:`RecordPack` is a :class:`~effectbench.seam.BenchmarkProvider` with the capabilities a
kit-built pack offers (scripted attempts, its own arm, substrates with front ends, the
reachable-state table, the mechanism of each fault, the red team, the audit handed to
``--workers`` processes, closing). A pack subclasses it and says only what is its own:

* its task definitions (:meth:`RecordPack.definitions`): :class:`TaskDefinition` values,
  written out or drawn from templates by a generator, each stating its contract, its
  per-trial payload, its public wiring and what the agent is told;
* its record (:meth:`RecordPack.record`): per episode, the app's store (mounted on the pack's
  :class:`~effectbench.episode_http.RecordService`), the oracle over the record, the red
  team's back door into it and any health check of its own;
* its audit (:meth:`RecordPack.run_audit`), its faults (:attr:`RecordPack.faults`), its front
  ends (:attr:`RecordPack.front_ends`) and its manifest's ``system_of_record`` entry.

Every task exists once per substrate of :attr:`RecordPack.front_ends` (the manifest lists the
``api`` variants first, in definition order, then each other substrate's), so a pack's
fingerprint does not depend on which substrates a run chose.
"""

from __future__ import annotations

import itertools
import multiprocessing.util
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from effectbench.baselines import EffectVerifiedAll, LookBeforeWrite
from effectbench.effects import Effect
from effectbench.episode_http import RecordService
from effectbench.errors import UsageError
from effectbench.frontends import FrontEnd
from effectbench.kit.audit import (
    RED_TEAM,
    Attestation,
    AuditHandoff,
    AuditPlan,
    AuditResult,
    Write,
    attacks,
)
from effectbench.kit.faults import FaultCatalogue
from effectbench.kit.frontends import ApiFrontEnd, FrontEnds
from effectbench.manifest import SEQUESTERED, manifest_of
from effectbench.reachability import Reachable
from effectbench.schema import Category, OracleChannel, OracleSpec, Split, Substrate, TaskSpec
from effectbench.seam import (
    Adversary,
    AgentTask,
    Episode,
    Look,
    NotApplicable,
    Oracle,
    Screen,
    SystemUnderTest,
)

__all__ = ["CatalogueTask", "Record", "RecordPack", "TaskDefinition"]


class TaskDefinition(Protocol):
    """One task of a kit-built pack, as its domain states it (written out or generated)."""

    @property
    def name(self) -> str:
        """The task's name (``PACK::NAME`` is its id on ``api``)."""
        ...

    @property
    def task_id(self) -> str:
        """The task's id on ``api``."""
        ...

    @property
    def title(self) -> str:
        """What the task is, in a line."""
        ...

    @property
    def category(self) -> Category:
        """Its divergence category (or ``control``)."""
        ...

    @property
    def available(self) -> bool:
        """Whether a correct action exists."""
        ...

    @property
    def declared(self) -> bool:
        """Whether the agent is told the effect contract."""
        ...

    @property
    def split(self) -> Split:
        """``dev`` or the sequestered ``test``."""
        ...

    @property
    def fault_name(self) -> str:
        """The fault injected at the app's persistence boundary (``none`` for a control)."""
        ...

    @property
    def refusal_control(self) -> bool:
        """A control whose brief names no record: every write is wrong."""
        ...

    @property
    def reversible(self) -> bool:
        """Whether the effect can be undone."""
        ...

    def goal(self) -> str:
        """The goal text (the same for every arm)."""
        ...

    def effects(self) -> tuple[Effect, ...]:
        """The declared contract (unresolved; bound per trial)."""
        ...

    def params(self, trial: int) -> dict[str, Any]:
        """The trial-unique payload and the brief's values for trial ``trial``."""
        ...

    def wiring(self) -> dict[str, Any]:
        """The public payload wiring (what the manifest shows; the test split's is withheld)."""
        ...

    def brief(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """What the agent is told beside the goal (the referral, the request)."""
        ...


class CatalogueTask:
    """What a pack's task definition (a dataclass) inherits: its id, its goal, its axes.

    A subclass sets :attr:`PACK` and :attr:`GOALS` (goal text per task shape) and has the
    fields ``name``, ``kind`` (its shape), ``category``, ``available`` and ``fault`` (with a
    ``name``); it writes :meth:`~TaskDefinition.effects`, :meth:`~TaskDefinition.params`,
    :meth:`~TaskDefinition.wiring`, :meth:`~TaskDefinition.brief` and ``reversible``.
    """

    PACK: ClassVar[str]
    GOALS: ClassVar[Mapping[str, str]]
    name: str
    kind: str
    category: Category
    available: bool
    fault: Any

    @property
    def task_id(self) -> str:
        """Return the task's id on ``api``: ``PACK::NAME``."""
        return f"{self.PACK}::{self.name}"

    @property
    def refusal_control(self) -> bool:
        """A control whose brief names no record (stale or ambiguous): every write is wrong."""
        return self.category is Category.CONTROL and not self.available

    @property
    def fault_name(self) -> str:
        """The fault injected at the app's persistence boundary."""
        return str(self.fault.name)

    def goal(self) -> str:
        """The goal text of the task's shape (the same for every arm)."""
        return self.GOALS[self.kind]


def _healthy() -> str | None:
    return None


@dataclass
class Record:
    """One episode's record, as the pack provisions it."""

    store: Any
    """The app's state for the episode (what the service mounts)."""
    oracle: Oracle
    """The harness's oracle over the record."""
    attack: Callable[[Write], None]
    """The red team's back door: commit an attacker's write into this episode's record."""
    health: Callable[[], str | None] = field(default=_healthy)
    """The pack's own check after the system ran (a concurrent writer that failed)."""


class RecordPack:
    """The base of a kit-built pack (see the module's docstring)."""

    name: str
    channel: str = "sql_readonly"
    deterministic: ClassVar[bool] = True
    """Runs reproduce from (pack, seeds): the verifier may re-execute shipped baselines."""
    extra_baselines: ClassVar[Mapping[str, Callable[[Any], SystemUnderTest]]] = {
        "effect_verified_all": EffectVerifiedAll,
        "look_before_write": LookBeforeWrite,
    }
    front_ends: ClassVar[FrontEnds]
    substrates: ClassVar[tuple[Substrate, ...]]
    """The substrates this pack offers (one task variant each): its front ends'."""
    default_substrates: ClassVar[tuple[Substrate, ...]] = (Substrate.API,)
    """What ``run`` uses when no ``--substrate`` is given."""
    faults: ClassVar[FaultCatalogue]
    plan: ClassVar[AuditPlan]
    """What the audit and the red team need to know of the record."""
    attestation: ClassVar[Attestation]
    """The pack's audit, once per process (handed to ``--workers`` processes)."""
    default_oracle: ClassVar[Any]
    """The oracle factory of a pack built by name (what workers rebuild)."""
    engine: ClassVar[str]
    """The record's engine (``sqlite``, ``postgresql``): the fingerprint's ``store``."""
    surfaces: ClassVar[tuple[str, ...]]
    """The tables the app exposes over REST (the manifest lists them)."""
    oracle_note: ClassVar[str]
    """How the oracle reads the record (the manifest says it)."""
    template_digest: ClassVar[str]
    """The identity of the seed state every episode starts from."""
    _finalizer: multiprocessing.util.Finalize | None = None

    def __init__(self, oracle_factory: Any = None) -> None:
        self.service: RecordService[Any] = self.new_service()
        self._oracle_factory = self.default_oracle if oracle_factory is None else oracle_factory
        self.audit: dict[str, AuditResult] = self.run_audit(self._oracle_factory)
        self._defs: dict[str, tuple[Any, Substrate]] = {}
        specs = []
        for substrate in self.substrates:
            for d in self.definitions_on(substrate):
                spec = self._task_spec(d, self.audit[d.task_id].passed, substrate)
                self._defs[spec.task_id] = (d, substrate)
                specs.append(spec)
        self._tasks = tuple(specs)
        self._front: dict[Substrate, FrontEnd] = {}
        self._attacks: dict[int, Callable[[Write], None]] = {}
        """The back door into each live episode's record, by its env's identity."""
        self.counter = itertools.count()
        """Numbers the episodes of this provider (their files, their databases)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "front_ends" in vars(cls):
            cls.substrates = cls.front_ends.substrates

    # -- what a pack states -----------------------------------------------------------------

    def new_service(self) -> RecordService[Any]:
        """Return the pack's service (not started: the first episode starts it)."""
        raise NotImplementedError

    def definitions(self) -> Sequence[Any]:
        """Return the pack's task definitions (:class:`TaskDefinition`), in manifest order."""
        raise NotImplementedError

    def definitions_on(self, substrate: Substrate) -> Sequence[Any]:
        """Return the definitions offered on ``substrate`` (default: every one), in manifest
        order; a large catalogue may offer its costly substrates a declared sample."""
        return self.definitions()

    def run_audit(self, oracle_factory: Any) -> dict[str, AuditResult]:
        """Return the live adversarial audit of ``oracle_factory`` over every task (by id)."""
        raise NotImplementedError

    def record(
        self,
        definition: Any,
        params: Mapping[str, Any],
        effects: tuple[Effect, ...],
        alive: Callable[[], bool],
    ) -> AbstractContextManager[Record]:
        """Provision one episode's record (the context tears it down); ``effects`` is the
        resolved contract and ``alive`` says whether the episode's service still runs (the
        oracle's reading is indeterminate when it does not)."""
        raise NotImplementedError

    # -- the provider seam ------------------------------------------------------------------

    def _task_spec(self, d: Any, audited: bool, substrate: Substrate) -> TaskSpec:
        suffix = "" if substrate is Substrate.API else f" ({substrate.value})"
        return TaskSpec(
            task_id=self.front_ends.variant_id(d.name, substrate),
            title=d.title + suffix,
            category=d.category,
            substrate=substrate,
            goal=d.goal(),
            expected_effect=d.effects(),
            oracle=OracleSpec(
                channel=OracleChannel.SQL_READONLY,
                isolated_from_agent=True,
                trial_unique_payload=True,
                refusal_controls=d.refusal_control,
                adversarially_audited=audited,
            ),
            correct_action_available=d.available,
            split=d.split,
            reversible=d.reversible,
            effect_declared=d.declared,
            initial_state={"fault": d.fault_name, "template": self.template_digest},
        )

    def tasks(self) -> Sequence[TaskSpec]:
        """Return every task variant in manifest order (each substrate's, api first)."""
        return self._tasks

    def definition(self, task: TaskSpec) -> Any:
        """Return the pack's own definition of ``task`` (any variant)."""
        return self._defs[task.task_id][0]

    def reachable(self, task: TaskSpec) -> Reachable:
        """Return what an honest episode of ``task`` can read, from its fault and contract.

        Every front end reaches the same faulty service, so a task's variants share a row.
        """
        inserts = bool(task.expected_effect) and task.expected_effect[0].count_new_only
        fault = str(task.initial_state["fault"])
        return Reachable(self.faults.reachable(fault, inserts=inserts))

    def mechanism(self, task: TaskSpec) -> str:
        """Return how ``task``'s fault is injected (sequestered for the test split)."""
        d = self.definition(task)
        return SEQUESTERED if d.split is Split.TEST else self.faults.mechanism(d.fault_name)

    def manifest(self) -> dict[str, Any]:
        """Return the public manifest: the interop layout plus the pack's redacted wiring."""
        manifest = manifest_of(self.name, self._tasks)
        manifest["system_of_record"] = {
            "engine": self.engine,
            "surfaces": list(self.surfaces),
            "template_digest": self.template_digest,
            "oracle": self.oracle_note,
        }
        manifest["payload_wiring"] = {
            tid: d.wiring() if d.split is not Split.TEST else SEQUESTERED
            for tid, (d, _) in self._defs.items()
        }
        return manifest

    def trial_params(self, task: TaskSpec, trial: int) -> dict[str, Any]:
        """Return the trial-unique payload of ``task`` for trial ``trial``."""
        params: dict[str, Any] = self.definition(task).params(trial)
        return params

    def front_end(self, substrate: Substrate) -> FrontEnd:
        """Return the front end of ``substrate`` (imported on first use)."""
        if substrate not in self._front:
            self._front[substrate] = self.front_ends.load(substrate)
        return self._front[substrate]

    @contextmanager
    def serve(self) -> Iterator[RecordService[Any]]:
        """Yield the service an episode mounts its store on (started once, then shared)."""
        if not self.service.alive():
            self.service.start()
        yield self.service

    @contextmanager
    def provision(self, task: TaskSpec, trial: int, params: Mapping[str, Any]) -> Iterator[Episode]:
        """Provision the record, mount its store, open the variant's front end.

        A front end that cannot start raises :class:`~effectbench.errors.InfrastructureError`;
        one that fails during the episode (or the pack's own check) says so through the
        episode's ``health``.
        """
        d, substrate = self._defs[task.task_id]
        front = self.front_end(substrate)
        effects = tuple(e.resolve(params) for e in task.expected_effect)
        with ExitStack() as stack:
            service = stack.enter_context(self.serve())
            record = stack.enter_context(self.record(d, params, effects, service.alive))
            channel = service.mount(record.store)
            stack.callback(self._unmount, service, record.store)
            session = stack.enter_context(front.session(channel, d.brief(params)))
            self._attacks[id(session.env)] = record.attack
            stack.callback(self._attacks.pop, id(session.env), None)

            def health() -> str | None:
                failure = session.health()
                return failure if failure is not None else record.health()

            yield Episode(
                env=session.env,
                oracle=record.oracle,
                env_fingerprint={
                    "env": self.name,
                    "substrate": task.substrate.value,
                    "fault": d.fault_name,
                    "synthetic": True,
                    "provider": self.name,
                    "store": self.engine,
                    "template_digest": self.template_digest,
                    **front.describe(),
                },
                health=health,
                page=session.page,
            )

    @staticmethod
    def _unmount(service: RecordService[Any], store: Any) -> None:
        if service.mounted is store:
            service.unmount()

    def attempt(self, env: Any, task: TaskSpec, params: Mapping[str, Any]) -> Screen:
        """The scripted steps the shipped baselines take on the task's front end."""
        d, substrate = self._defs[task.task_id]
        return self.front_end(substrate).attempt(env, d, params)

    def look_before_write(self, env: Any, task: AgentTask) -> Look:
        """The careful script of the view's front end (``look_before_write``): it is handed
        the agent's view and the env, never the task's definition."""
        substrate = Substrate(task.display.surface)
        front = self.front_end(substrate)
        careful = front.careful if isinstance(front, ApiFrontEnd) else None
        if careful is None:
            raise UsageError(
                f"pack {self.name!r} says what reading before writing means on the api only, "
                f"not on {substrate.value}: run look_before_write with --substrate api"
            )
        look: Look = careful(env, task)
        return look

    def red_team(self, task: TaskSpec) -> Mapping[str, Adversary | NotApplicable]:
        """The adversary moves of ``effectbench pack check``: the audit's probes
        (:data:`~effectbench.kit.audit.RED_TEAM`) written into the live episode's record
        through the pack's back door, which no agent is given (every write the app allows
        is a subset of these)."""
        return {move: self._adversary(probe) for move, probe in RED_TEAM.items()}

    def _adversary(self, probe: str) -> Adversary:
        def move(env: Any, task: TaskSpec, params: Mapping[str, Any]) -> None:
            attack = self._attacks[id(env)]
            effects = tuple(e.resolve(params) for e in task.expected_effect)
            for write in attacks(self.plan, effects, params)[probe].writes:
                attack(write)

        return move

    def worker_handoff(self) -> AuditHandoff | None:
        """Return this pack's audit for ``--workers`` processes.

        A worker rebuilds the pack by name, with the default oracle; a provider built around
        another oracle has nothing to hand over.
        """
        return self.attestation.handoff() if self._oracle_factory is self.default_oracle else None

    # -- lifecycle --------------------------------------------------------------------------

    def closing(self, *steps: Callable[[], None]) -> None:
        """Run ``steps`` (in order) when the pack closes, at process exit, or at a pool
        worker's exit (multiprocessing's finalizer; never in a forked child for its parent)."""
        self._finalizer = multiprocessing.util.Finalize(
            self, _run_all, args=(steps,), exitpriority=1
        )

    def close(self) -> None:
        """Release the pack's resources (its service, its record's files or server)."""
        if self._finalizer is not None:
            self._finalizer()

    def __enter__(self) -> RecordPack:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _run_all(steps: Sequence[Callable[[], None]]) -> None:
    for step in steps:
        step()
