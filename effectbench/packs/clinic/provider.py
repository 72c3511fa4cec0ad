"""The clinic pack: the kit's :class:`~effectbench.kit.sqlite.SqlitePack` and its domain."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from effectbench.episode_http import RecordService
from effectbench.kit.sqlite import SqlitePack
from effectbench.packs.clinic.attestation import ATTESTATION
from effectbench.packs.clinic.audit import PLAN
from effectbench.packs.clinic.db import SURFACES, TEMPLATE, TEMPLATE_DIGEST
from effectbench.packs.clinic.frontends import FRONT_ENDS
from effectbench.packs.clinic.oracle import SqliteOracle
from effectbench.packs.clinic.service import ClinicService
from effectbench.packs.clinic.store import CATALOGUE, ClinicStore
from effectbench.packs.clinic.tasks import TASKS, ClinicTask

NAME = "clinic"


class ClinicProvider(SqlitePack):
    """The SQLite-backed clinic: a record service, a read-only oracle, 30 tasks per substrate.

    Each task exists once per front end (:mod:`.frontends`): ``clinic::NAME`` on ``api``,
    ``clinic::NAME@web``, ...; the manifest lists every variant (api first, in catalogue
    order), so the fingerprint does not depend on which substrates a run chose.

    One record service runs per provider (per worker process); each episode mounts its own
    database file on it. With ``service_per_episode=True`` each episode starts and stops a
    service of its own instead (slower; kept to measure). :meth:`close` (or leaving the
    ``with`` block, or process exit) stops the service and removes the episode folder.
    """

    name = NAME
    front_ends = FRONT_ENDS
    faults = CATALOGUE
    plan = PLAN
    attestation = ATTESTATION
    template = TEMPLATE
    surfaces = SURFACES
    template_digest = TEMPLATE_DIGEST

    def __init__(
        self, *, oracle_factory: Any = SqliteOracle, service_per_episode: bool = False
    ) -> None:
        super().__init__(oracle_factory)
        self._per_episode = service_per_episode

    # -- the clinic's part ------------------------------------------------------------------

    def new_service(self) -> RecordService[Any]:
        """The clinic's record service (started by the first episode)."""
        return ClinicService()

    def definitions(self) -> Sequence[ClinicTask]:
        """The task catalogue (27 dev, 3 sequestered)."""
        return TASKS

    def store(self, definition: ClinicTask, path: Path) -> ClinicStore:
        """The app's state for one episode: its file and its task's fault."""
        return ClinicStore(path, definition.fault)

    @contextmanager
    def serve(self) -> Iterator[RecordService[Any]]:
        """The shared service, or (``service_per_episode``) one of the episode's own."""
        if not self._per_episode:
            with super().serve() as service:
                yield service
            return
        service = ClinicService().start()
        try:
            yield service
        finally:
            service.stop()

    def __enter__(self) -> ClinicProvider:
        return self
