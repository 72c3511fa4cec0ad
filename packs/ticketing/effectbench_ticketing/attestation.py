"""The ``adversarially_audited`` attestation: one live audit per process tree.

:func:`audit_pack` runs the live adversarial audit (:mod:`.audit`) over every task once per
process and oracle factory, on the provider's own cluster; the provider sets each task's
flag from its result, never by hand.

Worker processes (``--workers N``) need the same flags. The parent hands its result over as
an :class:`AuditHandoff` keyed by :data:`AUDIT_KEY`, the digest of the source files that
decide the audit (the tasks, the schema and seed, the probes, the oracle, the store's fault
list), read when this module is imported; a worker adopts it only when its own key is the
same, so a worker that loaded other code runs its own audit.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from effectbench.api import canonical_hash
from effectbench_ticketing.audit import AuditResult, OracleFactory, run_audit
from effectbench_ticketing.cluster import Cluster, Login
from effectbench_ticketing.oracle import PostgresOracle
from effectbench_ticketing.tasks import TASKS, effects_of, params_of

AUDIT_TRIAL = 1
"""The trial whose payload the adversarial audit writes (its prior trial is 0)."""

_DECIDING_MODULES = (
    "effectbench.judge",
    "effectbench.effects",
    "effectbench_ticketing.audit",
    "effectbench_ticketing.db",
    "effectbench_ticketing.oracle",
    "effectbench_ticketing.store",
    "effectbench_ticketing.tasks",
    __name__,
)


def _source_digest() -> str:
    # effectbench.judge and effectbench.effects are loaded by effectbench.api already.
    try:
        files = {
            name: hashlib.sha256(Path(str(sys.modules[name].__file__)).read_bytes()).hexdigest()
            for name in _DECIDING_MODULES
        }
    except (OSError, KeyError):
        return f"unkeyed:{os.getpid()}:{time.time_ns()}"
    return canonical_hash(files)


AUDIT_KEY = _source_digest()
"""What the default audit's result depends on, as this process loaded it."""

_results: dict[OracleFactory, dict[str, AuditResult]] = {}
_runs = 0


def audit_pack(
    cluster: Cluster, oracle: Login, oracle_factory: OracleFactory = PostgresOracle
) -> dict[str, AuditResult]:
    """Return the live adversarial audit of ``oracle_factory`` over every task (run once)."""
    global _runs
    if oracle_factory not in _results:
        _runs += 1
        _results[oracle_factory] = run_audit(
            cluster,
            oracle,
            [
                (t.task_id, effects_of(t), params_of(t, AUDIT_TRIAL), params_of(t, AUDIT_TRIAL - 1))
                for t in TASKS
            ],
            oracle_factory,
        )
    return _results[oracle_factory]


def audited(oracle_factory: OracleFactory = PostgresOracle) -> dict[str, AuditResult] | None:
    """Return the audit this process already has for ``oracle_factory`` (None: none yet)."""
    return _results.get(oracle_factory)


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
        if self.key != AUDIT_KEY or PostgresOracle in _results:
            return False
        _results[PostgresOracle] = dict(self.results)
        return True


def handoff() -> AuditHandoff | None:
    """Return this process's default audit for worker processes (None: it has not run)."""
    found = _results.get(PostgresOracle)
    return None if found is None else AuditHandoff(AUDIT_KEY, found)
