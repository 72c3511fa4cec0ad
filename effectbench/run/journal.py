"""The run journal: every finished episode's row on disk the moment it is finished.

A journal is a JSON-lines file, append-only. Its first line is the header: the
format, a run id, when the run started and the run's configuration (system and
its code, pack and fingerprint, split, substrates, tasks, trials, seeds, engine
version and code). Every later line is one finished cell of that run: its row,
or its drop with the reason. Each line is written with one ``write`` and made
durable (``fsync``) before the next episode's row is taken, so a run killed at
any point keeps every row it finished.

Resuming (``--resume JOURNAL``) reads the journal back, refuses another
configuration, and leaves to run the cells without a line and the cells whose last
attempt was dropped because a harness failed (``agent_error`` or ``infrastructure``):
each such cell gets a new line, and its earlier lines stay as the run's earlier
attempts (:mod:`effectbench.attempts`); a cell with a row or a final drop never runs
again. The one
defect a kill can leave, a last line cut off mid-write (no newline), is
detected and removed before anything is appended; that episode runs again.
Anything else that does not read as this run's journal (another format, a
line from another run, a damaged line in the middle, a repeated cell) is a
:class:`~effectbench.errors.DataError` naming the file and line.

A row's receipt (:mod:`effectbench.receipts`) is kept in a folder beside the journal
(``JOURNAL.receipts/``, :func:`receipts_folder`), made durable before the row's line is
written; a resumed run's rows get their receipts back from it.
"""

from __future__ import annotations

import gc
import os
import shutil
import stat
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import orjson
from pydantic import ValidationError

from effectbench._version import engine_version
from effectbench.attempts import EarlierAttempt, ending_of_drop, may_retry
from effectbench.classify import InconsistentReading, classify, true_state
from effectbench.errors import DataError, UsageError
from effectbench.manifest import fingerprint
from effectbench.receipts.collect import evidence_of, with_evidence
from effectbench.receipts.files import load_beside, store_beside
from effectbench.run.executors.worker import Outcome, code_digest, source_digest
from effectbench.run.runner import Cell, DroppedEpisode, RunPlan
from effectbench.schema import DropReason, EpisodeRecord, TaskSpec

FORMAT = "effectbench-run-journal"
"""The header's ``journal`` value: what makes a file one of ours."""
FORMAT_VERSION = 2
"""The format this module writes; it reads 1 too (version 2 may repeat a cell whose earlier
attempt was a re-runnable drop)."""
READS = (1, 2)

CONFIG_LABELS = {
    "system": "system",
    "system_class": "system class",
    "system_code": "system source",
    "pack": "pack",
    "fingerprint": "pack fingerprint",
    "split": "split",
    "substrates": "substrates",
    "tasks": "tasks",
    "trials": "trials",
    "seeds": "seeds",
    "engine": "effectbench version",
    "engine_code": "effectbench code",
}
"""The configuration a journal records, in the order a refusal names differences."""


def run_config(plan: RunPlan) -> dict[str, Any]:
    """Return the configuration of ``plan`` that a journal records and a resume must match."""
    sut = plan.sut
    return {
        "system": sut.name,
        "system_class": f"{type(sut).__module__}.{type(sut).__qualname__}",
        "system_code": source_digest(sut),
        "pack": plan.provider.name,
        "fingerprint": fingerprint(plan.provider.manifest()),
        "split": list(dict.fromkeys(t.split.value for t in plan.tasks)),
        "substrates": list(dict.fromkeys(t.substrate.value for t in plan.tasks)),
        "tasks": [t.task_id for t in plan.tasks],
        "trials": len(plan.seeds),
        "seeds": list(plan.seeds),
        "engine": engine_version(),
        "engine_code": code_digest(),
    }


def _show(value: Any) -> str:
    text = orjson.dumps(value).decode()
    return text if len(text) <= 48 else text[:45] + "..."


def config_differences(recorded: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """Return one phrase per configuration field that differs (journal first, then now)."""
    out = []
    for key, label in CONFIG_LABELS.items():
        if recorded.get(key) != now.get(key):
            out.append(f"{label} {_show(recorded.get(key))} there, {_show(now.get(key))} now")
    return out


class _Entry(NamedTuple):
    line: int
    task_id: str
    trial: int
    raw: bytes
    """The whole line: its row or drop is parsed only when the run's outcomes are loaded."""
    body: int
    """Where the row or drop object starts in ``raw``."""
    kind: str
    """``row`` or ``drop``."""
    retry: bool = False
    """A drop after which the cell may run again (``agent_error`` or ``infrastructure``)."""


@dataclass
class JournalContents:
    """A journal as read: its header and one entry per finished cell."""

    path: Path
    header: dict[str, Any]
    entries: dict[tuple[str, int], _Entry]
    """The last line of each finished cell (its outcome, or a re-runnable drop)."""
    earlier: list[_Entry]
    """Every line a later line of its cell superseded (re-runnable drops), in file order."""
    intact_bytes: int
    """Length of the journal up to the end of its last complete line."""
    torn_line: int | None
    """Number of a last line cut off mid-write (its episode runs again), else ``None``."""

    @property
    def config(self) -> dict[str, Any]:
        """The configuration the run recorded."""
        config: dict[str, Any] = self.header["config"]
        return config

    def outcomes(
        self, tasks: Mapping[str, TaskSpec] | None = None
    ) -> dict[tuple[str, int], Outcome]:
        """Parse and check every journalled row and drop (a DataError names file and line).

        Each row is judged again: its labels must be what the truth table gives for its
        reading, and its task facts (with ``tasks``, the run's) the task's own.
        """
        config = self.config
        with _bulk():
            return {key: _outcome(self.path, e, config, tasks) for key, e in self.entries.items()}

    def missing(self, cells: Iterable[Cell]) -> list[Cell]:
        """Return the cells of ``cells`` to run: no entry, or a re-runnable drop last."""
        entries = self.entries
        return [
            cell
            for cell in cells
            if (cell.task_id, cell.trial) not in entries
            or entries[(cell.task_id, cell.trial)].retry
        ]

    def earlier_attempts(self) -> list[EarlierAttempt]:
        """Return every superseded attempt (a re-runnable drop), numbered within its cell."""
        out: list[EarlierAttempt] = []
        numbers: dict[tuple[str, int], int] = {}
        for entry in self.earlier:
            key = (entry.task_id, entry.trial)
            numbers[key] = numbers.get(key, 0) + 1
            drop = _drop(self.path, entry)
            out.append(
                EarlierAttempt(
                    entry.task_id, entry.trial, numbers[key], ending_of_drop(drop.reason),
                    drop.detail,
                )
            )  # fmt: skip
        return out


def _fail(path: Path, message: str, line: int | None = None) -> DataError:
    return DataError(message, file=str(path), line=line)


def _header(path: Path, first: bytes) -> dict[str, Any]:
    try:
        header = orjson.loads(first)
    except orjson.JSONDecodeError:
        header = None
    if not isinstance(header, dict) or header.get("journal") != FORMAT:
        raise _fail(path, "not an EffectBench run journal (no journal header on line 1)", 1)
    if header.get("version") not in READS:
        raise _fail(
            path,
            f"journal format {header.get('version')!r}; this effectbench reads "
            f"{' and '.join(map(str, READS))}",
            1,
        )
    if not isinstance(header.get("run"), str) or not isinstance(header.get("config"), dict):
        raise _fail(path, "the journal header has no run id or configuration", 1)
    problem = _config_problem(header["config"])
    if problem is not None:
        raise _fail(path, f"the journal header's configuration is damaged: {problem}", 1)
    return header


def _config_problem(config: Mapping[str, Any]) -> str | None:
    """Say what is wrong with the types of a journal's configuration (None when right)."""
    tasks, trials, seeds = config.get("tasks"), config.get("trials"), config.get("seeds")
    if not isinstance(config.get("system"), str):
        return "'system' is not a name"
    if not isinstance(tasks, list) or not all(isinstance(t, str) for t in tasks):
        return "'tasks' is not a list of task ids"
    if type(trials) is not int or trials < 0:
        return "'trials' is not a count"
    if not isinstance(seeds, list) or len(seeds) != trials:
        return f"'seeds' is not a list of {trials} seeds"
    if not all(s is None or type(s) is int for s in seeds):
        return "'seeds' holds something other than integers"
    return None


_ROW = b',"row":'
_DROP = b',"drop":'


@contextmanager
def _bulk() -> Iterator[None]:
    """Pause the cyclic garbage collector while many acyclic objects are built at once.

    Loading a 100,000-row journal otherwise spends most of its time in
    collections that can free nothing (measured in benchmarks/bench_scale.py).
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def read_journal(path: Path) -> JournalContents:
    """Read a journal; a :class:`DataError` (file, line) for anything but a torn last line."""
    try:
        data = _read_regular(Path(path))
    except FileNotFoundError:
        raise UsageError(f"no journal at {path}") from None
    except OSError as exc:
        raise _fail(path, f"cannot read: {exc.strerror or exc}") from None
    with _bulk():
        return _parse(path, data)


def _read_regular(path: Path) -> bytes:
    """Read a regular file; refuse anything else (a FIFO would block the read for ever)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "not a regular file (a journal is a file the run wrote)")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read()
    finally:
        os.close(fd)


def _parse(path: Path, data: bytes) -> JournalContents:
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline; else a line cut off mid-write
    if not lines:
        what = "empty" if not data else "cut off inside its header"
        raise _fail(path, f"the journal is {what}: the run stopped before its first episode")
    header = _header(path, lines[0])
    run = header["run"]
    config = header["config"]
    tasks = set(config.get("tasks", ()))
    trials = config.get("trials", 0)
    entries: dict[tuple[str, int], _Entry] = {}
    earlier: list[_Entry] = []
    loads = orjson.loads
    for number, raw in enumerate(lines[1:], start=2):
        # An entry is {"run":..,"task_id":..,"trial":..,"row"|"drop":{..}} in that order; a '"'
        # inside a JSON string is always escaped, so the first ',"row":' ends the cell's key.
        kind, cut, start = "row", raw.find(_ROW), len(_ROW)
        if cut < 0:
            kind, cut, start = "drop", raw.find(_DROP), len(_DROP)
        try:
            if cut < 0 or not raw.endswith(b"}"):
                raise ValueError(number)
            key = loads(raw[:cut] + b"}")
            task_id, trial, other = key["task_id"], key["trial"], key["run"]
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            raise _fail(
                path, "not a journal entry (the journal is damaged or edited)", number
            ) from None
        if other != run:
            raise _fail(path, f"entry of another run ({other!r}; this journal is {run!r})", number)
        if type(task_id) is not str or task_id not in tasks:
            raise _fail(path, f"episode {task_id!r} is not in this run", number)
        if type(trial) is not int or not 0 <= trial < trials:
            raise _fail(path, f"episode {task_id!r} trial {trial!r} is not in this run", number)
        key = (task_id, trial)
        entry = _Entry(number, task_id, trial, raw, cut + start, kind)
        if kind == "drop":
            entry = entry._replace(retry=may_retry(_drop(path, entry).reason))
        if key in entries:
            before = entries[key]
            if not before.retry:
                raise _fail(
                    path,
                    f"repeats {task_id} trial {trial} of line {before.line}, whose attempt "
                    "counts (only a dropped attempt of a failed harness may be run again)",
                    number,
                )
            earlier.append(before)
        entries[key] = entry
    torn = len(lines) + 1 if tail else None
    return JournalContents(path, header, entries, earlier, len(data) - len(tail), torn)


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _write_error(path: Path, exc: OSError) -> DataError:
    return _fail(path, f"cannot write the journal: {exc.strerror or exc}")


class Journal:
    """An open journal that finished cells are appended to (one durable line each)."""

    def __init__(
        self, path: Path, fd: int, header: dict[str, Any], contents: JournalContents | None
    ) -> None:
        self.path = path
        self._fd = fd
        self.header = header
        self.run_id: str = header["run"]
        self.started_at: str = header["started_at"]
        self._contents = contents
        self.torn_line = contents.torn_line if contents is not None else None
        self.resumed = contents is not None
        self._outcomes: dict[tuple[str, int], Outcome] = {}

    @classmethod
    def create(cls, path: Path, plan: RunPlan) -> Journal:
        """Start a new journal for ``plan`` at ``path`` (an existing file is never overwritten).

        Missing folders above ``path`` are made.
        """
        path = Path(path)
        header = {
            "journal": FORMAT,
            "version": FORMAT_VERSION,
            "run": uuid.uuid4().hex,
            "started_at": _now(),
            "config": run_config(plan),
        }
        # The header is made durable under a temporary name and then linked into place, so a
        # journal never exists without its whole header and an existing file is never replaced.
        draft = path.with_name(f".{path.name}.{header['run']}.draft")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                _write_line(fd, orjson.dumps(header) + b"\n")
            finally:
                os.close(fd)
            try:
                os.link(draft, path)
            finally:
                draft.unlink()
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        except FileExistsError:
            raise UsageError(
                f"journal {path} already exists: continue it with --resume {path}, "
                "or choose another --journal"
            ) from None
        except OSError as exc:
            raise _write_error(path, exc) from None
        _sync_folder(path.parent)
        return cls(path, fd, header, None)

    @classmethod
    def resume(cls, path: Path, plan: RunPlan) -> Journal:
        """Reopen the journal at ``path`` to continue ``plan`` (refusing another configuration)."""
        path = Path(path)
        contents = read_journal(path)
        differences = config_differences(contents.config, run_config(plan))
        if differences:
            raise _fail(
                path, "this journal is of another run configuration: " + "; ".join(differences)
            )
        # every row checked (and judged again) before the journal is touched
        outcomes = contents.outcomes({t.task_id: t for t in plan.tasks})
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            if contents.torn_line is not None:  # drop the cut-off line: its episode runs again
                os.ftruncate(fd, contents.intact_bytes)
                os.fsync(fd)
        except OSError as exc:
            raise _write_error(path, exc) from None
        journal = cls(path, fd, contents.header, contents)
        for (task_id, trial), outcome in outcomes.items():
            if isinstance(outcome, EpisodeRecord):
                found = load_beside(receipts_folder(path), task_id, trial)
                with_evidence(outcome, found)
        journal._outcomes = outcomes
        return journal

    def outcomes(self) -> dict[tuple[str, int], Outcome]:
        """Return the rows and drops the journal held when it was opened, by cell (the last
        attempt of each)."""
        return dict(self._outcomes)

    def earlier_attempts(self) -> list[EarlierAttempt]:
        """Return the attempts the journal held that a later attempt superseded."""
        return self._contents.earlier_attempts() if self._contents is not None else []

    def append(self, cell: Cell, outcome: Outcome) -> None:
        """Record ``cell``'s row or drop; return once the line is durable."""
        entry: dict[str, Any] = {"run": self.run_id, "task_id": cell.task_id, "trial": cell.trial}
        if isinstance(outcome, DroppedEpisode):
            entry["drop"] = {"reason": outcome.reason.value, "detail": outcome.detail}
        else:
            evidence = evidence_of(outcome)
            if evidence is not None:  # durable before the row's line: a resume finds it
                try:
                    store_beside(receipts_folder(self.path), cell.task_id, cell.trial, evidence)
                except OSError as exc:
                    raise _write_error(self.path, exc) from None
            entry["row"] = outcome.to_row()
        self._write(orjson.dumps(entry) + b"\n")

    def _write(self, line: bytes) -> None:
        try:
            _write_line(self._fd, line)
        except OSError as exc:
            raise _write_error(self.path, exc) from None

    def close(self) -> None:
        """Close the journal file (every line is already durable)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _write_line(fd: int, line: bytes) -> None:
    """Write ``line`` with one ``write`` and make it durable before returning."""
    written = os.write(fd, line)
    if written != len(line):  # a short write leaves a torn line: a resume runs it again
        raise OSError(f"short write ({written} of {len(line)} bytes)")
    os.fsync(fd)


def open_journal(plan: RunPlan, *, journal: Path | None, resume: Path | None) -> Journal | None:
    """Return the journal ``--journal`` starts or ``--resume`` continues (``None``: neither)."""
    if resume is not None:
        if journal is not None and Path(journal) != Path(resume):
            raise UsageError("--resume continues the journal it names; drop --journal")
        return Journal.resume(resume, plan)
    if journal is not None:
        return Journal.create(journal, plan)
    return None


def receipts_folder(path: Path) -> Path:
    """Return the folder beside the journal at ``path`` that keeps its rows' receipts."""
    return Path(path).with_name(Path(path).name + ".receipts")


def retire_journal(path: Path, bundle: Path) -> None:
    """Remove the journal at ``path`` (and its receipts folder) once the bundle folder
    ``bundle`` durably holds its rows.

    Every file of the bundle and the folder itself are synced first, so no
    finished row exists only in memory when its journal line goes away.
    """
    for file in sorted(p for p in Path(bundle).rglob("*") if p.is_file()):
        fd = os.open(file, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    for folder in sorted({p.parent for p in Path(bundle).rglob("*")} | {Path(bundle)}):
        _sync_folder(folder)
    _sync_folder(Path(bundle).parent)
    Path(path).unlink()
    shutil.rmtree(receipts_folder(path), ignore_errors=True)
    _sync_folder(Path(path).parent)


def _sync_folder(folder: Path) -> None:
    """Make a new file's name durable (fsync the folder holding it), where the system allows."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _drop(path: Path, entry: _Entry) -> DroppedEpisode:
    try:
        drop = orjson.loads(entry.raw[entry.body : -1])
        reason, detail = DropReason(drop["reason"]), drop["detail"]
        if not isinstance(detail, str):
            raise TypeError(detail)
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        raise _fail(path, "drop entry without a known reason and detail", entry.line) from None
    return DroppedEpisode(entry.task_id, entry.trial, reason, detail)


def _outcome(
    path: Path, entry: _Entry, config: Mapping[str, Any], tasks: Mapping[str, TaskSpec] | None
) -> Outcome:
    task_id, trial = entry.task_id, entry.trial
    body = entry.raw[entry.body : -1]
    if entry.kind == "drop":
        return _drop(path, entry)
    try:
        row = EpisodeRecord.model_validate_json(body)
    except ValidationError as exc:
        where = ".".join(str(p) for p in exc.errors()[0]["loc"]) or "row"
        raise DataError(
            "not an episode row", file=str(path), line=entry.line, field=where
        ) from None
    if (row.task_id, row.trial, row.arm) != (task_id, trial, config["system"]) or (
        row.seed != config["seeds"][trial]
    ):
        raise _fail(path, "the row is not of this entry's episode, system and seed", entry.line)
    problem = _judged_again(row, tasks.get(task_id) if tasks is not None else None)
    if problem is not None:
        raise _fail(
            path,
            f"{problem}: the journal was edited; remove the line to run the episode again",
            entry.line,
        )
    return row


def _judged_again(row: EpisodeRecord, task: TaskSpec | None) -> str | None:
    """Say how a journalled row differs from what its reading and its task give (or None)."""
    if task is not None:
        facts = (task.category, task.substrate, task.correct_action_available)
        if (row.category, row.substrate, row.correct_action_available) != facts:
            return "the row's category, substrate or correct action is not its task's"
    try:
        state = true_state(row.oracle)
    except InconsistentReading as exc:
        return f"the row's oracle reading is inconsistent ({exc})"
    label = classify(row.agent.reported_success, state, row.correct_action_available)
    if label is None or (label.outcome, label.swer_variant) != (row.outcome, row.swer_variant):
        gives = f"{label.outcome.value}/{label.swer_variant.value}" if label else "no label"
        return (
            f"the row is labelled {row.outcome.value}/{row.swer_variant.value}, but the truth "
            f"table gives {gives} for its reading"
        )
    return None
