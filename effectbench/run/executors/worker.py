"""What runs on a worker: rebuild the run's pack and system there, run one cell, return its row.

Every executor that leaves the driver's process ships a :class:`Job` (small
and picklable: the pack by name or importable class, the system by baseline
name or pickled, the code digests) and the cells to run. The worker rebuilds
the pack and the system once per job, so each worker provisions its own
episodes (service, browser, display as the pack needs) and only rows travel
back. Before it runs anything for a job, a worker refuses when it loaded other
code than the driver (:class:`WorkerMismatch`): rows from other code must not
mix into one run.

What travels back is plain data, never a pickle: :func:`run_cell` answers
with text (:func:`to_wire`: the row's JSON and its receipt, a drop's reason, or the refusal),
and the driver reads it with :func:`from_wire`, which accepts only a strictly
valid row or drop of the cell it asked for (then re-judged by the driver:
:func:`effectbench.run.runner.rejudge`).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import multiprocessing.util
import os
import pickle
import socket
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

import effectbench
from effectbench._version import engine_version
from effectbench.baselines import BASELINES, get_baseline
from effectbench.errors import EffectBenchError, UsageError
from effectbench.hashing import canonical_hash
from effectbench.manifest import fingerprint
from effectbench.packs import get_pack, registry_name
from effectbench.receipts.collect import evidence_of, with_evidence
from effectbench.receipts.files import evidence_from_inline, evidence_inline
from effectbench.run.runner import Cell, DroppedEpisode, run_episode
from effectbench.schema import DropReason, EpisodeRecord, TaskSpec
from effectbench.seam import (
    BenchmarkProvider,
    Closable,
    HandsOffToWorkers,
    SystemUnderTest,
    WorkerHandoff,
    own_baselines,
)
from effectbench.strictjson import StrictJSONError, loads_strict

Outcome = EpisodeRecord | DroppedEpisode
"""What one cell yields: its scored row, or why it was dropped."""


MAX_ANSWER_CHARS = 32 * 1024 * 1024
"""The longest answer a worker may send for one cell (a row with many model calls fits)."""


class WorkerMismatch(UsageError):
    """A worker cannot run this job's cells as the driver would (other code, pack or system)."""


class ForgedRow(EffectBenchError):
    """A worker's answer is no plain row or drop of its cell, or a row does not follow from its
    readings: the run is refused (exit status 1)."""


def to_wire(outcome: Outcome | WorkerMismatch) -> str:
    """Return a cell's answer as text: ``row``, ``drop`` or ``refused``, a newline, the body
    (a row's JSON line, then its receipt with the frames inline on a line of its own)."""
    if isinstance(outcome, WorkerMismatch):
        return f"refused\n{outcome}"
    if isinstance(outcome, DroppedEpisode):
        body = {"reason": outcome.reason.value, "detail": outcome.detail}
        return "drop\n" + json.dumps(body, ensure_ascii=False)
    evidence = evidence_of(outcome)
    receipt = "" if evidence is None else "\n" + json.dumps(evidence_inline(evidence))
    return "row\n" + outcome.model_dump_json() + receipt


def from_wire(answer: object, cell: Cell, where: str) -> Outcome:
    """Read ``where``'s answer for ``cell``: a row or a drop, strictly; nothing else is taken.

    Raises :class:`WorkerMismatch` for a worker's refusal and :class:`ForgedRow`
    for anything that is not a well-formed answer about ``cell``.
    """

    def forged(what: str) -> ForgedRow:
        return ForgedRow(
            f"{where} answered {cell.task_id} trial {cell.trial} with {what}; the run is "
            "refused (a worker is trusted with the episodes it runs: see docs/long-runs.md)"
        )

    if not isinstance(answer, str):
        raise forged(f"a {type(answer).__name__}, not text")
    if len(answer) > MAX_ANSWER_CHARS:
        raise forged(f"{len(answer)} characters (at most {MAX_ANSWER_CHARS})")
    kind, _, body = answer.partition("\n")
    if kind == "refused":
        raise WorkerMismatch(body)
    try:
        if kind == "row":
            line, _, receipt = body.partition("\n")
            row = EpisodeRecord.from_json(line)
            if receipt:
                evidence = evidence_from_inline(loads_strict(receipt.encode("utf-8")))
                if evidence.receipt.episode_id != row.episode_id:
                    raise ValueError("the receipt is of another episode")
                with_evidence(row, evidence)
        elif kind == "drop":
            drop = loads_strict(body.encode("utf-8"))
            if not isinstance(drop, dict) or set(drop) != {"reason", "detail"}:
                raise ValueError("a drop is {reason, detail}")
            if not isinstance(drop["detail"], str):
                raise ValueError("a drop's detail is text")
            return DroppedEpisode(
                cell.task_id, cell.trial, DropReason(drop["reason"]), drop["detail"]
            )
        else:
            raise ValueError(f"an answer of unknown kind {kind[:40]!r}")
    except (ValidationError, StrictJSONError, ValueError) as exc:
        raise forged(f"no valid {kind[:40]!r}: {str(exc).splitlines()[0]}") from None
    if (row.task_id, row.trial) != cell.key:
        raise forged(f"the row of {row.task_id} trial {row.trial}")
    return row


@cache
def code_digest() -> str:
    """Return the digest of this process's effectbench source (every ``.py`` of the package)."""
    root = Path(effectbench.__file__).resolve().parent
    files = {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*.py"))
    }
    return canonical_hash({"version": engine_version(), "files": files})


def source_digest(obj: object) -> str:
    """Return the digest of the module file that defines ``type(obj)`` (``""`` if unreadable)."""
    try:
        path = inspect.getsourcefile(type(obj))
        if path is None:
            return ""
        return "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except (OSError, TypeError):
        return ""


def worker_identity() -> dict[str, str]:
    """Return what a worker reports before it is given cells: version and code digest."""
    return {"version": engine_version(), "code": code_digest(), "host": socket.gethostname()}


@dataclass(frozen=True)
class Job:
    """What a worker needs to run cells of one run; rebuilt there, never shipped live."""

    key: str
    """Digest of everything below: a worker rebuilds its state when the key changes."""
    pack: str | type[BenchmarkProvider]
    """A registered pack's name, or an importable provider class built with no arguments."""
    fingerprint: str
    system: tuple[str, Any]
    """``("baseline", name)`` or ``("pickled", bytes)``."""
    system_code: str
    handoff: WorkerHandoff | None
    version: str
    code: str


def _handoff(provider: BenchmarkProvider) -> WorkerHandoff | None:
    return provider.worker_handoff() if isinstance(provider, HandsOffToWorkers) else None


def _system_recipe(
    sut: SystemUnderTest, provider: BenchmarkProvider, where: str
) -> tuple[str, Any]:
    shipped = {*BASELINES.values(), *own_baselines(provider).values()}
    if type(sut) in shipped:
        return ("baseline", sut.name)
    try:
        return ("pickled", pickle.dumps(sut))
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        raise UsageError(
            f"{where} needs a picklable system under test; {sut.name!r} is not ({exc})"
        ) from None


def _pack_recipe(provider: BenchmarkProvider, where: str) -> str | type[BenchmarkProvider]:
    kind = type(provider)
    name = registry_name(kind)
    if name is not None:
        return name
    try:
        pickle.dumps(kind)
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        raise UsageError(
            f"{where} rebuilds the pack in each worker; {kind.__qualname__} cannot be ({exc})"
        ) from None
    return kind


def make_job(sut: SystemUnderTest, provider: BenchmarkProvider, *, where: str) -> Job:
    """Return the job that rebuilds ``sut`` on ``provider`` in a worker (``where``: the option).

    Raises :class:`~effectbench.errors.UsageError` when the system or the pack
    cannot be rebuilt in another process.
    """
    pack = _pack_recipe(provider, where)
    system = _system_recipe(sut, provider, where)
    pack_fingerprint = fingerprint(provider.manifest())
    system_code = source_digest(sut)
    key = canonical_hash(
        {
            "pack": pack if isinstance(pack, str) else f"{pack.__module__}.{pack.__qualname__}",
            "fingerprint": pack_fingerprint,
            "system": [system[0], hashlib.sha256(pickle.dumps(system[1])).hexdigest()],
            "system_code": system_code,
            "code": code_digest(),
        }
    )
    return Job(
        key=key,
        pack=pack,
        fingerprint=pack_fingerprint,
        system=system,
        system_code=system_code,
        handoff=_handoff(provider),
        version=engine_version(),
        code=code_digest(),
    )


@dataclass
class _State:
    key: str
    pack: BenchmarkProvider
    sut: SystemUnderTest
    tasks: dict[str, TaskSpec]
    close: multiprocessing.util.Finalize


_current: list[_State] = []
"""This process's adopted job (at most one; a new job closes the previous pack)."""


def _where() -> str:
    return f"worker on {socket.gethostname()} (pid {os.getpid()})"


def _close(pack: BenchmarkProvider) -> None:
    if isinstance(pack, Closable):
        pack.close()


def _build(job: Job) -> _State:
    if job.code != code_digest():
        raise WorkerMismatch(
            f"{_where()} runs effectbench {engine_version()} with code {code_digest()[:19]}, "
            f"this run {job.version} with code {job.code[:19]}; rows from other code must not "
            "mix: install the same version of the project on every worker"
        )
    if job.handoff is not None:
        job.handoff.install()
    try:
        pack = get_pack(job.pack) if isinstance(job.pack, str) else job.pack()
        kind, value = job.system
        sut = get_baseline(value, pack) if kind == "baseline" else pickle.loads(value)
    except Exception as exc:  # any failure to rebuild is this worker's, reported in one line
        raise WorkerMismatch(
            f"{_where()} cannot rebuild the run's pack or system: {type(exc).__name__}: {exc}"
        ) from None
    if (got := fingerprint(pack.manifest())) != job.fingerprint:
        _close(pack)
        raise WorkerMismatch(
            f"{_where()} built pack {pack.name} with fingerprint {got}, this run has "
            f"{job.fingerprint}"
        )
    if job.system_code and source_digest(sut) != job.system_code:
        _close(pack)
        raise WorkerMismatch(
            f"{_where()} loaded other code for the system under test {sut.name!r} than this run"
        )
    # Pool workers leave through os._exit: atexit does not run, multiprocessing's finalizers do.
    close = multiprocessing.util.Finalize(pack, _close, args=(pack,), exitpriority=10)
    return _State(job.key, pack, sut, {t.task_id: t for t in pack.tasks()}, close)


def adopt(job: Job) -> None:
    """Make ``job`` this process's job (rebuilding pack and system once per job)."""
    if _current and _current[0].key == job.key:
        return
    while _current:
        _current.pop().close()
    _current.append(_build(job))


_one_at_a_time = threading.Lock()
"""A pack's provider is not shared between threads: a worker process runs one episode at a time."""


def run_cell(job: Job, task_id: str, trial: int, seed: int) -> str:
    """Run one (task, trial) of ``job`` in this process; answer its row or drop as text.

    Episodes in one process never overlap (a Dask worker with several threads
    runs them one after another); run more worker processes for more at once.
    A worker that cannot run the job as the driver would answers its refusal.
    """
    with _one_at_a_time:
        try:
            adopt(job)
        except WorkerMismatch as exc:
            return to_wire(exc)
        state = _current[0]
        return to_wire(run_episode(state.sut, state.pack, state.tasks[task_id], trial, seed))
