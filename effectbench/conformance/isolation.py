"""Is the oracle's read path out of the agent's reach? (SPEC 5.2.1 ``isolated_from_agent``)

Everything a system under test is given (the env handle, the trial's parameters, the
agent-facing task) is walked as an object graph: :func:`gc.get_referents`, instance
attributes and slots, containers, bound methods, closures, weak references and
suspended generators; never a module, a class, a function's globals or a stack frame
(those lead to everything in the process, which the agent is not handed). The
oracle is walked the same way, and while it reads, :class:`ReadTrace` records (through
an audit hook, :func:`sys.addaudithook`) which files and databases it opens.

:func:`isolation_problems` then compares the two: the agent's graph must not hold the
oracle itself, a connection, socket, cursor or file the oracle holds, a file
descriptor onto a file the oracle reads, the oracle's credentials or the location of
its read path, or a process handle the oracle holds.
"""

from __future__ import annotations

import gc
import http.client
import io
import logging
import multiprocessing.process
import os
import re
import socket
import sqlite3
import subprocess
import sys
import threading
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import (
    AsyncGeneratorType,
    BuiltinFunctionType,
    CodeType,
    CoroutineType,
    FrameType,
    FunctionType,
    GeneratorType,
    MethodType,
    ModuleType,
)
from typing import Any
from urllib.parse import unquote

from effectbench.conformance.ids import AuditId

__all__ = ["GRAPH_LIMIT", "Graph", "ReadTrace", "isolation_problems", "reach"]

GRAPH_LIMIT = 200_000
"""Objects a walk visits at most; a larger graph is reported as not fully checked."""

_STOP = (type, ModuleType, CodeType, logging.Logger, logging.Manager, logging.PlaceHolder)
"""Kinds the walk never enters: each leads to every object of the process."""
_ATOMS = (str, bytes, bytearray, int, float, complex, bool, type(None))
_HANDLE_TYPES: tuple[type, ...] = (
    socket.socket,
    io.IOBase,
    sqlite3.Connection,
    sqlite3.Cursor,
    http.client.HTTPConnection,
)
_PROCESS_TYPES: tuple[type, ...] = (subprocess.Popen, multiprocessing.process.BaseProcess)
_CREDENTIAL = re.compile(
    r"(password|passwd|pwd|secret|token|api[_-]?key)\s*[=:]|://[^/\s:@]+:[^/\s@]+@|"
    r"\buser(name)?\s*=",
    re.IGNORECASE,
)
"""A string that looks like a credential or a connection string (DSN, URL with a password)."""
_CODE_SUFFIXES = (".py", ".pyc", ".pyi", ".so", ".pth", ".json", ".typed")


def _stream_ids() -> set[int]:
    streams = (sys.stdin, sys.stdout, sys.stderr, sys.__stdin__, sys.__stdout__, sys.__stderr__)
    return {id(s) for s in streams if s is not None}


def _module_dict_ids() -> set[int]:
    return {id(vars(m)) for m in list(sys.modules.values()) if isinstance(m, ModuleType)}


def _cells(function: FunctionType) -> list[Any]:
    out = []
    for cell in function.__closure__ or ():
        try:
            out.append(cell.cell_contents)
        except ValueError:  # an empty cell
            continue
    return out


def _children(obj: Any) -> list[Any]:
    if isinstance(obj, FunctionType):
        kwdefaults = obj.__kwdefaults__ or {}
        return [*_cells(obj), *(obj.__defaults__ or ()), *kwdefaults.values()]
    if isinstance(obj, MethodType):
        return [obj.__self__, obj.__func__]
    if isinstance(obj, BuiltinFunctionType):
        return [obj.__self__]
    if isinstance(obj, weakref.ref):
        target = obj()
        return [] if target is None else [target]
    if isinstance(obj, GeneratorType | CoroutineType | AsyncGeneratorType):
        frame = (
            obj.gi_frame
            if isinstance(obj, GeneratorType)
            else obj.cr_frame
            if isinstance(obj, CoroutineType)
            else obj.ag_frame
        )
        return [] if frame is None else list(frame.f_locals.values())
    if isinstance(obj, FrameType):
        return list(obj.f_locals.values())
    return gc.get_referents(obj)


@dataclass
class Graph:
    """The objects reachable from some roots (atoms apart: the texts among them)."""

    objects: dict[int, Any] = field(default_factory=dict)
    texts: set[str] = field(default_factory=set)
    """Every string reachable (bytes decoded, paths as text)."""
    cut: bool = False
    """The walk stopped at :data:`GRAPH_LIMIT` objects."""

    def holds(self, obj: object) -> bool:
        """Whether ``obj`` itself is in the graph."""
        return id(obj) in self.objects

    def handles(self) -> list[Any]:
        """Return every connection, socket, cursor, file or other descriptor holder."""
        return [o for o in self.objects.values() if _is_handle(o)]

    def processes(self) -> list[Any]:
        """Return every process handle (``subprocess.Popen``, a ``multiprocessing`` process)."""
        return [o for o in self.objects.values() if isinstance(o, _PROCESS_TYPES)]


def _is_handle(obj: Any) -> bool:
    if isinstance(obj, _HANDLE_TYPES):
        return True
    kind = type(obj)
    fileno = getattr(kind, "fileno", None)
    dbapi = callable(getattr(kind, "cursor", None)) and callable(getattr(kind, "commit", None))
    return callable(fileno) or dbapi


def reach(roots: Iterable[object], limit: int = GRAPH_LIMIT) -> Graph:
    """Walk everything reachable from ``roots`` (see the module docstring for what is not)."""
    graph = Graph()
    skip = _module_dict_ids() | _stream_ids()
    stack: list[Any] = []

    def visit(obj: Any) -> None:
        if isinstance(obj, str):
            graph.texts.add(obj)
        elif isinstance(obj, bytes | bytearray):
            if len(obj) <= 4096:
                graph.texts.add(bytes(obj).decode("latin-1"))
        elif isinstance(obj, os.PathLike):
            graph.texts.add(str(os.fspath(obj)))
        if isinstance(obj, _ATOMS) or isinstance(obj, _STOP) or id(obj) in skip:
            return
        if id(obj) in graph.objects:
            return
        if len(graph.objects) >= limit:
            graph.cut = True
            return
        graph.objects[id(obj)] = obj
        stack.append(obj)

    for root in roots:
        visit(root)
    while stack:
        for child in _children(stack.pop()):
            visit(child)
    return graph


# -- what the oracle opens while it reads -----------------------------------------------


@dataclass
class ReadTrace:
    """The files and databases one thread opened while the oracle read (an audit hook)."""

    files: set[str] = field(default_factory=set)
    """Paths opened (``open``, ``os.open``) and SQLite databases connected to."""

    def locations(self) -> set[str]:
        """Return the files read (as named and as real paths), code and the interpreter's
        own files apart."""
        prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix)}
        out = set()
        for name in self.files:
            path = os.path.realpath(name)
            if path.endswith(_CODE_SUFFIXES) or any(path.startswith(p + os.sep) for p in prefixes):
                continue
            if os.path.isfile(path):
                out |= {name, path}
        return out


_local = threading.local()
_hooked = False
_hook_lock = threading.Lock()


def _sqlite_path(database: Any) -> str | None:
    if isinstance(database, bytes):
        database = database.decode("utf-8", "replace")
    if isinstance(database, os.PathLike):
        database = os.fspath(database)
    if not isinstance(database, str) or database in ("", ":memory:"):
        return None
    if database.startswith("file:"):
        return unquote(database[len("file:") :].partition("?")[0]) or None
    return database


def _hook(event: str, args: tuple[Any, ...]) -> None:
    trace: ReadTrace | None = vars(_local).get("trace")
    if trace is None:
        return
    if event == "open" and args and isinstance(args[0], str | bytes | os.PathLike):
        path = os.fspath(args[0])
        trace.files.add(path.decode("utf-8", "replace") if isinstance(path, bytes) else path)
    elif event == "sqlite3.connect" and args:
        found = _sqlite_path(args[0])
        if found is not None:
            trace.files.add(found)


@contextmanager
def tracing(trace: ReadTrace) -> Iterator[ReadTrace]:
    """Record what this thread opens into ``trace`` while the block runs."""
    global _hooked
    with _hook_lock:
        if not _hooked:  # an audit hook cannot be removed: one, idle outside a trace
            sys.addaudithook(_hook)
            _hooked = True
    previous = vars(_local).get("trace")
    _local.trace = trace
    try:
        yield trace
    finally:
        _local.trace = previous


# -- the comparison ---------------------------------------------------------------------


def _fd_target(handle: Any) -> str | None:
    """Return what a handle's descriptor points at (a real path, or ``socket:[inode]``)."""
    if isinstance(handle, sqlite3.Connection):
        try:
            rows = handle.execute("PRAGMA database_list").fetchall()
        except (sqlite3.Error, ValueError):
            return None
        files = [str(r[2]) for r in rows if r[2]]
        return os.path.realpath(files[0]) if files else None
    try:
        fd = handle.fileno()
    except Exception:  # a closed handle, or one without a descriptor
        return None
    if not isinstance(fd, int) or fd < 0:
        return None
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None
    return target


def _names(objs: Iterable[Any]) -> str:
    kinds = sorted({f"{type(o).__module__}.{type(o).__qualname__}" for o in objs})
    return ", ".join(kinds)


def _pid(process: Any) -> int | None:
    pid = process.pid
    return pid if isinstance(pid, int) else None


def isolation_problems(
    agent: Graph, oracle_root: object, oracle: Graph, trace: ReadTrace
) -> list[tuple[AuditId, str]]:
    """Return each way what the agent is given reaches the oracle's read path."""
    oracle_handles = oracle.handles()
    shared = [h for h in oracle_handles if agent.holds(h)]
    read_files = trace.locations()
    found = [
        _walk_cut(agent),
        _oracle_reachable(agent, oracle_root),
        _shared_handles(shared),
        _descriptors_onto(agent, shared, oracle_handles, read_files),
        _credentials(agent, oracle, read_files),
        _oracle_processes(agent, oracle),
    ]
    return [problem for problem in found if problem is not None]


_Problem = tuple[AuditId, str]


def _walk_cut(agent: Graph) -> _Problem | None:
    if not agent.cut:
        return None
    return (
        AuditId.ISOLATION_UNCHECKED,
        f"the walk stopped at {GRAPH_LIMIT} objects; the rest was not compared",
    )


def _oracle_reachable(agent: Graph, oracle_root: object) -> _Problem | None:
    if not agent.holds(oracle_root):
        return None
    return (
        AuditId.ISOLATION_ORACLE,
        f"the oracle ({type(oracle_root).__qualname__}) is reachable from the env",
    )


def _shared_handles(shared: list[object]) -> _Problem | None:
    if not shared:
        return None
    return (AuditId.ISOLATION_CONNECTION, f"the env and the oracle hold the same {_names(shared)}")


def _descriptors_onto(
    agent: Graph, shared: list[object], oracle_handles: Iterable[object], read_files: set[str]
) -> _Problem | None:
    """The env's file descriptors (not shared with the oracle) onto a file the oracle reads
    or holds open."""
    oracle_targets = {t for h in oracle_handles if (t := _fd_target(h)) is not None}
    agent_fds = [
        (h, t) for h in agent.handles() if h not in shared and (t := _fd_target(h)) is not None
    ]
    onto = [(h, t) for h, t in agent_fds if t in read_files or t in oracle_targets]
    if not onto:
        return None
    return (
        AuditId.ISOLATION_FD,
        f"the env holds {_names(h for h, _ in onto)} onto "
        + ", ".join(sorted({t for _, t in onto})),
    )


def _credentials(agent: Graph, oracle: Graph, read_files: set[str]) -> _Problem | None:
    """The oracle's credential strings, or the paths it reads, among the env's texts."""
    secrets = {t for t in oracle.texts if _CREDENTIAL.search(t)} & agent.texts
    named = {f for f in read_files if any(f in t for t in agent.texts)}
    what = []
    if secrets:
        what.append(f"{len(secrets)} credential string(s) the oracle holds")
    if named:
        what.append("the path of " + ", ".join(sorted(named)))
    if not what:
        return None
    return (AuditId.ISOLATION_CREDENTIALS, "the env holds " + " and ".join(what))


def _oracle_processes(agent: Graph, oracle: Graph) -> _Problem | None:
    oracle_pids = {p for o in oracle.processes() if (p := _pid(o)) is not None}
    exposed = [o for o in agent.processes() if _pid(o) in oracle_pids]
    if not exposed:
        return None
    pids = ", ".join(str(_pid(o)) for o in exposed)
    return (AuditId.ISOLATION_PROCESS, f"the env holds {_names(exposed)} (pid {pids})")
