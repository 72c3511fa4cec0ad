"""The clinic pack as a :class:`~effectbench.seam.BenchmarkProvider`."""

from __future__ import annotations

import itertools
import shutil
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from effectbench.effects import Effect
from effectbench.manifest import SEQUESTERED, manifest_of
from effectbench.packs.clinic.arms import EffectVerifiedAll
from effectbench.packs.clinic.attestation import AuditHandoff, audit_pack, handoff
from effectbench.packs.clinic.audit import OracleFactory
from effectbench.packs.clinic.db import SURFACES, TEMPLATE_DIGEST, provision_copy, scratch_dir
from effectbench.packs.clinic.env import ClinicEnv
from effectbench.packs.clinic.oracle import CHANNEL, SqliteOracle
from effectbench.packs.clinic.service import RecordService
from effectbench.packs.clinic.store import ClinicStore
from effectbench.packs.clinic.tasks import (
    GOALS,
    TASKS,
    ClinicTask,
    attempt,
    effects_of,
    params_of,
    wiring_of,
)
from effectbench.schema import OracleChannel, OracleSpec, Split, Substrate, TaskSpec
from effectbench.seam import Episode, Screen

NAME = "clinic"


def _task_spec(task: ClinicTask, audited: bool) -> TaskSpec:
    return TaskSpec(
        task_id=task.task_id,
        title=task.title,
        category=task.category,
        substrate=Substrate.WEB,
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
    """The SQLite-backed clinic: a record service, a read-only oracle, 30 tasks.

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

    def __init__(
        self,
        *,
        oracle_factory: OracleFactory = SqliteOracle,
        service_per_episode: bool = False,
    ) -> None:
        self.audit = audit_pack(oracle_factory)
        self._oracle_factory = oracle_factory
        self._defs = {t.task_id: t for t in TASKS}
        self._tasks = tuple(_task_spec(t, self.audit[t.task_id].passed) for t in TASKS)
        self._per_episode = service_per_episode
        self._folder = scratch_dir("effectbench-clinic-")
        self.service = RecordService()
        self._counter = itertools.count()
        self._finalizer = weakref.finalize(self, _cleanup, self.service, self._folder)

    # -- the provider seam -------------------------------------------------------------

    def tasks(self) -> Sequence[TaskSpec]:
        """Return the 30 tasks in manifest order (27 dev, 3 sequestered test)."""
        return self._tasks

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
            t.task_id: wiring_of(t) if t.split is not Split.TEST else SEQUESTERED for t in TASKS
        }
        return manifest

    def trial_params(self, task: TaskSpec, trial: int) -> dict[str, Any]:
        """Return the trial-unique payload and referral of ``task`` for trial ``trial``."""
        return params_of(self._defs[task.task_id], trial)

    def _service_for_episode(self) -> RecordService:
        if self._per_episode:
            return RecordService().start()
        if not self.service.alive():
            self.service.start()
        return self.service

    @contextmanager
    def provision(self, task: TaskSpec, trial: int, params: Mapping[str, Any]) -> Iterator[Episode]:
        """Copy the template to a fresh file, mount it on the service, yield env and oracle."""
        spec = self._defs[task.task_id]
        path = provision_copy(self._folder / f"episode-{next(self._counter)}.sqlite")
        service = self._service_for_episode()
        store = ClinicStore(path, spec.fault)
        service.mount(store)
        referral = {
            "patient_name": params["patient_name"],
            "dob": params["dob"],
            "mrn": params["mrn"],
            "type": params["type"],
        }
        if "encounter_id" in params:
            referral["encounter_id"] = params["encounter_id"]
        env = ClinicEnv(service.port, referral)
        effects: tuple[Effect, ...] = tuple(e.resolve(params) for e in task.expected_effect)
        oracle = self._oracle_factory(path, effects, service.alive)
        try:
            yield Episode(
                env=env,
                oracle=oracle,  # type: ignore[arg-type]
                env_fingerprint={
                    "env": "clinic",
                    "substrate": task.substrate.value,
                    "fault": spec.fault.name,
                    "synthetic": True,
                    "provider": "clinic",
                    "store": "sqlite",
                    "template_digest": TEMPLATE_DIGEST,
                },
            )
        finally:
            env.close()
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
        return attempt(env, self._defs[task.task_id], params)

    # -- lifecycle ---------------------------------------------------------------------

    def close(self) -> None:
        """Stop the record service and remove this provider's episode files."""
        self._finalizer()

    def __enter__(self) -> ClinicProvider:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
