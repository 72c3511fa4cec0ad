"""The clinic pack as a :class:`~effectbench.seam.BenchmarkProvider`."""

from __future__ import annotations

import itertools
import multiprocessing.util
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from effectbench.changes import AllowedChange, Table, allowed_by_contract
from effectbench.effects import Effect
from effectbench.manifest import SEQUESTERED, manifest_of
from effectbench.packs.clinic.arms import EffectVerifiedAll
from effectbench.packs.clinic.attestation import AuditHandoff, audit_pack, handoff
from effectbench.packs.clinic.audit import RED_TEAM, OracleFactory, attacks, write_file
from effectbench.packs.clinic.db import (
    SURFACES,
    TEMPLATE_DIGEST,
    provision_copy,
    scratch_dir,
    template_path,
)
from effectbench.packs.clinic.frontends import FRONT_ENDS, FrontEnd, load, variant_id
from effectbench.packs.clinic.oracle import CHANNEL, SCHEMA, SqliteOracle, read_database
from effectbench.packs.clinic.service import RecordService
from effectbench.packs.clinic.store import MECHANISMS, ClinicStore, reachable_states
from effectbench.packs.clinic.tasks import (
    GOALS,
    TASKS,
    ClinicTask,
    effects_of,
    params_of,
    wiring_of,
)
from effectbench.reachability import Reachable
from effectbench.schema import OracleChannel, OracleSpec, Split, Substrate, TaskSpec
from effectbench.seam import Adversary, Episode, NotApplicable, Screen

NAME = "clinic"


def _task_spec(task: ClinicTask, audited: bool, substrate: Substrate) -> TaskSpec:
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


def _cleanup(service: RecordService, folder: Path) -> None:
    service.stop()
    shutil.rmtree(folder, ignore_errors=True)


class ClinicProvider:
    """The SQLite-backed clinic: a record service, a read-only oracle, 30 tasks per substrate.

    Each task exists once per front end (:mod:`.frontends`): ``clinic::NAME`` on
    ``api`` and ``clinic::NAME@web``; the manifest lists every variant (api
    first, in catalogue order, then web), so the fingerprint does not depend on
    which substrates a run chose.

    One record service runs per provider (per worker process); each episode
    mounts its own database file on it. With ``service_per_episode=True`` each
    episode starts and stops a service of its own instead (slower; kept to
    measure). :meth:`close` (or leaving the ``with`` block, or process exit)
    stops the service and removes the episode folder.
    """

    name = NAME
    channel = CHANNEL
    deterministic = True
    """Runs reproduce from (pack, seeds): the verifier may re-execute shipped baselines."""
    extra_baselines: Mapping[str, Callable[[Any], Any]] = {"effect_verified_all": EffectVerifiedAll}
    substrates: tuple[Substrate, ...] = tuple(FRONT_ENDS)
    """The substrates this pack offers (one task variant each)."""
    default_substrates: tuple[Substrate, ...] = (Substrate.API,)
    """What ``run`` uses when no ``--substrate`` is given."""

    def __init__(
        self,
        *,
        oracle_factory: OracleFactory = SqliteOracle,
        service_per_episode: bool = False,
    ) -> None:
        self.audit = audit_pack(oracle_factory)
        self._oracle_factory = oracle_factory
        self._defs: dict[str, tuple[ClinicTask, Substrate]] = {}
        tasks = []
        for substrate in self.substrates:
            for t in TASKS:
                spec = _task_spec(t, self.audit[t.task_id].passed, substrate)
                self._defs[spec.task_id] = (t, substrate)
                tasks.append(spec)
        self._tasks = tuple(tasks)
        self._front_ends: dict[Substrate, FrontEnd] = {}
        self._per_episode = service_per_episode
        self._initial: dict[str, Table] | None = None
        self._folder = scratch_dir("effectbench-clinic-")
        self.service = RecordService()
        self._counter = itertools.count()
        self._episode_files: dict[int, Path] = {}
        """The database file of each live episode, by its env's identity (the red team's)."""
        # multiprocessing's finalizer (not weakref's): it also runs when a pool worker
        # exits (which skips atexit), and never in a forked child for its parent's folder
        self._finalizer = multiprocessing.util.Finalize(
            self, _cleanup, args=(self.service, self._folder), exitpriority=1
        )

    # -- the provider seam -------------------------------------------------------------

    def tasks(self) -> Sequence[TaskSpec]:
        """Return every task variant in manifest order (per substrate: 27 dev, 3 test)."""
        return self._tasks

    def reachable(self, task: TaskSpec) -> Reachable:
        """Return what an honest episode of ``task`` can read, from its fault and contract.

        Every front end reaches the same faulty record service, so a task's variants
        share its table (:func:`effectbench.packs.clinic.store.reachable_states`).
        """
        inserts = bool(task.expected_effect) and task.expected_effect[0].count_new_only
        return Reachable(reachable_states(str(task.initial_state["fault"]), inserts=inserts))

    def mechanism(self, task: TaskSpec) -> str:
        """Return how ``task``'s fault is injected (sequestered for the test split)."""
        spec = self._defs[task.task_id][0]
        return SEQUESTERED if spec.split is Split.TEST else MECHANISMS[spec.fault.name]

    def initial_tables(self, task: TaskSpec, params: Mapping[str, Any]) -> dict[str, Table]:
        """Every table as a fresh episode holds it: the template's (the same for every task)."""
        if self._initial is None:
            snapshot = read_database(template_path())
            if snapshot is None:
                raise RuntimeError("the clinic's template database cannot be read")
            self._initial = {n: Table(key=s.key, rows=s.rows) for n, s in snapshot.items()}
        return dict(self._initial)

    def record_tables(self) -> tuple[str, ...]:
        """Every table the oracle reads: the three surfaces and the schema itself."""
        return tuple(sorted((*SURFACES, SCHEMA)))

    def allowed_changes(
        self, task: TaskSpec, params: Mapping[str, Any]
    ) -> tuple[AllowedChange, ...]:
        """What a trial may change: the rows its contract selects (the oracle's own audit rule)."""
        return allowed_by_contract([e.resolve(params) for e in task.expected_effect])

    def manifest(self) -> dict[str, Any]:
        """Return the public manifest: the interop layout plus the pack's redacted wiring."""
        manifest = manifest_of(NAME, self._tasks)
        manifest["system_of_record"] = {
            "engine": "sqlite",
            "surfaces": list(SURFACES),
            "template_digest": TEMPLATE_DIGEST,
            "oracle": "separate mode=ro connection; every table in sqlite_master; per-table delta",
        }
        manifest["payload_wiring"] = {
            tid: wiring_of(t) if t.split is not Split.TEST else SEQUESTERED
            for tid, (t, _) in self._defs.items()
        }
        return manifest

    def trial_params(self, task: TaskSpec, trial: int) -> dict[str, Any]:
        """Return the trial-unique payload and referral of ``task`` for trial ``trial``."""
        return params_of(self._defs[task.task_id][0], trial)

    def front_end(self, substrate: Substrate) -> FrontEnd:
        """Return the front end of ``substrate`` (imported on first use)."""
        if substrate not in self._front_ends:
            self._front_ends[substrate] = load(substrate)
        return self._front_ends[substrate]

    def _service_for_episode(self) -> RecordService:
        if self._per_episode:
            return RecordService().start()
        if not self.service.alive():
            self.service.start()
        return self.service

    @contextmanager
    def provision(self, task: TaskSpec, trial: int, params: Mapping[str, Any]) -> Iterator[Episode]:
        """Copy the template to a fresh file, mount it, open the variant's front end.

        A front end that cannot start (a browser that fails its health check)
        raises :class:`~effectbench.errors.InfrastructureError`; one that fails
        during the episode says so through the episode's ``health``.
        """
        spec, substrate = self._defs[task.task_id]
        front = self.front_end(substrate)
        path = provision_copy(self._folder / f"episode-{next(self._counter)}.sqlite")
        service = self._service_for_episode()
        store = ClinicStore(path, spec.fault)
        channel = service.mount(store)
        referral = {
            "patient_name": params["patient_name"],
            "dob": params["dob"],
            "mrn": params["mrn"],
            "type": params["type"],
        }
        if "encounter_id" in params:
            referral["encounter_id"] = params["encounter_id"]
        effects: tuple[Effect, ...] = tuple(e.resolve(params) for e in task.expected_effect)
        oracle = self._oracle_factory(path, effects, service.alive)
        try:
            with front.session(channel, referral) as session:
                self._episode_files[id(session.env)] = path
                yield Episode(
                    env=session.env,
                    oracle=oracle,  # type: ignore[arg-type]
                    env_fingerprint={
                        "env": "clinic",
                        "substrate": task.substrate.value,
                        "fault": spec.fault.name,
                        "synthetic": True,
                        "provider": "clinic",
                        "store": "sqlite",
                        "template_digest": TEMPLATE_DIGEST,
                        **front.describe(),
                    },
                    health=session.health,
                )
        finally:
            self._episode_files = {k: v for k, v in self._episode_files.items() if v != path}
            if service.mounted is store:
                service.unmount()
            store.close()
            if self._per_episode:
                service.stop()
            for leftover in (path, path.with_name(path.name + "-journal")):
                leftover.unlink(missing_ok=True)

    def worker_handoff(self) -> AuditHandoff | None:
        """Return this pack's audit for ``--workers`` processes (see :mod:`.attestation`).

        A worker rebuilds the pack by name, with the default oracle; a provider
        built around another oracle has nothing to hand over.
        """
        return handoff() if self._oracle_factory is SqliteOracle else None

    def attempt(self, env: Any, task: TaskSpec, params: Mapping[str, Any]) -> Screen:
        """The scripted steps the shipped baselines take (find, open, save or edit)."""
        spec, substrate = self._defs[task.task_id]
        return self.front_end(substrate).attempt(env, spec, params)

    def red_team(self, task: TaskSpec) -> Mapping[str, Adversary | NotApplicable]:
        """The adversary moves of ``effectbench pack check``: the audit's probes (:mod:`.audit`),
        written into the live episode's database over a connection of their own, a back
        door no agent is given (every move the app allows is a subset of these writes)."""
        return {name: self._adversary(probe) for name, probe in RED_TEAM.items()}

    def _adversary(self, probe: str) -> Adversary:
        def move(env: Any, task: TaskSpec, params: Mapping[str, Any]) -> None:
            path = self._episode_files[id(env)]
            effects = tuple(e.resolve(params) for e in task.expected_effect)
            for write in attacks(effects, params)[probe].writes:
                write_file(path, write)

        return move

    # -- lifecycle ---------------------------------------------------------------------

    def close(self) -> None:
        """Stop the record service and remove this provider's episode files."""
        self._finalizer()

    def __enter__(self) -> ClinicProvider:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
