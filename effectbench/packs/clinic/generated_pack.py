"""The ``clinic-generated`` pack: the clinic's app, faults and oracle over generated tasks.

The clinic pack (:mod:`.provider`) keeps its 30 written tasks (its fingerprint, and so the
shipped reference bundles, stay as they are); this pack serves the generated catalogue
(:mod:`.generated`) on the same service, front ends, faults, audit plan and oracle. What differs
is the record: each generated task has a world of its own (:class:`~.generated.World`), so an
episode starts from a copy of *its task's* seed file (built once per process, on first use), the
adversarial audit probes each task on its own world, and a task's ``initial_state`` names its
world's digest. Switching the clinic board to the generated catalogue later is: make these
definitions the clinic's, and re-make the references.

The public manifest lists the dev split; the sequestered split (present only with the secret in
``EFFECTBENCH_SEQUESTERED_SECRET``) is committed to by its digest and size alone
(``generation`` in the manifest says which).
"""

from __future__ import annotations

import shutil
import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from effectbench.changes import Table
from effectbench.hashing import canonical_hash
from effectbench.kit.audit import Attestation, AuditResult, iter_tasks
from effectbench.kit.audit import run_audit as run_probes
from effectbench.kit.catalogue import SCREEN_SAMPLE, GeneratedCatalogue, screen_sample
from effectbench.kit.frontends import FrontEnds
from effectbench.kit.sqlite import (
    FileBench,
    SqliteOracle,
    Template,
    process_scratch_dir,
    read_database,
    scratch_dir,
)
from effectbench.packs.clinic import db
from effectbench.packs.clinic.audit import PLAN
from effectbench.packs.clinic.frontends import FRONT_ENDS as CLINIC_FRONT_ENDS
from effectbench.packs.clinic.generated import (
    CATALOGUE,
    DEV_SEED,
    GENERATOR_VERSION,
    NAME,
    GeneratedTask,
    World,
)
from effectbench.packs.clinic.provider import ClinicProvider
from effectbench.schema import TaskSpec

__all__ = [
    "ATTESTATION",
    "SCREEN_SAMPLE",
    "GeneratedClinicProvider",
    "WorldTemplate",
    "screen_sample",
]

FRONT_ENDS = FrontEnds(NAME, CLINIC_FRONT_ENDS.entries)
"""The clinic's front ends, under this pack's name (its variant ids)."""

ATTESTATION = Attestation(
    f"{__name__}:ATTESTATION",
    (
        "effectbench.kit.sqlite",
        "effectbench.kit.generate",
        "effectbench.kit.catalogue",
        "effectbench.packs.clinic.audit",
        "effectbench.packs.clinic.db",
        "effectbench.packs.clinic.store",
        "effectbench.packs.clinic.tasks",
        "effectbench.packs.clinic.generated",
        __name__,
    ),
    SqliteOracle,
)
"""The generated pack's audit, per oracle factory, and its handoff to worker processes."""

TEMPLATE_DIGEST = canonical_hash(
    {"clinic": db.TEMPLATE_DIGEST, "generator": GENERATOR_VERSION, "dev_seed": DEV_SEED}
)
"""The pack's seed identity: the clinic's seed rows, the generator's version and the dev seed
(each task's own world digest is in its ``initial_state``)."""


class _Folder:
    """This process's folder of world files, made on first use and removed at exit."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._path: Path | None = None

    def get(self) -> Path:
        with self._lock:
            if self._path is None or not self._path.exists():
                self._path = process_scratch_dir("effectbench-clinicgen-worlds-")
            return self._path


_FOLDER = _Folder()


class WorldTemplate(Template):
    """One task's seed file: the clinic's schema and seed rows, then the task's world."""

    def __init__(self, world: World) -> None:
        super().__init__("clinicgen", self._fill)
        self.world = world

    def _fill(self, conn: sqlite3.Connection) -> None:
        seed = self.world.seed()
        conn.executescript(db.SCHEMA)
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO patients VALUES (?, ?, ?, ?, ?)", seed["patients"])
        conn.executemany("INSERT INTO encounters VALUES (?, ?, ?, ?, ?, ?)", seed["encounters"])
        conn.executemany("INSERT INTO billing VALUES (?, ?, ?, ?, ?, ?)", seed["billing"])
        conn.execute("COMMIT")

    def path(self) -> Path:
        """Return this process's file of the world, building it on first use."""
        with self._lock:
            path = _FOLDER.get() / f"{self.world.digest.removeprefix('sha256:')[:24]}.sqlite"
            if self._path != path or not path.exists():
                partial = path.with_suffix(".part")
                partial.unlink(missing_ok=True)
                conn = sqlite3.connect(partial, isolation_level=None)
                try:
                    self._fill(conn)
                finally:
                    conn.close()
                partial.replace(path)
                self._path = path
            return path


_WORLDS: dict[str, WorldTemplate] = {}
_WORLDS_LOCK = threading.Lock()


def world_template(task: GeneratedTask) -> WorldTemplate:
    """Return the seed file of ``task``'s world (one per world and process)."""
    with _WORLDS_LOCK:
        key = task.world.digest
        if key not in _WORLDS:
            _WORLDS[key] = WorldTemplate(task.world)
        return _WORLDS[key]


def _probe(
    definitions: Sequence[GeneratedTask], oracle_factory: Callable[..., Any]
) -> dict[str, AuditResult]:
    folder = scratch_dir("effectbench-clinicgen-audit-")
    try:
        results: dict[str, AuditResult] = {}
        for d in definitions:
            bench = FileBench(world_template(d), folder, oracle_factory)
            results |= run_probes(bench, PLAN, list(iter_tasks([d])))
        return results
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def audit_generated(
    definitions: Sequence[GeneratedTask], oracle_factory: Callable[..., Any]
) -> dict[str, AuditResult]:
    """Return the live adversarial audit of ``oracle_factory``: every task probed on copies of
    its own world, once per process and oracle (:data:`ATTESTATION` keeps it; a task not yet
    audited, as the sequestered split's once its secret is set, is audited then)."""
    return ATTESTATION.results(
        oracle_factory, definitions, lambda tasks: _probe(tasks, oracle_factory)
    )


class GeneratedClinicProvider(GeneratedCatalogue, ClinicProvider):
    """The clinic's app over the generated catalogue (see the module's docstring)."""

    name = NAME
    front_ends = FRONT_ENDS
    attestation = ATTESTATION
    template_digest = TEMPLATE_DIGEST
    catalogue = CATALOGUE

    def __init__(
        self,
        *,
        oracle_factory: Any = SqliteOracle,
        service_per_episode: bool = False,
        seed: str | None = None,
    ) -> None:
        """``seed``: the submission seed of the fresh instance to serve (default: the public
        dev seed; :class:`~effectbench.kit.catalogue.GeneratedCatalogue`)."""
        super().__init__(
            oracle_factory=oracle_factory, service_per_episode=service_per_episode, seed=seed
        )
        self._initial_by_world: dict[str, dict[str, Table]] = {}

    def run_audit(self, oracle_factory: Any) -> dict[str, AuditResult]:
        """The live adversarial audit, each task on its own world (once per process)."""
        return audit_generated(self.definitions(), oracle_factory)

    def initial_tables(self, task: TaskSpec, params: Mapping[str, Any]) -> dict[str, Table]:
        """Every table as a fresh episode of ``task`` holds it: its world's."""
        world = world_template(self.definition(task))
        if world.world.digest not in self._initial_by_world:
            reading = read_database(world.path())
            if reading is None:
                raise RuntimeError(f"the world of {task.task_id} cannot be read")
            self._initial_by_world[world.world.digest] = reading
        return dict(self._initial_by_world[world.world.digest])

    def episode_template(self, definition: Any) -> Template:
        """An episode starts from a copy of its task's world."""
        return world_template(definition)
