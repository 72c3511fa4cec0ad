"""One row contract: ``EpisodeRecord`` (the model) and the verifier's derived row table agree.

Every row, valid or not, gets the same verdict from ``EpisodeRecord.from_json``
and from ``verifier.rowschema.row_problems``, with the problems at the same
fields (property-based over single-field mutations of real rows, plus the named
cases); and the reference implementation's rows pass both.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from support.bundles import make_bundle, read_rows
from support.rows import row_mutants, row_with_call

from effectbench.schema import EpisodeRecord
from verifier.rowschema import OPTIONAL, REQUIRED, ROW, Kind, row_problems


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    bundle = make_bundle(tmp_path_factory.mktemp("contract") / "b", "retry_on_error", trials=3)
    return read_rows(bundle)


def _dotted(loc: tuple[str | int, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _model_problems(text: str) -> set[str] | None:
    """The fields the model refuses (None when it accepts the row)."""
    try:
        EpisodeRecord.from_json(text)
    except ValidationError as exc:
        return {_dotted(err["loc"]) for err in exc.errors()}
    return None


def _table_problems(row: Any) -> set[str] | None:
    problems = row_problems(row)
    return {field for _, field, _ in problems} if problems else None


def _agree(row: Any) -> None:
    text = json.dumps(row)  # the standard library writes integers of any size
    row = json.loads(text)
    assert _model_problems(text) == _table_problems(row), text


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_model_and_verifier_table_agree_on_everymutant(
    rows: list[dict[str, Any]], data: st.DataObject
) -> None:
    _, mutant = data.draw(row_mutants(rows))
    _agree(mutant)


def _set(row: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    row = copy.deepcopy(row)
    *parents, last = path.split(".")
    target: Any = row
    for key in parents:
        target = target[int(key)] if isinstance(target, list) else target[key]
    target[int(last) if isinstance(target, list) else last] = value
    return row


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("smuggled", "extra"),
        ("oracle.smuggled", 1),
        ("cost_usd", -1),
        ("latency_s", "1"),
        ("oracle.kind", "record_deleted"),
        ("substrate", "mainframe"),
        ("trial", -3),
        ("trial", 1.0),
        ("trial", True),
        ("seed", "1"),
        ("oracle.observed_count", -1),
        ("started_at", "yesterday"),
        ("finished_at", 20260101),
        ("agent.halted", 0),
        ("model_calls.0.cost_usd", -0.5),
        ("model_calls.0.input_tokens", -1),
        ("model_calls.0.extra", ""),
        ("env_fingerprint", []),
    ],
)
def test_named_cases_are_refused_by_both(rows: list[dict[str, Any]], path: str, value: Any) -> None:
    row = _set(row_with_call(rows[0]), path, value)
    text = json.dumps(row)
    assert _model_problems(text) is not None and _table_problems(json.loads(text)) is not None
    _agree(row)


@pytest.mark.parametrize("field", ["model_calls", "cost_usd", "latency_s", "started_at"])
def test_optional_fields_may_be_left_out_by_both(rows: list[dict[str, Any]], field: str) -> None:
    row = copy.deepcopy(rows[0])
    del row[field]
    assert _model_problems(json.dumps(row)) is None and row_problems(row) == []


def test_the_table_lists_the_models_fields_in_order() -> None:
    assert REQUIRED + OPTIONAL == tuple(
        name for name in EpisodeRecord.model_fields if name in REQUIRED + OPTIONAL
    )
    assert tuple(f.name for f in ROW.fields) == tuple(EpisodeRecord.model_fields)
    assert all(EpisodeRecord.model_fields[f.name].is_required() == f.required for f in ROW.fields)
    assert isinstance(ROW.fields[0].kind, Kind)


def test_reference_rows_pass_both(upstream_docs: dict[str, dict[str, Any]]) -> None:
    for doc in upstream_docs.values():
        for row in doc["episodes"]:
            assert row_problems(row) == []
            assert EpisodeRecord.from_json(json.dumps(row)).to_row() == row  # and round-trips
