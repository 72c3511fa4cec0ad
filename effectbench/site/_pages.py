"""Pages: jinja2 templates (autoescaped) fed from the site's frames and entries.

Each function returns a :class:`~effectbench.site._mkdocs.GeneratedPage`
holding finished HTML; mkdocs only wraps it in the Material theme. Links
are written relative and with ``.html`` (``use_directory_urls: false``) so the
site also works from ``file://``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jinja2
import pandas as pd

from effectbench.schema import Outcome
from effectbench.site._charts import Chart, pct
from effectbench.site._entries import Entry
from effectbench.site._mkdocs import GeneratedPage
from effectbench.site._tables import BOARD_COLUMNS, Board
from effectbench.site._withdrawn import Withdrawn

OUTCOME_CODES = {
    Outcome.SUCCESS.value: "S",
    Outcome.SAFE_HALT.value: "H",
    Outcome.OVER_HALT.value: "O",
    Outcome.SILENT_WRONG_EFFECT.value: "W",
    Outcome.FALSE_ABORT.value: "F",
    Outcome.WRONG_ACTION.value: "A",
}
"""One letter per outcome for the task x trial matrix."""


def _shortfp(fp: str) -> str:
    return fp.removeprefix("sha256:")[:12] if fp else "—"


def _secs(s: float) -> str:
    return f"{s * 1000:.2f} ms" if s < 1 else f"{s:.2f} s"


def _issuer_host(issuer: str) -> str:
    """Return the host of an OIDC issuer URL (``accounts.google.com``), else the text itself."""
    host = urlsplit(issuer).hostname
    return host or issuer


def _points(x: Any) -> str:
    """Return a difference of rates in signed percentage points (``+5.6``), ``—`` for none."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return f"{100 * float(x):+.1f}"


def _pct(x: Any) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else pct(float(x))


@lru_cache(maxsize=4)
def environment(templates: Path) -> jinja2.Environment:
    """Return the autoescaping jinja2 environment over ``templates``."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates)),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["pct"] = _pct
    env.filters["shortfp"] = _shortfp
    env.filters["secs"] = _secs
    env.filters["issuer_host"] = _issuer_host
    env.filters["points"] = _points
    return env


def _rows(board: Board) -> list[dict[str, Any]]:
    rows = []
    for row in board.frame.to_dict("records"):
        best, worst = row["rank_best"], row["rank_worst"]
        if best is None or best is pd.NA:
            row["rank_text"] = "—"
            row["rank_sort"] = 10**9
        else:
            row["rank_text"] = str(best) if best == worst else f"{best}–{worst}"
            row["rank_sort"] = int(best) * 100_000 + int(worst)
        rows.append(row)
    return rows


@dataclass(frozen=True)
class BoardView:
    """A board with its rows ready for the template."""

    key: str
    title: str
    pack: str
    fingerprints: tuple[str, ...]
    frame: pd.DataFrame
    rows: list[dict[str, Any]]
    n_ranked: int
    anchor: bool


ANCHOR_PACKS = ("mockmed", "mockmed-anchor")
"""Packs whose numbers are pinned regression anchors (said so on every board)."""


def board_views(boards: Sequence[Board]) -> list[BoardView]:
    """Return the boards with their template rows."""
    return [
        BoardView(
            key=b.key,
            title=b.title,
            pack=b.pack,
            fingerprints=b.fingerprints,
            frame=b.frame,
            rows=_rows(b),
            n_ranked=int((b.frame["status"] == "ranked").sum()),
            anchor=b.pack.lower() in ANCHOR_PACKS,
        )
        for b in boards
    ]


def leaderboard_page(
    templates: Path,
    views: Sequence[BoardView],
    n_refused: int,
    n_withdrawn: int,
    trust_note: str = "",
) -> GeneratedPage:
    """Return the home page: one sortable, filterable board per (SPEC major, pack).

    ``trust_note`` (set when signatures were checked against a private trust
    configuration) is printed above the boards.
    """
    body = (
        environment(templates)
        .get_template("leaderboard.html.j2")
        .render(
            boards=views,
            n_refused=n_refused,
            n_withdrawn=n_withdrawn,
            columns=BOARD_COLUMNS,
            trust_note=trust_note,
        )
    )
    return GeneratedPage(
        "Leaderboard", body, tuple((v.key, v.title) for v in views), hide=("navigation",)
    )


@dataclass(frozen=True)
class ChartSection:
    """The three charts of one board."""

    key: str
    title: str
    frontier: Chart
    frontier_src: str
    gap: Chart
    gap_src: str
    gap_note: str
    cells: Chart
    cells_src: str
    cells_note: str


def charts_page(templates: Path, sections: Sequence[ChartSection]) -> GeneratedPage:
    """Return the charts page."""
    body = environment(templates).get_template("charts.html.j2").render(sections=sections)
    return GeneratedPage("Charts", body, tuple((s.key, s.title) for s in sections))


def downloads_page(templates: Path, n_board_rows: int, n_episode_rows: int) -> GeneratedPage:
    """Return the downloads page."""
    body = (
        environment(templates)
        .get_template("downloads.html.j2")
        .render(n_board_rows=n_board_rows, n_episode_rows=n_episode_rows)
    )
    return GeneratedPage("Downloads", body)


def refused_page(
    templates: Path, refused: Sequence[Entry], withdrawn: Sequence[Withdrawn]
) -> GeneratedPage:
    """Return the page of refused and withdrawn bundles, with check ids and messages."""
    body = (
        environment(templates)
        .get_template("refused.html.j2")
        .render(refused=refused, withdrawn=withdrawn)
    )
    return GeneratedPage(
        "Refused and withdrawn", body, (("refused", "Refused"), ("withdrawn", "Withdrawn"))
    )


SUBMISSION_HEADINGS = (
    ("headline", "Headline numbers"),
    ("cells", "Per cell"),
    ("outcomes", "Outcome counts"),
    ("pass-k", "pass^k"),
    ("cost", "Cost and latency"),
    ("matrix", "Task × trial outcomes"),
    ("verifier", "Verifier report"),
    ("signer", "Signer"),
    ("manifest", "Reproducibility manifest"),
    ("readme", "Submitter's notes"),
    ("downloads", "Downloads"),
)


def submission_page(
    templates: Path,
    entry: Entry,
    row: dict[str, Any],
    board: BoardView,
    heatmap: Chart,
    heatmap_src: str,
    matrix: tuple[list[int], list[tuple[str, list[str]]]],
    downloads: Sequence[tuple[str, str]],
    trust_note: str = "",
) -> GeneratedPage:
    """Return one submission's page (kept out of the nav and the search index)."""
    res = entry.results
    assert res is not None
    order = list(OUTCOME_CODES)
    counts = sorted(
        res.outcome_counts.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else 99
    )
    body = (
        environment(templates)
        .get_template("submission.html.j2")
        .render(
            e=entry,
            row=row,
            board_key=board.key,
            board_title=board.title,
            heatmap=heatmap,
            heatmap_src=heatmap_src,
            outcome_counts=counts,
            matrix=matrix,
            outcome_code=OUTCOME_CODES,
            outcome_codes=[(c, n) for n, c in OUTCOME_CODES.items()],
            downloads=downloads,
            trust_note=trust_note,
        )
    )
    return GeneratedPage(entry.name, body, SUBMISSION_HEADINGS, search=False, hide=("navigation",))
