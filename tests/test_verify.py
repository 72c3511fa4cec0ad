"""``effectbench verify``: good bundles and upstream documents pass; the verdict rules hold."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from support.bundles import (
    copy_bundle,
    edit_receipts,
    edit_rows,
    list_references,
    make_bundle,
    read_submission,
    write_submission,
)

from effectbench.baselines import BASELINES
from effectbench.bundle import import_upstream
from effectbench.cli import main
from effectbench.errors import DataError
from effectbench.findings import Family
from verifier.api import VerifyOptions, verify_bundle, verify_document, verify_path
from verifier.report import SUBMISSION_FAMILIES, Status

NOT_RUN_ALONE = (Family.SIGNATURE, Family.REPRODUCE, Family.RANKING)
"""Steps that do not pass for an unsigned bundle verified alone (nothing to re-run, no folder)."""

UNSIGNED_OK = VerifyOptions(allow_unsigned=True)


@pytest.fixture(scope="module")
def baseline_bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("baselines")
    return {name: make_bundle(root / name, name) for name in BASELINES}


@pytest.fixture(scope="module")
def listed(tmp_path_factory: pytest.TempPathFactory, baseline_bundles: dict[str, Path]) -> Path:
    """A reference list naming every baseline bundle of :func:`baseline_bundles`."""
    path = tmp_path_factory.mktemp("references") / "reference_bundles.json"
    return list_references(path, baseline_bundles.values())


def _tree_digest(path: Path) -> dict[str, str]:
    return {
        str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(path.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("name", sorted(BASELINES))
def test_every_listed_baseline_bundle_is_ranked_by_reproduction(
    baseline_bundles: dict[str, Path], listed: Path, name: str
) -> None:
    report = verify_bundle(baseline_bundles[name], VerifyOptions(references=listed))
    assert report.status is Status.RANKED, report.finding_ids()
    assert report.reproduced is True
    assert report.accepted
    skippable = (Family.SIGNATURE, Family.RANKING)
    assert all(c.passed for c in report.checks if c.id not in skippable)
    assert report.check(Family.SIGNATURE).skipped
    assert report.verified_at == "2026-01-02"  # the list's date, never a folder name's


def test_unsigned_custom_system_is_refused_unless_previewed(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path / "b", declare_baseline=False)
    refused = verify_bundle(bundle)
    assert refused.status is Status.REFUSED
    assert refused.finding_ids() == {"signature.missing"}
    assert refused.reproduced is None
    preview = verify_bundle(bundle, UNSIGNED_OK)
    assert preview.status is Status.PREVIEW and preview.accepted


@pytest.mark.parametrize("arm", ["screen_only", "effect_verified"])
def test_upstream_documents_verify_unchanged_directly_and_after_import(
    vectors_dir: Path, tmp_path: Path, arm: str
) -> None:
    doc = vectors_dir / f"upstream-{arm}-t3.json"
    before = hashlib.sha256(doc.read_bytes()).hexdigest()
    direct = verify_document(doc, UNSIGNED_OK)
    assert direct.status is Status.PREVIEW, direct.finding_ids()
    assert direct.kind == "upstream"
    assert all(c.passed for c in direct.checks if c.id not in (*NOT_RUN_ALONE, Family.RECEIPT))
    assert direct.check(Family.RECEIPT).skipped  # a document carries no receipts
    # without --allow-unsigned only the missing signature stands in the way
    assert verify_document(doc).finding_ids() == {"signature.missing"}
    bundle = import_upstream(json.loads(doc.read_text()), tmp_path / "imported")
    imported = verify_bundle(bundle, UNSIGNED_OK)
    assert imported.status is Status.PREVIEW, imported.finding_ids()
    assert imported.results == direct.results
    assert hashlib.sha256(doc.read_bytes()).hexdigest() == before


def test_verification_never_writes_and_repeats_its_verdict(
    baseline_bundles: dict[str, Path],
) -> None:
    bundle = baseline_bundles["screen_only"]
    before = _tree_digest(bundle)
    first = verify_bundle(bundle).to_json()
    second = verify_bundle(bundle).to_json()
    assert first == second
    assert _tree_digest(bundle) == before


def test_folder_of_bundles(tmp_path: Path, baseline_bundles: dict[str, Path]) -> None:
    root = tmp_path / "submissions"
    root.mkdir()
    copy_bundle(baseline_bundles["screen_only"], root / "a")
    bad = copy_bundle(baseline_bundles["always_halt"], root / "b")
    data = read_submission(bad)
    data["spec_version"] = "2.0.0"
    write_submission(bad, data)
    (root / "README.md").write_text("not a bundle\n")
    (root / ".2026-01-02_half-written.x1y2").mkdir()  # a killed submit's leftover: hidden
    (root / ".2026-01-02_half-written.x1y2" / "episodes.jsonl").write_text("{")
    references = list_references(tmp_path / "refs.json", [root / "a"])
    reports = verify_path(root, VerifyOptions(references=references))
    assert [Path(r.path).name for r in reports] == ["a", "b"]
    assert [r.status for r in reports] == [Status.REFUSED, Status.REFUSED]
    # members of a folder of bundles are held to the folder-name rule (YYYY-MM-DD_slug)
    assert "structure.folder_name" in reports[0].finding_ids()
    (root / "a").rename(root / "2026-01-02_a")
    (root / "b").rename(root / "2026-01-02_b")
    references = list_references(tmp_path / "refs.json", [root / "2026-01-02_a"])
    reports = verify_path(root, VerifyOptions(references=references))
    assert [r.status for r in reports] == [Status.RANKED, Status.REFUSED]


def test_a_baseline_bundle_that_does_not_reproduce_is_refused(
    tmp_path: Path, baseline_bundles: dict[str, Path]
) -> None:
    bundle = copy_bundle(baseline_bundles["screen_only"], tmp_path / "b")

    def edit(rows: list[dict[str, Any]]) -> None:
        rows[4]["agent"]["message"] = "banner: all good, honestly"

    def quote(receipts: list[dict[str, Any]]) -> None:  # the receipt quotes the edited claim
        receipts[4]["claim"]["message"] = "banner: all good, honestly"

    edit_rows(bundle, edit, claims=False)
    edit_receipts(bundle, quote)
    report = verify_bundle(bundle, UNSIGNED_OK)
    assert report.status is Status.REFUSED
    assert report.finding_ids() == {"reproduce.mismatch"}
    (finding,) = report.check(Family.REPRODUCE).findings
    assert (finding.line, finding.field) == (5, "agent.message")


def test_unknown_baseline_name_is_refused(
    tmp_path: Path, baseline_bundles: dict[str, Path]
) -> None:
    bundle = copy_bundle(baseline_bundles["screen_only"], tmp_path / "b")
    data = read_submission(bundle)
    data["system"]["baseline"] = "oracle_peeker"
    write_submission(bundle, data)
    assert "reproduce.unknown_baseline" in verify_bundle(bundle, UNSIGNED_OK).finding_ids()


def test_signature_present_without_a_declared_signer_is_refused(
    tmp_path: Path, baseline_bundles: dict[str, Path]
) -> None:
    bundle = copy_bundle(baseline_bundles["screen_only"], tmp_path / "b")
    (bundle / "submission.sigstore.json").write_text("{}")
    report = verify_bundle(bundle, UNSIGNED_OK)
    assert report.status is Status.REFUSED
    assert report.finding_ids() == {"signature.no_signer"}


def test_json_report_schema(baseline_bundles: dict[str, Path]) -> None:
    data = verify_bundle(baseline_bundles["effect_verified"]).to_json()
    assert data["status"] == "refused"  # not on the verifier's own reference list
    assert set(data) == {
        "report_version",
        "path",
        "kind",
        "status",
        "accepted",
        "checks",
        "submission",
        "results",
        "tasks",
        "signer",
        "reproduced",
        "reproduced_rows",
        "n_rows",
        "verified_at",
        "content_hash",
        "rows_hash",
        "measured_hash",
        "instance_seed",
        "public_seed",
        "instance_committed",
        "same_measurements_as",
        "unranked",
        "usage",
    }
    assert [c["id"] for c in data["checks"]] == [f.value for f in SUBMISSION_FAMILIES]
    assert set(data["checks"][0]) == {
        "id",
        "title",
        "passed",
        "skipped",
        "note",
        "n_findings",
        "findings",
    }
    json.dumps(data)


def test_cli_exit_statuses_and_json(
    tmp_path: Path,
    baseline_bundles: dict[str, Path],
    listed: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    good = baseline_bundles["effect_verified"]
    assert main(["verify", str(good)]) == 1  # re-runs, but is not a listed reference bundle
    assert "signature.reproduced_unlisted" in capsys.readouterr().out
    assert main(["verify", "--references", str(listed), str(good)]) == 0
    assert "RANKED" in capsys.readouterr().out
    bad = copy_bundle(good, tmp_path / "bad")
    data = read_submission(bad)
    data["results"]["swer"]["numerator"] += 1
    write_submission(bad, data)
    assert main(["verify", "--references", str(listed), "--json", str(good), str(bad)]) == 1
    reports = json.loads(capsys.readouterr().out)
    assert [r["status"] for r in reports] == ["ranked", "refused"]
    (claims,) = [c for c in reports[1]["checks"] if c["id"] == "claims"]
    assert claims["findings"][0]["field"] == "results.swer.numerator"
    assert main(["verify", str(tmp_path / "nope")]) == 2
    assert "no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:
        main(["verify", "--max-rows", "0", str(good)])
    assert usage.value.code == 2


def test_row_limit_flag(
    baseline_bundles: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["verify", "--max-rows", "10", str(baseline_bundles["screen_only"])]) == 1
    assert "structure.row_count" in capsys.readouterr().out


def test_empty_folder_is_unreadable_input(tmp_path: Path) -> None:
    with pytest.raises(DataError):
        verify_path(tmp_path)


def test_reproduction_can_be_disabled(baseline_bundles: dict[str, Path]) -> None:
    report = verify_bundle(baseline_bundles["screen_only"], VerifyOptions(reproduce=False))
    assert report.reproduced is None
    assert report.status is Status.REFUSED  # neither signed nor reproduced


def test_unreadable_document_never_reports_its_rows_as_rescored(tmp_path: Path) -> None:
    doc = tmp_path / "broken.json"
    doc.write_text('{"episodes": [', encoding="utf-8")
    (report,) = verify_path(doc)
    by_id = {c.id.value: c for c in report.checks}
    assert report.status == "refused"
    assert not by_id["structure"].passed
    assert by_id["rescore"].skipped and not by_id["rescore"].passed
    assert doc.read_text(encoding="utf-8") == '{"episodes": ['  # never modified


# --------------------------------------------------------------------------- user mistakes


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(args)
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("binary.json", bytes(range(256)) * 4),
        ("array.json", b"[1, 2]\n"),
        ("empty.json", b""),
        ("README.md", b"# not a submission\n"),
    ],
)
def test_a_file_that_is_no_submission_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: bytes
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    status, out, err = _cli(["verify", str(path)], capsys)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"effectbench: {path}: not a submission")
    assert path.read_bytes() == content


def test_a_folder_whose_subfolders_hold_no_bundle_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "notes.txt").write_text("x\n")
    (tmp_path / "x.txt").write_text("x\n")
    status, out, err = _cli(["verify", str(tmp_path)], capsys)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "no bundle here" in err


def test_zero_rows_are_refused_by_one_finding(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path / "b", declare_baseline=False)
    (bundle / "episodes.jsonl").write_bytes(b"")
    report = verify_bundle(bundle, UNSIGNED_OK)
    assert report.status is Status.REFUSED
    assert report.finding_ids() == {"structure.empty"}


def test_binary_rows_are_named_as_not_utf8(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path / "b", declare_baseline=False)
    with (bundle / "episodes.jsonl").open("ab") as fh:
        fh.write(b'{"episode_id": "\xff\xfe"}\n')
    report = verify_bundle(bundle, UNSIGNED_OK)
    (finding,) = report.check(Family.STRUCTURE).findings
    assert finding.check == "structure.json" and finding.line == 28
    assert "not UTF-8" in finding.message


def test_an_unreadable_document_names_itself_in_the_skipped_notes(tmp_path: Path) -> None:
    doc = tmp_path / "doc.json"
    doc.write_text('{"effectbench_submission_version": 1}')
    report = verify_document(doc, UNSIGNED_OK)
    assert report.check(Family.SPEC).note == "not run: doc.json unreadable"


def _as_nobody(args: list[str]) -> subprocess.CompletedProcess[str]:
    """Run the CLI as a user who cannot read a chmod-000 file.

    Root reads anything through its capabilities; without them (dropped from the
    bounding set) root is held to file modes like anyone else, and still reaches
    an interpreter installed under its home (as pyenv's are).
    """
    cmd = [sys.executable, "-m", "effectbench.cli", *args]
    if os.geteuid() == 0:
        cmd = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, check=False, cwd="/")


@pytest.mark.parametrize("name", ["episodes.jsonl", "submission.json"])
def test_an_unreadable_bundle_file_is_a_usage_error_naming_it(name: str) -> None:
    root = Path(tempfile.mkdtemp(prefix="unreadable-"))  # under /tmp: reachable by nobody
    try:
        root.chmod(0o755)
        bundle = make_bundle(root / "b", declare_baseline=False)
        (bundle / name).chmod(0)
        done = _as_nobody(["verify", "--allow-unsigned", str(bundle)])
        assert done.returncode == 2, done.stderr
        assert done.stderr == f"effectbench: {bundle / name}: cannot read: Permission denied\n"
        assert done.stdout == ""
    finally:
        shutil.rmtree(root)


def test_report_counts_the_rows_per_task_as_the_results_count_them(
    baseline_bundles: dict[str, Path],
) -> None:
    report = verify_bundle(baseline_bundles["screen_only"])
    res, tasks = report.results, report.tasks
    assert res is not None and tasks is not None
    assert tasks.n_episodes == res.n_episodes and tasks.n_tasks == res.n_tasks
    for event in ("swer", "swer_wrong_write", "swer_phantom", "over_halt", "task_success"):
        assert sum(tasks.events[event]) == getattr(res, event).numerator, event
    wrong_action = res.outcome_counts.get("wrong_action", 0)
    assert sum(tasks.events["record_wrong"]) == res.swer_wrong_write.numerator + wrong_action
    assert tasks.correct_action_available is not None  # from the pack's facts
