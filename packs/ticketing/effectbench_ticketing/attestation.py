"""The support desk's ``adversarially_audited`` attestation: one live audit per process tree.

:func:`audit_pack` runs EffectBench's live adversarial audit (:func:`effectbench.api.run_audit`)
over every task once per process and oracle factory, on the provider's own cluster
(:mod:`.audit`'s bench); the provider sets each task's flag from its result, never by hand.
``--workers`` processes adopt the parent's result (:data:`ATTESTATION`) only when they loaded
the same code (the tasks, the schema and seed, the probes' targets, the oracle, the faults,
and EffectBench's judge and audit).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from effectbench.api import Attestation, AuditResult, iter_tasks, run_audit
from effectbench_ticketing.audit import PLAN, bench
from effectbench_ticketing.cluster import Cluster, Login
from effectbench_ticketing.oracle import PostgresOracle
from effectbench_ticketing.tasks import TASKS

ATTESTATION = Attestation(
    f"{__name__}:ATTESTATION",
    (
        "effectbench_ticketing.audit",
        "effectbench_ticketing.db",
        "effectbench_ticketing.oracle",
        "effectbench_ticketing.store",
        "effectbench_ticketing.tasks",
        __name__,
    ),
    PostgresOracle,
)
"""The desk's audit, per oracle factory, and its handoff to worker processes."""


def audit_pack(
    cluster: Cluster,
    oracle: Login,
    oracle_factory: Callable[..., Any] = PostgresOracle,
    definitions: Sequence[Any] = TASKS,
) -> dict[str, AuditResult]:
    """Return the live adversarial audit of ``oracle_factory`` over ``definitions`` (the task
    catalogue by default; run once per process)."""

    def run(tasks: Sequence[Any]) -> dict[str, AuditResult]:
        with bench(cluster, oracle, oracle_factory) as database:
            return run_audit(database, PLAN, list(iter_tasks(tasks)))

    return ATTESTATION.results(oracle_factory, definitions, run)
