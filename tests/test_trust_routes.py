"""Routes to an undeserved rank, and inputs that crashed or stalled: each closed by its check id.

Every case starts from a good bundle made here by a real run and changes one
thing, as an attacker (or an unlucky submitter) would, then asserts the exact
check id (or exit status) that now stops it, and that no input file changed.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from support.bundles import (
    copy_bundle,
    edit_rows,
    list_references,
    make_bundle,
    read_rows,
    read_submission,
    restate,
    write_rows,
    write_submission,
)

from effectbench.bundle import MAX_TRIALS, UPSTREAM_DROP_DETAIL, folder_problem
from effectbench.classify import classify, true_state
from effectbench.cli import main
from effectbench.errors import DataError
from effectbench.packs import get_pack
from effectbench.produce import import_document
from effectbench.reachability import reachability_table
from effectbench.schema import OracleVerdict
from verifier.api import VerifyOptions, verify_bundle, verify_document, verify_path
from verifier.limits import Limits
from verifier.pack import check_drops, pack_tasks
from verifier.report import FindingSink, Status

PREVIEW = VerifyOptions(allow_unsigned=True)
ROOT = Path(__file__).resolve().parents[1]
Rows = list[dict[str, Any]]


@pytest.fixture(scope="module")
def custom(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A good bundle of a custom system (effect_verified's rows, 3 trials): a preview. Rows
    only (format 1): the row routes alone are under test here (tests/test_receipts.py holds
    a forged row against its receipt)."""
    return make_bundle(
        tmp_path_factory.mktemp("custom") / "b",
        "effect_verified",
        declare_baseline=False,
        receipts=False,
    )


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A shipped baseline's bundle, exactly the baseline (name, description, nothing else)."""
    return make_bundle(tmp_path_factory.mktemp("baseline") / "2026-01-02_screen-only")


def _tree(path: Path) -> dict[str, str]:
    return {
        str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(path.rglob("*"))
        if p.is_file()
    }


def _ids(bundle: Path, options: VerifyOptions = PREVIEW) -> set[str]:
    before = _tree(bundle)
    report = verify_bundle(bundle, options)
    assert _tree(bundle) == before  # verification never writes
    return {str(i) for i in report.finding_ids()}


# --------------------------------------------------------------------------- rule 1: drops


def _cherry_pick(bundle: Path, keep_tasks: int, *, listed: bool) -> None:
    """Delete every row of all but ``keep_tasks`` tasks (the ones that hurt), restate claims."""
    rows = read_rows(bundle)
    tasks = sorted({r["task_id"] for r in rows})
    kept = [r for r in rows if r["task_id"] in tasks[:keep_tasks]]
    gone = [r for r in rows if r["task_id"] not in tasks[:keep_tasks]]
    write_rows(bundle, kept)
    restate(bundle)
    data = read_submission(bundle)
    data["run"]["n_dropped"] = len(gone)
    data["run"]["dropped"] = (
        [{"task_id": r["task_id"], "trial": r["trial"], "reason": "infrastructure"} for r in gone]
        if listed
        else []
    )
    if not listed:
        data["run"]["n_dropped"] = 0
    write_submission(bundle, data)


def test_cherry_picked_tasks_are_refused_listed_or_not(custom: Path, tmp_path: Path) -> None:
    listed = copy_bundle(custom, tmp_path / "listed")
    _cherry_pick(listed, 4, listed=True)
    ids = _ids(listed)
    assert {"pack.drop_cap", "pack.task_uncovered"} <= ids, ids
    assert "pack.missing_trials" not in ids and "pack.dropped_list" not in ids
    silent = copy_bundle(custom, tmp_path / "silent")
    _cherry_pick(silent, 4, listed=False)
    assert {"pack.missing_trials", "pack.task_uncovered"} <= _ids(silent)


def test_a_drop_list_must_name_exactly_the_missing_pairs(custom: Path, tmp_path: Path) -> None:
    bundle = copy_bundle(custom, tmp_path / "b")
    data = read_submission(bundle)
    data["run"]["n_dropped"] = 1
    data["run"]["dropped"] = [{"task_id": "mockmed::ok", "trial": 0, "reason": "unknown"}]
    write_submission(bundle, data)  # a pair that has its row
    assert "pack.dropped_list" in _ids(bundle)
    data["run"]["dropped"] = [{"task_id": "mockmed::nope", "trial": 0, "reason": "unknown"}]
    write_submission(bundle, data)  # a pair that is not in the split
    assert "pack.dropped_list" in _ids(bundle)


def _drop_findings(missing: list[tuple[str, int]], trials: int) -> set[str]:
    """The drop rules on a pack that is not deterministic (MockMed's tasks, no pack object)."""
    bundle_header = make_header(trials, missing)
    sink = FindingSink()
    tasks = pack_tasks(get_pack("mockmed"), "dev")
    check_drops(missing, bundle_header, tasks, None, sink, "submission.json", "episodes.jsonl")
    return {str(i) for i in sink.ids}


def make_header(trials: int, missing: list[tuple[str, int]]) -> Any:
    from effectbench.bundle import SubmissionHeader

    return SubmissionHeader.model_validate(
        {
            "spec_version": "1.0.0",
            "system": {"name": "x"},
            "pack": {"name": "mockmed", "fingerprint": "sha256:" + "0" * 64},
            "trials_per_task": trials,
            "seeds": list(range(trials)),
            "run": {
                "n_dropped": len(missing),
                "dropped": [
                    {"task_id": t, "trial": i, "reason": "infrastructure"} for t, i in missing
                ],
            },
            "environment": {"python": "3", "platform": "x"},
        }
    )


def test_drop_caps_on_a_pack_that_is_not_deterministic() -> None:
    # 9 tasks x 40 trials: 5% is 18 pairs; one per task
    assert _drop_findings([("mockmed::ok", 1), ("mockmed::stale", 3)], 40) == set()
    assert _drop_findings([("mockmed::ok", 1), ("mockmed::ok", 2)], 40) == {"pack.drop_cap"}
    # 9 tasks x 3 trials: 5% of 27 is 1 pair
    assert _drop_findings([("mockmed::ok", 1), ("mockmed::stale", 2)], 3) == {"pack.drop_cap"}


# --------------------------------------------------------------------------- rule 2: identity


@pytest.mark.parametrize(
    ("edit", "check"),
    [
        ("name", "signature.reproduced_identity"),
        ("url", "signature.reproduced_identity"),
        ("description", "signature.reproduced_identity"),
        ("readme", "signature.reproduced_identity"),
        ("unlisted", "signature.reproduced_unlisted"),
        ("moved", "signature.reproduced_unlisted"),
    ],
)
def test_a_renamed_or_unlisted_baseline_is_not_ranked_by_reproduction(
    baseline: Path, tmp_path: Path, edit: str, check: str
) -> None:
    references = list_references(tmp_path / "refs.json", [baseline])
    options = VerifyOptions(references=references)
    assert verify_bundle(baseline, options).status is Status.RANKED
    bundle = copy_bundle(baseline, tmp_path / baseline.name)
    data = read_submission(bundle)
    if edit == "name":
        data["system"]["name"] = "Acme Agent 9000"
    elif edit == "url":
        data["system"]["url"] = "https://acme.example/agent"
    elif edit == "description":
        data["system"]["description"] = "The best agent there is."
    elif edit == "unlisted":
        data["run"]["started_at"] = "2026-01-03T00:00:00+00:00"  # same rows, other bytes
    if edit == "readme":
        (bundle / "README.md").write_text("Acme Agent 9000, by Acme.\n")
    elif edit == "moved":
        bundle = copy_bundle(baseline, tmp_path / "2020-01-01_screen-only")  # backdated copy
    else:
        write_submission(bundle, data)
    report = verify_bundle(bundle, options)
    assert report.reproduced is True  # the rows do re-run: the numbers are not the problem
    assert report.status is Status.REFUSED
    assert {str(i) for i in report.finding_ids()} == {check}
    preview = VerifyOptions(references=references, allow_unsigned=True)
    assert verify_bundle(bundle, preview).status is Status.PREVIEW


def test_the_re_run_is_bounded_before_it_starts(baseline: Path, tmp_path: Path) -> None:
    bundle = copy_bundle(baseline, tmp_path / "b")
    options = VerifyOptions(limits=Limits(max_reproduce_rows=26))  # 9 tasks x 3 trials = 27
    assert "reproduce.too_large" in _ids(bundle, options)
    # one row that claims 300 trials: refused without any re-run (it is refused already)
    rows = read_rows(bundle)[:1]
    write_rows(bundle, rows)
    data = read_submission(bundle)
    data["trials_per_task"], data["seeds"] = 300, list(range(300))
    write_submission(bundle, data)
    report = verify_bundle(bundle, PREVIEW)
    assert report.reproduced is False and "pack.missing_trials" in report.finding_ids()
    assert report.check("reproduce").note == "not run: the bundle is refused already"


# --------------------------------------------------------------------------- rule 5: reachable


def _relabel(row: dict[str, Any]) -> None:
    """Set the row's labels to what the truth table says of its (edited) reading."""
    label = classify(
        row["agent"]["reported_success"],
        true_state(OracleVerdict.model_validate(row["oracle"])),
        row["correct_action_available"],
    )
    assert label is not None
    row["outcome"], row["swer_variant"] = label.outcome.value, label.swer_variant.value


def test_a_reading_copied_from_another_tasks_success_is_refused(
    custom: Path, tmp_path: Path
) -> None:
    bundle = copy_bundle(custom, tmp_path / "b")

    def copy_success(rows: Rows) -> None:
        success = next(
            r for r in rows if r["task_id"] == "mockmed::ok" and r["outcome"] == "success"
        )
        target = next(r for r in rows if r["task_id"] == "mockmed::partial")
        target["oracle"] = dict(success["oracle"])
        target["agent"] = dict(success["agent"])
        _relabel(target)

    edit_rows(bundle, copy_success, claims=True)
    assert _ids(bundle) == {"pack.unreachable_state"}


def test_an_odd_count_on_the_duplicate_task_is_refused(custom: Path, tmp_path: Path) -> None:
    bundle = copy_bundle(custom, tmp_path / "b")

    def odd(rows: Rows) -> None:
        row = next(r for r in rows if r["task_id"] == "mockmed::duplicate")
        assert row["oracle"]["kind"] == "record_written" and row["oracle"]["observed_count"] == 2
        row["oracle"]["observed_count"] = 3

    edit_rows(bundle, odd, claims=True)
    assert _ids(bundle) == {"pack.unreachable_state"}


def test_the_table_is_published_beside_the_manifest_and_anchor_unchanged() -> None:
    table = json.loads((ROOT / "docs" / "packs" / "mockmed-anchor.reachable.json").read_text())
    assert table["manifest_fingerprint"] == (
        "sha256:ce941f1e8dfa41164f88f04eed7a6416f65fa2813c6ba3de9755cf3e5a402b1f"
    )  # the interop vector: the table lives beside the manifest, not in it
    assert table["tasks"]["mockmed::partial"]["reachable"] == ["wrong_persisted", "absent"]
    assert table["tasks"]["mockmed::duplicate"]["observed_count_multiple"] == 2
    clinic = reachability_table(get_pack("clinic"))
    assert all(v == "[sequestered]" for k, v in clinic["tasks"].items() if "test" in k)


# --------------------------------------------------------------------------- crash inputs


def _raw_submission(bundle: Path, fn: Any) -> None:
    text = (bundle / "submission.json").read_text()
    (bundle / "submission.json").write_text(fn(text))


def _raw_first_row(bundle: Path, fn: Any) -> None:
    lines = (bundle / "episodes.jsonl").read_text().splitlines(keepends=True)
    lines[0] = fn(lines[0])
    (bundle / "episodes.jsonl").write_text("".join(lines))


def _nest(n: int) -> str:
    return "[" * n + "1" + "]" * n


NAME = '"effect_verified (test)"'


def _swap(old: str, new: str) -> Any:
    return lambda text: text.replace(old, new, 1)


BIG = 2**70
CRASHES: list[tuple[str, str, Any, str]] = [
    ("64-bit seed", "sub", _swap("[\n    0,", f"[\n    {BIG},"), "structure.non_finite"),
    ("64-bit trials", "sub", _swap('_task": 3', f'_task": {BIG}'), "structure.non_finite"),
    ("surrogate in the name", "sub", _swap(NAME, '"\\ud800 agent"'), "structure.json"),
    ("surrogate in a row", "row", _swap('"agent":{', '"agent":{"x":"\\udc00",'), "structure.json"),
    ("ESC in the name", "sub", _swap(NAME, '"\\u001b[31mred"'), "structure.text"),
    ("bidi override in the name", "sub", _swap(NAME, '"abc\\u202edef"'), "structure.text"),
    ("zero-width space in the name", "sub", _swap(NAME, '"ab\\u200bc"'), "structure.text"),
    ("long name", "sub", _swap(NAME, json.dumps("n" * 200_000)), "structure.text_length"),
]  # fmt: skip
CRASHES += [
    (f"nesting {n}", "sub", _swap('"test"', _nest(n)), "structure.nesting")
    for n in (255, 300, 600, 1000)
]  # fmt: skip
CRASHES += [
    (f"row nesting {n}", "row", _swap('t":{', f't":{{"x":{_nest(n)},'), "structure.nesting")
    for n in (255, 300, 600, 1000)
]  # fmt: skip


@pytest.mark.parametrize(
    ("where", "edit", "check"), [pytest.param(w, e, c, id=name) for name, w, e, c in CRASHES]
)
def test_crash_inputs_become_findings(
    custom: Path, tmp_path: Path, where: str, edit: Any, check: str
) -> None:
    bundle = copy_bundle(custom, tmp_path / "b")
    (_raw_submission if where == "sub" else _raw_first_row)(bundle, edit)
    report = verify_bundle(bundle, PREVIEW)
    assert report.status is Status.REFUSED
    assert check in report.finding_ids(), report.finding_ids()


def test_a_baseline_whose_seeds_do_not_match_its_trials_is_refused(
    baseline: Path, tmp_path: Path
) -> None:
    bundle = copy_bundle(baseline, tmp_path / "b")
    data = read_submission(bundle)
    data["seeds"] = [0, 1]
    write_submission(bundle, data)
    report = verify_bundle(bundle, PREVIEW)
    assert "pack.seeds" in report.finding_ids()
    assert report.check("reproduce").note == "not run: the seeds are not one per trial"


# --------------------------------------------------------------------------- bounds

_BOUNDED = """
import json, resource, sys
from pathlib import Path
from verifier.api import VerifyOptions, verify_bundle
options = VerifyOptions(allow_unsigned=True)
verify_bundle(Path(sys.argv[2]), options)  # everything imported and warm: the baseline
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
report = verify_bundle(Path(sys.argv[1]), options)
peak = max(
    resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
)
print(json.dumps({"ids": sorted(report.finding_ids()), "grew_kib": peak - before}))
"""


def _verify_in_child(bundle: Path, good: Path) -> dict[str, Any]:
    """Verify ``bundle`` in a fresh process; how much its peak memory grew past a good bundle's."""
    done = subprocess.run(
        [sys.executable, "-c", _BOUNDED, str(bundle), str(good)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_a_billion_trials_in_a_small_file_allocate_nothing(custom: Path, tmp_path: Path) -> None:
    bundle = copy_bundle(custom, tmp_path / "b")
    data = read_submission(bundle)
    data["trials_per_task"] = 10**9
    write_submission(bundle, data)
    assert (bundle / "submission.json").stat().st_size < 20_000
    result = _verify_in_child(bundle, custom)
    assert "structure.type" in result["ids"]  # over MAX_TRIALS, refused before any allocation
    assert result["grew_kib"] < 64 * 1024  # 10**9 trials would be 4 GB per task
    assert MAX_TRIALS == 10_000


def test_a_newline_free_episodes_file_is_refused_in_bounded_memory(
    custom: Path, tmp_path: Path
) -> None:
    bundle = copy_bundle(custom, tmp_path / "b")
    size = 1 << 30  # 1 GiB, no newline at all (a sparse file: cheap to make)
    with (bundle / "episodes.jsonl").open("wb") as fh:
        fh.truncate(size)
    result = _verify_in_child(bundle, custom)
    assert "structure.line_length" in result["ids"]
    assert result["grew_kib"] < 128 * 1024  # far below the 1 GiB line


# --------------------------------------------------------------------------- folder names


def test_folder_names_follow_one_rule_so_slugs_never_collide(custom: Path, tmp_path: Path) -> None:
    root = tmp_path / "submissions"
    root.mkdir()
    names = ["2026-01-01_X_Collide", "2026-01-01_x_collide", "2026-01-01_x_collide-2"]
    names += ["2026-02-30_bad-date", "2026-01-01_has space", "2026-01-01_ünï", "2026-01-01_a--b"]
    for name in names:
        copy_bundle(custom, root / name)
    reports = {Path(r.path).name: r for r in verify_path(root, PREVIEW)}
    refused = {n for n, r in reports.items() if "structure.folder_name" in r.finding_ids()}
    assert refused == {
        n for n in names if n not in ("2026-01-01_x_collide", "2026-01-01_x_collide-2")
    }
    assert folder_problem("2026-01-01_x_collide") is None


# --------------------------------------------------------------------------- import


def _upstream(bundle: Path) -> dict[str, Any]:
    """The reference implementation's single document with ``bundle``'s claims and rows."""
    data = read_submission(bundle)
    return {
        "effectbench_submission_version": 1,
        "system": {"name": data["system"]["name"], "description": "", "url": ""},
        "reproducibility": {
            "effectbench_version": data["spec_version"],
            "pack": data["pack"]["name"],
            "pack_fingerprint": data["pack"]["fingerprint"],
            "trials_per_task": data["trials_per_task"],
            "seeds": data["seeds"],
            "python": "3.11",
            "platform": "test",
        },
        "results": data["results"],
        "episodes": read_rows(bundle),
    }


def _outside(tmp_path: Path) -> dict[str, str]:
    return {
        str(p.relative_to(tmp_path)): "dir" if p.is_dir() else p.read_bytes().hex()[:32]
        for p in sorted(tmp_path.rglob("*"))
        if "out" not in p.relative_to(tmp_path).parts
    }


@pytest.mark.parametrize("started", ["../escaped", "/tmp/escaped-absolute", "..\\\\x"])
def test_import_writes_only_inside_out(
    custom: Path, tmp_path: Path, started: str, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _upstream(custom)
    for row in doc["episodes"]:
        row["started_at"] = started
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc))
    (tmp_path / "out").mkdir()
    before = _outside(tmp_path)
    assert main(["import", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "started_at" in err
    assert _outside(tmp_path) == before and not any((tmp_path / "out").iterdir())
    assert not Path("/tmp/escaped-absolute").exists()


def test_a_document_and_its_import_get_the_same_verdict_on_line_length(
    custom: Path, tmp_path: Path
) -> None:
    doc = _upstream(custom)
    doc["episodes"][0]["agent"]["message"] = "m" * 80_000
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc))
    assert "structure.line_length" in verify_document(path, PREVIEW).finding_ids()
    with pytest.raises(DataError, match="over the 65536"):
        import_document(path, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_an_imported_document_with_dropped_episodes_lists_them_as_unknown(
    custom: Path, tmp_path: Path
) -> None:
    doc = _upstream(custom)
    gone = doc["episodes"].pop(4)
    rows = doc["episodes"]
    from effectbench.metrics import episode_frame, summarize

    doc["results"] = summarize(episode_frame(rows)).to_json()
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc))
    imported = import_document(path, tmp_path / "out")
    run = read_submission(imported.folder)["run"]
    assert run["n_dropped"] == 1
    assert run["dropped"] == [
        {
            "task_id": gone["task_id"],
            "trial": gone["trial"],
            "reason": "unknown",
            "detail": UPSTREAM_DROP_DETAIL,
        }
    ]
    # the pairs are accounted for; MockMed is deterministic, so the drop itself is over the cap
    assert verify_bundle(imported.folder, PREVIEW).finding_ids() == {"pack.drop_cap"}
    assert verify_document(path, PREVIEW).finding_ids() == {"pack.drop_cap"}


def test_row_digests_survive_re_typing(custom: Path, tmp_path: Path) -> None:
    """A copy whose rows are re-ordered, re-spaced and re-timed keeps its rows hash."""
    copy = copy_bundle(custom, tmp_path / "copy")
    rows = read_rows(copy)[::-1]
    for r in rows:
        r["started_at"] = r["finished_at"] = "2020-01-01T00:00:00+00:00"
        r["latency_s"] = 9.0
        r["episode_id"] = "x-" + r["episode_id"]
    indented = orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2
    lines = [orjson.dumps(r, option=indented).replace(b"\n", b" ") + b"\n" for r in rows]
    (copy / "episodes.jsonl").write_bytes(b"".join(lines))
    first, second = verify_bundle(custom, PREVIEW), verify_bundle(copy, PREVIEW)
    assert first.rows_hash is not None and first.rows_hash == second.rows_hash
    assert first.content_hash != second.content_hash
    edit_rows(copy, lambda rs: rs[0]["agent"].update(message="other"), claims=False)
    assert verify_bundle(copy, PREVIEW).rows_hash != first.rows_hash
