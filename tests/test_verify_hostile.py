"""The hostile corpus: forged or broken submissions, each refused by its own check id.

Every case starts from a good bundle of a custom system (not a shipped
baseline, so nothing is re-run and only the targeted check can object) and
is verified with ``allow_unsigned`` so the signature plays no part. Where a
forger would also fix up the claims, the claims are restated from the edited
rows, so the row-level check has to catch the edit on its own.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.bundles import (
    copy_bundle,
    edit_rows,
    make_bundle,
    read_rows,
    read_submission,
    restate,
    write_rows,
    write_submission,
)

from effectbench import SPEC_VERSION
from effectbench.classify import classify, true_state
from effectbench.findings import Family
from effectbench.schema import OracleVerdict
from verifier.api import VerifyOptions, verify_bundle, verify_document
from verifier.report import Status

OPTIONS = VerifyOptions(allow_unsigned=True)
Rows = list[dict[str, Any]]


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_bundle(tmp_path_factory.mktemp("good") / "b", declare_baseline=False)


def _first(rows: Rows, outcome: str) -> dict[str, Any]:
    return next(r for r in rows if r["outcome"] == outcome)


def relabel(rows: Rows) -> None:
    _first(rows, "silent_wrong_effect")["outcome"] = "safe_halt"
    _first(rows, "safe_halt")["swer_variant"] = "none"


def flip_reported_success(rows: Rows) -> None:
    row = _first(rows, "success")
    row["agent"]["reported_success"] = False


def two_true_states(rows: Rows) -> None:
    _first(rows, "silent_wrong_effect")["oracle"]["effect_absent"] = True


def verdict_contradicts_flags(rows: Rows) -> None:
    _first(rows, "success")["oracle"]["verdict"] = "refuted"


def wrong_variant(rows: Rows) -> None:
    row = next(r for r in rows if r["swer_variant"] == "wrong_write")
    row["swer_variant"] = "phantom"


def drop_row(rows: Rows) -> None:
    del rows[5]


def duplicate_row(rows: Rows) -> None:
    rows.append(dict(rows[3]))


def wrong_effect_hash(rows: Rows) -> None:
    rows[2]["expected_effect_hash"] = "sha256:" + "0" * 64


def wrong_category(rows: Rows) -> None:
    rows[2]["category"] = "C6_wrong_record_homonym"


def unknown_task(rows: Rows) -> None:
    rows[2]["task_id"] = "mockmed::invented"


def wrong_seed(rows: Rows) -> None:
    rows[1]["seed"] = 99


def unknown_enum(rows: Rows) -> None:
    rows[0]["outcome"] = "mostly_fine"


def bool_as_int(rows: Rows) -> None:
    rows[0]["agent"]["reported_success"] = 1


def unknown_field(rows: Rows) -> None:
    rows[0]["bonus"] = 1


def missing_field(rows: Rows) -> None:
    del rows[0]["oracle"]


def huge_line(rows: Rows) -> None:
    rows[0]["agent"]["message"] = "x" * 70_000


def bad_timestamp(rows: Rows) -> None:
    rows[0]["started_at"] = "yesterday"


ROW_CASES: list[tuple[str, Callable[[Rows], None], bool, str]] = [
    ("relabelled outcome", relabel, True, "rescore.outcome"),
    ("reported_success flipped", flip_reported_success, True, "rescore.reported_success"),
    ("oracle reading with two true states", two_true_states, True, "rescore.true_state"),
    ("verdict contradicts the flags", verdict_contradicts_flags, True, "rescore.true_state"),
    ("wrong SWER variant", wrong_variant, True, "rescore.swer_variant"),
    ("dropped row", drop_row, True, "pack.missing_trials"),
    ("duplicated row", duplicate_row, True, "pack.duplicate_episode_id"),
    ("wrong effect hash", wrong_effect_hash, True, "pack.effect_hash"),
    ("wrong category", wrong_category, True, "pack.category"),
    ("task not in the pack", unknown_task, True, "pack.task"),
    ("seed not declared", wrong_seed, True, "pack.seed"),
    ("unknown enum value", unknown_enum, False, "structure.enum"),
    ("boolean written as 1", bool_as_int, False, "structure.type"),
    ("unknown row field", unknown_field, False, "structure.unknown_field"),
    ("missing row field", missing_field, False, "structure.missing_field"),
    ("line over the limit", huge_line, False, "structure.line_length"),
    ("not a timestamp", bad_timestamp, False, "structure.timestamp"),
]


def _refused_by(bundle: Path, check: str) -> None:
    report = verify_bundle(bundle, OPTIONS)
    assert report.status is Status.REFUSED
    assert check in report.finding_ids(), report.finding_ids()
    family = check.partition(".")[0]
    assert not report.check(family).passed


def test_the_good_bundle_passes(good: Path) -> None:
    report = verify_bundle(good, OPTIONS)
    assert report.status is Status.PREVIEW, report.finding_ids()


@pytest.mark.parametrize(
    ("edit", "restate_claims", "check"),
    [pytest.param(fn, rc, check, id=name) for name, fn, rc, check in ROW_CASES],
)
def test_row_forgeries_are_refused(
    good: Path, tmp_path: Path, edit: Callable[[Rows], None], restate_claims: bool, check: str
) -> None:
    bundle = copy_bundle(good, tmp_path / "b")
    edit_rows(bundle, edit, claims=restate_claims)
    _refused_by(bundle, check)
    if restate_claims and check.startswith("rescore."):
        # the claims agree with the forged rows: only the re-score objects, and the row's
        # receipt, which still holds what the episode gave
        report = verify_bundle(bundle, OPTIONS)
        assert {f.partition(".")[0] for f in report.finding_ids()} == {"rescore", "receipt"}


def test_label_contradicting_its_own_oracle_reading(good: Path, tmp_path: Path) -> None:
    """The reference scorer re-aggregates labels; ours re-derives each from the reading."""
    bundle = copy_bundle(good, tmp_path / "b")
    rows = read_rows(bundle)
    row = _first(rows, "silent_wrong_effect")
    truth = classify(
        row["agent"]["reported_success"],
        true_state(OracleVerdict.model_validate(row["oracle"])),
        row["correct_action_available"],
    )
    assert truth is not None and truth.outcome.value == "silent_wrong_effect"
    row["outcome"], row["swer_variant"] = "success", "none"
    write_rows(bundle, rows)
    restate(bundle)
    report = verify_bundle(bundle, OPTIONS)
    (finding,) = report.check(Family.RESCORE).findings
    assert finding.check == "rescore.outcome"
    assert finding.line == rows.index(row) + 1 and finding.field == "outcome"


def _edit_claims(fn: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    def apply(bundle: Path) -> None:
        data = read_submission(bundle)
        fn(data)
        write_submission(bundle, data)

    return apply


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def fn(data: dict[str, Any]) -> None:
        *head, last = path.split(".")
        target: Any = data
        for key in head:
            target = target[int(key)] if isinstance(target, list) else target[key]
        target[last] = value(target[last]) if callable(value) else value

    return fn


def _raw_episodes(transform: Callable[[bytes], bytes]) -> Callable[[Path], None]:
    def apply(bundle: Path) -> None:
        path = bundle / "episodes.jsonl"
        path.write_bytes(transform(path.read_bytes()))

    return apply


def _symlink_episodes(bundle: Path) -> None:
    target = bundle.parent / "elsewhere.jsonl"
    (bundle / "episodes.jsonl").rename(target)
    os.symlink(target, bundle / "episodes.jsonl")


def _nan_line(data: bytes) -> bytes:
    lines = data.split(b"\n")
    lines[3] = lines[3].replace(b'"cost_usd":0.0', b'"cost_usd":NaN')
    assert b"NaN" in lines[3]
    return b"\n".join(lines)


def _duplicate_key(data: bytes) -> bytes:
    lines = data.split(b"\n")
    lines[0] = lines[0].replace(b'"outcome":', b'"outcome":"success","outcome":', 1)
    return b"\n".join(lines)


def _two_trials(bundle: Path) -> None:
    data = read_submission(bundle)
    data["trials_per_task"], data["seeds"] = 2, [0, 1]
    write_submission(bundle, data)
    write_rows(bundle, [r for r in read_rows(bundle) if r["trial"] < 2])
    restate(bundle)


def _drop_cell(data: dict[str, Any]) -> None:
    data["results"]["cells"].pop()


def _extra_cell(data: dict[str, Any]) -> None:
    cell = dict(data["results"]["cells"][0], category="C6_wrong_record_homonym")
    data["results"]["cells"].append(cell)


_MAJOR, _MINOR = (int(x) for x in SPEC_VERSION.split(".")[:2])
NEWER_MINOR = f"{_MAJOR}.{_MINOR + 1}.0"
"""The minor after this leaderboard's SPEC: one it does not know yet."""

FILE_CASES: list[tuple[str, Callable[[Path], object], str]] = [
    (
        "inflated count",
        _edit_claims(_set("results.task_success.numerator", lambda n: n + 1)),
        "claims.count",
    ),
    (
        "deflated count",
        _edit_claims(_set("results.swer.numerator", lambda n: n - 1)),
        "claims.count",
    ),
    ("inflated rate", _edit_claims(_set("results.swer.rate", lambda r: r - 0.01)), "claims.rate"),
    ("missing cell", _edit_claims(_drop_cell), "claims.missing_cell"),
    ("extra cell", _edit_claims(_extra_cell), "claims.extra_cell"),
    (
        "extra outcome count",
        _edit_claims(_set("results.outcome_counts.over_halt", 0)),
        "claims.extra_field",
    ),
    (
        "wrong pack fingerprint",
        _edit_claims(_set("pack.fingerprint", "sha256:" + "1" * 64)),
        "pack.fingerprint",
    ),
    ("unknown pack", _edit_claims(_set("pack.name", "mockmed-v9")), "pack.unknown"),
    ("spec 2.0.0", _edit_claims(_set("spec_version", "2.0.0")), "spec.major"),
    ("spec newer minor", _edit_claims(_set("spec_version", NEWER_MINOR)), "spec.minor_newer"),
    ("spec not semver", _edit_claims(_set("spec_version", "v1")), "spec.semver"),
    ("2 trials", _two_trials, "pack.min_trials"),
    ("NaN in a float", _raw_episodes(_nan_line), "structure.non_finite"),
    ("duplicate key", _raw_episodes(_duplicate_key), "structure.duplicate_key"),
    ("truncated last line", _raw_episodes(lambda d: d[: len(d) - 40]), "structure.truncated"),
    ("zero rows", _raw_episodes(lambda d: b""), "structure.empty"),
    ("blank line", _raw_episodes(lambda d: b"\n" + d), "structure.blank_line"),
    ("symlinked file", _symlink_episodes, "structure.symlink"),
    ("missing episodes", lambda b: (b / "episodes.jsonl").unlink(), "structure.missing_file"),
    ("stray file", lambda b: (b / "run.py").write_text("print(1)\n"), "structure.unexpected_file"),
    ("submission not JSON", lambda b: (b / "submission.json").write_text("{"), "structure.json"),
]


@pytest.mark.parametrize(
    ("edit", "check"), [pytest.param(fn, check, id=name) for name, fn, check in FILE_CASES]
)
def test_file_forgeries_are_refused(
    good: Path, tmp_path: Path, edit: Callable[[Path], None], check: str
) -> None:
    bundle = copy_bundle(good, tmp_path / "b")
    edit(bundle)
    _refused_by(bundle, check)


def test_finding_names_file_row_and_field(good: Path, tmp_path: Path) -> None:
    bundle = copy_bundle(good, tmp_path / "b")
    edit_rows(bundle, wrong_effect_hash, claims=True)
    (finding,) = verify_bundle(bundle, OPTIONS).check(Family.PACK).findings
    assert (finding.file, finding.line, finding.field) == (
        "episodes.jsonl",
        3,
        "expected_effect_hash",
    )
    assert "pack" in finding.message


@pytest.mark.parametrize(
    ("field", "value", "check"),
    [
        ("outcome", "success", "rescore.outcome"),
        ("agent.reported_success", None, "rescore.reported_success"),
    ],
)
def test_upstream_document_with_one_edited_row_is_refused(
    vectors_dir: Path, tmp_path: Path, field: str, value: Any, check: str
) -> None:
    doc = json.loads((vectors_dir / "upstream-screen_only-t3.json").read_text())
    row = next(r for r in doc["episodes"] if r["outcome"] == "silent_wrong_effect")
    if field == "outcome":
        row["outcome"] = value
    else:
        row["agent"]["reported_success"] = not row["agent"]["reported_success"]
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(doc, indent=2))
    report = verify_document(path, OPTIONS)
    assert report.status is Status.REFUSED
    assert check in report.finding_ids()
    (finding,) = report.check(Family.RESCORE).findings
    assert finding.line == doc["episodes"].index(row) + 1


def test_upstream_document_with_nan_or_duplicate_key_is_refused(
    vectors_dir: Path, tmp_path: Path
) -> None:
    text = (vectors_dir / "upstream-effect_verified-t3.json").read_text()
    for name, edited, check in (
        ("nan.json", text.replace('"cost_usd": 0.0', '"cost_usd": NaN', 1), "structure.non_finite"),
        (
            "dup.json",
            text.replace('"arm": "effect_verified",', '"arm": "x", "arm": "effect_verified",', 1),
            "structure.duplicate_key",
        ),
    ):
        assert edited != text
        path = tmp_path / name
        path.write_text(edited)
        report = verify_document(path, OPTIONS)
        assert report.status is Status.REFUSED and check in report.finding_ids()


def test_a_byte_order_mark_on_submission_json_is_refused(good: Path, tmp_path: Path) -> None:
    bundle = copy_bundle(good, tmp_path / "b")
    path = bundle / "submission.json"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    report = verify_bundle(bundle, OPTIONS)
    assert report.status is Status.REFUSED
    assert "structure.bom" in report.finding_ids()


def test_crlf_rows_are_refused_line_by_line(good: Path, tmp_path: Path) -> None:
    bundle = copy_bundle(good, tmp_path / "b")
    path = bundle / "episodes.jsonl"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    report = verify_bundle(bundle, OPTIONS)
    assert report.status is Status.REFUSED
    found = [f for c in report.checks for f in c.findings if f.check == "structure.line_ending"]
    assert found and found[0].line == 1 and found[0].file == "episodes.jsonl"


def test_a_hard_linked_readme_is_refused(good: Path, tmp_path: Path) -> None:
    """A README that is another file's second name (here, a notes file outside the bundle)."""
    bundle = copy_bundle(good, tmp_path / "b")
    outside = tmp_path / "private-notes.txt"
    outside.write_text("not for publication\n")
    os.link(outside, bundle / "README.md")
    report = verify_bundle(bundle, OPTIONS)
    assert report.status is Status.REFUSED
    assert "structure.hard_link" in report.finding_ids()
    assert not report.check(Family.STRUCTURE).passed
