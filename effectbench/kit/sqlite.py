"""The pack kit's SQLite system of record: a template file, copies per episode, a read-only read.

* :class:`Template` builds a pack's seed database once per process (from its schema and
  seed rows) and copies it to a fresh file per episode, so a copy is the initial state of any
  trial; the files live in a private scratch folder, RAM-backed ``/dev/shm`` where it is
  writable (:func:`scratch_dir`), and a folder left by a killed process is removed by the next
  one that makes one (:func:`sweep_scratch`).
* :func:`read_database` is the oracle's read path: its own ``mode=ro`` connection to the file
  (never the app's), one read transaction over the schema (``sqlite_master``: every table,
  index, view and trigger) and every table it lists, each keyed by its primary key (several
  columns for a composite key) or its rowid. A table the app never serves is read all the
  same.
* :func:`attack_file` is the attacker's write (the adversarial audit's, the red team's): one
  transaction over a read-write connection of its own, bypassing the app; :func:`audit_bench`
  is the audit's copy of the record (:class:`~effectbench.kit.audit.Bench`): the template
  copied to a fresh file before every probe.

:class:`SqlitePack` is the kit's provider on such a record: a pack states its template, its
app's store over an episode's file and its domain, and each episode is a fresh copy judged by
:class:`SqliteOracle` (its files kept in :class:`EpisodeFiles`, one folder per provider). A
pack serving a generated catalogue, whose tasks each have a world of their own, adds
:class:`SqliteWorlds`: each episode copies its task's world file (:class:`WorldTemplate`,
written by :func:`seed_database` from the world's seed state) and the audit probes each task
on its own world.
"""

from __future__ import annotations

import itertools
import multiprocessing.util
import os
import re
import shutil
import sqlite3
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

from effectbench.changes import AllowedChange, Table, allowed_by_contract
from effectbench.effects import Effect
from effectbench.kit.audit import Attestation, AuditPlan, AuditResult, Db, Write, iter_tasks
from effectbench.kit.audit import run_audit as run_probes
from effectbench.kit.provider import Record, RecordPack
from effectbench.kit.tables import TableOracle
from effectbench.schema import TaskSpec

__all__ = [
    "SCHEMA",
    "SCRATCH_ENV",
    "EpisodeFiles",
    "FileBench",
    "SqliteOracle",
    "SqlitePack",
    "SqliteWorlds",
    "Template",
    "World",
    "WorldTemplate",
    "attack_file",
    "audit",
    "audit_bench",
    "read_database",
    "scratch_base",
    "scratch_dir",
    "seed_database",
    "sweep_scratch",
    "world_template",
    "write_file",
]

SCHEMA = "sqlite_master"
"""The reading's entry for the schema itself (every table, index, view and trigger)."""
READ_TIMEOUT_S = 0.05
"""How long the oracle waits on a locked file before it calls the reading unreadable."""
SHM = Path("/dev/shm")
"""RAM-backed storage for the database files, used where it is writable."""
SCRATCH_ENV = "EFFECTBENCH_SCRATCH_DIR"
"""Names another folder for the database files (a test's, or a disk with more room)."""
SCRATCH_NAME = re.compile(r"effectbench-[a-z]+-[a-z-]*?pid(\d+)-[a-z0-9_]{8}")
"""The name of a scratch folder: its prefix, the pid of the process that made it, a suffix."""


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _read_table(conn: sqlite3.Connection, name: str) -> Table:
    pks = sorted((r[5], str(r[1])) for r in conn.execute(f"PRAGMA table_info({_quoted(name)})"))
    key = tuple(col for order, col in pks if order)
    # A table without a declared primary key is keyed by its rowid.
    select = "SELECT *" if key else "SELECT rowid AS rowid, *"
    cur = conn.execute(f"{select} FROM {_quoted(name)}")
    cols = [d[0] for d in cur.description]
    rows = tuple(dict(zip(cols, row, strict=True)) for row in cur.fetchall())
    return Table(key=key or ("rowid",), rows=rows)


def read_database(path: Path) -> dict[str, Table] | None:
    """Read the schema and every table through a fresh ``mode=ro`` connection.

    Returns ``None`` when the file is missing, locked or otherwise unreadable.
    """
    if not path.exists():
        return None
    uri = f"file:{quote(str(path))}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=READ_TIMEOUT_S, isolation_level=None)
    except sqlite3.Error:
        return None
    try:
        conn.execute("BEGIN")
        # The logical schema; rootpage is where a table sits in the file, not what it holds.
        cur = conn.execute(f"SELECT type, name, tbl_name, sql FROM {SCHEMA}")
        schema = tuple(dict(zip(("type", "name", "tbl_name", "sql"), r, strict=True)) for r in cur)
        reading = {SCHEMA: Table(key=("type", "name"), rows=schema)}
        for row in schema:
            name = str(row["name"])
            # SQLite's own tables (sqlite_sequence, sqlite_stat*) follow from other writes.
            if row["type"] == "table" and not name.startswith("sqlite_"):
                reading[name] = _read_table(conn, name)
        conn.execute("COMMIT")
        return reading
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def write_file(path: Path, write: Callable[[sqlite3.Connection], None]) -> None:
    """Commit ``write`` into the database file at ``path`` over a connection of its own."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA synchronous = OFF")  # the attacker's writes need no durability
        conn.execute("BEGIN IMMEDIATE")
        write(conn)
        conn.execute("COMMIT")
    finally:
        conn.close()


# -- scratch folders -------------------------------------------------------------------------


def scratch_base() -> Path:
    """Return the folder scratch folders are made in (``$EFFECTBENCH_SCRATCH_DIR``, else
    ``/dev/shm`` where writable, else the system's temporary folder)."""
    chosen = os.environ.get(SCRATCH_ENV)
    if chosen:
        return Path(chosen)
    return SHM if SHM.is_dir() and os.access(SHM, os.W_OK) else Path(tempfile.gettempdir())


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive, and not ours to judge
        return True
    return True


def sweep_scratch(base: Path) -> list[Path]:
    """Remove the scratch folders in ``base`` that a process killed before its cleanup
    left: this user's, named after a process that no longer runs. Return them."""
    removed: list[Path] = []
    uid = os.getuid()
    try:
        entries = list(os.scandir(base))
    except OSError:
        return removed
    for entry in entries:
        found = SCRATCH_NAME.fullmatch(entry.name)
        try:  # its owner (or another sweep) may remove it while we look
            if found is None or not entry.is_dir(follow_symlinks=False):
                continue
            owner = entry.stat(follow_symlinks=False).st_uid
        except OSError:
            continue
        if owner != uid or _alive(int(found.group(1))):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed.append(Path(entry.path))
    return removed


def scratch_dir(prefix: str) -> Path:
    """Make a private folder for database files (``prefix``: ``effectbench-PACK-...``).

    Episode files are throwaway copies; keeping them off the disk removes the fsync of every
    commit from the episode's time. The process that made a folder removes it (see the
    callers); the folders of a process killed before it could are removed by the next process
    that makes one (:func:`sweep_scratch`), so none piles up.
    """
    base = scratch_base()
    sweep_scratch(base)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}pid{os.getpid()}-", dir=base))


def process_scratch_dir(prefix: str) -> Path:
    """Make a :func:`scratch_dir` that this process removes when it exits (at interpreter exit
    and at a multiprocessing worker's exit alike)."""
    folder = scratch_dir(prefix)
    multiprocessing.util.Finalize(
        None, shutil.rmtree, args=(folder,), kwargs={"ignore_errors": True}, exitpriority=1
    )
    return folder


def attack_file(path: Path, write: Write) -> None:
    """Commit an attacker's ``write`` into the database file at ``path`` (a back door)."""
    write_file(path, lambda conn: write(Db(conn)))


class Template:
    """A pack's seed database, built once per process by ``build`` and copied per episode."""

    def __init__(self, pack: str, build: Callable[[sqlite3.Connection], None]) -> None:
        self.pack = pack
        self._build = build
        self._lock = threading.Lock()
        self._path: Path | None = None

    def path(self) -> Path:
        """Return this process's template file, building it on first use."""
        with self._lock:
            if self._path is None or not self._path.exists():
                folder = process_scratch_dir(f"effectbench-{self.pack}-template-")
                path = folder / "template.sqlite"
                conn = sqlite3.connect(path, isolation_level=None)
                try:
                    self._build(conn)
                finally:
                    conn.close()
                self._path = path
            return self._path

    def copy(self, dest: Path) -> Path:
        """Copy the template to ``dest`` (a fresh database file) and return ``dest``."""
        shutil.copyfile(self.path(), dest)
        return dest


class EpisodeFiles:
    """A provider's episode files: a scratch folder of its own, a fresh copy per episode."""

    def __init__(self, template: Template) -> None:
        self._template = template
        self.folder = scratch_dir(f"effectbench-{template.pack}-")
        self._counter = itertools.count()

    @contextmanager
    def episode(self, template: Template | None = None) -> Iterator[Path]:
        """Yield a fresh copy of ``template`` (default: the provider's); remove it (and its
        journal) afterwards."""
        source = template or self._template
        path = source.copy(self.folder / f"episode-{next(self._counter)}.sqlite")
        try:
            yield path
        finally:
            for leftover in (path, path.with_name(path.name + "-journal")):
                leftover.unlink(missing_ok=True)

    def remove(self) -> None:
        """Remove the folder and every file left in it."""
        shutil.rmtree(self.folder, ignore_errors=True)


@dataclass
class _Probing:
    oracle: Any
    path: Path
    template: Template

    def reset(self) -> None:
        self.template.copy(self.path)

    def write(self, write: Write) -> None:
        attack_file(self.path, write)


class FileBench:
    """The audit's copy of a pack's record: one file, put back to the template per probe.

    ``oracle_factory(path, effects, alive)`` is the pack's oracle over a database file.
    """

    errors: tuple[type[Exception], ...] = (sqlite3.Error,)

    def __init__(
        self, template: Template, folder: Path, oracle_factory: Callable[..., Any]
    ) -> None:
        self._template = template
        self._path = folder / "audit.sqlite"
        self._factory = oracle_factory

    @contextmanager
    def task(self, effects: Sequence[Effect]) -> Iterator[_Probing]:
        """One task's probing: the oracle of ``effects`` over the audit's file."""
        oracle = self._factory(self._path, effects, lambda: True)
        try:
            yield _Probing(oracle, self._path, self._template)
        finally:
            self._path.unlink(missing_ok=True)


@contextmanager
def audit_bench(template: Template, oracle_factory: Callable[..., Any]) -> Iterator[FileBench]:
    """A :class:`FileBench` in a scratch folder of its own, removed after the audit."""
    folder = scratch_dir(f"effectbench-{template.pack}-audit-")
    try:
        yield FileBench(template, folder, oracle_factory)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def audit(
    attestation: Attestation,
    template: Template,
    plan: AuditPlan,
    definitions: Sequence[Any],
    oracle_factory: Callable[..., Any],
) -> dict[str, AuditResult]:
    """Return the live adversarial audit of ``oracle_factory`` over ``definitions`` on copies
    of ``template`` (run once per process; ``attestation`` keeps it)."""

    def run(tasks: Sequence[Any]) -> dict[str, AuditResult]:
        with audit_bench(template, oracle_factory) as bench:
            return run_probes(bench, plan, list(iter_tasks(tasks)))

    return attestation.results(oracle_factory, definitions, run)


class SqliteOracle(TableOracle):
    """The harness's oracle for one episode: the file, read-only, and the service's liveness."""

    def __init__(self, path: Path, effects: Sequence[Effect], alive: Callable[[], bool]) -> None:
        super().__init__(
            lambda: read_database(path), effects, alive, schema=SCHEMA, down="record service down"
        )


class SqlitePack(RecordPack):
    """A kit-built pack on an SQLite record: a fresh copy of :attr:`template` per episode.

    A subclass states :attr:`template` and :meth:`store` (the app's state over an episode's
    file, with a ``close()``) beside what every :class:`RecordPack` states. The record being a
    copy of the template, the pack also declares its tables, the changes each task allows (its
    contract's, :func:`~effectbench.changes.allowed_by_contract`) and the initial state (the
    template's reading), so every receipt's change set is held to them.
    """

    template: Template
    default_oracle = SqliteOracle
    engine = "sqlite"
    oracle_note = "separate mode=ro connection; every table in sqlite_master; per-table delta"

    def __init__(self, oracle_factory: Any = None) -> None:
        super().__init__(oracle_factory)
        self.files = EpisodeFiles(self.template)
        self.closing(self.service.stop, self.files.remove)
        self._initial: dict[str, Table] | None = None

    def initial_tables(self, task: TaskSpec, params: Mapping[str, Any]) -> dict[str, Table]:
        """Every table as a fresh episode holds it: the template's (the same for every task)."""
        if self._initial is None:
            reading = read_database(self.template.path())
            if reading is None:
                raise RuntimeError(f"the {self.name} pack's template database cannot be read")
            self._initial = reading
        return dict(self._initial)

    def record_tables(self) -> tuple[str, ...]:
        """Every table the oracle reads: the template's tables and the schema itself."""
        return tuple(sorted(self.initial_tables(self._tasks[0], {})))

    def allowed_changes(
        self, task: TaskSpec, params: Mapping[str, Any]
    ) -> tuple[AllowedChange, ...]:
        """What a trial may change: the rows its contract selects (the oracle's own audit rule)."""
        return allowed_by_contract([e.resolve(params) for e in task.expected_effect])

    def store(self, definition: Any, path: Path) -> Any:
        """Return the app's state for one episode over its database file at ``path``."""
        raise NotImplementedError

    def run_audit(self, oracle_factory: Any) -> dict[str, AuditResult]:
        """The live adversarial audit of ``oracle_factory`` (once per process)."""
        return audit(self.attestation, self.template, self.plan, self.definitions(), oracle_factory)

    def episode_template(self, definition: Any) -> Template:
        """The database an episode of ``definition`` starts from (a pack whose tasks each have
        a world of their own returns that)."""
        return self.template

    @contextmanager
    def record(
        self,
        definition: Any,
        params: Mapping[str, Any],
        effects: tuple[Effect, ...],
        alive: Callable[[], bool],
    ) -> Iterator[Record]:
        """Copy the episode's template to a fresh file; the store and the oracle both hold its
        path."""
        with self.files.episode(self.episode_template(definition)) as path:
            store = self.store(definition, path)
            try:
                yield Record(
                    store=store,
                    oracle=self._oracle_factory(path, effects, alive),
                    attack=lambda write: attack_file(path, write),
                )
            finally:
                store.close()


def seed_database(conn: sqlite3.Connection, seed: Mapping[str, Any]) -> None:
    """Write a seed state into an empty database: ``seed["schema"]`` (a script), then every
    other entry's rows into the table it names, in order, in one transaction."""
    conn.executescript(seed["schema"])
    conn.execute("BEGIN")
    for table, rows in seed.items():
        if table != "schema" and rows:
            marks = ", ".join("?" * len(rows[0]))
            conn.executemany(f"INSERT INTO {_quoted(table)} VALUES ({marks})", rows)
    conn.execute("COMMIT")


class World(Protocol):
    """A generated task's own record (:mod:`.catalogue`): its seed state and its identity."""

    @property
    def digest(self) -> str:
        """The identity of the world's seed state."""
        ...

    def seed(self) -> Mapping[str, Any]:
        """The whole seed state: the schema, then every table's rows (:func:`seed_database`)."""
        ...


class WorldTemplate(Template):
    """One task's seed file: its world's seed state (:class:`World`), built once per process
    in a folder of world files of its own and copied per episode."""

    def __init__(self, world: World) -> None:
        super().__init__("worlds", lambda conn: seed_database(conn, world.seed()))
        self.world = world

    def path(self) -> Path:
        """Return this process's file of the world, building it on first use."""
        with self._lock:
            path = _WORLD_FOLDER.get() / f"{self.world.digest.removeprefix('sha256:')[:24]}.sqlite"
            if self._path != path or not path.exists():
                partial = path.with_suffix(".part")
                partial.unlink(missing_ok=True)
                conn = sqlite3.connect(partial, isolation_level=None)
                try:
                    self._build(conn)
                finally:
                    conn.close()
                partial.replace(path)
                self._path = path
            return path


class _WorldFolder:
    """This process's folder of world files, made on first use and removed at exit."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._path: Path | None = None

    def get(self) -> Path:
        with self._lock:
            if self._path is None or not self._path.exists():
                self._path = process_scratch_dir("effectbench-worlds-")
            return self._path


_WORLD_FOLDER = _WorldFolder()
_WORLDS: dict[str, WorldTemplate] = {}
_WORLDS_LOCK = threading.Lock()


def world_template(definition: Any) -> WorldTemplate:
    """Return the seed file of ``definition``'s world (one per world and process)."""
    with _WORLDS_LOCK:
        key = definition.world.digest
        if key not in _WORLDS:
            _WORLDS[key] = WorldTemplate(definition.world)
        return _WORLDS[key]


class SqliteWorlds:
    """What an :class:`SqlitePack` whose generated tasks each have a world of their own
    (:class:`World`, as ``definition.world``) does otherwise (a mixin, listed before the pack):
    an episode starts from a copy of *its task's* world file, the initial state is that
    world's, and the adversarial audit probes each task on copies of its own world."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._initial_by_world: dict[str, dict[str, Table]] = {}
        super().__init__(*args, **kwargs)

    def run_audit(self, oracle_factory: Any) -> dict[str, AuditResult]:
        """The live adversarial audit, each task on its own world (once per process and
        oracle; a task not yet audited, as the sequestered split's once its secret is set, is
        audited then)."""
        pack: Any = self
        return pack.attestation.results(  # type: ignore[no-any-return]
            oracle_factory, pack.definitions(), lambda tasks: self._probe(tasks, oracle_factory)
        )

    def _probe(
        self, definitions: Sequence[Any], oracle_factory: Callable[..., Any]
    ) -> dict[str, AuditResult]:
        folder = scratch_dir("effectbench-worlds-audit-")
        try:
            results: dict[str, AuditResult] = {}
            for d in definitions:
                bench = FileBench(world_template(d), folder, oracle_factory)
                results |= run_probes(bench, self.plan, list(iter_tasks([d])))  # type: ignore[attr-defined]
            return results
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def initial_tables(self, task: TaskSpec, params: Mapping[str, Any]) -> dict[str, Table]:
        """Every table as a fresh episode of ``task`` holds it: its world's."""
        world = world_template(self.definition(task))  # type: ignore[attr-defined]
        if world.world.digest not in self._initial_by_world:
            reading = read_database(world.path())
            if reading is None:
                raise RuntimeError(f"the world of {task.task_id} cannot be read")
            self._initial_by_world[world.world.digest] = reading
        return dict(self._initial_by_world[world.world.digest])

    def episode_template(self, definition: Any) -> Template:
        """An episode starts from a copy of its task's world."""
        return world_template(definition)
