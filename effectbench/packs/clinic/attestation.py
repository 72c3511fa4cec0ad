"""The ``adversarially_audited`` attestation: one live audit per process tree.

:func:`audit_pack` runs the live adversarial audit (:mod:`.audit`) over every
task once per process and oracle factory; the provider sets each task's flag
from its result, never by hand.

Worker processes (``--workers N``) need the same flags. Rather than re-running
the audit in every worker, the parent hands its result over as an
:class:`AuditHandoff`, keyed by :data:`AUDIT_KEY`: the digest of the source
files that decide the audit (the tasks, the template, the probes, the oracle
and the core judge), read when this module is imported. A worker installs the
handoff only when its own key is the same, so a worker that loaded different
code (the checkout edited between the parent's start and the worker's) runs
its own audit. Either way the flag comes from a real audit run in this process
tree.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from effectbench.hashing import canonical_hash
from effectbench.packs.clinic.audit import AuditResult, OracleFactory, run_audit
from effectbench.packs.clinic.oracle import SqliteOracle
from effectbench.packs.clinic.tasks import TASKS, effects_of, params_of

AUDIT_TRIAL = 1
"""The trial whose payload the adversarial audit writes (its prior trial is 0)."""

_DECIDING_MODULES = (
    "effectbench.conformance.redteam",
    "effectbench.effects",
    "effectbench.hashing",
    "effectbench.judge",
    "effectbench.schema",
    "effectbench.packs.clinic.audit",
    "effectbench.packs.clinic.db",
    "effectbench.packs.clinic.oracle",
    "effectbench.packs.clinic.store",
    "effectbench.packs.clinic.tasks",
    __name__,
)
"""The modules whose source decides the audit's result (all loaded by this module's imports)."""


def _source_digest() -> str:
    try:
        files = {
            name: hashlib.sha256(Path(str(sys.modules[name].__file__)).read_bytes()).hexdigest()
            for name in _DECIDING_MODULES
        }
    except OSError:
        # Source that cannot be read cannot be compared: a key no other process shares.
        return f"unkeyed:{os.getpid()}:{time.time_ns()}"
    return canonical_hash(files)


AUDIT_KEY = _source_digest()
"""What the default audit's result depends on, as this process loaded it."""

_results: dict[OracleFactory, dict[str, AuditResult]] = {}
_runs = 0


def audit_pack(oracle_factory: OracleFactory = SqliteOracle) -> dict[str, AuditResult]:
    """Return the live adversarial audit of ``oracle_factory`` over every task (run once)."""
    global _runs
    if oracle_factory not in _results:
        _runs += 1
        _results[oracle_factory] = run_audit(
            [
                (t.task_id, effects_of(t), params_of(t, AUDIT_TRIAL), params_of(t, AUDIT_TRIAL - 1))
                for t in TASKS
            ],
            oracle_factory,
        )
    return _results[oracle_factory]


def audits_run() -> int:
    """Return how many audits this process has run itself (handed-over ones excluded)."""
    return _runs


@dataclass(frozen=True)
class AuditHandoff:
    """The default oracle's audit result, handed from a parent process to its workers."""

    key: str
    results: dict[str, AuditResult]

    def install(self) -> bool:
        """Adopt the result if this process loaded the same code; say whether it did."""
        if self.key != AUDIT_KEY or SqliteOracle in _results:
            return False
        _results[SqliteOracle] = dict(self.results)
        return True


def handoff() -> AuditHandoff:
    """Return this process's default audit (running it if needed) for worker processes."""
    return AuditHandoff(AUDIT_KEY, audit_pack(SqliteOracle))
