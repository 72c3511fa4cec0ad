"""The ticketing pack: EffectBench's :class:`~effectbench.api.RecordPack` on PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any

import psycopg

from effectbench.api import AuditResult, Effect, Record, RecordPack, RecordService, Write
from effectbench_ticketing.attestation import ATTESTATION, audit_pack
from effectbench_ticketing.audit import PLAN, attack
from effectbench_ticketing.cluster import Cluster, Login
from effectbench_ticketing.colleague import Colleague
from effectbench_ticketing.db import SURFACES, TEMPLATE, TEMPLATE_DIGEST, Roles, build_template
from effectbench_ticketing.frontends import FRONT_ENDS
from effectbench_ticketing.oracle import ObservesOthers, PostgresOracle
from effectbench_ticketing.service import TicketService
from effectbench_ticketing.store import CATALOGUE, TicketStore
from effectbench_ticketing.tasks import TASKS, TicketingTask

NAME = "ticketing"


class TicketingProvider(RecordPack):
    """A support desk on PostgreSQL: an HTTP service, a read-only oracle, 30 tasks per substrate.

    Each task exists once per front end (:mod:`.frontends`): ``ticketing::NAME`` on ``api``
    and ``ticketing::NAME@web``; the manifest lists every variant (api first, in catalogue
    order, then web), so the fingerprint does not depend on which substrates a run chose.

    The provider starts a private PostgreSQL cluster (:mod:`.cluster`), builds the template
    database once and runs the live adversarial audit on it; each episode gets a fresh
    clone (``ep_N``), mounted on the provider's service and dropped when the episode ends.
    :meth:`close` (or leaving the ``with`` block, or process exit) stops the service and the
    cluster and removes its folder.
    """

    name = NAME
    front_ends = FRONT_ENDS
    faults = CATALOGUE
    plan = PLAN
    attestation = ATTESTATION
    default_oracle = PostgresOracle
    engine = "postgresql"
    surfaces = SURFACES
    oracle_note = (
        "role tk_oracle (pg_read_all_data, read-only transactions) on a Unix socket; every "
        "table and the schema of the episode database; per-table delta"
    )
    template_digest = TEMPLATE_DIGEST

    def __init__(self, *, oracle_factory: Any = PostgresOracle) -> None:
        self.cluster = Cluster()
        try:
            self.cluster.start()
            self.roles: Roles = build_template(self.cluster)
            super().__init__(oracle_factory)
        except BaseException:
            self.cluster.stop()
            raise
        self.closing(self.service.stop, self.cluster.stop)

    # -- the desk's part --------------------------------------------------------------------

    def new_service(self) -> RecordService[Any]:
        """The desk's service (started by the first episode)."""
        return TicketService()

    def definitions(self) -> Sequence[TicketingTask]:
        """The task catalogue (27 dev, 3 sequestered)."""
        return TASKS

    def run_audit(self, oracle_factory: Any) -> dict[str, AuditResult]:
        """The live adversarial audit of ``oracle_factory`` on this cluster (once per process)."""
        return audit_pack(self.cluster, self.roles.oracle, oracle_factory, self.definitions())

    def _connector(
        self, login: Login, database: str, *, autocommit: bool = False
    ) -> Callable[[], psycopg.Connection[Any]]:
        def connect() -> psycopg.Connection[Any]:
            return self.cluster.connect(login, database, autocommit=autocommit)

        return connect

    def furnish(self, definition: TicketingTask, database: str) -> None:
        """Add ``definition``'s own rows to a fresh clone (the written tasks have none: every
        one starts from the template; a generated task adds its world)."""

    @contextmanager
    def record(
        self,
        definition: TicketingTask,
        params: Mapping[str, Any],
        effects: tuple[Effect, ...],
        alive: Callable[[], bool],
    ) -> Iterator[Record]:
        """Clone the template; the app, the colleague and the oracle each get their own role."""
        database = f"ep_{next(self.counter)}"
        with ExitStack() as stack:
            stack.enter_context(self.cluster.database(database, TEMPLATE))
            self.furnish(definition, database)
            read = self._connector(self.roles.oracle, database, autocommit=True)
            oracle = self._oracle_factory(read, effects, alive)
            stack.callback(oracle.close)
            colleague = None
            if definition.concurrent is not None:
                colleague = Colleague(
                    definition.concurrent, self._connector(self.roles.colleague, database)
                )
                if isinstance(oracle, ObservesOthers):
                    colleague.committed.append(oracle.observe)
                stack.callback(colleague.close)
            app = self._connector(self.roles.app, database)()
            store = TicketStore(app, definition.fault, colleague)
            stack.callback(store.close)

            def write(attacker: Write) -> None:
                with self.cluster.connect(self.cluster.admin, database) as conn:
                    attack(conn, attacker)

            yield Record(
                store=store,
                oracle=oracle,
                attack=write,
                health=lambda: None if colleague is None else colleague.failure,
            )

    def __enter__(self) -> TicketingProvider:
        return self
