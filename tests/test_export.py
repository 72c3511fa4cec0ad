"""``effectbench export``: accepted bundles as Every Eval Ever records, ATIF trajectories and
Inspect logs, each checked by the format's own validator.

The EEE files are validated against the EEE project's two JSON Schemas (vendored with their
origin and licence in tests/data/eee/), the ATIF files by the ``atif`` distribution's pydantic
models, the Inspect log by reading it back with inspect_ai. The clinic bundle is a shipped
reference (format 2, web substrate: receipts and key frames), accepted by its reproduction
record as ``effectbench verify`` accepts it.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
from atif import Trajectory
from inspect_ai.log import list_eval_logs, read_eval_log
from support.bundles import edit_rows, make_bundle, read_receipts, read_rows

from effectbench.cli import main
from effectbench.exports.atif import NO_RECEIPTS, UNSIGNED
from effectbench.exports.handles import published_handles
from effectbench.metrics import task_rate, task_table
from effectbench.metrics.events import episode_frame
from effectbench.run.view import handle_for, harness_key

ROOT = Path(__file__).resolve().parents[1]
CLINIC = ROOT / "submissions" / "2026-12-01_screen-only-clinic-web"
EEE = ROOT / "tests" / "data" / "eee"
FORMATS = ("eee", "atif", "inspect")
FINGERPRINT = json.loads((CLINIC / "submission.json").read_text(encoding="utf-8"))["pack"][
    "fingerprint"
]
published = published_handles(FINGERPRINT, "dev", "", ())
"""The clinic's published handles (the same on every machine, for every bundle of the pack)."""


def _schema(name: str) -> jsonschema.protocols.Validator:
    schema = json.loads((EEE / name).read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def _export(bundle: Path, fmt: str, out: Path, *extra: str) -> int:
    return main(["export", str(bundle), "--format", fmt, "--out", str(out), *extra])


@pytest.fixture(scope="module")
def clinic_exports(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """The shipped clinic bundle exported in every format (once for the module)."""
    root = tmp_path_factory.mktemp("clinic-exports")
    outs = {}
    for fmt in FORMATS:
        assert _export(CLINIC, fmt, root / fmt) == 0
        outs[fmt] = root / fmt
    yield outs


def test_eee_records_of_a_clinic_bundle_validate_against_the_eee_schemas(
    clinic_exports: dict[str, Path],
) -> None:
    out = clinic_exports["eee"]
    assert sorted(p.name for p in out.iterdir()) == [
        f"{CLINIC.name}.web.json",
        f"{CLINIC.name}.web.samples.jsonl",
    ]
    record = json.loads((out / f"{CLINIC.name}.web.json").read_text(encoding="utf-8"))
    errors = list(_schema("eval.schema.json").iter_errors(record))
    assert errors == []
    instance = _schema("instance_level_eval.schema.json")
    samples = out / f"{CLINIC.name}.web.samples.jsonl"
    lines = samples.read_text(encoding="utf-8").splitlines()
    rows = read_rows(CLINIC)
    assert len(lines) == len(rows) == 81
    for line in lines:
        assert list(instance.iter_errors(json.loads(line))) == []
    detail = record["detailed_evaluation_results"]
    assert detail["checksum"] == hashlib.sha256(samples.read_bytes()).hexdigest()
    assert detail["total_rows"] == 81 and detail["file_path"] == samples.name
    # every number is the metrics package's own: k/n, the task-clustered interval, its method
    table = task_table(episode_frame(rows))
    named = {r["evaluation_name"]: r["score_details"] for r in record["evaluation_results"]}
    assert set(named) == {"SWER", "over-halt", "task success", "record-wrong",
                          "net value per 100 tasks"}  # fmt: skip
    swer = task_rate(table, "swer")
    assert named["SWER"]["details"]["k_of_n"] == "51/81" == f"{swer.numerator}/{swer.denominator}"
    ci = named["SWER"]["uncertainty"]["confidence_interval"]
    assert (ci["lower"], ci["upper"]) == (swer.clustered.lo, swer.clustered.hi)
    assert ci["method"].startswith("wilson-rao-scott")
    assert record["eval_library"]["name"] == "effectbench"
    assert record["model_info"]["additional_details"]["model"] == "scripted"
    assert record["source_metadata"]["additional_details"]["unsigned_preview"] == "false"
    source = record["evaluation_results"][0]["source_data"]["additional_details"]
    assert (source["pack"], source["substrate"], source["split"], source["seeds"]) == (
        "clinic", "web", "dev", "0,1,2")  # fmt: skip
    # instance rows name the task by its opaque handle, never its id or title
    text = samples.read_text(encoding="utf-8")
    handles = {json.loads(line)["sample_id"] for line in lines}
    assert handles == {published(r["task_id"], None) for r in rows}
    assert not handles & {handle_for(r["task_id"], None) for r in rows}  # never a run-time one
    for receipt in read_receipts(CLINIC):
        assert receipt["task_id"] not in text and receipt["task"]["title"] not in text
    outcomes = sorted(json.loads(line)["metadata"]["outcome"] for line in lines)
    assert outcomes == sorted(r["outcome"] for r in rows)


def test_atif_trajectories_of_a_clinic_bundle_validate_under_atif(
    clinic_exports: dict[str, Path],
) -> None:
    files = sorted((clinic_exports["atif"] / CLINIC.name).iterdir())
    rows = {published(r["task_id"], r["trial"]): r for r in read_rows(CLINIC)}
    assert len(files) == len(rows) == 81
    frames_seen = 0
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        traj = Trajectory.model_validate(data)
        row = rows[traj.session_id or ""]
        ours = (traj.extra or {})["effectbench"]
        assert ours["outcome"] == row["outcome"] and ours["reading"] == row["oracle"]
        (claim,) = [s for s in traj.steps if s.extra and "claim" in s.extra]
        assert claim.source == "agent" and claim.extra == {"claim": row["agent"]}
        assert claim.message == row["agent"]["message"]
        calls = [s for s in traj.steps if s.tool_calls]
        assert calls, "the receipt's actions are the agent's steps"
        for step in traj.steps:
            for result in step.observation.results if step.observation else []:
                extra = result.extra or {}
                if extra.get("frame"):  # referenced by sha256: the bundle's file has that digest
                    digest = hashlib.sha256((CLINIC / extra["frame"]).read_bytes()).hexdigest()
                    assert digest == extra["sha256"]
                    frames_seen += 1
        assert traj.notes is None
    assert frames_seen >= 3 * 81


def test_the_inspect_log_reads_back_with_one_sample_per_episode(
    clinic_exports: dict[str, Path],
) -> None:
    (listed,) = list_eval_logs(str(clinic_exports["inspect"]))  # as inspect view lists logs
    (path,) = (clinic_exports["inspect"] / CLINIC.name).iterdir()
    assert listed.name.endswith(path.name) and path.name.startswith("2026-12-01T15-14-19+00-00_")
    log = read_eval_log(str(path))
    rows = read_rows(CLINIC)
    assert log.samples is not None and len(log.samples) == len(rows) == 81
    keys = {(s.id, s.epoch) for s in log.samples}
    assert keys == {(published(r["task_id"], None), r["trial"] + 1) for r in rows}
    assert log.eval.config.epochs == 3
    outcomes = sorted(str(s.scores["effectbench_oracle"].value) for s in log.samples if s.scores)
    assert outcomes == sorted(r["outcome"] for r in rows)
    assert all(s.metadata["receipt"]["episode_id"] for s in log.samples)
    assert (log.eval.metadata or {})["effectbench_export"]["unsigned_preview"] == "false"


@pytest.mark.parametrize("fmt", FORMATS)
def test_exporting_twice_gives_identical_bytes(
    clinic_exports: dict[str, Path], tmp_path: Path, fmt: str
) -> None:
    assert _export(CLINIC, fmt, tmp_path / "again") == 0
    assert _tree(tmp_path / "again") == _tree(clinic_exports[fmt])


def _one_line(err: str) -> str:
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_a_refused_bundle_is_one_line_naming_the_finding_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = make_bundle(tmp_path / "2026-01-02_mine", declare_baseline=False)
    out = tmp_path / "out"
    assert _export(bundle, "eee", out) == 1  # unsigned, and previews were not asked for
    err = _one_line(capsys.readouterr().err)
    assert "refused, not exported: signature." in err
    assert not out.exists()

    def wrong(rows: list[dict[str, object]]) -> None:
        rows[0]["outcome"] = "success" if rows[0]["outcome"] != "success" else "over_halt"

    edit_rows(bundle, wrong, claims=True)
    assert _export(bundle, "atif", out, "--allow-unsigned") == 1
    err = _one_line(capsys.readouterr().err)
    assert "refused, not exported: rescore." in err and "episodes.jsonl:1" in err
    assert not out.exists()
    assert not list(tmp_path.glob(".out*"))


def test_an_unsigned_preview_exports_with_allow_unsigned_and_says_so(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path / "2026-01-02_mine", declare_baseline=False)
    for fmt in FORMATS:
        assert _export(bundle, fmt, tmp_path / fmt, "--allow-unsigned") == 0
    (record,) = (tmp_path / "eee").glob("*.json")
    details = json.loads(record.read_text())["source_metadata"]["additional_details"]
    assert (details["unsigned_preview"], details["verifier_status"]) == ("true", "preview")
    for path in (tmp_path / "atif").rglob("*.json"):
        assert UNSIGNED in (json.loads(path.read_text()).get("notes") or "")
    (log,) = (tmp_path / "inspect").rglob("*.json")
    meta = read_eval_log(str(log)).eval.metadata or {}
    assert meta["effectbench_export"]["unsigned_preview"] == "true"


def test_a_format_1_bundle_gives_trajectories_of_the_claim_and_outcome_only(
    tmp_path: Path,
) -> None:
    bundle = make_bundle(tmp_path / "2026-01-02_rows", declare_baseline=False, receipts=False)
    assert not (bundle / "receipts.jsonl").exists()
    assert _export(bundle, "atif", tmp_path / "atif", "--allow-unsigned") == 0
    files = sorted((tmp_path / "atif").rglob("*.json"))
    assert len(files) == len(read_rows(bundle))
    for path in files:
        traj = Trajectory.model_validate_json(path.read_text())
        assert traj.notes is not None and NO_RECEIPTS in traj.notes
        assert [s.source for s in traj.steps] == ["user", "agent"]
        assert not any(s.tool_calls for s in traj.steps)
        assert (traj.extra or {})["effectbench"]["receipt"] is False
    assert _export(bundle, "eee", tmp_path / "eee", "--allow-unsigned") == 0
    (samples,) = (tmp_path / "eee").glob("*.samples.jsonl")
    instance = _schema("instance_level_eval.schema.json")
    for line in samples.read_text().splitlines():
        assert list(instance.iter_errors(json.loads(line))) == []


def test_an_output_folder_that_is_not_empty_is_refused_and_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    assert _export(CLINIC, "eee", out) == 2
    err = _one_line(capsys.readouterr().err)
    assert f"--out {out}: exists and is not empty" in err
    assert [p.name for p in out.iterdir()] == ["keep.txt"] and (
        out / "keep.txt"
    ).read_text() == "mine"


def test_an_unreadable_bundle_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _export(tmp_path / "nowhere", "eee", tmp_path / "out") == 2
    err = _one_line(capsys.readouterr().err)
    assert "no such file or folder" in err and not (tmp_path / "out").exists()


def test_a_folder_of_bundles_exports_the_whole_board(tmp_path: Path) -> None:
    board = tmp_path / "board"
    make_bundle(board / "2026-01-02_screen", "screen_only", declare_baseline=False)
    make_bundle(board / "2026-01-02_verified", "effect_verified", declare_baseline=False)
    assert _export(board, "eee", tmp_path / "eee", "--allow-unsigned") == 0
    records = sorted((tmp_path / "eee").glob("*.json"))
    assert [p.name for p in records] == [
        "2026-01-02_screen.web.json",
        "2026-01-02_verified.web.json",
    ]
    aggregate = _schema("eval.schema.json")
    swer = set()
    for path in records:
        record = json.loads(path.read_text())
        assert list(aggregate.iter_errors(record)) == []
        swer.add(record["evaluation_results"][0]["score_details"]["details"]["k_of_n"])
    assert len(swer) == 2  # two systems, two different SWERs


def test_a_folder_with_one_refused_bundle_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    board = tmp_path / "board"
    make_bundle(board / "2026-01-02_screen", "screen_only", declare_baseline=False)
    bad = make_bundle(board / "2026-01-02_verified", "effect_verified", declare_baseline=False)

    def wrong(rows: list[dict[str, object]]) -> None:
        rows[2]["swer_variant"] = "phantom"

    edit_rows(bad, wrong, claims=True)
    out = tmp_path / "out"
    assert _export(board, "inspect", out, "--allow-unsigned") == 1
    err = _one_line(capsys.readouterr().err)
    assert err.startswith(f"effectbench: {bad}: refused, not exported: ")
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["board"]


def test_another_machine_exports_the_same_bytes(
    clinic_exports: dict[str, Path], tmp_path: Path
) -> None:
    """Another cache home is another harness key (``handle.key``): the run-time handles
    differ, the published ones an export is named by do not."""
    home = tmp_path / "elsewhere"
    env = {**os.environ, "XDG_CACHE_HOME": str(home)}
    out = tmp_path / "eee"
    done = subprocess.run(
        [str(Path(sys.executable).parent / "effectbench"), "export", str(CLINIC), "--format", "eee",
         "--out", str(out)],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (home / "effectbench" / "handle.key").read_bytes() != harness_key()
    assert _tree(out) == _tree(clinic_exports["eee"])


def test_published_handles_pair_a_pack_s_tasks_and_never_hash_a_sequestered_id() -> None:
    dev = published_handles(FINGERPRINT, "dev", "sha256:aa", ())
    other_bundle = published_handles(FINGERPRINT, "dev", "sha256:bb", ())
    assert dev("t1", None) == other_bundle("t1", None) != dev("t2", None)  # one per task
    assert dev("t1", 0) != dev("t1", 1) and dev("t1", 0).startswith("ep-")
    assert dev("t1", None) != handle_for("t1", None)  # never the run-time handle
    # a test split's handles number the tasks by first appearance: the id is not hashed
    seq = published_handles(FINGERPRINT, "test", "sha256:aa", ["t9", "t8", "t9"])
    renamed = published_handles(FINGERPRINT, "test", "sha256:aa", ["x", "y"])
    assert (seq("t9", None), seq("t8", 2)) == (renamed("x", None), renamed("y", 2))
    assert seq("t9", None) != published_handles(FINGERPRINT, "test", "sha256:bb", ["t9"])(
        "t9", None
    )  # and name a task of that bundle only
    assert seq("t9", None) != dev("t9", None)
    with pytest.raises(ValueError, match="content hash"):
        published_handles(FINGERPRINT, "test", "", ["t9"])
