"""A record directory of MCP episodes: every attempt kept, read back as a run.

Each attempt of a system at a (task, trial) is one file,
``<system>~<task>__t<trial>__a<n>.json`` (:mod:`.paths`; ``n`` = 1, 2, ... per system
and cell), created exclusively, so nothing ever replaces an earlier attempt's file and
two systems recorded into one folder each keep their own attempts. It holds the
system's name, the attempt's number and either ``{"row": ..., "receipt": ...}`` (the
scored row and its receipt, whose key frames go into the folder's ``frames/``) or
``{"dropped": ...}`` (a drop and its reason). An episode server claims its attempt's
file before the episode starts, holding an ``agent_error`` drop (:data:`UNFINISHED`),
and replaces that file (its own, never another attempt's) with the outcome when the
episode ends; a server killed on the way leaves the drop.

Reading (for ``submit --from-records``) checks every file against the row contract
and the pack (known tasks of one split), takes one system's attempts (the only one,
or the one named), refuses files outside the trials, split and substrates the bundle
declares (naming them), and applies the rule of :mod:`effectbench.attempts` to each
cell's attempts: the first completed attempt counts, only a re-runnable drop may be
followed by another attempt, and the numbers run 1, 2, ... without a gap. A problem is
a :class:`~effectbench.errors.DataError` naming the file, or a one-line
:class:`~effectbench.errors.UsageError` when the options and the folder disagree.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from effectbench.attempts import (
    COMPLETED,
    EarlierAttempt,
    Ending,
    attempt_problems,
    ending_of_drop,
    ending_of_report,
)
from effectbench.bundle import MAX_TRIALS, HarnessInfo
from effectbench.errors import DataError, UsageError
from effectbench.mcp.paths import RECORD_NAME, record_path, safe_name, system_part
from effectbench.receipts.collect import evidence_of, with_evidence
from effectbench.receipts.files import FRAMES_DIR, evidence_from_json, evidence_json, write_frames
from effectbench.run.runner import DroppedEpisode, RunResult
from effectbench.schema import HARNESS_KEY, DropReason, EpisodeRecord, Split, Substrate
from effectbench.seam import BenchmarkProvider
from effectbench.strictjson import StrictJSONError, loads_strict

UNFINISHED = (
    "the episode ended without a report or an abort: the client left, or the server was "
    "stopped, before the agent ended it"
)
"""The detail of the drop an attempt's file holds until its episode ends."""
SHOWN_FILES = 5
"""Files a refusal names before it says how many more there are."""


@dataclass(frozen=True)
class Records:
    """The run a record directory holds."""

    run: RunResult
    trials: int
    split: Split
    harness: HarnessInfo | None = None
    """The MCP client every row's episode was driven by (None: not said, or not one)."""


def _content(
    record_dir: Path, system: str | None, attempt: int, outcome: EpisodeRecord | DroppedEpisode
) -> bytes:
    data: dict[str, Any] = {"attempt": attempt}
    if system is not None:
        data["system"] = system
    if isinstance(outcome, DroppedEpisode):
        data["dropped"] = {
            "task_id": outcome.task_id,
            "trial": outcome.trial,
            "reason": outcome.reason.value,
            "detail": outcome.detail,
        }
    else:
        data["row"] = outcome.to_row()
        evidence = evidence_of(outcome)
        if evidence is not None:
            write_frames(record_dir / FRAMES_DIR, evidence.frames)
            data["receipt"] = evidence_json(evidence)
    return (json.dumps(data, sort_keys=True) + "\n").encode("utf-8")


def _attempts_of(record_dir: Path, system: str, task_id: str, trial: int) -> list[tuple[int, Path]]:
    """Return ``system``'s attempts already on disk for one cell, as (number, file), in order.

    A file with this system's part in its name is this system's; it must say so inside
    (two names with one slug cannot share a folder). A file of the cell written before
    records were keyed by system is this system's when it names it.
    """
    out = []
    for path in record_dir.glob("*.json"):
        match = RECORD_NAME.match(path.name)
        if match is None or match["task"] != safe_name(task_id) or int(match["trial"]) != trial:
            continue
        if match["system"] is not None and match["system"] != system_part(system):
            continue
        named = _load(path).get("system")
        if match["system"] is None and named != system:
            continue
        if named is not None and named != system:
            raise UsageError(
                f"{path} holds system {named!r}, whose file names are those of {system!r}: "
                "name your system otherwise, or use another --record-dir"
            )
        out.append((int(match["attempt"] or 1), path))
    return sorted(out)


def claim_attempt(record_dir: Path, system: str, task_id: str, trial: int) -> tuple[int, Path]:
    """Create ``system``'s next attempt's file for a cell, holding an ``agent_error`` drop.

    Return its number and file. Refused (a :class:`UsageError`) when an attempt of the
    system at the cell already completed: the first completed attempt counts, and nothing
    replaces it. Another system's attempts at the cell are its own. The file is created
    exclusively, so two servers never share an attempt.
    """
    record_dir.mkdir(parents=True, exist_ok=True)
    earlier = _attempts_of(record_dir, system, task_id, trial)
    for number, path in earlier:
        if "row" in _load(path):
            raise UsageError(
                f"{task_id} trial {trial} already completed (attempt {number}, {path}) for "
                f"{system!r}: the first completed attempt counts; run another trial"
            )
    drop = DroppedEpisode(task_id, trial, DropReason.AGENT_ERROR, UNFINISHED)
    number = 1 + max((n for n, _ in earlier), default=0)
    while True:
        path = record_path(record_dir, system, task_id, trial, number)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            number += 1
            continue
        try:
            os.write(fd, _content(record_dir, system, number, drop))
            os.fsync(fd)
        finally:
            os.close(fd)
        return number, path


def finish_attempt(
    path: Path, system: str | None, attempt: int, outcome: EpisodeRecord | DroppedEpisode
) -> Path:
    """Replace a claimed attempt's file with the attempt's outcome (atomically, made durable)."""
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(_content(path.parent, system, attempt, outcome))
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(path)
    return path


def write_record(
    record_dir: Path,
    task_id: str,
    trial: int,
    outcome: EpisodeRecord | DroppedEpisode,
    system: str | None = None,
) -> Path:
    """Record one more attempt at a cell, ended with ``outcome``; return its file.

    ``system`` names whose attempt it is (a row names it itself; a drop needs it).
    """
    if isinstance(outcome, EpisodeRecord):
        system = outcome.arm
    if system is None:
        raise ValueError("a dropped attempt's record names its system")
    number, path = claim_attempt(record_dir, system, task_id, trial)
    return finish_attempt(path, system, number, outcome)


def _load(path: Path) -> dict[str, Any]:
    try:
        data = loads_strict(path.read_bytes())
    except OSError as exc:
        raise DataError(f"not a readable episode record: {exc}", file=str(path)) from None
    except StrictJSONError as exc:
        raise DataError(f"not a readable episode record: {exc.message}", file=str(path)) from None
    held = set(data) - {"attempt", "system"} if isinstance(data, dict) else None
    if not isinstance(data, dict) or held not in ({"row"}, {"row", "receipt"}, {"dropped"}):
        raise DataError(
            "an episode record holds a 'row' (with its 'receipt') or 'dropped'", file=str(path)
        )
    return data


@dataclass(frozen=True)
class _Entry:
    """One attempt's file, read."""

    path: Path
    attempt: int
    system: str | None
    outcome: EpisodeRecord | DroppedEpisode

    @property
    def ending(self) -> Ending:
        if isinstance(self.outcome, DroppedEpisode):
            return ending_of_drop(self.outcome.reason)
        return ending_of_report(self.outcome.agent.halted)

    @property
    def cell(self) -> tuple[str, int]:
        return (self.outcome.task_id, self.outcome.trial)


def _entry(path: Path) -> _Entry:
    data = _load(path)
    match = RECORD_NAME.match(path.name)
    if match is None:
        raise DataError(
            "not an episode record's name (<system>~<task>__t<trial>__a<attempt>.json)",
            file=str(path),
        )
    attempt = _attempt(data, match, path)
    system = data.get("system")
    if system is not None and not isinstance(system, str):
        raise DataError("the system's name is not a string", file=str(path), field="system")
    try:
        outcome = _outcome(data, path)
    except (ValidationError, KeyError, TypeError, ValueError, RecursionError) as exc:
        first = (str(exc) or type(exc).__name__).splitlines()[0]
        raise DataError(f"not a valid episode record: {first}", file=str(path)) from None
    if isinstance(outcome, EpisodeRecord):
        if system is not None and system != outcome.arm:
            raise DataError(
                f"the record names system {system!r} but its row's arm is {outcome.arm!r}",
                file=str(path),
            )
        system = outcome.arm
    _check_named_cell(match, system, outcome, path)
    return _Entry(path, attempt, system, outcome)


def _attempt(data: dict[str, Any], match: re.Match[str], path: Path) -> int:
    """The record's attempt, as its file name says it (1 where the name says none)."""
    named = int(match["attempt"] or 1)
    attempt = data.get("attempt", 1 if match["attempt"] is None else None)
    if type(attempt) is not int or attempt != named:
        raise DataError(
            f"the record says attempt {attempt!r} but its file name says {named} "
            "(an attempt's file is never renamed)",
            file=str(path),
            field="attempt",
        )
    return attempt


def _check_named_cell(
    match: re.Match[str],
    system: str | None,
    outcome: EpisodeRecord | DroppedEpisode,
    path: Path,
) -> None:
    """The record's system, task and trial are those its file name says (a trial in range)."""
    if match["system"] is not None and (system is None or system_part(system) != match["system"]):
        raise DataError(
            f"the file name says system {match['system']!r}, the record {system!r} (an "
            "attempt's file is never renamed)",
            file=str(path),
        )
    if not 0 <= outcome.trial < MAX_TRIALS:
        raise DataError(
            f"trial {outcome.trial} is outside 0..{MAX_TRIALS - 1} (a bundle holds at most "
            f"{MAX_TRIALS} trials per task)",
            file=str(path),
        )
    if safe_name(outcome.task_id) != match["task"] or outcome.trial != int(match["trial"]):
        raise DataError(
            f"the record is of {outcome.task_id} trial {outcome.trial}, its file name of "
            "another cell",
            file=str(path),
        )


def _outcome(data: dict[str, Any], path: Path) -> EpisodeRecord | DroppedEpisode:
    """The row (with its receipt) or the drop a record holds."""
    if "row" in data:
        row = EpisodeRecord.model_validate(data["row"])
        if "receipt" in data:
            found = evidence_from_json(data["receipt"], path.parent / FRAMES_DIR, str(path))
            with_evidence(row, found)
        return row
    d = data["dropped"]
    return DroppedEpisode(
        str(d["task_id"]), int(d["trial"]), DropReason(d["reason"]), str(d["detail"])
    )


@dataclass(frozen=True)
class Wanted:
    """What the bundle made of a record directory declares (``submit``'s options)."""

    trials: int
    """Trials per task (``--trials``): a record of a later trial is refused."""
    split: Split
    """The split (``--split``): a record of a task of the other split is refused."""
    substrates: tuple[Substrate, ...] | None = None
    """The substrates (``--substrate``), or None for whichever the records are of."""
    system: str | None = None
    """Whose records, when the folder holds several systems' (``--name``)."""


def _files(paths: Sequence[Path]) -> str:
    shown = ", ".join(p.name for p in paths[:SHOWN_FILES])
    more = len(paths) - SHOWN_FILES
    return shown + (f" and {more} more" if more > 0 else "")


def _one_system(record_dir: Path, entries: list[_Entry], wanted: str | None) -> str:
    """Return whose records to read: the folder's only system, or the one ``wanted`` names."""
    systems = sorted({e.system for e in entries if e.system is not None})
    if not systems:
        raise DataError(
            "no record names its system (records written before attempts were kept, all "
            "dropped): nothing says whose run this is",
            file=str(record_dir),
        )
    if len(systems) == 1:
        return systems[0]
    if wanted in systems:
        return wanted
    listed = ", ".join(repr(s) for s in systems)
    raise UsageError(
        f"--from-records {record_dir} holds the records of {len(systems)} systems ({listed}): "
        "--name names which one to submit"
    )


def _strays(record_dir: Path, entries: list[_Entry], tasks: dict[str, Any], wanted: Wanted) -> None:
    """Refuse the records outside the declared trials, split and substrates, naming them."""
    checks: list[tuple[str, Any]] = [
        (
            f"trials 0..{wanted.trials - 1} (--trials {wanted.trials})",
            lambda e: e.cell[1] >= wanted.trials,
        ),
        (
            f"the {wanted.split.value} split (--split)",
            lambda e: tasks[e.cell[0]].split != wanted.split,
        ),
    ]
    if wanted.substrates is not None:
        names = ",".join(s.value for s in wanted.substrates)
        checks.append(
            (f"--substrate {names}", lambda e: tasks[e.cell[0]].substrate not in wanted.substrates)
        )
    for what, outside in checks:
        stray = sorted(e.path for e in entries if outside(e))
        if stray:
            raise UsageError(
                f"--from-records {record_dir}: {len(stray)} records are outside {what}: "
                f"{_files(stray)}; move them away or change the option"
            )
    held = 1 + max(e.cell[1] for e in entries)
    if held < wanted.trials:
        raise UsageError(
            f"--from-records {record_dir}: the records hold trials 0..{held - 1}, not "
            f"--trials {wanted.trials}: give --trials {held}, or run the missing trials"
        )


def read_records(
    record_dir: Path, pack: BenchmarkProvider, wanted: Wanted | None = None
) -> Records:
    """Read one system's attempts in ``record_dir`` as one run on ``pack``.

    ``wanted`` is what the bundle declares; without it, the trials and the split are
    taken from the records (a folder of one system).
    """
    if not record_dir.is_dir():
        raise UsageError(f"--from-records {record_dir}: not a folder")
    files = sorted(record_dir.glob("*.json"))
    if not files:
        raise UsageError(f"--from-records {record_dir}: no episode records (*.json)")
    tasks = {t.task_id: t for t in pack.tasks()}
    entries = []
    for path in files:
        entry = _entry(path)
        if entry.cell[0] not in tasks:
            raise DataError(f"task {entry.cell[0]!r} is not in pack {pack.name!r}", file=str(path))
        entries.append(entry)
    system = _one_system(record_dir, entries, None if wanted is None else wanted.system)
    entries = [e for e in entries if e.system in (system, None)]
    if wanted is not None:
        _strays(record_dir, entries, tasks, wanted)
    cells: dict[tuple[str, int], list[_Entry]] = {}
    for entry in entries:
        cells.setdefault(entry.cell, []).append(entry)
    splits = {tasks[t].split for t, _ in cells}
    if len(splits) != 1:
        raise DataError("the records mix the dev and test splits", file=str(record_dir))
    order = {tid: i for i, tid in enumerate(tasks)}
    run = RunResult(arm=system, pack=pack.name)
    for cell in sorted(cells, key=lambda c: (order[c[0]], c[1])):
        ordered = sorted(cells[cell], key=lambda e: e.attempt)
        _check_cell(ordered)
        *earlier, last = ordered
        run.attempts.extend(
            EarlierAttempt(cell[0], cell[1], e.attempt, e.ending, _detail(e)) for e in earlier
        )
        if isinstance(last.outcome, DroppedEpisode):
            run.dropped.append(last.outcome)
        else:
            run.rows.append(last.outcome)
    trials = wanted.trials if wanted is not None else 1 + max(t for _, t in cells)
    return Records(
        run=run, trials=trials, split=splits.pop(), harness=_client(record_dir, run.rows)
    )


def _client(record_dir: Path, rows: Sequence[EpisodeRecord]) -> HarnessInfo | None:
    """The harness the rows' episodes say drove them (the MCP client), when every row names
    the same one; a name that is not showable text is refused, naming the records."""
    said = {json.dumps(r.env_fingerprint.get(HARNESS_KEY), sort_keys=True) for r in rows}
    if len(said) != 1:
        return None
    client = json.loads(said.pop())
    if not isinstance(client, dict) or not isinstance(client.get("name"), str):
        return None
    try:
        return HarnessInfo(name=client["name"], version=str(client.get("version") or ""))
    except ValidationError as exc:
        raise DataError(
            f"the MCP client's name or version is not a harness's: {exc.errors()[0]['msg']}",
            file=str(record_dir),
            field=f"env_fingerprint.{HARNESS_KEY}",
        ) from None


def _detail(entry: _Entry) -> str:
    outcome = entry.outcome
    return outcome.detail if isinstance(outcome, DroppedEpisode) else outcome.agent.message


def _check_cell(entries: list[_Entry]) -> None:
    """Apply the attempts rule to one cell's files (the last one is its outcome)."""
    *earlier, last = entries
    numbers = [e.attempt for e in entries]
    for want, entry in enumerate(entries, start=1):
        if entry.attempt != want:
            said = "recorded twice" if numbers.count(entry.attempt) > 1 else "missing"
            missing = want if said == "missing" else entry.attempt
            raise DataError(
                f"{entry.cell[0]} trial {entry.cell[1]}: attempt {missing} is {said} "
                f"(attempts {numbers}); every attempt is kept, never removed or copied",
                file=str(entry.path),
            )
    outcome = {last.cell: None if last.ending in COMPLETED else last.attempt}
    earlier_attempts = [
        EarlierAttempt(e.cell[0], e.cell[1], e.attempt, e.ending, _detail(e)) for e in earlier
    ]
    problems = attempt_problems(earlier_attempts, outcome, len(entries))
    if problems:
        at = earlier[problems[0].index].path if problems[0].index is not None else last.path
        raise DataError(problems[0].message, file=str(at))
