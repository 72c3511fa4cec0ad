"""The ticketing pack as an EffectBench provider (:class:`effectbench.api.BenchmarkProvider`)."""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any

import psycopg

from effectbench.api import (
    SEQUESTERED,
    Adversary,
    Effect,
    Episode,
    NotApplicable,
    OracleChannel,
    OracleSpec,
    Reachable,
    Screen,
    Split,
    Substrate,
    SystemUnderTest,
    TaskSpec,
    manifest_of,
)
from effectbench_ticketing.arms import EffectVerifiedAll
from effectbench_ticketing.attestation import AuditHandoff, audit_pack, handoff
from effectbench_ticketing.audit import RED_TEAM, OracleFactory, red_team_writes
from effectbench_ticketing.cluster import Cluster
from effectbench_ticketing.colleague import Colleague
from effectbench_ticketing.db import SURFACES, TEMPLATE, TEMPLATE_DIGEST, Roles, build_template
from effectbench_ticketing.frontends import FRONT_ENDS, FrontEnd, FrontEndSession, load, variant_id
from effectbench_ticketing.oracle import CHANNEL, ObservesOthers, PostgresOracle
from effectbench_ticketing.service import TicketService
from effectbench_ticketing.store import TicketStore, reachable_states
from effectbench_ticketing.tasks import (
    GOALS,
    TASKS,
    TicketingTask,
    effects_of,
    params_of,
    request_of,
    wiring_of,
)

NAME = "ticketing"


def _task_spec(task: TicketingTask, audited: bool, substrate: Substrate) -> TaskSpec:
    suffix = "" if substrate is Substrate.API else f" ({substrate.value})"
    return TaskSpec(
        task_id=variant_id(task.name, substrate),
        title=task.title + suffix,
        category=task.category,
        substrate=substrate,
        goal=GOALS[task.kind],
        expected_effect=effects_of(task),
        oracle=OracleSpec(
            channel=OracleChannel.SQL_READONLY,
            isolated_from_agent=True,
            trial_unique_payload=True,
            refusal_controls=task.refusal_control,
            adversarially_audited=audited,
        ),
        correct_action_available=task.available,
        split=task.split,
        reversible=task.reversible,
        effect_declared=task.declared,
        initial_state={"fault": task.fault.name, "template": TEMPLATE_DIGEST},
    )


def _shutdown(service: TicketService, cluster: Cluster) -> None:
    service.stop()
    cluster.stop()


class TicketingProvider:
    """A support desk on PostgreSQL: an HTTP service, a read-only oracle, 30 tasks per substrate.

    Each task exists once per front end (:mod:`.frontends`): ``ticketing::NAME`` on ``api``
    and ``ticketing::NAME@web``; the manifest lists every variant (api first, in catalogue
    order, then web), so the fingerprint does not depend on which substrates a run chose.

    The provider starts a private PostgreSQL cluster (:mod:`.cluster`), builds the template
    database once and runs the live adversarial audit on it; each episode gets a fresh
    clone (``ep_N``), mounted on the provider's service and dropped when the episode ends.
    :meth:`close` (or leaving the ``with`` block, or process exit) stops the service and the
    cluster and removes its folder.
    """

    name = NAME
    channel = CHANNEL
    deterministic = True
    """Runs reproduce from (pack, seeds): the colleague's interleaving is fixed."""
    extra_baselines: Mapping[str, Callable[[Any], SystemUnderTest]] = {
        "effect_verified_all": EffectVerifiedAll
    }
    substrates: tuple[Substrate, ...] = tuple(FRONT_ENDS)
    """The substrates this pack offers (one task variant each)."""
    default_substrates: tuple[Substrate, ...] = (Substrate.API,)
    """What ``run`` uses when no ``--substrate`` is given."""

    def __init__(self, *, oracle_factory: OracleFactory = PostgresOracle) -> None:
        self.cluster = Cluster()
        self.service = TicketService()
        self._finalizer = weakref.finalize(self, _shutdown, self.service, self.cluster)
        try:
            self.cluster.start()
            self.roles: Roles = build_template(self.cluster)
            self.audit = audit_pack(self.cluster, self.roles.oracle, oracle_factory)
        except BaseException:
            self._finalizer()
            raise
        self._oracle_factory = oracle_factory
        self._defs: dict[str, tuple[TicketingTask, Substrate]] = {}
        tasks = []
        for substrate in self.substrates:
            for t in TASKS:
                spec = _task_spec(t, self.audit[t.task_id].passed, substrate)
                self._defs[spec.task_id] = (t, substrate)
                tasks.append(spec)
        self._tasks = tuple(tasks)
        self._front_ends: dict[Substrate, FrontEnd] = {}
        self._counter = itertools.count()
        self._episode_databases: dict[int, str] = {}
        """The database of each live episode, by its env (the red team's back door)."""

    # -- the provider seam -------------------------------------------------------------

    def tasks(self) -> Sequence[TaskSpec]:
        """Return every task variant in manifest order (per substrate: 27 dev, 3 test)."""
        return self._tasks

    def reachable(self, task: TaskSpec) -> Reachable:
        """Return what an honest episode of ``task`` can read, from its fault and contract."""
        inserts = bool(task.expected_effect) and task.expected_effect[0].count_new_only
        return Reachable(reachable_states(str(task.initial_state["fault"]), inserts=inserts))

    def manifest(self) -> dict[str, Any]:
        """Return the public manifest: the interop layout plus the pack's redacted wiring."""
        manifest = manifest_of(NAME, self._tasks)
        manifest["system_of_record"] = {
            "engine": "postgresql",
            "surfaces": list(SURFACES),
            "template_digest": TEMPLATE_DIGEST,
            "oracle": "role tk_oracle (pg_read_all_data, read-only transactions) on a Unix "
            "socket; every table and the schema of the episode database; per-table delta",
        }
        manifest["payload_wiring"] = {
            tid: wiring_of(t) if t.split is not Split.TEST else SEQUESTERED
            for tid, (t, _) in self._defs.items()
        }
        return manifest

    def trial_params(self, task: TaskSpec, trial: int) -> dict[str, Any]:
        """Return the trial-unique payload and request of ``task`` for trial ``trial``."""
        return params_of(self._defs[task.task_id][0], trial)

    def front_end(self, substrate: Substrate) -> FrontEnd:
        """Return the front end of ``substrate`` (imported on first use)."""
        if substrate not in self._front_ends:
            self._front_ends[substrate] = load(substrate)
        return self._front_ends[substrate]

    def _connector(self, role: str, database: str) -> Callable[[], psycopg.Connection[Any]]:
        login = getattr(self.roles, role)

        def connect() -> psycopg.Connection[Any]:
            return self.cluster.connect(login, database, autocommit=role == "oracle")

        return connect

    @contextmanager
    def provision(self, task: TaskSpec, trial: int, params: Mapping[str, Any]) -> Iterator[Episode]:
        """Clone the template, mount the clone on the service, open the variant's front end.

        A front end that cannot start raises :class:`~effectbench.api.InfrastructureError`;
        one that fails during the episode (or a colleague that could not commit) says so
        through the episode's ``health``.
        """
        spec, substrate = self._defs[task.task_id]
        front = self.front_end(substrate)
        if not self.service.alive():
            self.service.start()
        database = f"ep_{next(self._counter)}"
        effects: tuple[Effect, ...] = tuple(e.resolve(params) for e in task.expected_effect)
        with ExitStack() as stack:
            stack.enter_context(self.cluster.database(database, TEMPLATE))
            oracle = self._oracle_factory(
                self._connector("oracle", database), effects, self.service.alive
            )
            stack.callback(oracle.close)
            colleague = None
            if spec.concurrent is not None:
                colleague = Colleague(spec.concurrent, self._connector("colleague", database))
                if isinstance(oracle, ObservesOthers):
                    colleague.committed.append(oracle.observe)
                stack.callback(colleague.close)
            store = TicketStore(self._connector("app", database)(), spec.fault, colleague)
            stack.callback(store.close)
            channel = self.service.mount(store)
            stack.callback(self._unmount, store)
            session: FrontEndSession = stack.enter_context(
                front.session(channel, request_of(spec, params))
            )
            self._episode_databases[id(session.env)] = database
            stack.callback(self._episode_databases.pop, id(session.env), None)

            def health() -> str | None:
                failure = session.health()
                if failure is None and colleague is not None:
                    failure = colleague.failure
                return failure

            yield Episode(
                env=session.env,
                oracle=oracle,
                env_fingerprint={
                    "env": "ticketing",
                    "substrate": task.substrate.value,
                    "fault": spec.fault.name,
                    "synthetic": True,
                    "provider": "ticketing",
                    "store": "postgresql",
                    "template_digest": TEMPLATE_DIGEST,
                    **front.describe(),
                },
                health=health,
            )

    def _unmount(self, store: TicketStore) -> None:
        if self.service.mounted is store:
            self.service.unmount()

    def worker_handoff(self) -> AuditHandoff | None:
        """Return this pack's audit for ``--workers`` processes (see :mod:`.attestation`).

        A worker rebuilds the pack by name, with the default oracle; a provider built around
        another oracle has nothing to hand over.
        """
        return handoff() if self._oracle_factory is PostgresOracle else None

    def attempt(self, env: Any, task: TaskSpec, params: Mapping[str, Any]) -> Screen:
        """The scripted steps the shipped baselines take (find, open, save or reassign)."""
        spec, substrate = self._defs[task.task_id]
        return self.front_end(substrate).attempt(env, spec, params)

    def red_team(self, task: TaskSpec) -> Mapping[str, Adversary | NotApplicable]:
        """The adversary moves of ``effectbench pack check``: the audit's probes written into
        the live episode's database over an administrator's connection of their own, a back
        door no agent is given (every write the app allows is a subset of these)."""
        return {name: self._adversary(name) for name in (*RED_TEAM, "write_then_revert")}

    def _adversary(self, name: str) -> Adversary:
        def move(env: Any, task: TaskSpec, params: Mapping[str, Any]) -> None:
            database = self._episode_databases[id(env)]
            effects = tuple(e.resolve(params) for e in task.expected_effect)
            with self.cluster.connect(self.cluster.admin, database) as conn:
                for write in red_team_writes(effects)[name]:
                    with conn.transaction():
                        # As the audit does: an administrator's write skips foreign keys.
                        conn.execute("SET LOCAL session_replication_role = replica")
                        write(conn)

        return move

    # -- lifecycle ---------------------------------------------------------------------

    def close(self) -> None:
        """Stop the service and the cluster, and remove the cluster's folder."""
        self._finalizer()

    def __enter__(self) -> TicketingProvider:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
