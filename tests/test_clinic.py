"""The clinic pack: a real SQLite system of record behind a real HTTP service.

Each test reads like a rule of the issue: the predicted outcome of every task
for every arm (so the ladder), the oracle's independence from the service, the
live adversarial audit (and its failure on a weakened oracle), unreadable
episodes dropped and counted, and the manifest's redaction.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from support.clinic import ARMS, PREDICTED, SWER
from support.handles import spec_of

from effectbench.baselines import get_baseline
from effectbench.classify import classify, true_state
from effectbench.cli import main
from effectbench.effects import Effect, EffectKind
from effectbench.episode_http import Reply
from effectbench.judge import judge_contract
from effectbench.kit.audit import ATTACKS, POSITIVE, attacks, iter_tasks, run_audit
from effectbench.kit.sqlite import FileBench, SqliteOracle
from effectbench.kit.tables import Reading, judge_tables
from effectbench.manifest import SEQUESTERED, fingerprint
from effectbench.packs import get_pack
from effectbench.packs.clinic import ClinicProvider, audit_pack
from effectbench.packs.clinic.audit import PLAN
from effectbench.packs.clinic.db import TEMPLATE, template_path
from effectbench.packs.clinic.oracle import SCHEMA, read_database
from effectbench.packs.clinic.service import default_read_handler
from effectbench.packs.clinic.tasks import TASKS
from effectbench.run.runner import evaluate
from effectbench.schema import (
    AgentReport,
    Category,
    DropReason,
    OracleVerdict,
    Split,
    Substrate,
    TaskSpec,
    Verdict,
)
from effectbench.seam import AgentTask, EnvHandle

ROOT = Path(__file__).resolve().parents[1]


def api_tasks(pack: ClinicProvider) -> list[TaskSpec]:
    """The API-level variants (the web variants have tests of their own, test_clinic_web)."""
    return [t for t in pack.tasks() if t.substrate is Substrate.API]


@pytest.fixture(scope="module")
def pack() -> Iterator[ClinicProvider]:
    provider = ClinicProvider()
    yield provider
    provider.close()


@pytest.fixture(scope="module")
def runs(pack: ClinicProvider) -> dict[str, Any]:
    return {
        arm: evaluate(get_baseline(arm, pack), pack, trials=2, tasks=api_tasks(pack))
        for arm in ARMS
    }


def _short(task_id: str) -> str:
    return task_id.removeprefix("clinic::")


@pytest.mark.parametrize("arm", ARMS)
def test_every_task_gets_the_outcome_the_design_predicts(runs: dict[str, Any], arm: str) -> None:
    run = runs[arm]
    assert not run.dropped
    got = {(_short(r.task_id), r.trial): r.outcome.value for r in run.rows}
    want = {(t, trial): PREDICTED[t][ARMS.index(arm)] for t in PREDICTED for trial in (0, 1)}
    assert got == want


def test_the_arms_form_a_ladder_and_the_middle_rung_misses_only_unread_surfaces(
    runs: dict[str, Any],
) -> None:
    swer = {
        arm: sum(r.outcome.value == SWER for r in runs[arm].rows) / len(runs[arm].rows)
        for arm in ARMS
    }
    assert swer == {"screen_only": 0.6, "effect_verified": 0.1, "effect_verified_all": 0.0}
    residual = [r for r in runs["effect_verified"].rows if r.outcome.value == SWER]
    # Every miss of the encounters-only verifier is a write on a table it cannot read.
    assert {_short(r.task_id) for r in residual} == {
        "stale_allergies",
        "double_charge",
        "charge_wrong_patient",
    }
    for row in residual:
        assert "encounters" not in row.oracle.reason
        assert "billing" in row.oracle.reason or "patients" in row.oracle.reason
    missed = {r.category for r in residual}
    assert missed == {
        Category.C4_STALE_OVERWRITE,
        Category.C5_DOUBLE_DELIVERED_INPUT,
        Category.C7_SILENT_NOOP_WRONG_TARGET,
    }
    screen_missed = {r.category for r in runs["screen_only"].rows if r.outcome.value == SWER}
    assert screen_missed == set(Category)


def test_the_pack_docs_state_which_categories_each_arm_misses(runs: dict[str, Any]) -> None:
    text = " ".join((ROOT / "docs" / "clinic.md").read_text(encoding="utf-8").split())
    for arm in ARMS:
        missed = {r.category for r in runs[arm].rows if r.outcome.value == SWER}
        codes = sorted(c.value.split("_")[0] for c in missed if c is not Category.CONTROL)
        stated = text.split(f"* `{arm}` ")[1].split("* `")[0]
        assert f"misses {', '.join(codes) or 'none'}" in stated
        assert ("refusal controls" in stated) == (Category.CONTROL in missed)


def test_the_pack_covers_every_category_and_axis(pack: ClinicProvider) -> None:
    tasks = pack.tasks()
    assert len(tasks) >= 24
    assert {t.category for t in tasks} == set(Category)
    assert {t.reversible for t in tasks} == {True, False}
    assert {t.effect_declared for t in tasks} == {True, False}
    assert any(t.split is Split.TEST for t in tasks)
    assert any(t.oracle.refusal_controls for t in tasks)
    assert all(e.surface for t in tasks for e in t.expected_effect)


def test_on_a_refusal_control_every_write_is_wrong(pack: ClinicProvider) -> None:
    refusals = [t for t in api_tasks(pack) if t.oracle.refusal_controls]
    assert {_short(t.task_id) for t in refusals} == {
        "refusal_stale",
        "refusal_ambiguous",
        "refusal_ambiguous_undeclared",
    }
    for task in refusals:
        assert task.category is Category.CONTROL and not task.correct_action_available
        params = pack.trial_params(task, 0)
        with pack.provision(task, 0, params) as episode:
            found = episode.env.act("find_patients", name=params["patient_name"])
        charts = [r["mrn"] for r in found.details["results"]] + [params["mrn"] or "M-none"]
        writes = 0
        for mrn in charts:  # every chart bearing the name, and the referral's own MRN
            with pack.provision(task, 0, params) as episode:
                before = episode.oracle.snapshot()
                saved = episode.env.act(
                    "save_encounter",
                    mrn=mrn,
                    name=params["patient_name"],
                    type=params["type"],
                    note=params["note"],
                    sign="claim_ref" in params,
                    charge_code=params.get("charge_code"),
                    claim_ref=params.get("claim_ref"),
                )
                verdict = episode.oracle.judge(before)
            if saved.status == "success":
                writes += 1
                assert verdict.verdict is Verdict.REFUTED and verdict.effect_wrong_persisted
            else:
                assert verdict.effect_absent and not verdict.effect_wrong_persisted
        assert writes >= 1


def test_trial_payloads_are_unique(pack: ClinicProvider) -> None:
    notes = [pack.trial_params(t, i)["note"] for t in api_tasks(pack) for i in range(3)]
    assert len(set(notes)) == len(notes)


def test_rows_reproduce_from_pack_and_seeds(pack: ClinicProvider, runs: dict[str, Any]) -> None:
    assert pack.deterministic is True
    again = evaluate(get_baseline("screen_only", pack), pack, trials=2, tasks=api_tasks(pack))
    assert [_untimed(r) for r in again.rows] == [_untimed(r) for r in runs["screen_only"].rows]


def _untimed(row: Any) -> dict[str, Any]:
    data: dict[str, Any] = row.to_row()
    for key in ("latency_s", "started_at", "finished_at"):
        data.pop(key)
    return data


# -- the oracle is independent of the service -------------------------------------------


class _WritesBlind:
    """Saves (or edits) straight from the referral, never reading; then probes one read."""

    name = "writes_blind"

    def __init__(self, pack: ClinicProvider) -> None:
        self._pack = pack
        self.probes: list[str] = []

    def run(self, task: AgentTask, env: EnvHandle, params: Mapping[str, Any]) -> AgentReport:
        if "encounter_id" in params:
            form = {"encounter_id": params["encounter_id"], "note": params["note"]}
            screen = env.act("edit_encounter", **form)
        else:
            fields = ("mrn", "type", "note", "idempotency_key", "charge_code", "claim_ref")
            form = {k: params[k] for k in fields if k in params}
            screen = env.act("save_encounter", sign="claim_ref" in params, **form)
        self.probes.append(env.act("open_chart", mrn=params["mrn"]).status)
        ok = screen.status == "success"
        return AgentReport(reported_success=ok, halted=not ok, message=screen.banner)


def test_the_oracle_judges_correctly_with_the_service_read_path_broken(
    pack: ClinicProvider,
) -> None:
    intact = _WritesBlind(pack)
    normal = evaluate(intact, pack, trials=2, tasks=api_tasks(pack))
    broken_reads: list[str] = []

    def broken(handler: Any) -> Reply:
        broken_reads.append(handler.path)
        return Reply(500, "error", "read handler broken on purpose")

    blind = _WritesBlind(pack)
    pack.service.read_handler = broken  # for every episode, from provision to verdict
    try:
        broken_run = evaluate(blind, pack, trials=2, tasks=api_tasks(pack))
    finally:
        pack.service.read_handler = default_read_handler
    # Only the system under test's own probe ever reached the read handler.
    assert len(broken_reads) == len(blind.probes) == 60
    assert all(path.endswith("/chart") for path in broken_reads)
    assert set(blind.probes) == {"error"} and "error" not in set(intact.probes[:5])
    assert not normal.dropped and not broken_run.dropped
    assert [r.oracle for r in broken_run.rows] == [r.oracle for r in normal.rows]
    assert [r.outcome for r in broken_run.rows] == [r.outcome for r in normal.rows]
    verdicts = {_short(r.task_id): r.oracle for r in broken_run.rows if r.trial == 0}
    assert verdicts["clean_draft"].verdict is Verdict.CONFIRMED
    assert verdicts["sign_and_bill"].verdict is Verdict.CONFIRMED
    assert verdicts["partial_note"].effect_wrong_persisted
    assert verdicts["noop_green"].effect_absent
    assert "billing" in verdicts["charge_wrong_patient"].reason


# -- the live adversarial audit ---------------------------------------------------------


def test_the_audit_passes_and_sets_the_flag(pack: ClinicProvider) -> None:
    audit = audit_pack()
    assert set(audit) == {t.task_id for t in api_tasks(pack)}
    assert all(r.passed and not r.failures for r in audit.values())
    manifest = pack.manifest()
    assert all(t["oracle"]["adversarially_audited"] for t in manifest["tasks"])
    required = {"phantom", "homonym_decoy", "wrong_payload", "wrong_target", "duplicate"}
    required |= {"prior_trial_row", "collateral_write", "collateral_loss", "write_then_revert"}
    assert required <= set(ATTACKS) and POSITIVE not in ATTACKS
    task = TASKS[0]
    effects, params, prior = task.effects(), task.params(1), task.params(0)
    catalogue = attacks(PLAN, effects, params, effects, prior)
    assert next(iter(catalogue)) == POSITIVE and set(catalogue) == {POSITIVE, *ATTACKS}


class _NoDeltaOracle:
    """A weakened oracle: judges the declared effects per table, never the rest."""

    channel = "weak:no-delta"

    def __init__(self, path: Path, effects: Sequence[Effect], alive: Any) -> None:
        self._path, self._effects = path, tuple(effects)

    def snapshot(self) -> Reading | None:
        return read_database(self._path)

    def judge(self, before: Reading | None) -> OracleVerdict:
        after = read_database(self._path)
        verdict: OracleVerdict | None = None
        for effect in self._effects:
            rows_b = list(before[str(effect.surface)].rows) if before else None
            rows_a = list(after[str(effect.surface)].rows) if after else None
            verdict = judge_contract([effect], rows_b, rows_a, channel=self.channel)
            if verdict.verdict is not Verdict.CONFIRMED:
                return verdict
        assert verdict is not None
        return verdict


class _RecordsOnlyOracle(_NoDeltaOracle):
    """A weakened oracle that reads the encounters table only (a records-only oracle)."""

    channel = "weak:records-only"

    def snapshot(self) -> Reading | None:
        full = read_database(self._path)
        return None if full is None else {"encounters": full["encounters"]}

    def judge(self, before: Reading | None) -> OracleVerdict:
        full = read_database(self._path)
        after = None if full is None else {"encounters": full["encounters"]}
        return judge_tables(self._effects, before, after, channel=self.channel, schema=SCHEMA)


class _PayloadBlindOracle(_NoDeltaOracle):
    """A weakened oracle that checks which rows were written, never what they hold."""

    channel = "weak:payload-blind"

    def judge(self, before: Reading | None) -> OracleVerdict:
        counts = [e for e in self._effects if e.kind is EffectKind.RECORD_WRITTEN]
        after = read_database(self._path)
        return judge_tables(counts, before, after, channel=self.channel, schema=SCHEMA)


@pytest.mark.parametrize(
    ("weak", "must_fail"),
    [
        (_NoDeltaOracle, {"collateral_write", "collateral_same_surface", "collateral_loss"}),
        (_RecordsOnlyOracle, {"collateral_write", "collateral_loss"}),
        (_PayloadBlindOracle, {"wrong_payload", "prior_trial_row"}),
    ],
)
def test_the_audit_fails_a_weakened_oracle(weak: Any, must_fail: set[str]) -> None:
    audit = audit_pack(weak)
    failed_probes = {f.split(":")[0] for r in audit.values() for f in r.failures}
    assert must_fail <= failed_probes
    provider = ClinicProvider(oracle_factory=weak)
    try:
        flags = {t.task_id: t.oracle.adversarially_audited for t in api_tasks(provider)}
    finally:
        provider.close()
    assert not all(flags.values())
    assert flags == {tid: r.passed for tid, r in audit.items()}


class _LeakyResetBench(FileBench):
    """A bench whose reset puts the template back before a task's first probe only: every
    later probe starts on what the one before it wrote."""

    @contextmanager
    def task(self, effects: Sequence[Effect]) -> Iterator[Any]:
        with super().task(effects) as probing:
            probing.reset()
            yield SimpleNamespace(oracle=probing.oracle, reset=lambda: None, write=probing.write)


def test_a_reset_that_leaves_a_probe_s_write_behind_fails_the_audit(tmp_path: Path) -> None:
    """The audit judges every probe against one reading of the seed state: the positive
    write a broken reset kept is a change the phantom probe did not make, and it fails."""
    task = next(t for t in TASKS if t.task_id == "clinic::clean_draft")
    probes = list(iter_tasks([task]))
    (sound,) = run_audit(FileBench(TEMPLATE, tmp_path, SqliteOracle), PLAN, probes).values()
    assert sound.passed, sound.failures
    (leaky,) = run_audit(_LeakyResetBench(TEMPLATE, tmp_path, SqliteOracle), PLAN, probes).values()
    assert not leaky.passed and "phantom" in {f.split(":")[0] for f in leaky.failures}


@pytest.mark.parametrize("name", ["charge_wrong_patient", "double_charge"])
def test_a_records_only_oracle_cannot_see_the_collateral_billing_write(
    pack: ClinicProvider, name: str
) -> None:
    task = next(t for t in pack.tasks() if t.task_id == f"clinic::{name}")
    params = pack.trial_params(task, 0)
    effects = [e.resolve(params) for e in task.expected_effect]
    with pack.provision(task, 0, params) as episode:
        store = pack.service.mounted
        assert store is not None
        records_only = _RecordsOnlyOracle(store.path, effects, None)
        befores = episode.oracle.snapshot(), records_only.snapshot()
        assert pack.attempt(episode.env, task, params).status == "success"  # the green banner
        full, partial = episode.oracle.judge(befores[0]), records_only.judge(befores[1])
    assert partial.verdict is Verdict.CONFIRMED
    assert full.verdict is Verdict.REFUTED and "billing" in full.reason


# -- unreadable records are dropped and counted -----------------------------------------


class _Sabotage:
    """Act like screen_only, then make the record unreadable in one of three ways."""

    def __init__(self, pack: ClinicProvider, how: str) -> None:
        self.name = f"sabotage_{how}"
        self._pack, self._how = pack, how
        self.locks: list[sqlite3.Connection] = []

    def run(self, task: AgentTask, env: EnvHandle, params: Mapping[str, Any]) -> AgentReport:
        screen = self._pack.attempt(env, spec_of(task, self._pack.tasks()), params)
        store = self._pack.service.mounted
        assert store is not None
        if self._how == "lock":
            conn = sqlite3.connect(store.path, isolation_level=None)
            conn.execute("BEGIN EXCLUSIVE")
            self.locks.append(conn)
        elif self._how == "down":
            self._pack.service.stop()
        elif self._how == "gone":
            store.path.unlink()
        ok = screen.status == "success"
        return AgentReport(reported_success=ok, halted=not ok, message=screen.banner)


@pytest.mark.parametrize("how", ["lock", "down", "gone"])
def test_an_unreadable_record_drops_the_episode_and_counts_it(
    pack: ClinicProvider, how: str
) -> None:
    sut = _Sabotage(pack, how)
    tasks = list(pack.tasks())[:4]
    try:
        run = evaluate(sut, pack, trials=2, tasks=tasks)
    finally:
        for conn in sut.locks:
            if conn.in_transaction:
                conn.rollback()
            conn.close()
    assert run.rows == []
    assert len(run.dropped) == 8
    assert {d.reason for d in run.dropped} == {DropReason.ORACLE_UNREADABLE}
    details = Counter(d.detail for d in run.dropped)
    want = "record service down" if how == "down" else "system of record unreadable"
    assert all(want in detail for detail in details)
    # The next episode provisions (and, after "down", restarts the service) as usual.
    after = evaluate(get_baseline("screen_only", pack), pack, trials=1, tasks=tasks)
    assert len(after.rows) == 4 and not after.dropped


def test_a_baseline_read_of_a_locked_file_is_unreadable_too(pack: ClinicProvider) -> None:
    task = next(t for t in pack.tasks() if t.task_id == "clinic::clean_draft")
    params = pack.trial_params(task, 0)
    with pack.provision(task, 0, params) as episode:
        store = pack.service.mounted
        assert store is not None
        lock = sqlite3.connect(store.path, isolation_level=None)
        lock.execute("BEGIN EXCLUSIVE")
        before = episode.oracle.snapshot()
        lock.rollback()
        lock.close()
        assert pack.attempt(episode.env, task, params).status == "success"
        verdict = episode.oracle.judge(before)
    assert before is None
    assert verdict.verdict is Verdict.INDETERMINATE and "baseline unreadable" in verdict.reason
    assert classify(True, true_state(verdict), task.correct_action_available) is None


# -- the system of record itself --------------------------------------------------------


SIDE_TABLES = """
CREATE TABLE audit_log (id INTEGER PRIMARY KEY, entry TEXT NOT NULL);
INSERT INTO audit_log (entry) VALUES ('opened');
CREATE TABLE claim_lines (
    claim_ref TEXT, line INTEGER, amount INTEGER, PRIMARY KEY (claim_ref, line)
) WITHOUT ROWID;
INSERT INTO claim_lines VALUES ('CLM-seed-0102', 1, 9200);
CREATE TABLE scratch (value TEXT);
"""
"""Tables the record service knows nothing of: a log, a composite-key table, an empty one."""

SIDE_WRITES = {
    "nothing else": ("", None),
    "a row in a table the service never reads": (
        "INSERT INTO audit_log (entry) VALUES ('saved')",
        "audit_log: added 2",
    ),
    "a lost row of a composite-key table": (
        "DELETE FROM claim_lines",
        "claim_lines: removed ('CLM-seed-0102', 1)",
    ),
    "a changed column of a composite-key table": (
        "UPDATE claim_lines SET amount = 0",
        "claim_lines: changed ('CLM-seed-0102', 1) (amount)",
    ),
    "an empty table dropped": ("DROP TABLE scratch", "sqlite_master: removed ('table', 'scratch')"),
    "an index created": (
        "CREATE INDEX by_entry ON audit_log (entry)",
        "sqlite_master: added ('index', 'by_entry')",
    ),
}


@pytest.mark.parametrize("write", list(SIDE_WRITES))
def test_the_oracle_audits_every_table_in_sqlite_master(pack: ClinicProvider, write: str) -> None:
    sql, collateral = SIDE_WRITES[write]
    task = next(t for t in pack.tasks() if t.task_id == "clinic::clean_draft")
    params = pack.trial_params(task, 0)
    with pack.provision(task, 0, params) as episode:
        store = pack.service.mounted
        assert store is not None
        with sqlite3.connect(store.path) as conn:
            conn.executescript(SIDE_TABLES)
        before = episode.oracle.snapshot()
        assert before is not None
        assert {"audit_log", "claim_lines", "scratch", "sqlite_master"} <= set(before)
        readback = episode.env.all_surfaces_verifier()
        assert pack.attempt(episode.env, task, params).status == "success"
        if sql:
            with sqlite3.connect(store.path) as conn:
                conn.execute(sql)
        verdict = episode.oracle.judge(before)
        # The product's readback of every REST surface sees none of these tables.
        assert readback.verify([e.resolve(params) for e in task.expected_effect]).confirmed
    if collateral is None:
        assert verdict.verdict is Verdict.CONFIRMED
        assert "3 table(s)" not in verdict.reason and "6 table(s) and the schema" in verdict.reason
    else:
        assert verdict.verdict is Verdict.REFUTED and verdict.effect_wrong_persisted
        assert verdict.reason.endswith(collateral)


def test_episodes_are_copies_of_the_template_and_leave_nothing_behind(
    pack: ClinicProvider,
) -> None:
    template = read_database(template_path())
    task = pack.tasks()[0]
    params = pack.trial_params(task, 0)
    with pack.provision(task, 0, params) as episode:
        before = episode.oracle.snapshot()
        store = pack.service.mounted
        assert store is not None
        path = store.path
        assert path != template_path() and path.exists()
    assert before == template
    assert not path.exists()
    assert pack.service.alive() and pack.service.mounted is None


def test_the_service_listens_on_loopback_with_an_ephemeral_port() -> None:
    provider = ClinicProvider()
    task = provider.tasks()[0]
    with provider.provision(task, 0, provider.trial_params(task, 0)):
        server = provider.service._server
        assert server is not None
        host, port = server.server_address[:2]
        assert host == "127.0.0.1" and port > 0
    provider.close()
    assert not provider.service.alive()


def test_a_read_only_oracle_cannot_write(pack: ClinicProvider) -> None:
    path = template_path()
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    with pytest.raises(sqlite3.OperationalError):
        conn.execute("DELETE FROM billing")
    conn.close()
    assert read_database(path.with_name("missing.sqlite")) is None


# -- manifest ---------------------------------------------------------------------------


def test_the_manifest_redacts_the_test_split(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["manifest", "--pack", "clinic"]) == 0
    manifest = json.loads(capsys.readouterr().out)
    assert manifest["suite"] == "clinic" and manifest["n_tasks"] == 30 * 4  # 30 per substrate
    tests = [t for t in manifest["tasks"] if t["split"] == "test"]
    assert tests and all(t["goal"] == SEQUESTERED for t in tests)
    wiring = manifest["payload_wiring"]
    assert all(wiring[t["task_id"]] == SEQUESTERED for t in tests)
    dev = [t for t in manifest["tasks"] if t["split"] == "dev"]
    assert all(isinstance(wiring[t["task_id"]], dict) for t in dev)
    text = json.dumps(tests) + json.dumps([wiring[t["task_id"]] for t in tests])
    assert "Nora" not in text and "M-08" not in text
    assert main(["manifest", "--pack", "clinic", "--fingerprint"]) == 0
    assert capsys.readouterr().out.strip() == fingerprint(get_pack("clinic").manifest())


def test_a_client_gone_mid_reply_is_quiet_and_a_real_error_is_still_reported(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A browser context closed mid-reply is no error; any other handler failure is shown."""
    from effectbench.episode_http import EpisodeHandler, _Server

    server = _Server(("127.0.0.1", 0), EpisodeHandler)
    try:
        for error in (BrokenPipeError(32, "Broken pipe"), ValueError("a real bug")):
            try:
                raise error
            except Exception:  # noqa: BLE001 - handle_error reads the exception being handled
                server.handle_error(None, ("127.0.0.1", 1))
    finally:
        server.server_close()
    err = capsys.readouterr().err
    assert "BrokenPipeError" not in err and "ValueError: a real bug" in err
