"""The per-row pass: strict JSON, the cached fast path agrees with the full check, parallel scan."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson
import pytest
from test_bundle_helpers import make_bundle, read_rows

from effectbench.packs import get_pack
from verifier.checks import pack_tasks
from verifier.limits import Limits
from verifier.report import FindingSink
from verifier.rows import RowChecker, row_problems
from verifier.scan import scan_episodes, split_ranges
from verifier.strictjson import StrictJSONError, loads_strict


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    bundle = make_bundle(tmp_path_factory.mktemp("rows") / "b", "retry_on_error", trials=3)
    return read_rows(bundle)


def _checker(trials: int = 3) -> RowChecker:
    tasks = pack_tasks(get_pack("mockmed"), "dev")
    return RowChecker(FindingSink(), "episodes.jsonl", tasks=tasks, trials=trials, seeds=[0, 1, 2])


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


def _mutations(row: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Single-field edits that keep the row's cached combination reachable."""
    values: list[Any] = [None, True, 1, 1.0, -1, "x", "", [], {}, float(2**70)]
    out = []
    paths = [(k,) for k in row] + [("agent", k) for k in row["agent"]]
    paths += [("oracle", k) for k in row["oracle"]]
    for path in paths:
        for value in values:
            mutant = copy.deepcopy(row)
            target = mutant
            for key in path[:-1]:
                target = target[key]
            if type(target[path[-1]]) is type(value) and target[path[-1]] == value:
                continue
            target[path[-1]] = value
            out.append((".".join(path), mutant))
        mutant = copy.deepcopy(row)
        target = mutant
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
        out.append((".".join(path) + " deleted", mutant))
        renamed = copy.deepcopy(mutant)
        target = renamed
        for key in path[:-1]:
            target = target[key]
        target["bogus"] = True  # same number of keys, one unknown
        out.append((".".join(path) + " renamed", renamed))
    return out


def test_cached_fast_path_agrees_with_the_full_structure_check(
    rows: list[dict[str, Any]],
) -> None:
    """A mutant reuses the warm cache; it must be refused exactly when row_problems says so."""
    for row in rows[:9]:
        for where, mutant in _mutations(row):
            checker = _checker()
            checker.add(1, copy.deepcopy(row))  # warm the cache with the good row
            checker.add(2, mutant)
            structural = {f.check for f in checker.sink.kept["structure"] if f.line == 2}
            expected = {p[0] for p in row_problems(mutant)}
            assert structural == expected, where


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


def test_parallel_scan_gives_the_same_summary(tmp_path: Path, rows: list[dict[str, Any]]) -> None:
    path = tmp_path / "episodes.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    frames = []
    for workers in (1, 4):
        checker = _checker()
        scan_episodes(checker, path, Limits(), workers=workers)
        frames.append(checker.frame())
    from effectbench.metrics import summarize

    assert summarize(frames[0]) == summarize(frames[1])
