"""One episode's process supervisor: spawns, watches and reaps everything the episode runs.

Run by path (``python -S -E _supervisor.py [FOLDER]``), standard library only, so it
starts in a few milliseconds. It puts itself in a new session, becomes a child
*subreaper* (so every orphaned descendant is re-parented to it, not to PID 1,
which does not reap in containers), and obeys one JSON request per line on
stdin, answering one JSON line on stdout:

* ``{"op": "spawn", "argv": [...], "env": {...}, "log": PATH, "ready_fd": bool,
  "timeout": S}``: fork and exec ``argv`` (absolute path) with exactly ``env``;
  with ``ready_fd`` the child gets a pipe as fd 3 (``{fd}`` in ``argv`` becomes
  ``3``) and the answer carries the first line it writes there (Xvfb's
  ``-displayfd``, dbus-daemon's ``--print-address``, an app's "ready");
  with ``"wait": false`` it answers at once and ``{"op": "ready", "pid": N,
  "timeout": S}`` waits for that line later (so two programs can start at once).
* ``{"op": "status"}``: which spawned processes still run, and how each ended.
* ``{"op": "kill", "pid": N, "signal": S}``: signal one spawned process.
* ``{"op": "descendants"}``: every live process below the supervisor.
* ``{"op": "stop"}``, end of stdin (the harness died or closed the pipe) or
  SIGTERM: terminate every descendant (TERM, then KILL), reap them all, exit.

Every child is started with ``PR_SET_PDEATHSIG = SIGKILL``: if the supervisor
itself is killed outright, its children die with it. ``FOLDER`` (the episode's own
files) is removed once every descendant is reaped, however the supervisor stops, so an
episode whose harness was killed leaves no file behind either.
"""

from __future__ import annotations

import ctypes
import json
import os
import select
import shutil
import signal
import sys
import time
from collections.abc import Collection
from typing import Any

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
GRACE_S = 1.0

_libc = ctypes.CDLL(None, use_errno=True)
_spawned: dict[int, str] = {}
_ended: dict[int, int] = {}
_waiting: dict[int, int] = {}
"""Spawned processes whose ready line is still to be read: pid -> read end of fd 3."""


def _reap() -> None:
    """Collect every exited child (spawned ones and adopted orphans) without blocking."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if pid in _spawned:
            _ended[pid] = os.waitstatus_to_exitcode(status)


def descendants(root: int | None = None, beside: Collection[int] = ()) -> list[int]:
    """Return every live process whose ancestry reaches ``root`` (this one by default), but
    for the processes of ``beside`` and those below them."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if fields[0] == b"Z":
            continue
        parents[int(entry)] = int(fields[1])
    found: list[int] = []
    frontier = [os.getpid() if root is None else root]
    while frontier:
        current = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == current and pid not in found and pid not in beside:
                found.append(pid)
                frontier.append(pid)
    return sorted(found)


def command_line(pid: int) -> bytes:
    """Return the command line of process ``pid`` (its arguments, each ended by NUL), or b""
    once it has ended."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read()
    except OSError:
        return b""


def _spawn(request: dict[str, Any]) -> dict[str, Any]:
    argv = [str(a) for a in request["argv"]]
    env = {str(k): str(v) for k, v in request.get("env", {}).items()}
    ready = bool(request.get("ready_fd"))
    log = str(request.get("log") or os.devnull)
    read_end = write_end = -1
    if ready:
        read_end, write_end = os.pipe()
        argv = [a.replace("{fd}", "3") for a in argv]
    pid = os.fork()
    if pid == 0:  # the child: no Python-level cleanup may run here
        try:
            _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGPIPE):
                signal.signal(sig, signal.SIG_DFL)
            null = os.open(os.devnull, os.O_RDONLY)
            out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            os.dup2(null, 0)
            os.dup2(out, 1)
            os.dup2(out, 2)
            if ready:
                os.dup2(write_end, 3)
            os.closerange(4 if ready else 3, 65536)
            if request.get("cwd"):
                os.chdir(str(request["cwd"]))
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    _spawned[pid] = argv[0]
    if not ready:
        return {"pid": pid}
    os.close(write_end)
    _waiting[pid] = read_end
    if request.get("wait", True) is False:
        return {"pid": pid}
    return _ready(pid, float(request.get("timeout", 10)))


def _ready(pid: int, timeout: float) -> dict[str, Any]:
    """Wait for the first line ``pid`` writes on its fd 3 (bounded by ``timeout``)."""
    read_end = _waiting.pop(pid, None)
    if read_end is None:
        return {"pid": pid, "error": f"pid {pid} has no ready line to wait for"}
    name = os.path.basename(_spawned.get(pid, "?"))
    deadline = time.monotonic() + timeout
    data = b""
    try:
        while b"\n" not in data:
            left = deadline - time.monotonic()
            if left <= 0:
                return {"pid": pid, "error": f"{name} wrote no ready line within {timeout} s"}
            readable, _, _ = select.select([read_end], [], [], left)
            if not readable:
                continue
            chunk = os.read(read_end, 4096)
            if not chunk:
                _reap()
                code = _ended.get(pid)
                ended = f"exited with status {code}" if code is not None else "closed fd 3"
                return {"pid": pid, "error": f"{name} {ended} before ready"}
            data += chunk
    finally:
        os.close(read_end)
    return {"pid": pid, "line": data.split(b"\n", 1)[0].decode("utf-8", "replace").strip()}


def _stop() -> int:
    """Terminate and reap every descendant; return how many were signalled."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signalled: set[int] = set()
    deadline = time.monotonic() + GRACE_S
    sig = signal.SIGTERM
    while True:
        _reap()
        alive = descendants()
        if not alive:
            break
        if time.monotonic() > deadline:
            sig = signal.SIGKILL
        for pid in alive:
            try:
                os.kill(pid, sig)
                signalled.add(pid)
            except ProcessLookupError:
                pass
        try:  # block briefly on the next exit rather than spinning
            pid, status = os.waitpid(-1, 0) if sig == signal.SIGKILL else (0, 0)
            if pid in _spawned:
                _ended[pid] = os.waitstatus_to_exitcode(status)
        except ChildProcessError:
            pass
        if sig == signal.SIGTERM:
            select.select([], [], [], 0.005)
    _reap()
    return len(signalled)


def _answer(reply: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()


def _serve() -> None:
    for line in sys.stdin:
        try:
            request = json.loads(line)
            op = request.get("op")
            _reap()
            if op == "spawn":
                reply = _spawn(request)
            elif op == "ready":
                reply = _ready(int(request["pid"]), float(request.get("timeout", 10)))
            elif op == "status":
                reply = {
                    "running": [p for p in _spawned if p not in _ended],
                    "ended": {str(p): c for p, c in _ended.items()},
                }
            elif op == "kill":
                pid = int(request["pid"])
                if pid not in _spawned:
                    reply = {"error": f"pid {pid} was not spawned here"}
                else:
                    os.kill(pid, int(request.get("signal", signal.SIGKILL)))
                    reply = {}
            elif op == "descendants":
                reply = {"pids": descendants()}
            elif op == "stop":
                _answer({"signalled": _stop()})
                return
            else:
                reply = {"error": f"unknown op {op!r}"}
        except Exception as exc:  # noqa: BLE001 - every failure is answered, never fatal
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        _answer(reply)


def main() -> None:
    """Become a session leader and subreaper, serve requests, always clean up."""
    os.setsid()
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1)
    owned = sys.argv[1] if len(sys.argv) > 1 else ""

    def _clean_up() -> None:
        _stop()
        if owned:
            shutil.rmtree(owned, ignore_errors=True)

    def _terminated(signum: int, frame: object) -> None:
        _clean_up()
        os._exit(0)

    signal.signal(signal.SIGTERM, _terminated)
    signal.signal(signal.SIGHUP, _terminated)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the harness decides, not a terminal's ^C
    try:
        _answer({"ready": os.getpid()})
        _serve()
    finally:
        _clean_up()


if __name__ == "__main__":
    main()
