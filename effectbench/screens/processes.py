"""The harness's side of an episode's process supervisor (see :mod:`._supervisor`).

:class:`Supervisor` starts ``_supervisor.py`` (a stdlib-only script run by
path) and talks to it over a pipe: spawn a program, ask what still runs, kill
one, list every live descendant, stop. Whatever an episode runs (X server,
D-Bus, accessibility bus, the app, helpers) is a descendant of its supervisor,
so stopping it leaves nothing behind, and if the harness dies the closed pipe
makes the supervisor clean up on its own.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from effectbench.errors import InfrastructureError

SCRIPT = Path(__file__).with_name("_supervisor.py")
REPLY_TIMEOUT_S = 30.0


def exited(pid: int) -> bool:
    """Say whether ``pid`` has exited, as the kernel sees it (gone, or a zombie not yet reaped).

    A supervisor learns of a death only when it reaps; this reads the state directly.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return True
    return stat.rsplit(b")", 1)[-1].split()[:1] in ([b"Z"], [b"X"])


@dataclass(frozen=True)
class Spawned:
    """A program the supervisor started, and the ready line it wrote (if asked)."""

    pid: int
    line: str = ""


class Supervisor:
    """One episode's process tree: everything spawned here is reaped by :meth:`stop`."""

    def __init__(self, log_dir: Path, owned: Path | None = None) -> None:
        """Start the supervisor; ``owned`` is a folder of the episode's own files, which it
        removes once it has reaped everything (even when this process was killed)."""
        self.log_dir = log_dir
        self._names: dict[int, str] = {}
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[str] | None = subprocess.Popen(
            [sys.executable, "-S", "-E", "-u", str(SCRIPT), *([str(owned)] if owned else [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            close_fds=True,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        )
        hello = self._read()
        self.pid = int(hello.get("ready", 0))
        if self.pid != self._proc.pid:
            raise InfrastructureError(f"the episode supervisor did not start ({hello})")

    def _read(self) -> dict[str, Any]:
        proc = self._proc
        if proc is None or proc.stdout is None:
            raise InfrastructureError("the episode supervisor is stopped")
        box: list[str] = []
        reader = threading.Thread(target=lambda: box.append(proc.stdout.readline()))  # type: ignore[union-attr]
        reader.start()
        reader.join(REPLY_TIMEOUT_S)
        if not box or not box[0]:
            raise InfrastructureError("the episode supervisor stopped answering")
        reply: dict[str, Any] = json.loads(box[0])
        return reply

    def request(self, **request: Any) -> dict[str, Any]:
        """Send one request and return the supervisor's answer."""
        with self._lock:
            proc = self._proc
            if proc is None or proc.stdin is None or proc.poll() is not None:
                raise InfrastructureError("the episode supervisor is not running")
            try:
                proc.stdin.write(json.dumps(request) + "\n")
                proc.stdin.flush()
            except OSError as exc:
                raise InfrastructureError(f"the episode supervisor is gone ({exc})") from exc
            return self._read()

    def spawn(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        name: str,
        ready_fd: bool = False,
        wait: bool = True,
        timeout: float = 10.0,
    ) -> Spawned:
        """Start ``argv`` with exactly ``env``; with ``ready_fd`` wait for its fd-3 line.

        With ``wait=False`` it returns at once; :meth:`ready` waits for the line.
        """
        program = argv[0] if os.path.isabs(argv[0]) else shutil.which(argv[0])
        if program is None:
            raise InfrastructureError(f"{argv[0]} is not installed")
        reply = self.request(
            op="spawn",
            argv=[program, *argv[1:]],
            env=dict(env),
            log=str(self.log_dir / f"{name}.log"),
            ready_fd=ready_fd,
            wait=wait,
            timeout=timeout,
        )
        if "error" in reply:
            raise InfrastructureError(f"{name}: {reply['error']}{self._log_tail(name)}")
        self._names[int(reply["pid"])] = name
        return Spawned(pid=int(reply["pid"]), line=str(reply.get("line", "")))

    def ready(self, pid: int, timeout: float = 10.0) -> str:
        """Wait for the ready line of a program spawned with ``wait=False``; return it."""
        reply = self.request(op="ready", pid=pid, timeout=timeout)
        if "error" in reply:
            name = self._names.get(pid, str(pid))
            raise InfrastructureError(f"{name}: {reply['error']}{self._log_tail(name)}")
        return str(reply.get("line", ""))

    def _log_tail(self, name: str) -> str:
        try:
            text = (self.log_dir / f"{name}.log").read_text(errors="replace").strip()
        except OSError:
            return ""
        return f" (log: {text.splitlines()[-1][:200]})" if text else ""

    def running(self, pid: int) -> bool:
        """Say whether spawned process ``pid`` still runs."""
        return pid in self.request(op="status").get("running", [])

    def kill(self, pid: int, signal: int = 9) -> None:
        """Send ``signal`` to spawned process ``pid`` (tests use it to break an episode)."""
        reply = self.request(op="kill", pid=pid, signal=signal)
        if "error" in reply:
            raise InfrastructureError(reply["error"])

    def descendants(self) -> list[int]:
        """Return the pid of every live process below the supervisor."""
        return [int(p) for p in self.request(op="descendants").get("pids", [])]

    def alive(self) -> bool:
        """Say whether the supervisor itself still runs."""
        return self._proc is not None and self._proc.poll() is None

    def stop(self) -> None:
        """Terminate and reap every process of the episode, then the supervisor."""
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            if proc.poll() is None and proc.stdin is not None:
                proc.stdin.write(json.dumps({"op": "stop"}) + "\n")
                proc.stdin.flush()
                proc.stdin.close()
            proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        finally:
            if proc.stdout is not None:
                proc.stdout.close()
