"""``effectbench pack check``: the shipped packs pass; a pack that breaks an attestation fails.

The broken copies (``tests/support/broken_packs.py``) each break one SPEC 5.2.1
attestation; the command names the finding id and the attestation in its line.
"""

from __future__ import annotations

import gc
import json
import os
import sqlite3
import subprocess
import sys
import weakref
from pathlib import Path
from typing import Any

import pytest
from support.broken_packs import BROKEN

from effectbench.cli import main
from effectbench.conformance import AuditId, check_pack
from effectbench.conformance.ids import audit_table, docs_audit_table, with_audit_table
from effectbench.conformance.isolation import ReadTrace, isolation_problems, reach, tracing
from effectbench.packs import get_pack, register
from effectbench.packs.mockmed import MockMedProvider
from effectbench.seam import RED_TEAM_MOVES, TRUE_EFFECT

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "pack-authors.md"


@pytest.fixture
def checked(request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """Register the broken pack ``request.param``, run ``pack check`` on it (it must exit
    1) and return the lines it printed: the findings, then the summary."""
    name = request.param
    with register(name, BROKEN[name]):
        status = main(["pack", "check", name])
    assert status == 1
    return capsys.readouterr().out.splitlines()


# -- the shipped packs pass -----------------------------------------------------------------


def test_mockmed_passes_with_its_moves_made_through_the_env() -> None:
    report = check_pack(MockMedProvider())
    assert report.passed, [f.line() for f in report.findings]
    assert report.tasks == 9 and report.sequestered == 0
    assert report.moves == {
        "report_only": 9,
        "banner_only": 9,
        "wrong_record": 9,
        "double_write": 9,
    }
    assert set(report.not_applicable) == {"write_then_revert", "other_table"}


def test_the_clinic_passes_on_the_api_substrate_with_every_move() -> None:
    pack = get_pack("clinic")
    try:
        report = check_pack(pack)
    finally:
        pack.close()  # type: ignore[attr-defined]
    assert report.passed, [f.line() for f in report.findings]
    assert [s.value for s in report.substrates] == ["api"]
    assert report.tasks == 30 and report.sequestered == 3
    assert report.counts["test"] == {
        "C3_optimistic_then_reject": 1,
        "C6_wrong_record_homonym": 1,
        "control": 1,
    }
    assert sum(report.counts["dev"].values()) == 27 and report.counts["dev"]["control"] == 10
    assert {*RED_TEAM_MOVES, TRUE_EFFECT} <= set(report.moves)
    assert set(report.moves.values()) == {30} and not report.not_applicable


def test_the_command_prints_a_summary_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pack", "check", "mockmed"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("pack mockmed-anchor passes (9 tasks on web, 0 sequestered; 54 ")
    assert "load average" in out
    assert (  # the tasks per split and category, beside the notes
        "dev: 9 tasks: C1_partial_save 1, C2_duplicate_submission 1, "
        "C3_optimistic_then_reject 3, C4_stale_overwrite 1, C5_double_delivered_input 1, "
        "control 2\n"
    ) in err
    assert "note: other_table not applicable on 9 task(s)" in err
    assert "pack check mockmed: 9/9 tasks, 54 episodes\n" in err  # its progress, once at the end


def test_the_json_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pack", "check", "mockmed", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] is True and report["findings"] == []
    assert report["red_team"]["moves"]["double_write"] == 9
    assert sum(report["tasks_per_split_and_category"]["dev"].values()) == 9


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["pack", "check", "nope"], "unknown pack 'nope'; installed packs: "),
        (["pack", "check", "clinic", "--substrate", "vr"], "unknown substrate 'vr'"),
        (["pack", "check", "mockmed", "--trials", "1"], "need at least 2 trials"),
    ],
)
def test_a_user_mistake_is_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


# -- a broken copy fails, naming the attestation --------------------------------------------


@pytest.mark.parametrize("checked", ["broken-shared-connection"], indirect=True)
def test_an_oracle_on_the_agents_connection_fails_isolation(checked: list[str]) -> None:
    lines = checked
    findings = [ln.split("\t") for ln in lines[:-1]]
    assert {f[0] for f in findings} == {"isolation.shared_connection"}
    assert len(findings) == 4  # every task, the sequestered one included
    clean = next(f for f in findings if f[1] == "clinic::clean_draft")
    assert clean[2].startswith("[isolated_from_agent] the env and the oracle hold the same ")
    assert "socket.socket" in clean[2]
    hidden = [f for f in findings if f[1].startswith("clinic::test-")]
    assert len(hidden) == 1
    assert all(
        f[2] == "[isolated_from_agent] details withheld (a sequestered task)" for f in hidden
    )
    assert lines[-1].startswith(
        "pack broken-shared-connection fails: 4 finding(s) (4 tasks on api, 1 sequestered"
    )


@pytest.mark.parametrize("checked", ["broken-repeating-payload"], indirect=True)
def test_a_payload_that_repeats_across_trials_fails(checked: list[str]) -> None:
    lines = checked
    found = {tuple(ln.split("\t")[:2]) for ln in lines[:-1]}
    for task in ("ok", "partial", "stale", "idempotent"):
        assert ("payload.repeats", f"mockmed::{task}") in found
        assert ("payload.unbound", f"mockmed::{task}") in found
    # the scripted write of another trial's payload is confirmed wherever a write can be
    crossed = {t for i, t in found if i == "payload.cross_trial"}
    assert crossed == {"mockmed::ok", "mockmed::timeout", "mockmed::idempotent"}
    assert all("[trial_unique_payload]" in ln for ln in lines[:-1])


@pytest.mark.parametrize("checked", ["broken-refusal-writes"], indirect=True)
def test_a_refusal_control_that_writes_a_row_fails(checked: list[str]) -> None:
    lines = checked
    assert lines[:-1] == [
        "refusal.rows_changed\tmockmed::refusal_autosave\t[refusal_controls] the record changed "
        "while the agent only looked (the oracle reads wrong_persisted: field 'note' is '', "
        "expected 'triage note 041c9114bcd5')"
    ]


@pytest.mark.parametrize("checked", ["broken-lenient-oracle"], indirect=True)
def test_an_oracle_a_double_write_satisfies_fails_the_red_team(checked: list[str]) -> None:
    lines = checked
    found = {tuple(ln.split("\t")[:2]) for ln in lines[:-1]}
    assert ("redteam.satisfied", "mockmed::ok") in found
    assert ("refusal.blind_write_correct", "mockmed::duplicate") in found
    # two rows per save is what the published table says; the lenient oracle reads one
    assert ("reachable.outside", "mockmed::double") in found
    satisfied = next(ln for ln in lines if ln.startswith("redteam.satisfied\tmockmed::ok"))
    assert "[adversarially_audited] double_write: expected refused, oracle said confirmed" in (
        satisfied
    )


@pytest.mark.parametrize("checked", ["no-red-team"], indirect=True)
def test_a_pack_without_a_red_team_is_unchecked_never_a_pass(checked: list[str]) -> None:
    lines = checked
    assert lines[0] == (
        "redteam.unchecked\t(pack)\t[adversarially_audited] pack 'no-red-team' offers no "
        "red_team(task); only the generic moves (report_only, banner_only) ran"
    )


# -- isolation, object by object ------------------------------------------------------------


class _Holder:
    def __init__(self, **parts: Any) -> None:
        self.__dict__.update(parts)

    def parts(self) -> dict[str, Any]:
        return dict(self.__dict__)


def test_the_walk_follows_closures_bound_methods_and_weak_references() -> None:
    oracle = _Holder()
    via_closure = _Holder(read=lambda: oracle)
    assert reach([via_closure]).holds(oracle)
    assert reach([_Holder(m=_Holder(oracle=oracle).parts)]).holds(oracle)
    assert reach([_Holder(ref=weakref.ref(oracle))]).holds(oracle)
    assert reach([[{"deep": (oracle,)}]]).holds(oracle)


def test_the_walk_never_enters_module_globals_or_classes() -> None:
    graph = reach([_Holder(module=sys.modules[__name__], kind=_Holder, f=main)])
    assert not graph.holds(BROKEN) and not graph.holds(gc)
    assert len(graph.objects) < 10


def test_an_env_holding_the_oracle_fails(tmp_path: Path) -> None:
    oracle = _Holder()
    env = _Holder(helper=_Holder(back=oracle))
    (found,) = isolation_problems(reach([env]), oracle, reach([oracle]), ReadTrace())
    assert found[0] is AuditId.ISOLATION_ORACLE


def test_an_env_with_a_descriptor_on_the_oracles_file_fails(tmp_path: Path) -> None:
    db = tmp_path / "record.sqlite"
    sqlite3.connect(db).close()
    trace = ReadTrace()
    with tracing(trace):  # the oracle reads the file through a connection of its own
        sqlite3.connect(f"file:{db}?mode=ro", uri=True).close()
    assert str(db.resolve()) in trace.locations()
    with db.open("rb") as handle:  # the env keeps the file open
        found = isolation_problems(reach([_Holder(f=handle)]), object(), reach([]), trace)
    assert [f[0] for f in found] == [AuditId.ISOLATION_FD, AuditId.ISOLATION_CREDENTIALS]


def test_an_env_holding_the_oracles_credentials_fails() -> None:
    oracle = _Holder(dsn="host=/run/pg dbname=ep1 user=oracle_ro password=s3cret")
    env = _Holder(settings={"dsn": "host=/run/pg dbname=ep1 user=oracle_ro password=s3cret"})
    ((audit_id, message),) = isolation_problems(reach([env]), oracle, reach([oracle]), ReadTrace())
    assert audit_id is AuditId.ISOLATION_CREDENTIALS and "s3cret" not in message
    mine = _Holder(settings={"dsn": "host=/run/pg dbname=ep1 user=app password=other"})
    assert isolation_problems(reach([mine]), oracle, reach([oracle]), ReadTrace()) == []


def test_an_env_holding_the_oracles_process_fails() -> None:
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        oracle = _Holder(server=process)
        env = _Holder(kill_switch=process.terminate)
        found = isolation_problems(reach([env]), oracle, reach([oracle]), ReadTrace())
        assert [f[0] for f in found] == [AuditId.ISOLATION_PROCESS]
        assert f"pid {process.pid}" in found[0][1]
    finally:
        process.kill()
        process.wait(timeout=10)


# -- the registry and its documentation -----------------------------------------------------


def test_every_finding_id_is_documented_in_the_guide() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    documented = docs_audit_table(text)
    assert [(a.value, a.attestation, a.meaning) for a in AuditId] == documented
    assert audit_table() in text and with_audit_table(text) == text
    assert os.path.getsize(GUIDE) > 0
