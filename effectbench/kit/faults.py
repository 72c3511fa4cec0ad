"""The pack kit's fault injection: a pack's catalogue of faults and the save path's replies.

A kit-built pack injects each task's divergence at its app's persistence boundary, where the
agent's save meets the record; the oracle never changes. :class:`FaultCatalogue` is a pack's
list of faults with what each does, once:

* the sentence every receipt of a task shows (:meth:`FaultCatalogue.mechanism`);
* which true states an honest episode can reach under it (:meth:`FaultCatalogue.reachable`,
  the pack's published reachable-state table): a new row is never correct when no save
  persists or every save writes two, an edit never when it never lands on its row;
* how a save is delivered (:meth:`FaultCatalogue.deliveries`: once, or twice for a
  double-delivered click or an automatic resubmit; :meth:`FaultCatalogue.dedupes`: whether
  the service honours the form's idempotency key).

The faults every pack's save path shares have one name and one reply here: ``session`` (the
session expired, nothing written), ``validation`` (the service rejects the form), ``noop``
(the form posted to a preview: success painted, nothing written), ``optimistic`` (success
painted, the commit rolled back), ``timeout`` (committed, then the request times out) and
``partial`` (stored with a field dropped). :func:`refused` and :func:`settled` are the replies
around a save; :func:`normalised` and :func:`previous` the two ways a save finds the wrong
target (a code whose leading zeros were stripped, the row before the one named).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from effectbench.episode_http import Reply
from effectbench.schema import TrueState

__all__ = [
    "NOOP",
    "OPTIMISTIC",
    "PARTIAL",
    "SESSION",
    "TIMEOUT",
    "VALIDATION",
    "FaultCatalogue",
    "failed",
    "normalised",
    "previous",
    "refused",
    "settled",
]

SESSION = "session"
VALIDATION = "validation"
NOOP = "noop"
OPTIMISTIC = "optimistic"
TIMEOUT = "timeout"
PARTIAL = "partial"

_EVERY_STATE = frozenset((TrueState.CORRECT, TrueState.WRONG_PERSISTED, TrueState.ABSENT))


@dataclass(frozen=True)
class FaultCatalogue:
    """Every fault of one pack, with what it does (see the module's docstring)."""

    pack: str
    mechanisms: Mapping[str, str]
    """Each fault's name -> one sentence: what it does and where (its receipts show it)."""
    never_persists: frozenset[str] = frozenset((SESSION, VALIDATION, NOOP, OPTIMISTIC))
    """Save faults under which no save reaches the tables (refused, previewed, rolled back)."""
    writes_twice: frozenset[str] = frozenset()
    """Save faults under which every save inserts two rows (never one)."""
    never_lands: frozenset[str] = frozenset()
    """Edit faults under which the edited row is never written."""
    deduplicated: frozenset[str] = frozenset()
    """Faults under which one save reaches the service twice and the service honours the
    form's idempotency key (a re-post de-duplicated, or only some of its rows)."""
    names: tuple[str, ...] = field(init=False)
    delivered_twice: frozenset[str] = field(init=False)
    """Faults under which one save reaches the service twice: those that write twice and those
    de-duplicated."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", tuple(self.mechanisms))
        object.__setattr__(self, "delivered_twice", self.writes_twice | self.deduplicated)
        named = self.writes_twice | self.never_lands | self.deduplicated
        unknown = sorted(named - set(self.names))
        if unknown:
            raise ValueError(f"{self.pack}: faults without a mechanism: {', '.join(unknown)}")

    def check(self, name: str) -> None:
        """Raise when ``name`` is not a fault of the catalogue."""
        if name not in self.mechanisms:
            raise ValueError(f"unknown {self.pack} fault {name!r}")

    def mechanism(self, name: str) -> str:
        """Return how fault ``name`` is injected (one sentence)."""
        self.check(name)
        return self.mechanisms[name]

    def reachable(self, name: str, *, inserts: bool) -> frozenset[TrueState]:
        """Return the true states an honest episode can read under fault ``name``.

        ``inserts`` says whether the contract asks for new rows (rather than an edit of an
        existing one). Only what the fault makes impossible is excluded; everything an agent
        might reach by other actions (an edit repairing a partial save) stays reachable.
        """
        if inserts and name in self.never_persists | self.writes_twice:
            return _EVERY_STATE - {TrueState.CORRECT}
        if not inserts and name in self.never_lands:
            return _EVERY_STATE - {TrueState.CORRECT}
        return _EVERY_STATE

    def deliveries(self, name: str) -> int:
        """Return how many times one save reaches the service under fault ``name``."""
        return 2 if name in self.delivered_twice else 1

    def dedupes(self, name: str) -> bool:
        """Say whether the service honours the idempotency key under fault ``name``."""
        return name in self.deduplicated


def refused(fault: str, noun: str, rejection: str) -> Reply | None:
    """Return the reply of a save refused before anything is written (None: not refused).

    ``session``: the session expired; ``validation``: the service rejects the ``noun`` saying
    ``rejection``.
    """
    if fault == SESSION:
        return Reply(401, "error", "Your session expired; please sign in again")
    if fault == VALIDATION:
        return Reply(422, "error", f"The server rejected the {noun}: {rejection}")
    return None


def settled(fault: str, noun: str, saved: Reply) -> Reply:
    """Return the reply of a save that went through: ``saved``, or a timeout after the commit."""
    if fault == TIMEOUT:
        return Reply(504, "error", f"Request timed out; the {noun} may not have been saved")
    return saved


def failed(noun: str, error: Exception) -> Reply:
    """Return the reply of a save the database refused (its first line says why)."""
    return Reply(500, "error", f"The {noun} could not be saved ({error})".splitlines()[0])


def normalised(code: str) -> str:
    """Return ``code`` with the leading zeros of its number stripped (``M-0417`` -> ``M-417``)."""
    prefix, _, digits = code.partition("-")
    return f"{prefix}-{digits.lstrip('0') or '0'}"


def previous(row_id: int) -> int:
    """Return the id of the row before ``row_id`` (where a wrong-row edit lands)."""
    return row_id - 1
