"""A private PostgreSQL cluster: one per provider, on a Unix socket only, gone when the pack is.

:class:`Cluster` runs Debian's server binaries (``/usr/lib/postgresql/<major>/bin``, or the
folder ``EFFECTBENCH_PG_BIN`` names): ``initdb`` into a fresh folder (``/dev/shm`` where it is
writable, else the temporary folder), then ``postgres`` with ``listen_addresses=''`` (no TCP at
all) and its socket in a ``0700`` folder of its own. Every role logs in with a password
(``scram-sha-256`` on the local socket); the passwords are drawn per cluster and held only in
this process.

``initdb`` and ``postgres`` refuse to run as root. Run as root (CI), the cluster's folder is
handed to an unprivileged system user (``postgres``, which Debian's package creates, else
``nobody``) and both programs run as that user; run as anyone else, they run as that user.
Root reaches the ``0700`` socket folder all the same; no other local user does.

No process or folder outlives the cluster: :meth:`Cluster.stop` (also run at interpreter exit
and at a pool worker's exit) shuts the server down fast and removes the folder; if this
process is killed outright the server gets ``SIGQUIT`` (its parent-death signal, set while it
is started from a keeper thread that lives as long as it does), and the next cluster started
on the machine removes folders whose owner is gone.
"""

from __future__ import annotations

import ctypes
import multiprocessing.util
import os
import pwd
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from effectbench.api import InfrastructureError, UsageError

PG_BIN_ENV = "EFFECTBENCH_PG_BIN"
"""Environment variable naming the folder of ``initdb`` and ``postgres``."""
DEBIAN_ROOT = Path("/usr/lib/postgresql")
"""Debian's ``postgresql-<major>`` packages put their binaries in ``<major>/bin`` here."""
INSTALL_HINT = "apt-get install postgresql"
SHM = Path("/dev/shm")
PREFIX = "effectbench-ticketing-pg-"
"""The name every cluster folder starts with (the sweep of orphaned folders looks for it)."""
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0
ADMIN = "tk_admin"
"""The cluster's superuser: provisioning and the adversarial audit only."""
SERVER_SETTINGS = {
    "listen_addresses": "",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "60",
    "shared_buffers": "16MB",
    "max_wal_size": "256MB",
    "checkpoint_timeout": "1h",
    "autovacuum": "off",
    "log_min_messages": "warning",
    "password_encryption": "scram-sha-256",
}
"""A throwaway cluster: no durability (the databases live one episode), no TCP, a few sockets."""
PR_SET_PDEATHSIG = 1


def server_binaries() -> Path:
    """Return the folder holding ``initdb`` and ``postgres``, or raise a one-line error."""
    named = os.environ.get(PG_BIN_ENV, "")
    if named:
        folder = Path(named)
        if all(os.access(folder / exe, os.X_OK) for exe in ("initdb", "postgres")):
            return folder
        raise UsageError(
            f"PostgreSQL server is missing: {PG_BIN_ENV}={named} has no initdb and postgres "
            f"(point it at a PostgreSQL bin folder, or unset it to use {DEBIAN_ROOT}/<major>/bin)"
        )
    majors = []
    if DEBIAN_ROOT.is_dir():
        for entry in DEBIAN_ROOT.iterdir():
            if entry.name.isdigit() and os.access(entry / "bin" / "postgres", os.X_OK):
                majors.append(int(entry.name))
    if not majors:
        raise UsageError(
            f"PostgreSQL server is missing: no {DEBIAN_ROOT}/<major>/bin/postgres: install the "
            f"Debian package postgresql ({INSTALL_HINT}) or set {PG_BIN_ENV} to its bin folder"
        )
    return DEBIAN_ROOT / str(max(majors)) / "bin"


def server_major(binaries: Path) -> int:
    """Return the server's major version (13 or newer), or raise a one-line error."""
    try:
        out = subprocess.run(
            [str(binaries / "postgres"), "--version"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise UsageError(f"PostgreSQL server at {binaries} does not run: {exc}") from None
    found = re.search(r"(\d+)(?:\.\d+)?", out)
    major = int(found.group(1)) if found else 0
    if major < 13:
        raise UsageError(f"PostgreSQL 13 or newer is needed; {binaries} has {out.strip()!r}")
    return major


@dataclass(frozen=True)
class Login:
    """A role's credentials on the cluster (the password never appears in a repr)."""

    role: str
    password: str = field(repr=False)


def _runner() -> pwd.struct_passwd | None:
    """Return the unprivileged user the server runs as when this process is root, else None."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise UsageError("running as root, PostgreSQL needs an unprivileged user: create 'postgres'")


def _die_with_parent() -> None:  # pragma: no cover - runs in the forked child
    """In the server's process: receive SIGQUIT (immediate shutdown) when its starter dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGQUIT, 0, 0, 0)
    os.setpgid(0, 0)  # its own process group: a terminal's Ctrl-C reaches the harness only


def _alive(pid: int) -> bool:
    """Say whether process ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def sweep_orphans(base: Path) -> list[Path]:
    """Remove cluster folders under ``base`` whose owning process is gone; return them."""
    removed = []
    for folder in base.glob(PREFIX + "*"):
        match = re.fullmatch(re.escape(PREFIX) + r"(\d+)-.*", folder.name)
        if match is None or _alive(int(match.group(1))):
            continue
        pidfile = folder / "data" / "postmaster.pid"
        try:
            server = int(pidfile.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            server = 0
        if server and _alive(server):
            continue  # still serving (its starter died but it has not yet): leave it
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


def _base() -> Path:
    return SHM if SHM.is_dir() and os.access(SHM, os.W_OK) else Path(tempfile.gettempdir())


class Cluster:
    """One private PostgreSQL server: start, clone and drop databases, stop."""

    def __init__(self) -> None:
        self.binaries = server_binaries()
        self.major = server_major(self.binaries)
        self._owner = os.getpid()
        self._runner = _runner()
        self.admin = Login(ADMIN, secrets.token_urlsafe(24))
        self.folder: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._keeper: threading.Thread | None = None
        self._admin_conn: psycopg.Connection[Any] | None = None
        self._lock = threading.Lock()
        self._finalizer: multiprocessing.util.Finalize | None = None

    # -- where things are ---------------------------------------------------------------

    @property
    def socket_dir(self) -> Path:
        """The ``0700`` folder holding the server's only socket."""
        if self.folder is None:
            raise RuntimeError("the cluster is not running")
        return self.folder / "sock"

    def conninfo(self, login: Login, dbname: str) -> str:
        """Return the connection string of ``login`` on database ``dbname`` (socket only)."""
        return psycopg.conninfo.make_conninfo(
            host=str(self.socket_dir),
            dbname=dbname,
            user=login.role,
            password=login.password,
            connect_timeout="5",
            application_name="effectbench-ticketing",
        )

    def connect(
        self, login: Login, dbname: str, *, autocommit: bool = False
    ) -> psycopg.Connection[Any]:
        """Open a connection as ``login`` on ``dbname``."""
        return psycopg.connect(self.conninfo(login, dbname), autocommit=autocommit)

    # -- lifecycle ---------------------------------------------------------------------

    def _as_runner(self, path: Path) -> None:
        if self._runner is not None:
            os.chown(path, self._runner.pw_uid, self._runner.pw_gid)

    def _spawn_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"env": {"LC_ALL": "C.UTF-8", "PATH": "/usr/bin:/bin"}}
        if self._runner is not None:
            kwargs |= {
                "user": self._runner.pw_uid,
                "group": self._runner.pw_gid,
                "extra_groups": [],
                "cwd": str(self.folder),
            }
        return kwargs

    def start(self) -> Cluster:
        """Initialise the cluster in a fresh folder and start its server (idempotent)."""
        with self._lock:
            if self._proc is not None and self._proc.poll() is None:
                return self
            base = _base()
            sweep_orphans(base)
            folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=base))
            self.folder = folder
            self._finalizer = multiprocessing.util.Finalize(
                self, Cluster._stop_owned, args=(self,), exitpriority=20
            )
            try:
                self._initdb(folder)
                self._serve(folder)
            except BaseException:
                self._stop_owned()
                raise
            return self

    def _initdb(self, folder: Path) -> None:
        os.chmod(folder, 0o700)
        self._as_runner(folder)
        pwfile = folder / "pw"
        fd = os.open(pwfile, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(self.admin.password + "\n")
        self._as_runner(pwfile)
        done = subprocess.run(
            [
                str(self.binaries / "initdb"),
                "--pgdata",
                str(folder / "data"),
                "--username",
                ADMIN,
                "--pwfile",
                str(pwfile),
                "--auth-local",
                "scram-sha-256",
                "--auth-host",
                "reject",
                "--encoding",
                "UTF8",
                "--locale",
                "C.UTF-8",
                "--no-sync",
                "--no-instructions",
            ],
            capture_output=True,
            timeout=120,
            check=False,
            **self._spawn_kwargs(),
        )
        pwfile.unlink(missing_ok=True)
        if done.returncode != 0:
            last = (done.stderr or done.stdout).decode("utf-8", "replace").strip().splitlines()
            raise InfrastructureError(f"initdb failed: {last[-1] if last else done.returncode}")
        sock = folder / "sock"
        sock.mkdir(mode=0o700)
        self._as_runner(sock)

    def _serve(self, folder: Path) -> None:
        argv = [
            str(self.binaries / "postgres"),
            "-D",
            str(folder / "data"),
            "-k",
            str(folder / "sock"),
        ]
        for name, value in SERVER_SETTINGS.items():
            argv += ["-c", f"{name}={value}"]
        log = open(folder / "server.log", "wb")  # noqa: SIM115 - handed to the server
        started: list[subprocess.Popen[bytes] | BaseException] = []
        ready = threading.Event()

        def keep() -> None:
            # The server's parent-death signal fires when *this thread* ends, so the thread
            # that starts it waits on it for as long as it runs.
            try:
                proc = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    preexec_fn=_die_with_parent,  # noqa: PLW1509 - prctl only, before exec
                    **self._spawn_kwargs(),
                )
            except BaseException as exc:  # noqa: BLE001 - handed to the starting thread
                started.append(exc)
                ready.set()
                return
            started.append(proc)
            ready.set()
            proc.wait()

        keeper = threading.Thread(target=keep, name="ticketing-postgres", daemon=True)
        keeper.start()
        ready.wait(START_TIMEOUT_S)
        log.close()
        if not started or isinstance(started[0], BaseException):
            raise InfrastructureError(
                f"postgres did not start: {started[0] if started else 'timeout'}"
            )
        self._proc, self._keeper = started[0], keeper
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                self._admin_conn = self.connect(self.admin, "postgres", autocommit=True)
                return
            except psycopg.OperationalError as exc:
                if self._proc.poll() is not None or time.monotonic() > deadline:
                    tail = (folder / "server.log").read_text(errors="replace").strip().splitlines()
                    why = tail[-1] if tail else str(exc).splitlines()[0]
                    raise InfrastructureError(f"postgres did not come up: {why}") from None
                time.sleep(0.02)

    def alive(self) -> bool:
        """Say whether the server process runs."""
        return self._proc is not None and self._proc.poll() is None

    def server_pids(self) -> list[int]:
        """Return the server's process id (and nothing when it is not running)."""
        return [self._proc.pid] if self.alive() and self._proc is not None else []

    def stop(self) -> None:
        """Shut the server down (fast), then remove the folder; safe to call twice."""
        if self._finalizer is not None:
            self._finalizer()
        else:
            self._stop_owned()

    def _stop_owned(self) -> None:
        if os.getpid() != self._owner:
            return  # a forked child never stops its parent's server
        conn, self._admin_conn = self._admin_conn, None
        if conn is not None:
            try:
                conn.close()
            except psycopg.Error:
                pass
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # fast shutdown: every backend ends
            try:
                proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(STOP_TIMEOUT_S)
        keeper, self._keeper = self._keeper, None
        if keeper is not None:
            keeper.join(STOP_TIMEOUT_S)
        folder, self.folder = self.folder, None
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    # -- databases ---------------------------------------------------------------------

    def admin_execute(self, statement: sql.Composable | str) -> None:
        """Run one statement as the superuser on the maintenance database (autocommit)."""
        conn = self._admin_conn
        if conn is None:
            raise InfrastructureError("the PostgreSQL cluster is not running")
        with self._lock:
            try:
                conn.execute(statement)  # type: ignore[arg-type]
            except psycopg.OperationalError as exc:
                raise InfrastructureError(f"PostgreSQL: {str(exc).splitlines()[0]}") from exc

    def clone(self, name: str, template: str) -> None:
        """Create database ``name`` as a file copy of ``template`` (which has no connection)."""
        # A file copy (15+): a small template is copied faster than it is replayed through WAL.
        strategy = sql.SQL(" STRATEGY FILE_COPY" if self.major >= 15 else "")
        self.admin_execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {}{}").format(
                sql.Identifier(name), sql.Identifier(template), strategy
            )
        )

    def drop(self, name: str) -> None:
        """Drop database ``name``, ending any session still on it.

        PostgreSQL's ``DROP DATABASE`` re-checks for sessions every 100 ms; the sessions an
        episode just closed take a few milliseconds to end, so they are ended and waited for
        here first (polling quickly) and the drop finds none.
        """
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while time.monotonic() < deadline:
            with self._lock:
                conn = self._admin_conn
                if conn is None:
                    break
                left = conn.execute(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE datname = %s AND pid <> pg_backend_pid()",
                    (name,),
                ).fetchone()
            if not left or not left[0]:
                break
            time.sleep(0.002)
        self.admin_execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )

    @contextmanager
    def database(self, name: str, template: str) -> Iterator[str]:
        """A fresh clone of ``template`` named ``name`` for the block, dropped after it."""
        self.clone(name, template)
        try:
            yield name
        finally:
            if self.alive():
                self.drop(name)
