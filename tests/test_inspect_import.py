"""``effectbench import-inspect``: an inspect log becomes a bundle the verifier accepts.

The logs are real: ``inspect eval`` of the clinic pack with inspect's mock model
and a scripted policy (offline, usage set explicitly). Edited, partial, foreign
and malformed logs are refused with one line naming the file and exit 2.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log
from inspect_ai.model import get_model
from inspect_ai.scorer import includes
from inspect_support.faults import make_unreadable
from inspect_support.scripted import mock_outputs
from sigstore_testroot import GOOGLE, SigstoreTestInstance, shared_instance

from effectbench.bundle import SUBMISSION_FILE, SignerDecl
from effectbench.cli import main
from effectbench.errors import InfrastructureError
from effectbench.integrations.inspect_ai import SCORER_NAME
from effectbench.integrations.inspect_ai.episodes import close_pools, live_count
from effectbench.integrations.inspect_ai.importer import convert_log, import_log
from effectbench.integrations.inspect_ai.tasks import metric_values
from effectbench.metrics import episode_frame, summarize
from effectbench.packs.clinic import ClinicProvider
from effectbench.schema import DropReason, TaskSpec
from effectbench.seam import Episode
from effectbench.signatures import sign_bundle_checked
from verifier.api import VerifyOptions, verify_path

TRIALS = 3
SUPPORT = Path(__file__).resolve().parent / "inspect_support"
ALICE = "alice@example.org"


@pytest.fixture(autouse=True)
def _no_leftovers() -> Iterator[None]:
    yield
    assert live_count() == 0
    close_pools()


def _run(tmp: Path, policy: Any, task: Any = "effectbench/clinic", **options: Any) -> Path:
    options.setdefault("epochs", TRIALS)
    model = get_model("mockllm/model", custom_outputs=policy)
    (log,) = inspect_eval(task, model=model, display="none", log_dir=str(tmp), **options)
    assert log.location
    return Path(log.location)


@pytest.fixture(scope="module")
def clinic_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A complete log: the dev split, three trials, the trust-the-banner policy."""
    path = _run(tmp_path_factory.mktemp("log"), mock_outputs("screen_only"))
    close_pools()
    return path


def _edited(log_path: Path, tmp: Path, edit: Callable[[EvalLog], None]) -> Path:
    log = read_eval_log(str(log_path))
    edit(log)
    out = tmp / f"edited-{log_path.name}"
    write_eval_log(log, str(out))
    return out


def _refused(path: Path, tmp: Path, capsys: pytest.CaptureFixture[str]) -> str:
    before = path.read_bytes()
    code = main(["import-inspect", str(path), "--out", str(tmp / "out")])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1 and str(path) in err
    assert not (tmp / "out").exists() or not any((tmp / "out").iterdir())
    assert path.read_bytes() == before, "an input was modified"
    return err


def test_the_imported_bundle_verifies_and_equals_the_logs_metrics(
    clinic_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = clinic_log.read_bytes()
    code = main(["import-inspect", str(clinic_log), "--out", str(tmp_path), "--name", "Mock agent"])
    out = capsys.readouterr().out
    assert code == 0
    folder = Path(out.splitlines()[0])
    assert folder.parent == tmp_path and folder.name.endswith("_mock-agent")
    assert clinic_log.read_bytes() == before
    (report,) = verify_path(folder, VerifyOptions(allow_unsigned=True))
    assert report.accepted, report.to_json()
    assert report.status.value == "preview"
    # every trial's receipt came through the log's scores, and verifies against its row
    assert report.check("receipt").passed and not report.check("receipt").skipped
    receipts = (folder / "receipts.jsonl").read_bytes().splitlines()
    assert len(receipts) == report.n_rows

    log = read_eval_log(str(clinic_log))
    assert log.results is not None
    logged = {m.name: m.value for m in log.results.scores[0].metrics.values()}
    converted = convert_log(clinic_log)
    results = summarize(episode_frame(converted.run.rows))
    assert metric_values(results) == pytest.approx(logged)
    assert logged["swer_n"] == 27 * TRIALS

    header = json.loads((folder / SUBMISSION_FILE).read_text())
    assert header["trials_per_task"] == TRIALS and header["seeds"] == [0, 1, 2]
    assert header["pack"]["name"] == "clinic" and header["imported_from"] == "inspect_ai-log"
    # the harness is inspect_ai at the log's version, its configuration hashed; the model the
    # log's (inspect names it provider/model)
    harness = header["harness"]
    assert harness["name"] == "inspect_ai" and harness["version"] == log.eval.packages["inspect_ai"]
    assert harness["config_digest"].startswith("sha256:")
    assert header["model"] == {"provider": "mockllm", "id": "model"}
    assert header["environment"]["dependencies"]["inspect_ai"] == log.eval.packages["inspect_ai"]
    assert header["results"]["swer"]["numerator"] == logged["swer_k"]
    assert log.samples is not None
    total_cost = sum(u.total_cost or 0.0 for s in log.samples for u in s.model_usage.values())
    assert math.isclose(header["results"]["cost"]["total_usd"], total_cost)
    calls = [c for r in converted.run.rows for c in r.model_calls]
    assert calls and all(c.model == "mockllm/model" and c.input_tokens == 120 for c in calls)
    assert "inspect_ai" in (folder / "README.md").read_text()


def test_the_imported_bundle_can_be_signed_and_is_then_ranked(
    clinic_log: Path, tmp_path: Path
) -> None:
    instance: SigstoreTestInstance = shared_instance()
    imported = import_log(
        clinic_log, tmp_path, name="Signed mock", signer=SignerDecl(identity=ALICE, issuer=GOOGLE)
    )
    _, check = sign_bundle_checked(
        imported.folder,
        identity_token=instance.email_token(ALICE),
        trust_config=instance.trust_config_path,
    )
    assert check.verified
    (report,) = verify_path(imported.folder, VerifyOptions(trust_config=instance.trust_config_path))
    assert report.accepted and report.status.value == "ranked", report.to_json()


def test_a_file_that_is_not_an_inspect_log_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, data in (("junk.eval", b"not a zip at all"), ("doc.json", b'{"hello": 1}')):
        path = tmp_path / name
        path.write_bytes(data)
        assert "not an inspect log" in _refused(path, tmp_path, capsys)
    missing = tmp_path / "absent.eval"
    assert main(["import-inspect", str(missing), "--out", str(tmp_path / "o")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_a_log_of_another_task_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = Task(dataset=[Sample(input="Say hi", target="hi")], scorer=includes(), name="greeting")
    path = _run(tmp_path, mock_outputs("always_halt"), task=other, epochs=1)
    assert "a log of task 'greeting', not of an EffectBench task" in _refused(
        path, tmp_path, capsys
    )


def test_samples_that_do_not_cover_the_split_are_refused(
    clinic_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def drop_two(log: EvalLog) -> None:
        assert log.samples is not None
        log.samples = log.samples[2:]

    err = _refused(_edited(clinic_log, tmp_path, drop_two), tmp_path, capsys)
    assert "the samples do not cover split 'dev': 2 of 81 (task, trial) pairs missing" in err

    partial = _run(tmp_path, mock_outputs("screen_only"), limit=2, epochs=TRIALS)
    assert "75 of 81 (task, trial) pairs missing" in _refused(partial, tmp_path, capsys)


def _first_scored(log: EvalLog, outcome: str) -> Any:
    assert log.samples is not None
    for sample in log.samples:
        score = (sample.scores or {}).get(SCORER_NAME)
        if score is not None and score.value == outcome:
            return sample, score
    raise AssertionError(f"no sample scored {outcome}")


def _rescore(log: EvalLog) -> None:
    _, score = _first_scored(log, "silent_wrong_effect")
    score.value = "success"
    score.metadata["outcome"] = "success"
    score.metadata["swer_variant"] = "none"
    score.metadata["row"]["outcome"] = "success"


def _rewrite_reading(log: EvalLog) -> None:
    _, score = _first_scored(log, "silent_wrong_effect")
    for reading in (score.metadata["reading"], score.metadata["row"]["oracle"]):
        reading.update(effect_correct=True, effect_wrong_persisted=False, effect_absent=False)


def _contradict(log: EvalLog) -> None:
    _, score = _first_scored(log, "silent_wrong_effect")
    score.metadata["reading"]["effect_absent"] = True


def _metric(log: EvalLog) -> None:
    assert log.results is not None
    log.results.scores[0].metrics["swer_k"].value -= 1


EDITED = " the log was edited after the run"


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda log: setattr(log.eval, "task_version", "effectbench-inspect-0"),
            "written by task version 'effectbench-inspect-0'",
        ),
        (
            lambda log: log.eval.metadata["effectbench"].update(fingerprint="sha256:" + "0" * 64),
            "ran on another version of pack 'clinic'",
        ),
        (
            lambda log: log.eval.metadata["effectbench"].update(spec_version="2.0.0"),
            "scored under SPEC 2.0.0",
        ),
        (_rescore, "the score says 'success' (none) but its recorded reading and report give "),
        (_rewrite_reading, "its reading is inconsistent"),
        (_contradict, "the row's reading differs from the score's"),
        (_metric, "the log reports swer_k = "),
    ],
)
def test_a_log_of_another_version_or_edited_after_the_run_is_refused(
    edit: Callable[[EvalLog], None],
    message: str,
    clinic_log: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    err = _refused(_edited(clinic_log, tmp_path, edit), tmp_path, capsys)
    assert message in err
    tampered = edit in (_rescore, _rewrite_reading, _contradict, _metric)
    assert (EDITED in err) is tampered


@contextmanager
def _failing(
    monkeypatch: pytest.MonkeyPatch, broken: Mapping[tuple[str, int], str]
) -> Iterator[None]:
    """Make the clinic's provisioning (``infrastructure``) or oracle (``unreadable``) fail."""
    real = ClinicProvider.provision

    @contextmanager
    def provision(
        self: ClinicProvider, task: TaskSpec, trial: int, params: Mapping[str, Any]
    ) -> Iterator[Episode]:
        how = broken.get((task.task_id, trial))
        if how == "infrastructure":
            raise InfrastructureError("record service did not start")
        with real(self, task, trial, params) as episode:
            if how == "unreadable":
                make_unreadable(episode.oracle, "database file locked")
            yield episode

    with monkeypatch.context() as m:
        m.setattr(ClinicProvider, "provision", provision)
        yield


@pytest.mark.slow
def test_errored_and_unreadable_samples_become_dropped_pairs_with_their_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = {
        ("clinic::clean_draft", 0): "infrastructure",
        ("clinic::sign_and_bill", 2): "unreadable",
    }
    close_pools()
    with _failing(monkeypatch, broken):
        path = _run(tmp_path, mock_outputs("effect_verified"))
    close_pools()
    imported = import_log(path, tmp_path / "out", name="dropping")
    assert imported.n_dropped == 2 and imported.n_rows == 27 * TRIALS - 2
    header = json.loads((imported.folder / SUBMISSION_FILE).read_text())
    assert header["run"]["n_dropped"] == 2
    assert header["run"]["dropped"] == [
        {
            "task_id": "clinic::clean_draft",
            "trial": 0,
            "reason": DropReason.INFRASTRUCTURE.value,
            "detail": "record service did not start",
        },
        {
            "task_id": "clinic::sign_and_bill",
            "trial": 2,
            "reason": DropReason.ORACLE_UNREADABLE.value,
            "detail": "database file locked",
        },
    ]
    (report,) = verify_path(imported.folder, VerifyOptions(allow_unsigned=True))
    # The list names exactly the pairs without a row; the clinic pack is deterministic, so
    # an honest run drops nothing there and these drops are over the cap (and only that).
    assert report.finding_ids() == {"pack.drop_cap"}, report.to_json()


def test_a_sample_whose_model_failed_is_an_agent_error_drop(tmp_path: Path) -> None:
    script = mock_outputs("always_halt")
    calls = {"n": 0}

    def fails_once(*args: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("provider returned 500")
        return script(*args)

    path = _run(tmp_path, fails_once, "effectbench/mockmed", max_samples=1)
    converted = convert_log(path)
    (dropped,) = converted.run.dropped
    assert dropped.reason is DropReason.AGENT_ERROR and "provider returned 500" in dropped.detail
    assert not converted.run.attempts


def test_a_model_that_raises_on_every_call_leaves_drops_never_a_ranked_or_previewed_score(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An outage for the whole run: every sample errors, none is scored; the bundle's pairs
    are all agent_error drops, the command says it cannot be ranked, verify refuses it."""
    (log,) = inspect_eval(
        "effectbench/mockmed",
        model="effectbench-mock/outage",
        epochs=TRIALS,
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success" and log.samples is not None
    assert all(s.error is not None and not s.scores for s in log.samples)
    assert log.location
    code = main(["import-inspect", log.location, "--out", str(tmp_path / "out"), "--name", "down"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "0 rows, 27 dropped (27 agent_error)" in out and "no episode could be scored" in out
    assert "SWER" not in out and "cannot be ranked" in out and "pack.drop_cap" in out
    folder = Path(out.splitlines()[0])
    header = json.loads((folder / SUBMISSION_FILE).read_text())
    assert {d["reason"] for d in header["run"]["dropped"]} == {"agent_error"}
    assert all("unreachable" in d["detail"] for d in header["run"]["dropped"])
    (report,) = verify_path(folder, VerifyOptions(allow_unsigned=True))
    assert report.status.value == "refused"
    assert {"pack.drop_cap", "structure.empty"} <= report.finding_ids()


def test_samples_inspect_retried_keep_their_failed_attempts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--retry-on-error``: a sample whose first attempt errored and whose retry reported;
    the failed attempt is an earlier attempt of the cell, the bundle verifies."""
    script = mock_outputs("always_halt")
    failed: set[str] = set()

    def fails_first_time(messages: Any, *rest: Any) -> Any:
        prompt = next(
            m.text for m in messages if m.role == "user" and "What you are told" in m.text
        )
        if prompt not in failed:
            failed.add(prompt)
            raise RuntimeError("overloaded (HTTP 529)")
        return script(messages, *rest)

    path = _run(tmp_path, fails_first_time, "effectbench/mockmed", retry_on_error=1)
    converted = convert_log(path)
    assert not converted.run.dropped and len(converted.run.rows) == 9 * TRIALS
    assert len(converted.run.attempts) == 9 * TRIALS
    assert {(a.attempt, a.ending.value) for a in converted.run.attempts} == {(1, "agent_error")}
    assert all("overloaded" in a.detail for a in converted.run.attempts)
    capsys.readouterr()  # what inspect printed while it ran (its banner, the retries)
    code = main(["import-inspect", str(path), "--out", str(tmp_path / "out"), "--name", "retry"])
    out = capsys.readouterr().out
    assert code == 0 and f"{9 * TRIALS} earlier attempts kept" in out, out
    assert "can be ranked once signed" in out
    folder = Path(out.splitlines()[0])
    assert json.loads((folder / SUBMISSION_FILE).read_text())["run"]["n_attempts"] == 54


def test_without_the_extra_the_command_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in list(sys.modules):
        if name == "inspect_ai" or name.startswith(("inspect_ai.", "effectbench.integrations")):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "inspect_ai", None)
    code = main(["import-inspect", str(tmp_path / "x.eval"), "--out", str(tmp_path)])
    assert code == 2
    assert "pip install -e '.[inspect]'" in capsys.readouterr().err


MEMORY_BOUND = 64 * 1024 * 1024
"""Bytes Python may allocate while refusing a hostile log (tracemalloc's peak)."""


def _refused_within(path: Path, tmp: Path, capsys: pytest.CaptureFixture[str]) -> str:
    import tracemalloc

    tracemalloc.start()
    try:
        err = _refused(path, tmp, capsys)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < MEMORY_BOUND, peak
    return err


def test_a_zip_bomb_log_is_refused_before_it_unpacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import zipfile

    from effectbench.integrations.inspect_ai.importer import MAX_LOG_UNPACKED

    bomb = tmp_path / "bomb.eval"
    zeros = bytes(1024 * 1024)
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        with archive.open("samples/bomb.json", "w") as member:
            for _ in range(MAX_LOG_UNPACKED // len(zeros) + 16):
                member.write(zeros)
    assert bomb.stat().st_size < 2 * 1024 * 1024
    assert "zip bomb" in _refused_within(bomb, tmp_path, capsys)


def test_a_log_declaring_too_many_members_is_refused_from_its_end_record(
    clinic_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = bytearray(clinic_log.read_bytes())
    at = data.rfind(b"PK\x05\x06")
    data[at + 8 : at + 12] = (60_000).to_bytes(2, "little") * 2  # entries here, and in all
    forged = tmp_path / "many.eval"
    forged.write_bytes(bytes(data))
    assert "60000 members" in _refused_within(forged, tmp_path, capsys)


def test_a_billion_epochs_are_refused_before_any_loop_over_them(
    clinic_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def epochs(log: EvalLog) -> None:
        log.eval.config.epochs = 10**9

    path = _edited(clinic_log, tmp_path, epochs)
    assert "1000000000 epochs" in _refused_within(path, tmp_path, capsys)


@pytest.mark.parametrize("where", [0.3, 0.5, 0.8])
def test_a_corrupt_stream_is_a_one_line_refusal(
    clinic_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], where: float
) -> None:
    data = bytearray(clinic_log.read_bytes())
    middle = int(len(data) * where)
    data[middle : middle + 64] = bytes(range(64))
    corrupt = tmp_path / "corrupt.eval"
    corrupt.write_bytes(bytes(data))
    assert "not an inspect log" in _refused_within(corrupt, tmp_path, capsys)
