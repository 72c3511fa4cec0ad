"""The pack kit's audit harness: the live adversarial audit of a pack's oracle, and its red team.

For every task the audit writes each probe of :data:`ATTACKS` straight into a fresh copy of
the record (an attacker that bypasses the app), between the oracle's before-reading and its
judgement; the oracle must refuse every probe (any verdict but ``confirmed``) and confirm the
positive control, the declared effect written exactly. A task's ``adversarially_audited``
flag is the conjunction of those outcomes (:func:`run_audit`), computed and never set by hand,
and the rule is the red team's (:func:`effectbench.conformance.redteam.probe_failure`). The
same probes are the pack's red team in ``effectbench pack check`` (:data:`RED_TEAM`), written
into a live episode's record instead of a bare copy.

The probes: ``phantom`` (nothing written), ``homonym_decoy`` (the effect on a same-name record
or the target's sibling), ``wrong_payload`` (the payload altered), ``wrong_target`` (another
record), ``duplicate`` (written twice), ``write_then_revert`` (written and committed, then
every row put back), ``prior_trial_row`` (another trial's payload), ``prior_trial_seeded``
(another trial's rows present before the episode, nothing written now), ``collateral_write``
(the effect plus a write on another table), ``collateral_same_surface`` (plus an edit of an
unrelated row of the same table), ``collateral_loss`` (plus a deleted seed row) and
``collateral_schema`` (plus a table created beside the data).

What is the pack's own is small and stated in an :class:`AuditPlan`: how a probe picks
another record (``retarget``), its three collateral writes, the payload fields to alter, and
the columns an attacker's row needs that no contract names. Writes go through :class:`Db`,
one dialect-neutral view of a DB-API connection (``?`` placeholders, SQLite and PostgreSQL
alike), so the same probes run on any SQL record. A pack's :class:`Bench` gives the audit a
resettable copy of its record and an oracle over it; an :class:`Attestation` runs the audit
once per process and hands it to ``--workers`` processes (:class:`AuditHandoff`).

The default oracle's audit is also kept on this machine (:class:`AuditCache`), keyed by
everything it reads: the source of the modules that decide it, the tasks' payloads and
worlds, Python's and SQLite's versions. Another process that loads the same code and the
same tasks then adopts it instead of probing again. An entry is sealed with this machine's
key (:mod:`effectbench.sealed`): one this machine did not write is never read.
``EFFECTBENCH_AUDIT_CACHE=off`` makes every process audit for itself;
``EFFECTBENCH_AUDIT_CACHE=DIR`` keeps the entries and their key in ``DIR`` instead of this
user's cache home. ``pack check`` and ``site build --fresh`` audit anew (:func:`audits_live`):
their processes share a cache of their own, empty when they start.

The **doability audit** of ``pack check`` (:func:`audit_doability`) asks the converse: can
every task be done where it is offered? Each task's required values (its effect's selectors
and field values) are compared with what the substrate's front end declares its closed
controls can enter (:class:`DeclaresChoices`), and an informed agent, the pack's scripted steps
given the values the expected effect is resolved from, runs every task with a correct action;
the oracle must read the expected effect. A task a front end cannot complete is an
:class:`Undoable` naming the task, the substrate and the missing control value.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib
import json
import os
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Hashable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from effectbench.conformance.redteam import probe_failure
from effectbench.effects import Effect, EffectKind
from effectbench.environment import variable
from effectbench.filenames import cache_home
from effectbench.hashing import canonical_hash
from effectbench.schema import OracleVerdict, Substrate, Verdict
from effectbench.sealed import CacheSeal, default_seal, machine_key
from effectbench.seam import TRUE_EFFECT, ChecksFrontEnds

__all__ = [
    "ATTACKS",
    "AUDIT_TRIAL",
    "POSITIVE",
    "RED_TEAM",
    "SHADOW",
    "Attack",
    "Attestation",
    "AuditCache",
    "AuditHandoff",
    "AuditPlan",
    "AuditResult",
    "Bench",
    "Choices",
    "Db",
    "DeclaresChoices",
    "Doability",
    "Probing",
    "Undoable",
    "Write",
    "attacks",
    "audit_doability",
    "audit_scope",
    "audits_live",
    "audit_task",
    "choices_of",
    "required_values",
    "run_audit",
    "unenterable",
]

POSITIVE = TRUE_EFFECT
"""The positive control: the declared effect written exactly (the oracle must confirm it)."""
ATTACKS = (
    "phantom",
    "homonym_decoy",
    "wrong_payload",
    "wrong_target",
    "duplicate",
    "write_then_revert",
    "prior_trial_row",
    "prior_trial_seeded",
    "collateral_write",
    "collateral_same_surface",
    "collateral_loss",
    "collateral_schema",
)
"""Every probe the oracle must refuse (the audit of each task runs them all)."""
RED_TEAM = {
    TRUE_EFFECT: POSITIVE,
    "wrong_record": "homonym_decoy",
    "double_write": "duplicate",
    "write_then_revert": "write_then_revert",
    "other_table": "collateral_write",
    "wrong_target": "wrong_target",
    "wrong_payload": "wrong_payload",
    "collateral_same_surface": "collateral_same_surface",
    "collateral_loss": "collateral_loss",
    "collateral_schema": "collateral_schema",
}
"""A kit-built pack's red team in ``effectbench pack check``: move name -> the probe it writes
(``report_only`` and ``banner_only`` are the audit's generic moves; another trial's payload is
the audit's own cross-trial write)."""
SHADOW = "shadow_records"
"""The table the ``collateral_schema`` probe creates."""
AUDIT_TRIAL = 1
"""The trial whose payload the audit writes (its prior trial is 0)."""


class Db:
    """A DB-API connection as the attacker's writes see it: ``?`` placeholders on any dialect.

    ``placeholder`` is the driver's (``?`` for sqlite3, ``%s`` for psycopg). Selectors compare
    every column as text, as the judge does.
    """

    def __init__(self, conn: Any, placeholder: str = "?") -> None:
        self.conn = conn
        self._mark = placeholder

    def execute(self, query: str, params: Sequence[Any] = ()) -> Any:
        """Run one statement (``?`` marks the parameters) and return its cursor."""
        if self._mark != "?":
            query = query.replace("%", "%%").replace("?", self._mark)
        return self.conn.execute(query, tuple(params))

    def rows(self, query: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Return every row a query selects, as dictionaries."""
        cur = self.execute(query, params)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]

    def one(self, query: str, params: Sequence[Any] = ()) -> Any:
        """Return the first column of the first row a query selects (None: no row)."""
        row = self.execute(query, params).fetchone()
        return None if row is None else row[0]

    def insert(self, table: str, row: Mapping[str, Any]) -> None:
        """Insert one row."""
        marks = ", ".join("?" * len(row))
        self.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({marks})", list(row.values()))

    def _where(self, match: Mapping[str, Any]) -> str:
        return " AND ".join(f"CAST({k} AS TEXT) = ?" for k in match) or "TRUE"

    def update(self, table: str, fields: Mapping[str, Any], match: Mapping[str, Any]) -> None:
        """Set ``fields`` on every row ``match`` selects."""
        sets = ", ".join(f"{k} = ?" for k in fields)
        values = [*fields.values(), *(str(v) for v in match.values())]
        self.execute(f"UPDATE {table} SET {sets} WHERE {self._where(match)}", values)

    def select(self, table: str, match: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Return every row of ``table`` that ``match`` selects."""
        where = self._where(match)
        return self.rows(f"SELECT * FROM {table} WHERE {where}", [str(v) for v in match.values()])

    def replace(self, table: str, rows: Sequence[Mapping[str, Any]]) -> None:
        """Put ``table`` back to exactly ``rows``."""
        self.execute(f"DELETE FROM {table}")
        for row in rows:
            self.insert(table, row)


Write = Callable[[Db], None]
"""One transaction of an attacker's writes."""


@dataclass(frozen=True)
class AuditPlan:
    """What the audit needs to know of a pack's record (see the module's docstring)."""

    retarget: Callable[[Db, dict[str, Any], Mapping[str, Any], bool], dict[str, Any]]
    """``(db, match, params, homonym)`` -> the selector moved to a same-name record or sibling
    (``homonym``), or to a stranger's."""
    other_table: Callable[[Db, Sequence[Effect]], None]
    """A write to a table the effects do not name."""
    same_surface: Callable[[Db, Sequence[Effect]], None]
    """An edit of a row the effects do not select, on a table they name."""
    loss: Write
    """The deletion of a seed row."""
    payload: tuple[str, ...]
    """The fields whose value is the trial's payload (the first one set is altered)."""
    fillers: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Per table: required columns an attacker's row carries that no contract names."""


@dataclass(frozen=True)
class Attack:
    """One probe: the transactions it commits in turn, and what it seeds before the
    oracle's before-reading."""

    writes: tuple[Write, ...]
    seed_first: Write | None = None


def _groups(effects: Sequence[Effect]) -> list[tuple[str, dict[str, Any], list[Effect]]]:
    groups: list[tuple[str, dict[str, Any], list[Effect]]] = []
    for e in effects:
        for surface, match, members in groups:
            if surface == e.surface and match == e.match:
                members.append(e)
                break
        else:
            groups.append((str(e.surface), dict(e.match), [e]))
    return groups


def materialize(
    db: Db,
    plan: AuditPlan,
    effects: Sequence[Effect],
    params: Mapping[str, Any],
    *,
    retarget: str | None = None,
    alter_payload: bool = False,
    copies: int = 1,
) -> None:
    """Write the resolved ``effects`` straight into the record (optionally corrupted)."""
    altered = False
    for surface, match, members in _groups(effects):
        if retarget is not None:
            match = plan.retarget(db, match, params, retarget == "homonym")
        fields: dict[str, Any] = {}
        for e in members:
            if e.kind is EffectKind.FIELD_EQUALS and e.field:
                fields[e.field] = e.value
            if e.idempotency_key is not None:
                fields["idempotency_key"] = e.idempotency_key
        payload = next((f for f in plan.payload if f in fields), None)
        if alter_payload and not altered and payload is not None:
            fields[payload] = f"{fields[payload]} (altered)"
            altered = True
        if any(e.count_new_only for e in members):
            row = {**plan.fillers.get(surface, {}), **match, **fields}
            for _ in range(copies):
                db.insert(surface, row)
            continue
        if fields:
            db.update(surface, fields, match)
        for _ in range(copies - 1):  # a second copy of an existing row: a new id, same content
            for found in db.select(surface, match):
                db.insert(surface, {k: v for k, v in found.items() if k != "id"})


def _reverted(plan: AuditPlan, effects: Sequence[Effect], params: Mapping[str, Any]) -> Attack:
    """The effect written and committed, then every row of its tables put back as it was."""
    tables = sorted({str(e.surface) for e in effects})
    kept: dict[str, list[dict[str, Any]]] = {}

    def write(db: Db) -> None:
        for t in tables:
            kept[t] = db.rows(f"SELECT * FROM {t}")
        materialize(db, plan, effects, params)

    def revert(db: Db) -> None:
        for t in tables:
            db.replace(t, kept[t])

    return Attack((write, revert))


def _schema(db: Db) -> None:
    db.execute(f"CREATE TABLE {SHADOW} (id integer)")


def attacks(
    plan: AuditPlan,
    effects: Sequence[Effect],
    params: Mapping[str, Any],
    prior_effects: Sequence[Effect] = (),
    prior: Mapping[str, Any] | None = None,
) -> dict[str, Attack]:
    """Return every probe of the audit by name, :data:`POSITIVE` first, for the resolved
    ``effects`` of a trial with ``params`` (and, given, another trial's)."""

    def positive(db: Db) -> None:
        materialize(db, plan, effects, params)

    def plus(extra: Write) -> Attack:
        def both(db: Db) -> None:
            positive(db)
            extra(db)

        return Attack((both,))

    def variant(**how: Any) -> Attack:
        return Attack((lambda db: materialize(db, plan, effects, params, **how),))

    out = {
        POSITIVE: Attack((positive,)),
        "phantom": Attack((lambda db: None,)),
        "homonym_decoy": variant(retarget="homonym"),
        "wrong_payload": variant(alter_payload=True),
        "wrong_target": variant(retarget="stranger"),
        "duplicate": variant(copies=2),
        "write_then_revert": _reverted(plan, effects, params),
        "collateral_write": plus(lambda db: plan.other_table(db, effects)),
        "collateral_same_surface": plus(lambda db: plan.same_surface(db, effects)),
        "collateral_loss": plus(plan.loss),
        "collateral_schema": plus(_schema),
    }
    if prior is not None:

        def prior_row(db: Db) -> None:
            materialize(db, plan, prior_effects, prior)

        out["prior_trial_row"] = Attack((prior_row,))
        out["prior_trial_seeded"] = Attack((lambda db: None,), seed_first=prior_row)
    return out


class AuditedOracle(Protocol):
    """What the audit drives: an oracle over the bench's copy of the record."""

    def snapshot(self) -> Any:
        """Read the record now."""
        ...

    def judge(self, before: Any) -> OracleVerdict:
        """Judge against ``before``."""
        ...


class Probing(Protocol):
    """One task's probes on a bench: the oracle, a way back to the seed state, the writes."""

    oracle: AuditedOracle

    def reset(self) -> None:
        """Put the record back to the seed state (what a fresh episode holds)."""
        ...

    def write(self, write: Write) -> None:
        """Commit ``write`` in one transaction as the attacker (bypassing the app)."""
        ...


class Bench(Protocol):
    """A pack's record for the audit: a copy of its seed state and its oracle over it."""

    errors: tuple[type[Exception], ...]
    """What a probe that cannot be written raises (the driver's errors)."""

    def task(self, effects: Sequence[Effect]) -> AbstractContextManager[Probing]:
        """Open one task's probing: an oracle of the resolved ``effects`` over the copy."""
        ...


@dataclass(frozen=True)
class AuditResult:
    """One task's audit: whether it passed and which probes the oracle got wrong."""

    task_id: str
    passed: bool
    failures: tuple[str, ...]


_UNREAD = object()
"""The seed state's reading before a task's first probe has read it."""


def audit_task(
    bench: Bench,
    plan: AuditPlan,
    task_id: str,
    effects: Sequence[Effect],
    params: Mapping[str, Any],
    prior: Mapping[str, Any],
) -> AuditResult:
    """Run every probe of the audit for one task (``effects`` unresolved).

    Every probe starts from :meth:`Probing.reset`, the seed state, so the oracle reads that
    state once per task and judges each probe against that one reading (a probe that seeds a
    row first reads its own). A reset that left an earlier probe's write behind then shows as
    a change the probe did not make, rather than vanishing into a fresh before-reading.
    """
    resolved = tuple(e.resolve(params) for e in effects)
    before_trial = tuple(e.resolve(prior) for e in effects)
    failures: list[str] = []
    seed_reading: Any = _UNREAD
    with bench.task(resolved) as probing:
        for name, attack in attacks(plan, resolved, params, before_trial, prior).items():
            try:
                probing.reset()
                if attack.seed_first is not None:
                    probing.write(attack.seed_first)
                    before = probing.oracle.snapshot()
                else:
                    if seed_reading is _UNREAD:
                        seed_reading = probing.oracle.snapshot()
                    before = seed_reading
                for write in attack.writes:
                    probing.write(write)
                verdict = probing.oracle.judge(before)
            except bench.errors as exc:
                why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                failures.append(f"{name}: probe could not be written ({why})")
                continue
            failure = probe_failure(name, verdict)
            if failure is not None:
                failures.append(failure)
    return AuditResult(task_id, not failures, tuple(failures))


def run_audit(
    bench: Bench,
    plan: AuditPlan,
    tasks: Sequence[tuple[str, Sequence[Effect], Mapping[str, Any], Mapping[str, Any]]],
) -> dict[str, AuditResult]:
    """Audit every ``(task_id, effects, params, prior_params)``; return results by task id."""
    return {t: audit_task(bench, plan, t, e, p, prior) for t, e, p, prior in tasks}


# -- one audit per process tree ---------------------------------------------------------------

_KIT_MODULES = (
    "effectbench.changes",
    "effectbench.conformance.redteam",
    "effectbench.effects",
    "effectbench.hashing",
    "effectbench.judge",
    "effectbench.schema",
    "effectbench.kit.audit",
    "effectbench.kit.tables",
)
"""The kit's modules whose source decides any kit-built pack's audit."""


UNKEYED = "unkeyed:"
"""How a :func:`source_digest` that keys nothing begins (a source file could not be read)."""


def source_digest(modules: Sequence[str]) -> str:
    """Return the digest of the source files of ``modules`` (a key no process shares when one
    cannot be read)."""
    try:
        files = {
            name: hashlib.sha256(
                Path(str(importlib.import_module(name).__file__)).read_bytes()
            ).hexdigest()
            for name in sorted(modules)
        }
    except (OSError, ImportError):
        return f"{UNKEYED}{os.getpid()}:{time.time_ns()}"
    return canonical_hash(files)


@dataclass(frozen=True)
class AuditHandoff:
    """A default oracle's audit result, handed from a parent process to its workers."""

    owner: str
    """``module:attribute`` of the :class:`Attestation` it belongs to (the attribute may be a
    dotted path: ``module:Provider.attestation``)."""
    key: str
    results: dict[str, AuditResult]

    def install(self) -> bool:
        """Adopt the result if this process loaded the same code; say whether it did."""
        module, _, name = self.owner.partition(":")
        found: Any = importlib.import_module(module)
        for part in name.split("."):
            found = getattr(found, part)
        attestation: Attestation = found
        return attestation.adopt(self)


class Attestation:
    """A pack's ``adversarially_audited`` flags: one live audit per process and oracle.

    ``owner`` is where the instance lives (``module:attribute``, the attribute maybe a dotted
    path), ``modules`` the pack's modules whose source decides its audit (the kit's are
    added). Worker processes adopt the parent's result (:meth:`handoff`) only when their own
    :attr:`key` is the same, so a worker that loaded other code runs its own audit; either way
    every flag comes from a real audit run in this process tree.
    """

    def __init__(self, owner: str, modules: Sequence[str], default: Hashable) -> None:
        self.owner = owner
        self._modules = (*_KIT_MODULES, *modules)
        self._default = default
        self._key: str | None = None
        self._results: dict[Hashable, dict[str, AuditResult]] = {}
        self.runs = 0
        """How many audits this process made itself: probed here, or adopted from this
        machine's :class:`AuditCache` (handed-over ones excluded)."""
        self.probed = 0
        """How many of :attr:`runs` probed the record in this process."""

    @property
    def key(self) -> str:
        """What the default audit's result depends on, as this process loaded it."""
        if self._key is None:
            self._key = source_digest(self._modules)
        return self._key

    def results(
        self,
        factory: Hashable,
        definitions: Sequence[Any],
        run: Callable[[Sequence[Any]], dict[str, AuditResult]],
    ) -> dict[str, AuditResult]:
        """Return the audit of oracle ``factory`` over ``definitions``.

        A task this process audited before (a task id names one drawn task, so the dev split
        and a fresh instance of it never share one) is not audited again. The others are
        audited together (``run(others)``), the default oracle's adopted from this machine's
        :class:`AuditCache` when an earlier process audited the same code and tasks."""
        held = self._results.setdefault(factory, {})
        missing = [d for d in definitions if d.task_id not in held]
        if missing:
            cache = AuditCache.configured() if factory is self._default else None
            entry = None if cache is None else self._cache_key(missing)
            found = None if cache is None or entry is None else cache.get(entry)
            found = self._adopt(found, missing)
            self.runs += 1
            if found is None and cache is not None and entry is not None:
                with cache.claim(entry):  # another process auditing the same: wait, adopt
                    found = self._adopt(cache.get(entry), missing)
                    if found is None:
                        self.probed += 1
                        found = run(missing)
                        cache.put(entry, found)
            elif found is None:
                self.probed += 1
                found = run(missing)
            held.update(found)
        return {d.task_id: held[d.task_id] for d in definitions}

    @staticmethod
    def _adopt(
        found: dict[str, AuditResult] | None, definitions: Sequence[Any]
    ) -> dict[str, AuditResult] | None:
        """Return a cached audit if it is of exactly these tasks (else None: audit again)."""
        if found is not None and set(found) != {d.task_id for d in definitions}:
            return None
        return found

    def _cache_key(self, definitions: Sequence[Any]) -> str | None:
        if self.key.startswith(UNKEYED):
            return None  # a source file could not be read: nothing to key an entry by
        return canonical_hash(
            {
                "owner": self.owner,
                "source": self.key,
                "tasks": audit_scope(definitions),
                "python": list(sys.version_info[:2]),
                "sqlite": sqlite3.sqlite_version,
            }
        )

    def handoff(self) -> AuditHandoff | None:
        """Return the default oracle's audit for worker processes (None: not run here)."""
        found = self._results.get(self._default)
        return None if not found else AuditHandoff(self.owner, self.key, dict(found))

    def adopt(self, handoff: AuditHandoff) -> bool:
        """Take ``handoff``'s result when it was made by the same code and none is held."""
        if handoff.key != self.key or self._results.get(self._default):
            return False
        self._results[self._default] = dict(handoff.results)
        return True


def audit_scope(definitions: Sequence[Any]) -> str:
    """Return the digest of what an audit of ``definitions`` reads of them: each task's id,
    effects, the audited trial's payload and the trial before's, and its world's digest (a
    generated task's; None for a pack whose one record is in its source)."""
    entries = [
        [
            task_id,
            [e.model_dump(mode="json") for e in effects],
            params,
            prior,
            getattr(getattr(d, "world", None), "digest", None),
        ]
        for d, (task_id, effects, params, prior) in zip(
            definitions, iter_tasks(definitions), strict=True
        )
    ]
    return canonical_hash(entries)


CLAIM_WAIT_S = 900.0
"""Seconds a process waits for another's audit of the same key before running its own."""


class AuditCache:
    """Default-oracle audits this machine ran, one sealed JSON file per key.

    Reading never fails a build: a missing, truncated, foreign or unreadable entry is a miss
    (the audit runs), and a folder that cannot be written (read-only, full) keeps nothing.
    """

    ENV = "EFFECTBENCH_AUDIT_CACHE"

    def __init__(self, folder: Path, seal: CacheSeal) -> None:
        self.folder = folder
        self._seal = seal

    @classmethod
    def configured(cls) -> AuditCache | None:
        """Return the cache ``$EFFECTBENCH_AUDIT_CACHE`` names (None: ``off``)."""
        setting = os.environ.get(cls.ENV, "").strip()
        if setting.lower() in {"off", "0", "no", "false"}:
            return None
        if setting:
            home = Path(setting)
            return cls(home / "audits", CacheSeal(machine_key(home / "cache.key")))
        return cls(cache_home() / "audits", default_seal())

    def _path(self, key: str) -> Path:
        return self.folder / f"{key.removeprefix('sha256:')}.json"

    def get(self, key: str) -> dict[str, AuditResult] | None:
        """Return the audit stored under ``key``, or None (absent, damaged or not sealed here)."""
        data = self._seal.read(key, self._path(key))
        if data is None:
            return None
        try:
            stored = json.loads(data)
            found = {
                task: AuditResult(task, passed, tuple(failures))
                for task, (passed, failures) in stored.items()
            }
        except (ValueError, TypeError, AttributeError):
            return None
        if all(
            isinstance(r.passed, bool) and all(isinstance(f, str) for f in r.failures)
            for r in found.values()
        ):
            return found
        return None

    @contextmanager
    def claim(self, key: str) -> Iterator[None]:
        """Hold ``key`` while its audit runs, so that processes that need the same audit at
        the same time (a build's workers) wait for it and adopt it instead of each probing.

        An exclusive ``flock`` on a lock file beside the entry; a folder where the lock cannot
        be made, or a claim held longer than :data:`CLAIM_WAIT_S`, is not waited for (the
        audit then runs here too: never wrong, only slower).
        """
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(self._path(key).with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            yield
            return
        try:
            deadline = time.monotonic() + CLAIM_WAIT_S
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.05)
            yield
        finally:
            os.close(fd)  # releases the lock

    def put(self, key: str, results: Mapping[str, AuditResult]) -> None:
        """Store ``results`` under ``key``; a folder that cannot take it keeps nothing."""
        data = {t: [r.passed, list(r.failures)] for t, r in sorted(results.items())}
        try:
            self._seal.write(key, self._path(key), json.dumps(data).encode())
        except OSError:
            pass


@contextmanager
def audits_live() -> Iterator[None]:
    """While the block runs, no audit this machine made before is adopted: this process and
    the processes it starts share a new, empty :class:`AuditCache` (a private temporary
    folder), so each audit is probed once in the block and adopted by the block's later
    processes; the folder is removed and the setting before put back after."""
    with tempfile.TemporaryDirectory(prefix="effectbench-audits-") as fresh:
        with variable(AuditCache.ENV, fresh):
            yield


def iter_tasks(
    definitions: Sequence[Any],
) -> Iterator[tuple[str, tuple[Effect, ...], dict[str, Any], dict[str, Any]]]:
    """Yield what :func:`run_audit` takes for each task definition (its audited trial's
    payload and the trial before's)."""
    for d in definitions:
        yield d.task_id, d.effects(), d.params(AUDIT_TRIAL), d.params(AUDIT_TRIAL - 1)


# -- doability: can every task be done where it is offered? ---------------------------------

Choices = Mapping[str, Collection[str]]
"""What a front end's closed controls can enter (radios, lists): ``"surface.field"`` -> every
value its control offers. A field it takes as free text (or has no control for) is absent."""


@runtime_checkable
class DeclaresChoices(Protocol):
    """A front end that says what its closed controls can enter (:data:`Choices`)."""

    choices: Choices


def choices_of(front: object) -> Choices:
    """Return what ``front``'s closed controls can enter (empty: it declares none)."""
    return front.choices if isinstance(front, DeclaresChoices) else {}


def required_values(effects: Sequence[Effect]) -> dict[str, set[str]]:
    """Return every value the resolved ``effects`` ask the record to hold, by
    ``"surface.field"``: the selectors' values and the expected field values."""
    out: dict[str, set[str]] = {}
    for e in effects:
        pairs: list[tuple[str, object]] = [*e.match.items()]
        if e.kind is EffectKind.FIELD_EQUALS and e.field:
            pairs.append((e.field, e.value))
        for name, value in pairs:
            if isinstance(value, str | int) and not isinstance(value, bool):
                out.setdefault(f"{e.surface}.{name}", set()).add(str(value))
    return out


def unenterable(effects: Sequence[Effect], choices: Choices) -> list[str]:
    """Return one line per value the resolved ``effects`` require that the front end's
    controls (``choices``) cannot enter, naming the control and what it offers."""
    missing = []
    for where, values in sorted(required_values(effects).items()):
        offered = choices.get(where)
        if offered is None:
            continue
        for value in sorted(values - {str(v) for v in offered}):
            missing.append(f"{where} = {value!r} (its control offers {', '.join(offered)})")
    return missing


@dataclass(frozen=True)
class Undoable:
    """One task a front end cannot complete: what its controls lack, what the oracle read."""

    task_id: str
    substrate: Substrate
    missing: tuple[str, ...] = ()
    """The required values the front end's controls cannot enter (:func:`unenterable`)."""
    reading: str | None = None
    """What the informed agent's run left (None: not run, or the effect was read)."""

    def message(self) -> str:
        """Return the finding in one line: the substrate, the missing values, the reading."""
        parts = []
        if self.missing:
            parts.append(
                f"the {self.substrate.value} front end cannot enter " + "; ".join(self.missing)
            )
        if self.reading is not None:
            parts.append(
                f"the informed agent (told the expected effect) did not produce it on "
                f"{self.substrate.value}: {self.reading}"
            )
        return "; ".join(parts)


@dataclass
class Doability:
    """The doability audit of one substrate."""

    substrate: Substrate
    compared: int = 0
    """Tasks whose required values were compared with the front end's controls."""
    informed: int = 0
    """Tasks with a correct action the informed agent ran."""
    seconds: float = 0.0
    undoable: list[Undoable] = field(default_factory=list)

    def line(self) -> str:
        """Return the substrate's result in one line."""
        verdict = "every task doable" if not self.undoable else f"{len(self.undoable)} undoable"
        return (
            f"doability {self.substrate.value}: {verdict} ({self.informed} informed runs, "
            f"{self.compared} tasks' values compared with the controls, {self.seconds:.1f} s)"
        )


def _informed_run(pack: Any, task: Any, params: Mapping[str, Any]) -> str | None:
    """Run the informed agent on trial 0 of ``task``; return why the oracle does not read the
    expected effect (None: it does)."""
    from effectbench.judge import read_verdict

    with pack.provision(task, 0, dict(params)) as episode:
        before = episode.oracle.snapshot()
        pack.attempt(episode.env, task, params)
        verdict = read_verdict(episode.oracle, before)
        failure = episode.health()
    if failure is not None:
        return f"the episode's infrastructure failed: {failure}"
    if verdict.verdict is Verdict.CONFIRMED:
        return None
    return f"the oracle reads {verdict.verdict.value} ({verdict.reason})"


def audit_doability(
    pack: Any, substrate: Substrate, tasks: Sequence[Any], trials: int = 1
) -> Doability:
    """The doability audit of ``tasks`` (``pack``'s variants on ``substrate``).

    Every task's required values (its effects resolved for each of ``trials`` trials) are
    compared with what the substrate's front end declares its controls can enter
    (:func:`choices_of`), so no draw asks a front end for a value it cannot enter. Then the
    **informed agent** runs every task with a correct action: the pack's scripted steps with
    the trial's full parameters, the values the expected effect is resolved from (the target
    record's identifiers and every value it requires, including what the referral withholds);
    the oracle must read the expected effect. A run that raises is a finding too.
    """
    clock = time.perf_counter()
    choices = choices_of(pack.front_end(substrate)) if isinstance(pack, ChecksFrontEnds) else {}
    result = Doability(substrate)
    for task in tasks:
        missing: list[str] = []
        for trial in range(trials):
            params = pack.trial_params(task, trial)
            effects = [e.resolve(params) for e in task.expected_effect]
            missing += [m for m in unenterable(effects, choices) if m not in missing]
        result.compared += 1
        reading = None
        if task.correct_action_available:
            result.informed += 1
            try:
                reading = _informed_run(pack, task, pack.trial_params(task, 0))
            except Exception as exc:  # the pack's own code failed: a finding, never a traceback
                reading = f"the run raised {type(exc).__name__}: {str(exc).splitlines()[0]}"
        if missing or reading is not None:
            result.undoable.append(Undoable(task.task_id, substrate, tuple(missing), reading))
    result.seconds = time.perf_counter() - clock
    return result
