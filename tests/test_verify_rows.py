"""The per-row pass: strict JSON, the generated fast test and the cache agree with the full
check (property-based), parallel scan equals sequential."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.bundles import make_bundle, read_rows
from support.rows import row_mutants

from effectbench.packs import get_pack
from effectbench.strictjson import StrictJSONError, loads_strict
from verifier import rows as rows_module
from verifier.limits import Limits
from verifier.pack import pack_tasks
from verifier.report import FindingSink
from verifier.rows import RowChecker
from verifier.rowschema import FAST_SOURCE, KEY_FIELDS, OPTIONAL, REQUIRED, fast_key, row_problems
from verifier.scan import scan_episodes, split_ranges


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    bundle = make_bundle(tmp_path_factory.mktemp("rows") / "b", "retry_on_error", trials=3)
    return read_rows(bundle)


def _checker(trials: int = 3, keep: int | None = None) -> RowChecker:
    tasks = pack_tasks(get_pack("mockmed"), "dev")
    sink = FindingSink() if keep is None else FindingSink(keep)
    return RowChecker(sink, "episodes.jsonl", tasks=tasks, trials=trials, seeds=[0, 1, 2])


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        (b'{"a":NaN}', "non_finite"),
        (b'{"a":-Infinity}', "non_finite"),
        (b'{"a":1e400}', "non_finite"),
        (b'{"a":1,"a":1}', "duplicate_key"),
        (b'{"a": {"b": 1, "b": 2}}', "duplicate_key"),
        (b'{"a":1', "json"),
        (b'{"a":"\xff"}', "json"),
    ],
)
def test_strict_json_refuses(text: bytes, rule: str) -> None:
    with pytest.raises(StrictJSONError) as err:
        loads_strict(text)
    assert err.value.rule == rule


def test_strict_json_accepts_other_spellings() -> None:
    assert loads_strict(b'{ "a" : 1.50 , "b" : "\\u00e9" }') == {"a": 1.5, "b": "é"}


def _verdicts(good: dict[str, Any], mutant: dict[str, Any]) -> list[tuple[Any, ...]]:
    checker = _checker()
    checker.add(1, copy.deepcopy(good))  # warms the cache with the good row's combination
    checker.add(2, copy.deepcopy(mutant))
    return sorted(
        (f.check, f.line or 0, f.field or "", f.message)
        for family in checker.sink.kept.values()
        for f in family
    )


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_cache_never_changes_a_verdict(rows: list[dict[str, Any]], data: st.DataObject) -> None:
    """A mutant checked against a warm cache gets exactly the findings it gets with no cache,
    and its structure findings are exactly what the full check names."""
    good, mutant = data.draw(row_mutants(rows))
    warm = _verdicts(good, mutant)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(rows_module, "MAX_COMBOS", 0)  # nothing cached: every row takes the full check
        assert _verdicts(good, mutant) == warm
    structural = {
        (c, field) for c, line, field, _ in warm if line == 2 and c.startswith("structure")
    }
    assert structural == {(c, field) for c, field, _ in row_problems(mutant)}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_generated_fast_test_agrees_with_the_full_check(
    rows: list[dict[str, Any]], data: st.DataObject
) -> None:
    """fast_key accepts a row with every field exactly when row_problems finds nothing
    (for the fields it leaves to the cache: when they hold the good row's values)."""
    good, mutant = data.draw(row_mutants(rows))
    key = fast_key(mutant)
    problems = row_problems(mutant)
    if key is not None and key == fast_key(good):
        assert problems == []
    if not problems:  # a valid row: the fast test accepts it unless an optional field is left out
        complete = (
            set(mutant) == set(REQUIRED + OPTIONAL)
            and "message" in mutant["agent"]
            and all("note" in call for call in mutant["model_calls"])
        )
        assert (key is not None) == complete


def test_fast_source_tests_every_field() -> None:
    """Every field of the table is read by the generated test (none forgotten)."""
    for name in REQUIRED + OPTIONAL:
        assert f"o[{name!r}]" in FAST_SOURCE
    assert KEY_FIELDS[:2] == ("task_id", "arm")


def test_parallel_scan_equals_sequential(tmp_path: Path, rows: list[dict[str, Any]]) -> None:
    lines = [orjson.dumps(r) for r in rows]
    relabel = next(i for i, line in enumerate(lines) if b'"outcome":"success"' in line)
    lines[relabel] = lines[relabel].replace(b'"outcome":"success"', b'"outcome":"safe_halt"')
    lines[20] = b'{"broken":'
    lines.append(lines[7])  # a duplicate across ranges
    lines.insert(2, b"")
    path = tmp_path / "episodes.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    assert len(split_ranges(path, 3)) == 3

    def run(workers: int) -> tuple[Any, ...]:
        checker = _checker()
        scan_episodes(checker, path, Limits(), workers=workers)
        findings = sorted(
            (f.check, f.line or 0, f.field or "")
            for family in checker.sink.kept.values()
            for f in family
        )
        return findings, checker.n_rows, checker.n_valid, dict(checker.sink.counts)

    sequential = run(1)
    assert run(3) == sequential
    checks = {f[0] for f in sequential[0]}
    assert {
        "structure.blank_line",
        "structure.json",
        "pack.duplicate_episode_id",
        "pack.duplicate_trial",
        "rescore.outcome",
    } <= checks


@pytest.mark.parametrize("keep", [None, 3])
def test_parallel_scan_lists_the_same_findings_in_the_same_order(
    tmp_path: Path, rows: list[dict[str, Any]], keep: int | None
) -> None:
    """The report of a file read in parts equals a sequential read's, finding for finding, in
    order, with the same words (a row seen three times names its first line every time; a
    part whose rows all use another arm is judged against the file's first row), also when
    only the first few findings of a kind are kept."""
    n = len(rows)
    lines = [
        orjson.dumps(r if i < n * 3 // 5 else {**r, "arm": "another_arm"})  # the last part's all
        for i, r in enumerate(rows)
    ]
    lines += [
        orjson.dumps({**rows[5], "seed": 7}),  # trial seen in part 1, wrong seed: both at once
        lines[3],  # a row seen three times, in three parts
        orjson.dumps({**rows[9], "episode_id": "e-new"}),  # its trial twice in the last part
    ]
    lines.insert(n // 2, lines[3])  # its second time, in the middle part
    path = tmp_path / "episodes.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    assert len(split_ranges(path, 3)) == 3

    def run(workers: int) -> tuple[Any, ...]:
        checker = _checker(keep=keep)
        scan_episodes(checker, path, Limits(), workers=workers)
        kept = {family: list(found) for family, found in checker.sink.kept.items() if found}
        return kept, dict(checker.sink.counts), dict(checker.sink.ids), checker.arms

    sequential = run(1)
    assert run(3) == sequential
    said = [(f.check, f.message) for found in sequential[0].values() for f in found]
    assert len(said) == (keep or len(said))
    if keep is None:
        assert sum(check == "pack.arm" for check, _ in said) > 3
        assert {"pack.duplicate_episode_id", "pack.duplicate_trial", "pack.seed"} <= {
            check for check, _ in said
        }


def test_parallel_scan_gives_the_same_summary(tmp_path: Path, rows: list[dict[str, Any]]) -> None:
    path = tmp_path / "episodes.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    frames, hashes = [], []
    for workers in (1, 4):
        checker = _checker()
        scan_episodes(checker, path, Limits(), workers=workers)
        frames.append(checker.frame())
        hashes.append((checker.rows_hash(), checker.measured_hash()))
    from effectbench.metrics import summarize

    assert summarize(frames[0]) == summarize(frames[1])
    assert hashes[0] == hashes[1] and None not in hashes[0]
