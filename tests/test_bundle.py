"""Bundles: the Submission model, writing and reading, the schema, submit and import."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.bundles import make_bundle, read_rows, read_submission

from effectbench import SPEC_VERSION
from effectbench.bundle import (
    Submission,
    iter_episode_lines,
    read_episodes,
    slugify,
    submission_from_upstream,
)
from effectbench.cli import main
from effectbench.errors import DataError, UsageError
from effectbench.metrics import episode_frame, summarize


def test_written_bundle_round_trips(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path / "b")
    # MockMed's env shows no pixels: receipts, and no frames
    files = ["episodes.jsonl", "receipts.jsonl", "submission.json"]
    assert sorted(p.name for p in bundle.iterdir()) == files
    sub = Submission.model_validate(read_submission(bundle))
    assert sub.effectbench_bundle_version == 2
    rows = read_episodes(bundle / "episodes.jsonl")
    assert len(rows) == 27
    assert summarize(episode_frame(rows)) == sub.results
    assert sub.spec_version == SPEC_VERSION
    assert sub.system.baseline == "screen_only"


def test_write_refuses_a_non_empty_folder(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path / "b")
    sub = Submission.model_validate(read_submission(bundle))
    from effectbench.bundle import write_bundle

    with pytest.raises(UsageError):
        write_bundle(bundle, sub, read_rows(bundle))


def test_iter_episode_lines_numbers_lines_and_flags_long_ones(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    path.write_bytes(b'{"a":1}\n\n' + b"x" * 50 + b'\n{"b":2}')
    got = list(iter_episode_lines(path, max_line_bytes=20))
    assert got == [(1, b'{"a":1}'), (2, b""), (3, None), (4, b'{"b":2}')]


def test_read_episodes_names_the_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    path.write_bytes(b'{"a":1}\n{"a":\n')
    with pytest.raises(DataError) as err:
        read_episodes(path)
    assert err.value.line == 2


@pytest.mark.parametrize(
    ("name", "slug"),
    [("My Agent v2!", "my-agent-v2"), ("  ", "submission"), ("a/../b", "a-b")],
)
def test_slugify(name: str, slug: str) -> None:
    assert slugify(name) == slug


def test_upstream_conversion_keeps_claims_and_rows(upstream_docs: dict[str, Any]) -> None:
    doc = upstream_docs["screen_only"]
    data, rows = submission_from_upstream(doc)
    assert data["results"] is doc["results"]
    assert rows is doc["episodes"]
    assert data["pack"]["fingerprint"] == doc["reproducibility"]["pack_fingerprint"]
    assert data["system"]["baseline"] is None
    Submission.model_validate(data)


def test_upstream_conversion_names_the_missing_field(upstream_docs: dict[str, Any]) -> None:
    doc = {k: v for k, v in upstream_docs["screen_only"].items() if k != "reproducibility"}
    with pytest.raises(DataError) as err:
        submission_from_upstream(doc)
    assert err.value.field == "reproducibility"


def test_submit_writes_a_dated_bundle_deterministic_but_for_timings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["submit", "--baseline", "screen_only", "--trials", "3", "--name", "Screen Only"]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    assert main([*args, "--out", str(tmp_path / "b")]) == 0
    (a,) = (tmp_path / "a").iterdir()
    (b,) = (tmp_path / "b").iterdir()
    assert a.name.endswith("_screen-only") and a.name[:4].isdigit()

    def untimed(bundle: Path) -> Any:
        rows = [
            {k: v for k, v in r.items() if k not in ("latency_s", "started_at", "finished_at")}
            for r in read_rows(bundle)
        ]
        sub = read_submission(bundle)
        sub.pop("run")
        sub["results"].pop("latency")
        return rows, sub

    assert untimed(a) == untimed(b)
    assert main([*args, "--out", str(tmp_path / "a")]) == 2  # the folder exists


def test_import_cli_writes_a_bundle(
    tmp_path: Path, vectors_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = vectors_dir / "upstream-effect_verified-t3.json"
    assert main(["import", str(doc), "--out", str(tmp_path)]) == 0
    (bundle,) = tmp_path.iterdir()
    original = json.loads(doc.read_text())
    assert read_rows(bundle) == original["episodes"]
    assert read_submission(bundle)["results"] == original["results"]


def test_import_of_a_broken_document_is_a_data_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "doc.json"
    doc.write_text('{"effectbench_submission_version": 1, "x": NaN}')
    assert main(["import", str(doc), "--out", str(tmp_path / "out")]) == 2
    assert "doc.json" in capsys.readouterr().err


def test_submit_into_a_file_is_a_usage_error_before_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    for out in (target, target / "below"):
        args = ["submit", "--baseline", "screen_only", "--name", "S", "--out", str(out)]
        assert main(args) == 2
        out_text, err = capsys.readouterr()
        assert out_text == "" and err.count("\n") == 1, err
    assert target.read_text() == "x"


def test_import_into_an_impossible_folder_is_a_usage_error(
    tmp_path: Path, vectors_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    doc = vectors_dir / "upstream-screen_only-t3.json"
    assert main(["import", str(doc), "--out", str(target / "below")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a folder" in err, err


def test_a_failed_write_leaves_no_partial_bundle(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path / "b", receipts=False)
    sub = Submission.model_validate(read_submission(bundle))
    rows = read_rows(bundle)
    from effectbench.bundle import write_bundle

    def broken() -> Any:
        yield from rows[:5]
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        write_bundle(tmp_path / "out", sub, broken())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert write_bundle(empty, sub, rows) == empty
    assert read_rows(empty) == rows
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b", "empty"]
