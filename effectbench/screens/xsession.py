"""A per-episode X session: its own display, D-Bus session bus and accessibility bus.

:class:`XSession` starts, under one :class:`~.processes.Supervisor`:

* an X server on a display nobody else holds: ``Xvfb -displayfd`` (the desktop
  substrate) or TigerVNC's ``Xvnc -displayfd`` (the remote-display substrate;
  the X server and the RFB server in one process);
* its own ``dbus-daemon --session`` (no ``--fork``: it stays a child), with this
  session's ``DISPLAY`` and a private ``XDG_RUNTIME_DIR`` (mode 0700) in its
  environment, listening on a socket inside that directory;
* for the desktop, the accessibility bus pre-activated through that session
  bus (``org.a11y.Bus.GetAddress``); the launcher inherits the daemon's
  environment, so its socket lands in this session's runtime directory. (Two
  sessions sharing ``~/.cache/at-spi`` is what made parallel episodes collide.)

:meth:`XSession.health` says what failed (X server, bus, a named program), so
an episode can turn a broken session into an ``infrastructure`` drop.
:meth:`XSession.close` stops the supervisor, which reaps every descendant.
A missing program is one line naming its Debian package (:func:`require`).

Nothing a session starts is usable by another local user. Everything lives in
one folder of mode 0700: the X server admits only clients that present the
session's own cookie (``-auth``, an Xauthority file of mode 0600 there; no
``-ac``), Xvnc serves RFB on a Unix socket there (mode 0600, no TCP port, one
client at a time) instead of a shared TCP port, and the session bus, the
accessibility bus and the accessibility reader listen on sockets there too (the
buses also admit only their own uid).
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import struct
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from effectbench.errors import InfrastructureError, UsageError
from effectbench.screens.processes import Spawned, Supervisor, exited

WIDTH, HEIGHT = 1024, 768
"""The screen every desktop and remote-display episode declares."""

Server = Literal["xvfb", "xvnc"]

PACKAGES: dict[str, str] = {
    "Xvfb": "xvfb",
    "Xvnc": "tigervnc-standalone-server",
    "xauth": "xauth",
    "dbus-daemon": "dbus-daemon",
    "dbus-send": "dbus-bin",
    "/usr/libexec/at-spi-bus-launcher": "at-spi2-core",
}
"""Which Debian package provides each program a session runs."""

TYPELIBS: dict[str, str] = {
    "Gtk-3.0": "gir1.2-gtk-3.0",
    "Atspi-2.0": "gir1.2-atspi-2.0",
    "PangoCairo-1.0": "gir1.2-pango-1.0",
}
"""Which Debian package provides each GObject typelib the desktop front end loads."""

TYPELIB_DIRS = (
    "/usr/lib/x86_64-linux-gnu/girepository-1.0",
    "/usr/lib/aarch64-linux-gnu/girepository-1.0",
    "/usr/lib/girepository-1.0",
)
INSTALL_HINT = "`bash .ci/install-system-packages` (as root; `make setup` runs it) installs it"


class MissingComponentError(UsageError):
    """A system package a substrate needs is not installed (one line, exit 2)."""


def require(programs: Sequence[str] = (), typelibs: Sequence[str] = ()) -> None:
    """Raise :class:`MissingComponentError` naming the first missing package, if any."""
    for program in programs:
        found = os.access(program, os.X_OK) if os.path.isabs(program) else shutil.which(program)
        if not found:
            package = PACKAGES.get(program, program)
            raise MissingComponentError(
                f"{os.path.basename(program)} is missing: install the Debian package "
                f"{package} ({INSTALL_HINT})"
            )
    for typelib in typelibs:
        if not any(Path(d, f"{typelib}.typelib").is_file() for d in TYPELIB_DIRS):
            raise MissingComponentError(
                f"GObject introspection data {typelib} is missing: install the Debian package "
                f"{TYPELIBS.get(typelib, typelib)} ({INSTALL_HINT})"
            )
    try:
        import gi  # noqa: F401
    except ImportError:
        if typelibs:
            raise MissingComponentError(
                "PyGObject is missing from this Python: `pip install 'pygobject<3.51'` "
                "(needs the Debian packages libgirepository1.0-dev libcairo2-dev pkg-config "
                f"gcc; {INSTALL_HINT})"
            ) from None


def programs_for(server: Server) -> tuple[str, ...]:
    """Return the programs a session with ``server`` runs."""
    x = "Xvnc" if server == "xvnc" else "Xvfb"
    return (x, "dbus-daemon", "dbus-send", "/usr/libexec/at-spi-bus-launcher")


COOKIE_SCHEME = b"MIT-MAGIC-COOKIE-1"
FAMILY_LOCAL, FAMILY_WILD = 256, 65535


def write_xauthority(path: Path) -> Path:
    """Write a fresh X cookie, good for any display of this host, to ``path`` (mode 0600).

    The X server reads every entry of the file it is given with ``-auth``,
    whatever its display number. Clients find the file through ``XAUTHORITY``:
    libxcb matches the wildcard entry, python-xlib the entry for this host's
    name; an empty display number matches any display in both.
    """
    cookie = secrets.token_bytes(16)

    def counted(data: bytes) -> bytes:
        return struct.pack(">H", len(data)) + data

    entries = b"".join(
        struct.pack(">H", family)
        + counted(address)
        + counted(b"")
        + counted(COOKIE_SCHEME)
        + counted(cookie)
        for family, address in ((FAMILY_LOCAL, socket.gethostname().encode()), (FAMILY_WILD, b""))
    )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(entries)
    return path


@dataclass
class XSession:
    """One episode's display, session bus and (desktop) accessibility bus."""

    server: Server = "xvfb"
    accessibility: bool = True
    width: int = WIDTH
    height: int = HEIGHT
    root: Path = field(init=False)
    display: str = field(init=False, default="")
    bus_address: str = field(init=False, default="")
    a11y_address: str = field(init=False, default="")
    xauthority: Path = field(init=False)
    """The session's X cookie file (mode 0600): what its X clients present."""
    rfb_path: Path = field(init=False)
    """Where Xvnc serves RFB (a socket of mode 0600; remote-display sessions only)."""
    supervisor: Supervisor = field(init=False)
    x_pid: int = field(init=False, default=0)
    bus_pid: int = field(init=False, default=0)
    programs: dict[str, int] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        require(programs_for(self.server) if self.accessibility else programs_for(self.server)[:2])
        self.root = Path(tempfile.mkdtemp(prefix="effectbench-x-"))
        os.chmod(self.root, 0o700)
        for sub in ("run", "home", "logs"):
            (self.root / sub).mkdir(mode=0o700)
        self.xauthority = write_xauthority(self.root / "xauthority")
        self.rfb_path = self.root / "run" / "rfb.sock"
        self.supervisor = Supervisor(self.root / "logs", owned=self.root)
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    # -- start -------------------------------------------------------------------------

    def base_env(self) -> dict[str, str]:
        """Return the environment every program of this session gets (nothing inherited)."""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.root / "home"),
            "XDG_RUNTIME_DIR": str(self.root / "run"),
            "XDG_CONFIG_HOME": str(self.root / "home" / ".config"),
            "XDG_CACHE_HOME": str(self.root / "home" / ".cache"),
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "XAUTHORITY": str(self.xauthority),
        }
        if self.display:
            env["DISPLAY"] = self.display
        if self.bus_address:
            env["DBUS_SESSION_BUS_ADDRESS"] = self.bus_address
        if not self.accessibility:
            env["NO_AT_BRIDGE"] = "1"
        return env

    def _start(self) -> None:
        geometry = f"{self.width}x{self.height}"
        private = ["-auth", str(self.xauthority), "-nolisten", "tcp"]
        if self.server == "xvnc":
            argv = ["Xvnc", "-displayfd", "{fd}", "-geometry", geometry, "-depth", "24", *private]
            argv += ["-rfbport", "-1", "-rfbunixpath", str(self.rfb_path), "-rfbunixmode", "0600"]
            argv += ["-SecurityTypes", "None", "-NeverShared", "-DisconnectClients=0"]
        else:
            argv = ["Xvfb", "-displayfd", "{fd}", "-screen", "0", f"{geometry}x24", *private]
            argv += ["-noreset"]
        x = self.supervisor.spawn(argv, self.base_env(), name="x", ready_fd=True)
        if not x.line.isdigit():
            raise InfrastructureError(f"the X server reported no display ({x.line!r})")
        self.x_pid, self.display = x.pid, f":{x.line}"
        bus = self.supervisor.spawn(
            [
                "dbus-daemon",
                "--session",
                "--nofork",
                "--nopidfile",
                f"--address=unix:dir={self.root / 'run'}",
                "--print-address={fd}",
            ],
            self.base_env(),
            name="dbus",
            ready_fd=True,
        )
        self.bus_pid, self.bus_address = bus.pid, bus.line
        if not self.bus_address.startswith("unix:"):
            raise InfrastructureError(f"dbus-daemon reported no address ({bus.line!r})")
        if self.accessibility:
            self.a11y_address = self._activate_a11y_bus()

    def _activate_a11y_bus(self) -> str:
        """Start the accessibility bus now (not on the app's first call) and return it."""
        done = subprocess.run(
            [
                "dbus-send",
                "--session",
                "--print-reply=literal",
                "--reply-timeout=5000",
                "--dest=org.a11y.Bus",
                "/org/a11y/bus",
                "org.a11y.Bus.GetAddress",
            ],
            env=self.base_env(),
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        address = done.stdout.strip()
        if done.returncode != 0 or not address.startswith("unix:"):
            detail = (done.stderr.strip() or done.stdout.strip())[:200]
            raise InfrastructureError(f"the accessibility bus did not start ({detail})")
        if str(self.root / "run") not in address:
            raise InfrastructureError(f"the accessibility bus is not private ({address})")
        return address

    def spawn(
        self,
        argv: Sequence[str],
        *,
        name: str,
        env: Mapping[str, str] | None = None,
        ready_fd: bool = False,
        wait: bool = True,
        timeout: float = 10.0,
    ) -> Spawned:
        """Run a program inside this session (its env: the session's plus ``env``)."""
        spawned = self.supervisor.spawn(
            argv,
            {**self.base_env(), **(env or {})},
            name=name,
            ready_fd=ready_fd,
            wait=wait,
            timeout=timeout,
        )
        self.programs[name] = spawned.pid
        return spawned

    # -- health and teardown -------------------------------------------------------------

    def health(self) -> str | None:
        """Return what failed (X server, session bus, a spawned program), or ``None``."""
        if not self.supervisor.alive():
            return "the episode supervisor died"
        try:
            running = set(self.supervisor.request(op="status").get("running", []))
        except InfrastructureError as exc:
            return str(exc)
        server = "Xvnc" if self.server == "xvnc" else "Xvfb"
        checks = [(server, self.x_pid), ("dbus-daemon", self.bus_pid), *self.programs.items()]
        for name, pid in checks:
            if pid not in running or exited(pid):
                return f"{name} (pid {pid}) is no longer running"
        return None

    def close(self) -> None:
        """Stop every process of the session, reap them all, remove its files."""
        try:
            self.supervisor.stop()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> XSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
