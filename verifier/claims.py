"""The ``claims`` family: the claimed results block against the one recomputed from the rows.

The recomputation is :func:`effectbench.metrics.summarize` over the rows that
passed the structure checks; here only the comparison lives: counts exactly,
floats within :data:`FLOAT_TOLERANCE`, cells matched by (category, substrate).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from effectbench.findings import CheckId
from effectbench.strictjson import json_type
from verifier.report import FindingSink

FLOAT_TOLERANCE = 1e-9
"""Absolute tolerance when comparing a claimed float with the recomputed one."""
OPTIONAL_RESULT_FIELDS = frozenset(("success_effect_gap_ci", "cost", "latency"))
"""Results fields of ours the reference's results block lacks: compared only when claimed."""


def compare_claims(claimed: Any, ours: Mapping[str, Any], sink: FindingSink, file: str) -> None:
    """Compare a claimed results block with the recomputed one (counts exact, floats 1e-9).

    Every field the claim has is compared; the interop fields are required;
    the optional fields of ours are compared when claimed. Cells are matched by
    (category, substrate): a missing or extra cell is refused.
    """
    if not isinstance(claimed, dict):
        sink.emit(
            CheckId.CLAIMS_TYPE,
            f"results must be an object, got {json_type(claimed)}",
            file,
            None,
            "results",
        )
        return
    for key in ours:
        if key not in claimed and key not in OPTIONAL_RESULT_FIELDS:
            sink.emit(
                CheckId.CLAIMS_MISSING_FIELD,
                "required results field is missing",
                file,
                None,
                f"results.{key}",
            )
    for key in claimed:
        if key not in ours:
            sink.emit(
                CheckId.CLAIMS_EXTRA_FIELD,
                "not a results field (or nothing in the rows supports it)",
                file,
                None,
                f"results.{key}",
            )
    for key, value in claimed.items():
        if key not in ours:
            continue
        if key == "cells":
            _compare_cells(value, ours["cells"], sink, file)
        else:
            _compare(value, ours[key], f"results.{key}", sink, file)


def _cell_key(cell: Any) -> tuple[Any, Any] | None:
    if not isinstance(cell, dict):
        return None
    key = (cell.get("category"), cell.get("substrate"))
    return key if all(isinstance(k, str) for k in key) else None


def _compare_cells(claimed: Any, ours: list[dict[str, Any]], sink: FindingSink, file: str) -> None:
    if not isinstance(claimed, list):
        sink.emit(
            CheckId.CLAIMS_TYPE,
            f"must be an array, got {json_type(claimed)}",
            file,
            None,
            "results.cells",
        )
        return
    mine = {(c["category"], c["substrate"]): c for c in ours}
    seen: set[tuple[Any, Any]] = set()
    for i, cell in enumerate(claimed):
        where = f"results.cells[{i}]"
        key = _cell_key(cell)
        if key is None:
            sink.emit(
                CheckId.CLAIMS_TYPE,
                "a cell must be an object with string category and substrate",
                file,
                None,
                where,
            )
            continue
        if key in seen:
            sink.emit(
                CheckId.CLAIMS_EXTRA_CELL,
                f"cell {key[0]} x {key[1]} is listed twice",
                file,
                None,
                where,
            )
            continue
        seen.add(key)
        if key not in mine:
            sink.emit(
                CheckId.CLAIMS_EXTRA_CELL,
                f"claimed cell {key[0]} x {key[1]} has no rows",
                file,
                None,
                where,
            )
            continue
        _compare(cell, mine[key], where, sink, file)
    for key in mine:
        if key not in seen:
            sink.emit(
                CheckId.CLAIMS_MISSING_CELL,
                f"the rows have cell {key[0]} x {key[1]} but the claim does not list it",
                file,
                None,
                "results.cells",
            )


def _compare(claimed: Any, ours: Any, path: str, sink: FindingSink, file: str) -> None:
    if isinstance(ours, dict):
        _compare_object(claimed, ours, path, sink, file)
    elif isinstance(ours, bool) or isinstance(ours, str) or ours is None:
        if claimed != ours or type(claimed) is not type(ours):
            sink.emit(
                CheckId.CLAIMS_VALUE,
                f"claimed {claimed!r}, the rows give {ours!r}",
                file,
                None,
                path,
            )
    elif isinstance(ours, int):
        _compare_count(claimed, ours, path, sink, file)
    elif isinstance(ours, float):
        _compare_rate(claimed, ours, path, sink, file)
    else:
        raise TypeError(f"unexpected recomputed value at {path}: {ours!r}")  # pragma: no cover


def _compare_object(
    claimed: Any, ours: dict[str, Any], path: str, sink: FindingSink, file: str
) -> None:
    """An object: every field the rows give, and none they do not, each compared."""
    if not isinstance(claimed, dict):
        sink.emit(
            CheckId.CLAIMS_TYPE,
            f"must be an object, got {json_type(claimed)}",
            file,
            None,
            path,
        )
        return
    for key in ours:
        if key not in claimed:
            sink.emit(CheckId.CLAIMS_MISSING_FIELD, "field is missing", file, None, f"{path}.{key}")
    for key in claimed:
        if key not in ours:
            sink.emit(
                CheckId.CLAIMS_EXTRA_FIELD,
                "the rows give no such entry (counts of zero are omitted)",
                file,
                None,
                f"{path}.{key}",
            )
        else:
            _compare(claimed[key], ours[key], f"{path}.{key}", sink, file)


def _compare_count(claimed: Any, ours: int, path: str, sink: FindingSink, file: str) -> None:
    if type(claimed) is not int:
        sink.emit(
            CheckId.CLAIMS_TYPE,
            f"a count must be an integer, got {claimed!r}",
            file,
            None,
            path,
        )
    elif claimed != ours:
        sink.emit(
            CheckId.CLAIMS_COUNT, f"claimed {claimed}, the rows give {ours}", file, None, path
        )


def _compare_rate(claimed: Any, ours: float, path: str, sink: FindingSink, file: str) -> None:
    if type(claimed) not in (int, float):
        sink.emit(CheckId.CLAIMS_TYPE, f"must be a number, got {claimed!r}", file, None, path)
    elif not abs(claimed - ours) <= FLOAT_TOLERANCE:
        sink.emit(
            CheckId.CLAIMS_RATE,
            f"claimed {claimed!r}, the rows give {ours!r} (tolerance {FLOAT_TOLERANCE})",
            file,
            None,
            path,
        )
