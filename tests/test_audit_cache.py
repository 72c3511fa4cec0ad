"""This machine's cache of the packs' audits (:class:`effectbench.kit.audit.AuditCache`).

A process that loads the same code and the same tasks adopts the audit an earlier process
ran; anything else (other tasks, another oracle, an entry this machine did not seal, a
damaged entry, a folder that cannot be written, the cache turned off) audits again.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from effectbench.kit.audit import Attestation, AuditCache, AuditResult, audits_live
from effectbench.kit.sqlite import SqliteOracle
from effectbench.packs.clinic.tasks import TASKS

MODULES = ("effectbench.packs.clinic.tasks",)


class _Other(SqliteOracle):
    """An oracle other than the default one."""


def _attestation() -> Attestation:
    """A new attestation, as another process would hold it (nothing audited yet)."""
    return Attestation("tests.test_audit_cache:nowhere", MODULES, SqliteOracle)


def _counting(calls: list[int]) -> Callable[[Sequence[Any]], dict[str, AuditResult]]:
    def run(tasks: Sequence[Any]) -> dict[str, AuditResult]:
        calls.append(1)
        return {
            d.task_id: AuditResult(d.task_id, i % 3 != 0, () if i % 3 else ("phantom",))
            for i, d in enumerate(tasks)
        }

    return run


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(AuditCache.ENV, str(tmp_path / "home"))
    return tmp_path / "home" / "audits"


def test_a_second_process_adopts_the_first_ones_audit(cache: Path) -> None:
    calls: list[int] = []
    first = _attestation()
    made = first.results(SqliteOracle, TASKS, _counting(calls))
    assert calls == [1] and first.probed == 1 and first.runs == 1
    assert len(list(cache.glob("*.json"))) == 1
    second = _attestation()
    adopted = second.results(SqliteOracle, TASKS, _counting(calls))
    assert calls == [1] and second.probed == 0 and second.runs == 1
    assert adopted == made
    assert sum(not r.passed for r in adopted.values()) == len(TASKS[::3])


def test_a_process_that_needs_an_audit_being_run_waits_for_it_and_adopts_it(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two workers of a build needing the same audit at once: one probes, the other waits
    for its entry (each holds its own claim, as separate processes do) and adopts it."""
    calls: list[int] = []
    running, waiting = threading.Event(), threading.Event()
    slow = _counting(calls)
    flock = fcntl.flock

    def noting(fd: int, operation: int) -> None:
        try:
            flock(fd, operation)
        except BlockingIOError:
            waiting.set()  # the second worker found the claim held
            raise

    monkeypatch.setattr(fcntl, "flock", noting)

    def run(tasks: Sequence[Any]) -> dict[str, AuditResult]:
        running.set()
        assert waiting.wait(30)  # the audit ends only once the other worker waits for it
        return slow(tasks)

    first, second = _attestation(), _attestation()
    with ThreadPoolExecutor(2) as pool:
        made = pool.submit(first.results, SqliteOracle, TASKS, run)
        assert running.wait(30)
        adopted = pool.submit(second.results, SqliteOracle, TASKS, _counting(calls))
        assert adopted.result(60) == made.result(60)
    assert calls == [1] and (first.probed, second.probed) == (1, 0)


def test_other_tasks_or_another_oracle_audit_again(cache: Path) -> None:
    calls: list[int] = []
    _attestation().results(SqliteOracle, TASKS, _counting(calls))
    fewer = TASKS[:-1]
    _attestation().results(SqliteOracle, fewer, _counting(calls))
    assert calls == [1, 1]  # the scope of the tasks is part of the key
    _attestation().results(_Other, TASKS, _counting(calls))
    _attestation().results(_Other, TASKS, _counting(calls))
    assert calls == [1, 1, 1, 1]  # only the default oracle's audit is kept


def test_a_second_set_of_tasks_is_audited_alone_and_kept_for_the_next_process(
    cache: Path,
) -> None:
    """A process that audited one set of tasks (a pack's dev split) and then needs another (a
    fresh instance of it) audits only the new tasks, and keeps that audit too: the next
    process adopts both instead of probing the second set again."""
    first_set, second_set = TASKS[:10], TASKS[10:]
    audited: list[list[str]] = []

    def run(tasks: Sequence[Any]) -> dict[str, AuditResult]:
        audited.append([d.task_id for d in tasks])
        return {d.task_id: AuditResult(d.task_id, True, ()) for d in tasks}

    one = _attestation()
    one.results(SqliteOracle, first_set, run)
    both = one.results(SqliteOracle, TASKS, run)
    assert audited == [[d.task_id for d in first_set], [d.task_id for d in second_set]]
    assert list(both) == [d.task_id for d in TASKS] and one.probed == 2
    assert len(list(cache.glob("*.json"))) == 2

    later = _attestation()
    assert set(later.results(SqliteOracle, second_set, run)) == {d.task_id for d in second_set}
    assert len(audited) == 2 and later.probed == 0  # adopted, not probed again


@pytest.mark.parametrize("damage", ["planted", "truncated", "flipped", "not json"])
def test_an_entry_this_machine_did_not_seal_is_never_read(cache: Path, damage: str) -> None:
    calls: list[int] = []
    _attestation().results(SqliteOracle, TASKS, _counting(calls))
    (entry,) = cache.glob("*.json")
    stored = entry.read_bytes()
    forged = json.dumps({d.task_id: [True, []] for d in TASKS}).encode()
    entry.write_bytes(
        {
            "planted": forged,  # a file someone put there, without this machine's seal
            "truncated": stored[: len(stored) // 2],
            "flipped": stored[:-3] + bytes([stored[-3] ^ 1]) + stored[-2:],
            "not json": stored[:32] + b"{not json",
        }[damage]
    )
    again = _attestation()
    found = again.results(SqliteOracle, TASKS, _counting(calls))
    assert calls == [1, 1] and again.probed == 1
    assert not all(r.passed for r in found.values())  # never the forged all-pass


def test_a_folder_that_cannot_be_written_keeps_nothing_and_fails_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / "audits").mkdir(parents=True)
    (home / "audits").chmod(0o500)
    monkeypatch.setenv(AuditCache.ENV, str(home))
    try:
        calls: list[int] = []
        _attestation().results(SqliteOracle, TASKS, _counting(calls))
        _attestation().results(SqliteOracle, TASKS, _counting(calls))
        if os.geteuid() != 0:  # root writes through the mode bits; the rest still holds
            assert calls == [1, 1]
        assert list((home / "audits").glob(".*.tmp")) == []
    finally:
        (home / "audits").chmod(0o700)


def test_off_makes_every_process_audit(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setenv(AuditCache.ENV, "off")
    _attestation().results(SqliteOracle, TASKS, _counting(calls))
    _attestation().results(SqliteOracle, TASKS, _counting(calls))
    assert calls == [1, 1] and not cache.exists()


def test_audits_live_probes_once_in_the_block_and_adopts_nothing_from_before(cache: Path) -> None:
    """An entry this machine kept before is not adopted; the block's first process probes, and
    the block's next one adopts that (a cache of the block's own, removed after)."""
    calls: list[int] = []
    _attestation().results(SqliteOracle, TASKS, _counting(calls))
    assert calls == [1] and any(cache.iterdir())
    with audits_live():
        fresh = Path(os.environ[AuditCache.ENV])
        assert fresh != cache.parent and fresh.is_dir()
        _attestation().results(SqliteOracle, TASKS, _counting(calls))
        assert calls == [1, 1]  # the earlier entry was not adopted
        _attestation().results(SqliteOracle, TASKS, _counting(calls))
        assert calls == [1, 1]  # the block's own entry was
    assert not fresh.exists()
    assert os.environ[AuditCache.ENV] == str(cache.parent)  # put back


def test_the_clinics_real_audit_is_adopted_by_the_next_process(tmp_path: Path) -> None:
    """Two processes build the clinic: the first probes its record, the second adopts the
    entry, and both hold the same flags."""
    script = (
        "import json; from effectbench.packs.clinic import ClinicProvider; "
        "from effectbench.packs.clinic.attestation import ATTESTATION as A; p = ClinicProvider(); "
        "print(json.dumps([A.probed, {t: r.passed for t, r in sorted(p.audit.items())}])); "
        "p.close()"
    )
    env = {**os.environ, AuditCache.ENV: str(tmp_path / "home")}
    seen = []
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr
        seen.append(json.loads(done.stdout))
    assert [probed for probed, _ in seen] == [1, 0]
    assert seen[0][1] == seen[1][1] and len(seen[0][1]) == len(TASKS)
    assert all(seen[0][1].values())  # the clinic's oracle passes its audit
