"""The Dask executor: episodes on a ``distributed`` cluster the user already runs.

The scheduler and its workers are started by the user's own tooling (``dask
scheduler`` / ``dask worker``, ``dask-jobqueue``, ``dask-kubernetes``); this
process connects as a client (``--scheduler tcp://HOST:PORT``), checks that
every worker runs the same effectbench code, and submits one task per cell.
Each task rebuilds the run's pack and system on its worker once
(:mod:`effectbench.run.executors.worker`), provisions its own episode there and
sends back the row only, as text: the client takes task results in
``msgpack`` alone (a result pickled on the way is refused, never loaded), drops
the result type a worker reports (Dask would unpickle it), and the driver reads
each answer strictly and re-judges its row before it journals it.

Workers are trusted all the same: Dask's protocol pickles other messages (task
errors, control messages), so whoever joins the cluster can run code in the
scheduler and in this process, and a worker can make up the readings a row is
judged from. Run a cluster on a private network, with TLS and certificates
(docs/long-runs.md).

Failures: a worker lost while running an episode is the scheduler's to re-queue
(up to its ``allowed-failures``); when the scheduler gives up
(``KilledWorker``) the episode is submitted again up to
:data:`~effectbench.run.runner.INFRA_RETRIES` more times, then it is an
``infrastructure`` drop. An unreachable scheduler
is a one-line usage error (exit 2); a scheduler that goes away mid-run, or a
worker with other code joining later, stops the run resumably
(:class:`~effectbench.run.executors.RunStopped`).
"""

from __future__ import annotations

import logging
import socket
import uuid
from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from effectbench.errors import RunStopped, UsageError
from effectbench.extras import missing
from effectbench.run.executors.worker import (
    ForgedRow,
    Job,
    Outcome,
    WorkerMismatch,
    from_wire,
    make_job,
    run_cell,
    worker_identity,
)
from effectbench.run.runner import INFRA_RETRIES, Cell, DroppedEpisode, RunPlan
from effectbench.schema import DropReason

CONNECT_TIMEOUT_S = 10.0
"""How long connecting to the scheduler may take before it counts as unreachable."""
WORKER_WAIT_S = 60.0
"""How long the run waits for a first worker to join the scheduler."""
RESULT_FAMILIES = ("msgpack",)
"""The only serialization the client reads task results in: plain data, never a pickle."""


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise missing("dask", "distributed", "--executor dask") from None
    return distributed


def _plain_client(distributed: Any) -> Any:
    """Return a client class that never loads the type a worker reports for a result.

    Dask's client unpickles that report (meant to be a type's name) as it arrives;
    this run needs no type, so a worker's bytes there are dropped unread.
    """

    class PlainDataClient(distributed.Client):  # type: ignore[misc]
        def _handle_key_in_memory(self, key: Any = None, workers: Any = None, **_: Any) -> None:
            super()._handle_key_in_memory(key=key, type=None, workers=workers)

    return PlainDataClient


@contextmanager
def _quiet() -> Iterator[None]:
    """Keep Dask's own log lines off the terminal: the run reports its failures in one line."""
    logger = logging.getLogger("distributed")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


class DaskExecutor:
    """Run cells as tasks on the Dask scheduler at ``scheduler``."""

    name = "dask"

    def __init__(
        self,
        scheduler: str,
        *,
        connect_timeout: float | None = None,
        worker_wait: float | None = None,
    ) -> None:
        self.scheduler = scheduler
        self.connect_timeout = CONNECT_TIMEOUT_S if connect_timeout is None else connect_timeout
        self.worker_wait = WORKER_WAIT_S if worker_wait is None else worker_wait

    def _reachable(self, distributed: Any) -> None:
        """Refuse a malformed or unreachable TCP address before a Dask client is built for it.

        A ``tls://`` address needs the client's certificate in Dask's configuration.
        """
        try:
            scheme, location = distributed.comm.parse_address(self.scheduler)
            if (
                scheme == "tls"
                and distributed.Security().get_connection_args("client")["ssl_context"] is None
            ):
                raise UsageError(
                    f"--scheduler {self.scheduler} needs this client's TLS certificate in Dask's "
                    "configuration (distributed.comm.tls.ca-file, .client.cert, .client.key: "
                    "see docs/long-runs.md)"
                )
            if scheme != "tcp":
                return  # other transports (inproc, ucx) are left to the client
            host, port = distributed.comm.parse_host_port(location)
            socket.create_connection((host, port), timeout=self.connect_timeout).close()
        except (OSError, ValueError, TypeError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
            raise UsageError(
                f"cannot reach the Dask scheduler at {self.scheduler}: {reason}"
            ) from None

    def _connect(self, distributed: Any) -> Any:
        self._reachable(distributed)
        try:
            return _plain_client(distributed)(
                self.scheduler,
                timeout=self.connect_timeout,
                set_as_default=False,
                deserializers=list(RESULT_FAMILIES),
            )
        except (OSError, TimeoutError, ValueError, TypeError) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise UsageError(
                f"cannot reach the Dask scheduler at {self.scheduler}: {reason}"
            ) from None

    def _check_workers(self, client: Any, job: Job) -> None:
        try:
            client.wait_for_workers(1, timeout=self.worker_wait)
        except TimeoutError:
            raise UsageError(
                f"no Dask worker joined the scheduler at {self.scheduler} within "
                f"{self.worker_wait:.0f} s (start one as docs/long-runs.md shows: dask worker "
                f"{self.scheduler} --host ITS_ADDRESS ...)"
            ) from None
        for address, identity in sorted(client.run(worker_identity, on_error="return").items()):
            if isinstance(identity, BaseException):
                reason = str(identity)  # Dask may wrap the worker's error: keep its own words
                if type(identity) is not Exception or not reason:
                    reason = f"{type(identity).__name__}: {reason}"
                raise WorkerMismatch(
                    f"Dask worker {address} cannot run effectbench ({reason}); "
                    "install this project there"
                )
            if identity["code"] != job.code:
                raise WorkerMismatch(
                    f"Dask worker {address} runs effectbench {identity['version']} with code "
                    f"{identity['code'][:19]}, this run {job.version} with code {job.code[:19]}; "
                    "rows from other code must not mix: install the same version on every worker"
                )

    def _outcome(self, future: Any, cell: Cell, distributed: Any) -> Outcome | None:
        """Return the cell's outcome, or ``None`` when its worker was lost (run it again)."""
        where = f"a Dask worker of {self.scheduler}"
        try:
            answer = future.result()
        except distributed.KilledWorker:
            return None
        except (distributed.CancelledError, OSError, TimeoutError):
            raise RunStopped(f"lost the Dask scheduler at {self.scheduler}") from None
        except TypeError as exc:  # the client refused to read the result (not msgpack)
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ForgedRow(
                f"{where} answered {cell.task_id} trial {cell.trial} with data that is not "
                f"plain ({reason}); the run is refused (a worker is trusted with the episodes "
                "it runs: see docs/long-runs.md)"
            ) from None
        try:
            return from_wire(answer, cell, where)
        except WorkerMismatch as exc:
            raise RunStopped(str(exc)) from None

    def run(self, plan: RunPlan, cells: Sequence[Cell]) -> Generator[tuple[Cell, Outcome]]:
        """Submit one task per cell; yield each cell's outcome as its row arrives."""
        if not cells:
            return
        distributed = _distributed()
        job = make_job(plan.sut, plan.provider, where="--executor dask")
        with _quiet():
            client = self._connect(distributed)
            pending: dict[Any, Cell] = {}
            try:
                self._check_workers(client, job)
                tag = uuid.uuid4().hex[:12]
                lost: dict[Cell, int] = {}

                def submit(cell: Cell) -> Any:
                    attempt = lost.get(cell, 0)
                    future = client.submit(
                        run_cell,
                        job,
                        cell.task_id,
                        cell.trial,
                        cell.seed,
                        key=f"effectbench-{tag}-{cell.task_id}-{cell.trial}-{attempt}",
                        pure=False,
                    )
                    pending[future] = cell
                    return future

                finished = distributed.as_completed([submit(c) for c in cells], loop=client.loop)
                for future in finished:
                    cell = pending.pop(future)
                    outcome = self._outcome(future, cell, distributed)
                    future.release()
                    if outcome is None:  # the scheduler gave up on its workers: ours to retry
                        lost[cell] = lost.get(cell, 0) + 1
                        if lost[cell] <= INFRA_RETRIES:
                            finished.add(submit(cell))
                            continue
                        outcome = DroppedEpisode(
                            cell.task_id,
                            cell.trial,
                            DropReason.INFRASTRUCTURE,
                            f"the Dask worker running this episode was lost {lost[cell]} times "
                            "(beyond the scheduler's allowed failures)",
                        )
                    yield cell, outcome
            finally:
                if client.status == "running":
                    client.cancel(list(pending), force=True)
                client.close(timeout=5)
