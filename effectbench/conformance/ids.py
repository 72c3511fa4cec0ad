"""The finding ids of ``effectbench pack check``: one registry, documented in the guide.

Every finding the conformance audit reports carries an :class:`AuditId`: a stable
``group.rule`` id, the SPEC 5.2.1 attestation (or table) it fails, and a one-line
meaning. ``docs/pack-authors.md`` holds the same table (``make generate`` rewrites it
with :func:`with_audit_table`; a test compares the two).
"""

from __future__ import annotations

from enum import StrEnum

from effectbench.findings import id_table_rows, with_generated_section

__all__ = ["AuditId", "audit_table", "docs_audit_table", "with_audit_table"]

_BEGIN = "<!-- pack check ids: begin (make generate) -->"
_END = "<!-- pack check ids: end -->"

ISOLATED = "isolated_from_agent"
UNIQUE = "trial_unique_payload"
REFUSAL = "refusal_controls"
AUDITED = "adversarially_audited"
TABLE = "reachable-state table"
TOLD = "agent view (SPEC 5.3)"
"""What a blindness finding fails: the agent is told the situation, never the answer."""
DOABLE = "doability"
"""What a doability finding fails: a task with a correct action can be done where offered."""
RELEASE = "release"
"""What a finding of the pack as a whole (not one attestation) fails."""


class AuditId(StrEnum):
    """Every id a ``pack check`` finding may carry, with its attestation and meaning.

    A member is its id string (``AuditId.REDTEAM_SATISFIED == "redteam.satisfied"``).
    """

    attestation: str
    """The SPEC 5.2.1 attestation (or the reachable-state table) the finding fails."""
    meaning: str
    """What the finding says is wrong, in one line."""

    def __new__(cls, value: str, attestation: str, meaning: str) -> AuditId:
        """Make the member ``value`` with its attestation and one-line ``meaning``."""
        member = str.__new__(cls, value)
        member._value_ = value
        member.attestation = attestation
        member.meaning = meaning
        return member

    ATTEST_FALSE = (
        "attest.false",
        RELEASE,
        "a task's oracle attests isolated_from_agent, trial_unique_payload or "
        "adversarially_audited as false: it may not be released",
    )
    RUN_FAILED = (
        "audit.run_failed",
        RELEASE,
        "a scripted run could not be made or read (provisioning, the scripted attempt or "
        "the oracle failed): the task's attestations are unchecked",
    )
    ISOLATION_ORACLE = (
        "isolation.oracle_reachable",
        ISOLATED,
        "what the agent is given (env, parameters, task) reaches the oracle object",
    )
    ISOLATION_CONNECTION = (
        "isolation.shared_connection",
        ISOLATED,
        "what the agent is given reaches a connection, socket, cursor or file the oracle "
        "holds: the oracle reads through the agent's channel",
    )
    ISOLATION_CREDENTIALS = (
        "isolation.credentials",
        ISOLATED,
        "what the agent is given holds the oracle's credentials (a password, a DSN) or the "
        "location of its read path (the file or database it reads)",
    )
    ISOLATION_FD = (
        "isolation.read_path_fd",
        ISOLATED,
        "what the agent is given holds a file descriptor onto a file or socket the oracle "
        "reads through",
    )
    ISOLATION_PROCESS = (
        "isolation.process_handle",
        ISOLATED,
        "what the agent is given holds a handle of a process the oracle holds (it could "
        "stop or signal it)",
    )
    ISOLATION_UNCHECKED = (
        "isolation.unchecked",
        ISOLATED,
        "the object graph the agent is given is larger than the walk's bound: isolation "
        "was not fully checked",
    )
    PAYLOAD_REPEATS = (
        "payload.repeats",
        UNIQUE,
        "two trials of a task get the same parameters",
    )
    PAYLOAD_UNBOUND = (
        "payload.unbound",
        UNIQUE,
        "two trials of a task bind the same contract: the trial's payload never reaches "
        "the effect the oracle checks",
    )
    PAYLOAD_CROSS_TRIAL = (
        "payload.cross_trial",
        UNIQUE,
        "the oracle confirms the scripted write of another trial's payload",
    )
    PAYLOAD_UNCHECKED = (
        "payload.unchecked",
        UNIQUE,
        "the pack has no scripted attempt (ScriptedPack): no cross-trial write was tried",
    )
    REFUSAL_ROWS_CHANGED = (
        "refusal.rows_changed",
        REFUSAL,
        "on a task without a correct action (a refusal control) the record changed while "
        "the agent did nothing",
    )
    REFUSAL_BLIND_WRITE = (
        "refusal.blind_write_correct",
        REFUSAL,
        "the scripted blind write on a task without a correct action is read as correct",
    )
    REFUSAL_NONE_SHIPPED = (
        "refusal.none_shipped",
        REFUSAL,
        "tasks attest refusal_controls, but the pack ships no control task without a "
        "correct action",
    )
    REFUSAL_UNCHECKED = (
        "refusal.unchecked",
        REFUSAL,
        "the pack has no scripted attempt (ScriptedPack): no blind write on a task without "
        "a correct action was tried",
    )
    REACHABLE_OUTSIDE = (
        "reachable.outside",
        TABLE,
        "a scripted run read a true state or a count outside the pack's published "
        "reachable-state table",
    )
    REDTEAM_SATISFIED = (
        "redteam.satisfied",
        AUDITED,
        "an adversary satisfied the oracle without producing the true effect",
    )
    REDTEAM_UNCHECKED = (
        "redteam.unchecked",
        AUDITED,
        "the pack offers no red-team moves (OffersRedTeam), or neither offers a standard "
        "move nor says why it cannot be made: the attestation is unchecked",
    )
    REDTEAM_MOVE_FAILED = (
        "redteam.move_failed",
        AUDITED,
        "an adversary move raised instead of acting: it was not tried",
    )
    REDTEAM_NO_POSITIVE = (
        "redteam.no_positive",
        AUDITED,
        "the oracle does not confirm the true effect (the pack's true_effect move, or on no "
        "task the scripted attempt): its refusals prove nothing",
    )
    PACK_BLINDNESS = (
        "pack.blindness",
        TOLD,
        "a category, trap against control or an expected halt is predicted (cross-validated "
        "AUROC above 0.65) from what a system observes before its first action: the agent "
        "view and the first screen",
    )
    PACK_UNDOABLE = (
        "pack.undoable",
        DOABLE,
        "a front end cannot complete a task it offers: its controls cannot enter a value the "
        "task's effect requires, or an informed agent (told the expected effect) does not "
        "produce it there",
    )


def audit_table() -> str:
    """Return the Markdown table of every finding id (the docs' copy of the registry)."""
    lines = ["| id | attestation | meaning |", "|---|---|---|"]
    lines += [f"| `{a.value}` | {a.attestation} | {a.meaning} |" for a in AuditId]
    return "\n".join(lines)


def docs_audit_table(text: str) -> list[tuple[str, str, str]]:
    """Return the ``(id, attestation, meaning)`` rows of the finding-id table in a docs page."""
    return id_table_rows(text, _BEGIN, _END)


def with_audit_table(text: str) -> str:
    """Return the docs page ``text`` with its finding-id table replaced by :func:`audit_table`."""
    return with_generated_section(text, _BEGIN, _END, audit_table())
