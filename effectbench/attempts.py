"""Attempts: every run of a (task, trial) is kept, and the first that completed counts.

An episode ends in one of three ways, kept apart everywhere:

* the agent **reported** (success or failure) or **halted**: a completed attempt, scored;
* the harness **around the agent** failed (a model API outage, the agent's own crash, a
  client that left before reporting): ``agent_error``, a drop, never a halt;
* the **benchmark's** harness failed (a record service, browser or display that died):
  ``infrastructure``, a drop (the runner already retried it once on a fresh state).

An oracle that could not read the record (``oracle_unreadable``) is a drop too, and final.

An *attempt* is one run of a cell by a command (``run``, ``submit``, ``--resume``, one
MCP episode, one inspect sample). A cell may be attempted again only while its last
attempt ended in a drop that :data:`RERUNNABLE` names; the first completed attempt is the
cell's outcome, and nothing replaces it. A bundle keeps every attempt that did not count
(``run.attempts``) and the total (``run.n_attempts``); :func:`attempt_problems` is the one
rule the verifier applies to them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from effectbench.schema import DropReason


class Ending(StrEnum):
    """How one attempt ended."""

    REPORTED = "reported"
    """The agent reported success or failure: a scored row."""
    HALTED = "halted"
    """The agent halted: a scored row."""
    AGENT_ERROR = DropReason.AGENT_ERROR.value
    """The harness around the agent failed: a drop, re-runnable."""
    INFRASTRUCTURE = DropReason.INFRASTRUCTURE.value
    """The benchmark's harness failed: a drop, re-runnable."""
    ORACLE_UNREADABLE = DropReason.ORACLE_UNREADABLE.value
    """The oracle could not read the record: a drop, final."""
    UNKNOWN = DropReason.UNKNOWN.value
    """Imported from a document that dropped the pair without saying why: final."""


COMPLETED = frozenset((Ending.REPORTED, Ending.HALTED))
"""The endings of an attempt that counts: the agent reported or halted."""
RERUNNABLE = frozenset((DropReason.AGENT_ERROR, DropReason.INFRASTRUCTURE))
"""The drops after which a cell may be attempted again (the harness failed, not the agent)."""


def ending_of_drop(reason: DropReason) -> Ending:
    """Return the ending of an attempt dropped for ``reason``."""
    return Ending(reason.value)


def ending_of_report(halted: bool) -> Ending:
    """Return the ending of a completed attempt (the agent halted, or reported)."""
    return Ending.HALTED if halted else Ending.REPORTED


def may_retry(reason: DropReason) -> bool:
    """Whether a cell whose last attempt was dropped for ``reason`` may be attempted again."""
    return reason in RERUNNABLE


@dataclass(frozen=True)
class EarlierAttempt:
    """An attempt that did not count: it ended in a re-runnable drop, and the cell ran again."""

    task_id: str
    trial: int
    attempt: int
    """1-based, per cell."""
    ending: Ending
    detail: str = ""


class AttemptLike(Protocol):
    """What :func:`attempt_problems` reads of an attempt (an :class:`EarlierAttempt`, or the
    bundle's record of one)."""

    @property
    def task_id(self) -> str: ...
    @property
    def trial(self) -> int: ...
    @property
    def attempt(self) -> int: ...
    @property
    def ending(self) -> Ending: ...


@dataclass(frozen=True)
class Problem:
    """One way a bundle's attempts do not hold together."""

    rule: str
    """``numbering``, ``replaced`` or ``count``."""
    message: str
    index: int | None = None
    """The entry of ``run.attempts`` it is about, if one."""


def attempt_problems(
    earlier: Sequence[AttemptLike],
    outcomes: Mapping[tuple[str, int], int | None],
    n_attempts: int,
    n_outcomes: int | None = None,
) -> list[Problem]:
    """Return what is wrong with a run's attempts (empty when they hold together).

    ``earlier`` is every attempt that did not count; ``outcomes`` holds every cell with a
    row or a drop: the number its drop declares, or ``None`` for a row (a row is the attempt
    after its cell's earlier ones); ``n_attempts`` is the total the run declares. Each cell's
    earlier attempts are numbered 1, 2, ... in order, each ended in a re-runnable drop, and
    its outcome is the next. ``outcomes`` may leave out the cells with a row and no earlier
    attempt when ``n_outcomes`` counts every cell with a row or a drop.
    """
    tried = Counter((e.task_id, e.trial) for e in earlier)
    counted = {
        cell: tried[cell] + 1 if number is None else number for cell, number in outcomes.items()
    }
    problems: list[Problem] = []
    by_cell: dict[tuple[str, int], list[tuple[int, AttemptLike]]] = {}
    for index, entry in enumerate(earlier):
        by_cell.setdefault((entry.task_id, entry.trial), []).append((index, entry))
        if entry.ending in COMPLETED:
            problems.append(
                Problem(
                    "replaced",
                    f"{entry.task_id} trial {entry.trial} attempt {entry.attempt} "
                    f"{entry.ending.value}, yet the cell ran again: the first completed attempt "
                    "counts and nothing replaces it",
                    index,
                )
            )
        elif entry.ending not in {ending_of_drop(r) for r in RERUNNABLE}:
            problems.append(
                Problem(
                    "replaced",
                    f"{entry.task_id} trial {entry.trial} attempt {entry.attempt} ended "
                    f"{entry.ending.value}, a final drop, yet the cell ran again",
                    index,
                )
            )
    for cell, entries in by_cell.items():
        numbers = [e.attempt for _, e in entries]
        if numbers != list(range(1, len(numbers) + 1)):
            problems.append(
                Problem(
                    "numbering",
                    f"{cell[0]} trial {cell[1]}: earlier attempts are numbered {numbers}, not "
                    f"1 to {len(numbers)} in order (an attempt was removed or moved)",
                    entries[0][0],
                )
            )
        if cell not in counted:
            problems.append(
                Problem(
                    "numbering",
                    f"{cell[0]} trial {cell[1]} has earlier attempts but no row or drop",
                    entries[0][0],
                )
            )
        elif counted[cell] != len(numbers) + 1:
            problems.append(
                Problem(
                    "numbering",
                    f"{cell[0]} trial {cell[1]}: its outcome is attempt {counted[cell]}, but "
                    f"{len(numbers)} earlier attempts are recorded",
                    entries[0][0],
                )
            )
    for cell, number in counted.items():
        if number != 1 and cell not in by_cell:
            problems.append(
                Problem(
                    "numbering",
                    f"{cell[0]} trial {cell[1]}: its outcome is attempt {number}, but no "
                    "earlier attempt is recorded",
                )
            )
    expected = (len(counted) if n_outcomes is None else n_outcomes) + len(earlier)
    if n_attempts != expected:
        problems.append(
            Problem(
                "count",
                f"run.n_attempts is {n_attempts}, but the rows, drops and run.attempts record "
                f"{expected} attempts",
            )
        )
    return problems


def earlier_by_cell(
    earlier: Iterable[EarlierAttempt],
) -> dict[tuple[str, int], list[EarlierAttempt]]:
    """Group earlier attempts by cell, in order."""
    out: dict[tuple[str, int], list[EarlierAttempt]] = {}
    for entry in earlier:
        out.setdefault((entry.task_id, entry.trial), []).append(entry)
    return out
