"""One system's episodes on two substrates, paired and counted from the rows themselves
(written out from SPEC's outcomes, not by the site's code): what the substrate view is held to."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from effectbench.metrics import TaskTable, episode_frame, task_table


def jsonl_rows(bundle: Path) -> list[dict[str, Any]]:
    lines = (bundle / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(x) for x in lines]


def paired(rows: list[dict[str, Any]], first: str, second: str) -> tuple[TaskTable, TaskTable]:
    """The episodes of ``first`` and ``second`` with the same base task, trial and seed, per
    task (recomputed here from the rows, not by the site's code)."""

    def on(sub: str) -> dict[tuple[str, int, Any], dict[str, Any]]:
        return {
            (r["task_id"].split("@")[0], r["trial"], r["seed"]): r
            for r in rows
            if r["substrate"] == sub
        }

    a, b = on(first), on(second)
    both = sorted(set(a) & set(b))

    def table(side: dict[tuple[str, int, Any], dict[str, Any]]) -> TaskTable:
        return task_table(episode_frame([{**side[k], "task_id": k[0]} for k in both]))

    return table(a), table(b)


WRONG_RATES = {
    "swer": lambda r: r["outcome"] == "silent_wrong_effect",
    "over_halt": lambda r: r["outcome"] == "over_halt",
    "record_wrong": lambda r: (
        r["outcome"] == "wrong_action"
        or (r["outcome"] == "silent_wrong_effect" and r["swer_variant"] == "wrong_write")
    ),
}
"""What each rate of the view counts, written out from SPEC's outcomes."""


class PacksPage(HTMLParser):
    """The packs page (``packs.html``): per system, per (board, substrate, rate), the rate
    cell's attributes (``data-k``, ``data-n``)."""

    def __init__(self) -> None:
        super().__init__()
        self.systems: dict[str, dict[tuple[str, str, str], dict[str, str]]] = {}
        self._system: dict[tuple[str, str, str], dict[str, str]] | None = None
        self._row: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "section" and "data-eb-system" in a:
            self._system = self.systems.setdefault(a["data-eb-system"], {})
        elif tag == "tr" and "data-board" in a:
            self._row = a
        elif tag == "td" and "data-metric" in a and self._system is not None:
            key = (self._row["data-board"], self._row["data-substrate"], a["data-metric"])
            self._system[key] = a
