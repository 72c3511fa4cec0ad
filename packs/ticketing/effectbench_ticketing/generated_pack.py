"""The ``ticketing-generated`` pack: the support desk's app, faults and oracle over generated tasks.

The ticketing pack (:mod:`.provider`) keeps its 30 written tasks (its fingerprint, and so the
shipped reference bundles, stay as they are); this pack serves the generated catalogue
(:mod:`.generated`) on the same cluster, service, front ends, faults, audit plan and oracle.
It is derived from one declaration (:class:`~effectbench.api.CatalogueVariant`); what it adds
is its record's world loader: each generated task has a world of its own
(:class:`~.generated.World`), so an episode's fresh clone of the template gets *its task's*
rows before the app, the colleague or the oracle connect, the adversarial audit probes each
task on the seed state plus its world, and a task's ``initial_state`` names its world's
digest. The public manifest lists the dev split; the sequestered split (present only with the
secret in ``EFFECTBENCH_SEQUESTERED_SECRET``) is committed to by its digest and size alone
(:class:`~effectbench.api.GeneratedCatalogue`).

``GeneratedTicketingProvider(seed=S)`` serves the fresh instance drawn from submission seed
``S`` instead of the public dev split (its own cluster; every world audited anew), as
``effectbench submit --pack ticketing-generated --instance-seed S`` and the verifier build it
(:meth:`~effectbench.api.GeneratedCatalogue.instantiate`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from effectbench.api import (
    SEQUESTERED,
    AuditResult,
    CatalogueVariant,
    GeneratedCatalogue,
    Split,
    TaskSpec,
    iter_tasks,
    run_audit,
)
from effectbench_ticketing import db
from effectbench_ticketing.audit import PLAN, bench
from effectbench_ticketing.generated import CATALOGUE, GENERATOR_VERSION, NAME, GeneratedTask
from effectbench_ticketing.oracle import PostgresOracle
from effectbench_ticketing.provider import TicketingProvider

__all__ = ["GeneratedTicketingProvider"]


class GeneratedTicketingProvider(GeneratedCatalogue, TicketingProvider):
    """The support desk over the generated catalogue (see the module's docstring)."""

    variant = CatalogueVariant(
        name=NAME,
        catalogue=CATALOGUE,
        generator_version=GENERATOR_VERSION,
        record={"ticketing": db.TEMPLATE_DIGEST},
        modules=(
            "effectbench_ticketing.audit",
            "effectbench_ticketing.db",
            "effectbench_ticketing.oracle",
            "effectbench_ticketing.store",
            "effectbench_ticketing.tasks",
            "effectbench_ticketing.generated",
        ),
        oracle=PostgresOracle,
    )

    def run_audit(self, oracle_factory: Any) -> dict[str, AuditResult]:
        """The live adversarial audit, each task on its own world (once per process; a task
        not yet audited, as the sequestered split's once its secret is set, is audited then)."""
        return self.attestation.results(
            oracle_factory, self.definitions(), lambda tasks: self._probe(tasks, oracle_factory)
        )

    def _probe(
        self, definitions: Sequence[GeneratedTask], oracle_factory: Callable[..., Any]
    ) -> dict[str, AuditResult]:
        results: dict[str, AuditResult] = {}
        with bench(self.cluster, self.roles.oracle, oracle_factory) as database:
            for d in definitions:
                database.world(d.world.script())
                results |= run_audit(database, PLAN, list(iter_tasks([d])))
        return results

    def furnish(self, definition: GeneratedTask, database: str) -> None:  # type: ignore[override]
        """Add the task's world to the episode's fresh clone (as the superuser, before the
        app, the colleague or the oracle connect)."""
        with self.cluster.connect(self.cluster.admin, database) as conn:
            with conn.transaction():
                for statement in definition.world.script():
                    conn.execute(statement)

    def mechanism(self, task: TaskSpec) -> str:
        """How ``task``'s fault is injected, with the parameters its template drew."""
        d: GeneratedTask = self.definition(task)
        said = super().mechanism(task)
        if d.split is Split.TEST or d.fault.name == "none":
            return said
        drawn = {
            "partial": f"dropped: {d.fault.dropped}",
            "validation": f"cites: {d.fault.rejection}",
            "wrong_row": f"lands {d.fault.row_offset:+d} ticket from the one named",
        }.get(d.fault.name)
        if d.fault.name in ("duplicate", "double_delivery", "double_credit"):
            drawn = f"delivered {d.fault.copies} times"
        return said if drawn is None or said == SEQUESTERED else f"{said} ({drawn})"
