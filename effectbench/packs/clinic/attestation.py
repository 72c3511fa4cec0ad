"""The clinic's ``adversarially_audited`` attestation: one live audit per process tree.

:func:`audit_pack` runs the kit's live adversarial audit (:mod:`effectbench.kit.audit`) over
every task once per process and oracle factory, on copies of the clinic's template (where its
probes land: :mod:`.audit`); the provider sets each task's flag from its result, never by hand.
``--workers`` processes adopt the parent's result (:data:`ATTESTATION`) only when they loaded
the same code (the tasks, the template, the probes, the oracle, the faults and the kit's judge
and audit).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from effectbench.kit.audit import Attestation, AuditHandoff, AuditResult
from effectbench.kit.sqlite import SqliteOracle, audit
from effectbench.packs.clinic.audit import PLAN
from effectbench.packs.clinic.db import TEMPLATE
from effectbench.packs.clinic.tasks import TASKS

__all__ = ["ATTESTATION", "AuditHandoff", "AuditResult", "audit_pack", "audits_run"]

ATTESTATION = Attestation(
    f"{__name__}:ATTESTATION",
    (
        "effectbench.kit.sqlite",
        "effectbench.packs.clinic.audit",
        "effectbench.packs.clinic.db",
        "effectbench.packs.clinic.store",
        "effectbench.packs.clinic.tasks",
        __name__,
    ),
    SqliteOracle,
)
"""The clinic's audit, per oracle factory, and its handoff to worker processes."""


def audit_pack(oracle_factory: Callable[..., Any] = SqliteOracle) -> dict[str, AuditResult]:
    """Return the live adversarial audit of ``oracle_factory`` over every task (run once)."""
    return audit(ATTESTATION, TEMPLATE, PLAN, TASKS, oracle_factory)


def audits_run() -> int:
    """Return how many audits this process has made itself (probed here or adopted from this
    machine's audit cache; handed-over ones excluded)."""
    return ATTESTATION.runs
