"""Rows and results with the fields that time a run removed (two runs compare equal)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson

TIMINGS = ("latency_s", "started_at", "finished_at")


def untimed(rows: list[Any]) -> list[dict[str, Any]]:
    """Rows as dicts without the fields that time the run."""
    out = []
    for row in rows:
        data = row.to_row() if hasattr(row, "to_row") else dict(row)
        for key in TIMINGS:
            data.pop(key)
        out.append(data)
    return out


def untimed_results(text: str) -> dict[str, Any]:
    """The ``run --json`` block without latency figures."""
    block: dict[str, Any] = json.loads(text)
    return {k: v for k, v in block.items() if not k.startswith("latency")}


def untimed_bundle(folder: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A bundle's submission (timings removed) and its rows (timings removed)."""
    submission = json.loads((folder / "submission.json").read_text())
    for key in ("started_at", "finished_at"):
        submission["run"].pop(key)
    submission["results"].pop("latency", None)
    lines = (folder / "episodes.jsonl").read_bytes().splitlines()
    return submission, untimed([orjson.loads(line) for line in lines])
