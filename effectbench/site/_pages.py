"""Pages: jinja2 templates (autoescaped) fed from the site's frames and entries.

Each function returns a :class:`~effectbench.site._mkdocs.GeneratedPage`
holding finished HTML; mkdocs only wraps it in the Material theme. Links
are written relative and with ``.html`` (``use_directory_urls: false``) so the
site also works from ``file://``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jinja2
import pandas as pd
from markupsafe import Markup, escape

from effectbench.metrics import (
    DEFAULT_PRICES,
    MAX_PRICE,
    PRICE_PRESETS,
    Cell,
    Prices,
    TaskTable,
)
from effectbench.packs import is_anchor
from effectbench.schema import Outcome
from effectbench.showable import LAYOUT, make_showable
from effectbench.site._charts import Chart, pct
from effectbench.site._contamination import Contamination
from effectbench.site._downloads import Tables
from effectbench.site._entries import Entry
from effectbench.site._exports import Exports
from effectbench.site._format import (
    against_nothing,
    break_even_text,
    resolution_text,
    signed,
    verdict,
)
from effectbench.site._mkdocs import GeneratedPage, compact_html
from effectbench.site._tables import (
    BOARD_COLUMNS,
    NO_MEASURED_COST,
    TIERS,
    Board,
    BoardColumn,
    ViewFacts,
    by_axis,
    cells_rows,
    named,
    substrate_order,
)
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


MATRIX_MISSING = "-"
"""The matrix letter of a (task, trial) the bundle has no row for."""
MATRIX_UNKNOWN = "X"
"""The matrix letter of an outcome without a code (none passes the verifier)."""


def _matrix_letter(outcome: str) -> str:
    """Return one episode's letter in a submission page's task x trial data."""
    return OUTCOME_CODES.get(outcome, MATRIX_UNKNOWN) if outcome else MATRIX_MISSING


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


BREAK_AFTER = re.compile(r"([_\-./])")
LONG_FLOAT = re.compile(r"(?<![\w.])-?\d+\.\d{5,}(?![\w.])")
"""A float printed with more digits than anyone reads (``0.5555555555555556``)."""
RATE_FIELDS = ("rate", "lo", "hi", "success_effect_gap")


def _wbr(text: Any) -> Markup:
    """Escape ``text`` and let it break only after ``_ - . /`` (never mid-word)."""
    return Markup(BREAK_AFTER.sub(r"\1<wbr>", str(escape(str(text)))))


def readable_numbers(message: str, field: str | None = None) -> str:
    """Return a finding's message with long floats written the way the board writes them.

    Rates (a field ending in ``rate``, ``lo``, ``hi`` or the gap) become percentages with
    one decimal, other numbers four significant digits; when two different numbers would
    then read the same, both get more digits until they differ.
    """
    found = [float(m) for m in LONG_FLOAT.findall(message)]
    if not found:
        return message
    last = (field or "").rsplit(".", 1)[-1]
    as_rate = last in RATE_FIELDS and all(-1 <= x <= 1 for x in found)

    def fmt(x: float, extra: int) -> str:
        return f"{100 * x:.{1 + extra}f}%" if as_rate else f"{x:.{4 + extra}g}"

    extra = 0
    while extra < 8 and len({fmt(x, extra) for x in found}) < len(set(found)):
        extra += 1
    return LONG_FLOAT.sub(lambda m: fmt(float(m.group(0)), extra), message)


def _pct(x: Any) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else pct(float(x))


def rate_cell(row: dict[str, Any], name: str, label: str, board: bool = False) -> Markup:
    """Return the table cell of rate ``name`` of a board row or a cell (``row`` holds the
    columns of :func:`effectbench.site._tables._rate_columns`): ``p [Wilson] k/n``, then,
    where a task ran more than once, the interval that counts tasks with its design effect, a
    0/n rate's one-sided upper bound(s), and the bound with every dropped trial counted.

    Every cell carries its label (shown above its number where a table becomes one card per
    row); on a board (``board``) it also carries what the board's script sorts by.
    """
    measured = row[name] == row[name]  # a rate with no evidence (NaN) is not measured
    attrs = (
        f' data-col="{escape(name)}" data-label="{escape(label)}"'
        f' data-sort="{f"{row[name]:.6f}" if measured else ""}"'
        if board
        else f' data-label="{escape(label)}"'  # its card's label where the column is narrow
    )
    if not measured:  # the collateral-write rate of a bundle without receipts
        return Markup(
            f'<td class="eb-rate eb-not-measured-rate"{attrs} data-metric="{escape(name)}">'
            '<span class="eb-p" title="not measured: the bundle carries no receipts">—</span> '
            '<span class="eb-k">not measured</span></td>'
        )
    repeated = row["max_trials"] > 1
    # counts as integers: a column that also holds an unmeasured rate (NaN) is a float column
    k, n = int(row[f"{name}_k"]), int(row[f"{name}_n"])
    parts = [
        f'<td class="eb-rate"{attrs} data-metric="{escape(name)}">'
        f'<span class="eb-p">{_pct(row[name])}</span> '
        f'<span class="eb-ci">[{_pct(row[f"{name}_lo"])}, {_pct(row[f"{name}_hi"])}]</span> '
        f'<span class="eb-k">{k}/{n}</span>'
    ]
    if repeated:
        parts.append(
            f'<span class="eb-tasks">tasks [{_pct(row[f"{name}_tasks_lo"])}, '
            f"{_pct(row[f'{name}_tasks_hi'])}] · deff {row[f'{name}_deff']:.1f}</span>"
        )
    if k == 0 and n > 0:
        by_tasks = f" (≤ {_pct(row[f'{name}_tasks_upper'])} by tasks)" if repeated else ""
        parts.append(f'<span class="eb-ub">0 seen: ≤ {_pct(row[f"{name}_upper"])}{by_tasks}</span>')
    if board and name == "task_success" and "first_try_k" in row:
        parts.append(first_try_span(row))
    if f"{name}_worst" in row and row["n_dropped"]:
        parts.append(
            f'<span class="eb-worst">≤ {_pct(row[f"{name}_worst"])} counting '
            f"{row['n_dropped']} dropped</span>"
        )
    parts.append("</td>")
    return Markup("".join(parts))


def first_try_span(row: Mapping[str, Any]) -> str:
    """Return a board row's first-try task success (k/n of its cells) and its mean attempts
    per cell, as the task-success cell says them beneath the rate."""
    k, n, attempts = row["first_try_k"], int(row["first_try_n"]), row["attempts"]
    said = "first try: not known" if k != k else f"first try {int(k)}/{n}"
    if attempts == attempts:
        said += f" · {attempts:.2f} attempts per cell" if attempts != 1 else " · no retries"
    title = (
        "task success at the first attempt: of the cells (task, trial), those that succeeded "
        "without running again after a re-runnable drop; then the mean attempts per cell"
    )
    return f'<span class="eb-first-try" data-eb-first-try title="{escape(title)}">{said}</span>'


def _showable_output(value: Any) -> Any:
    """Every text a template outputs passes :mod:`effectbench.showable` (tabs and line
    breaks kept): whatever its source, no control, format or invisible character reaches
    a page."""
    if isinstance(value, str) and value.isascii() and value.isprintable():
        return value  # printable ASCII is all showable (most of what a page prints)
    if isinstance(value, Markup):
        return Markup(make_showable(str(value), also=LAYOUT))
    if isinstance(value, str):
        return make_showable(value, also=LAYOUT)
    return value


@lru_cache(maxsize=4)
def environment(templates: Path) -> jinja2.Environment:
    """Return the autoescaping jinja2 environment over ``templates``."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates)),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
        finalize=_showable_output,
    )
    env.filters["pct"] = _pct
    env.filters["shortfp"] = _shortfp
    env.filters["secs"] = _secs
    env.filters["issuer_host"] = _issuer_host
    env.filters["points"] = _points
    env.filters["signed"] = signed
    env.filters["break_even"] = break_even_text
    env.filters["wbr"] = _wbr
    env.filters["readable"] = readable_numbers
    env.globals["rate_cell"] = rate_cell
    env.filters["resolution"] = resolution_text
    env.globals["tier_words"] = dict(TIERS)
    env.filters["against_nothing"] = against_nothing
    return env


def keep_compiled(templates: Path, code: jinja2.BytecodeCache | None) -> None:
    """Load the templates of ``templates`` through ``code`` from now on: their compiled code
    kept between builds (:mod:`effectbench.site._compiled`), or none."""
    environment(templates).bytecode_cache = code


def row_badges(row: dict[str, Any]) -> list[str]:
    """Return the trust badges of a board row, by kind, in display order."""
    kinds = ["preview"] if row["status"] == "preview" else []
    kinds.append("rescored")
    kinds.append("signed" if row["signer"] else "unsigned")
    if row["reproduced"]:
        kinds.append("reproduced")
    if row.get("same_as"):
        kinds.append("same")
    if not row.get("seeds_default", True):
        kinds.append("seeds")
    if row.get("instance"):
        kinds.append(f"instance-{row['instance']}")
    if row.get("never_acts"):
        kinds.append("never-acts")
    return kinds


def _badge_identity(row: dict[str, Any], kind: str) -> tuple[str, ...]:
    if kind == "signed":
        return (kind, row["signer"], row["signer_issuer"])
    if kind == "same":
        return (kind, row["same_as"])
    if kind == "preview":
        return (kind, row.get("unranked") or "")
    if kind == "reproduced":  # its count is the row's own (a board's rows, not another's)
        return (kind, row["reproduced_rows"])
    return (kind, row["seeds"]) if kind == "seeds" else (kind,)


def rank_text(best: Any, worst: Any) -> str:
    """Return a rank range as a board shows it (``2``, ``1–3``; ``—``: not ranked)."""
    if best is None or best is pd.NA:
        return "—"
    return str(best) if best == worst else f"{best}–{worst}"


def _rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    rows = []
    for order, row in enumerate(frame.to_dict("records")):
        row["rank_text"] = rank_text(row["rank_best"], row["rank_worst"])
        # Sorting by rank is the default order (a preview sits where the rules put it).
        row["rank_sort"] = order
        row["order"] = order
        row["all_badges"] = row_badges(row)
        row["label"] = named(row["system"], row["substrate"])
        words = [
            row["tier"],
            row["system"],
            row["model"],
            row["harness"],
            row["substrate"],
            row["signer"],
            row["date"],
            row["status"],
            *row["all_badges"],
        ]
        row["filter_text"] = " ".join(str(w) for w in words if w).lower()
        rows.append(row)
    return rows


def _collapse_badges(rows: list[dict[str, Any]]) -> list[str]:
    """Return the badges every row shares (said once above the board); drop them from rows."""
    if not rows:
        return []
    common = [
        kind
        for kind in rows[0]["all_badges"]
        if all(
            _badge_identity(r, kind) in {_badge_identity(r, k) for k in r["all_badges"]}
            for r in rows
        )
    ]
    for r in rows:
        r["badges"] = [k for k in r["all_badges"] if k not in common]
    return common


@dataclass(frozen=True)
class BoardSection:
    """One part of a board's table on the page: its ranked rows, or its unsigned previews."""

    rows: list[dict[str, Any]]
    """Every row of the section, in the default order."""
    shown: list[dict[str, Any]]
    """The rows of the section the page holds (the rest load from the board's row shards)."""
    line_after: int
    """How many of the section's rows are at or above doing nothing (where its line goes)."""


@dataclass(frozen=True)
class BoardView:
    """A board (one substrate of a pack) with its rows ready for the template."""

    key: str
    title: str
    pack: str
    fingerprints: tuple[str, ...]
    frame: pd.DataFrame
    rows: list[dict[str, Any]]
    n_ranked: int
    anchor: bool
    substrate: str = ""
    """The substrate every number of the board comes from."""
    group: str = ""
    """The anchor of the board's pack (its boards share one table, a substrate at a time)."""
    group_title: str = ""
    facts: ViewFacts | None = None
    """The doing-nothing line, the minimum detectable difference and the family-wise level."""
    prices: Prices = DEFAULT_PRICES
    """The prices of the default order."""
    tables: dict[str, TaskTable] = field(default_factory=dict)
    """Each system's rows on the substrate counted per task (what the board script re-ranks)."""
    contamination: tuple[Contamination, ...] = ()
    withheld: tuple[str, ...] = ()
    """The blindness findings that keep the board unranked (:attr:`Board.withheld`)."""
    """Each system's fresh-instance SWER against its public-seed SWER, where it has both."""

    @property
    def ranked_rows(self) -> list[dict[str, Any]]:
        """The board's ranked rows, in the default order (a tier is a subset of them)."""
        return [r for r in self.rows if r["status"] == "ranked"]

    @property
    def preview_rows(self) -> list[dict[str, Any]]:
        """The board's unsigned previews (a local build's), in the default order: a marked
        section of their own, never among the rows of its ranked table."""
        return [r for r in self.rows if r["status"] == "preview"]

    def section(self, previews: bool, rows_inline: int) -> BoardSection:
        """Return the board's ranked table (``previews`` false: its ranked rows, and a withheld
        board's rows, unranked) or its section of unsigned previews, as the page holds them:
        of the board's first ``rows_inline`` rows in the default order, those of the section
        (the rest are in the board's row shards, which the page sorts into their section)."""
        mine = [r for r in self.rows if (r["status"] == "preview") == previews]
        shown = [r for r in self.rows[:rows_inline] if (r["status"] == "preview") == previews]
        line = 0
        if self.facts is not None:
            # The default order puts more net value first, so the rows at or above doing
            # nothing (the first ``line_after``) are a prefix of every section too.
            above = self.rows[: self.facts.line_after]
            line = sum(1 for r in above if (r["status"] == "preview") == previews)
        return BoardSection(rows=mine, shown=shown, line_after=line)

    def axes(self, axis: str) -> list[tuple[str, list[dict[str, Any]]]]:
        """Return the board's rows grouped by ``axis`` (``model`` or ``harness``), each group
        in the default order, the groups in the order of their first row."""
        row_of = {row["slug"]: row for row in self.rows}
        return [(k, [row_of[s] for s in slugs]) for k, slugs in by_axis(self.frame, axis).items()]


@dataclass(frozen=True)
class BoardGroup:
    """The boards of one pack (one per substrate): one table on the page, a substrate at a
    time, the first in SPEC order shown first."""

    key: str
    title: str
    views: list[BoardView]
    columns: tuple[BoardColumn, ...] = BOARD_COLUMNS
    """The columns shown: a collapsible column whose value every row shares is left out."""
    fixed: tuple[tuple[str, str, str], ...] = ()
    """(label, value, full value on hover) of what every row shares, said above the board."""
    common_badges: tuple[str, ...] = ()

    @property
    def substrates(self) -> tuple[str, ...]:
        """The substrates of its boards, in the order shown."""
        return tuple(v.substrate for v in self.views)

    @property
    def systems(self) -> int:
        """Distinct entries on its boards."""
        return len({row["slug"] for v in self.views for row in v.rows})

    @property
    def ranked(self) -> int:
        """Distinct ranked entries on its boards."""
        return len({row["slug"] for v in self.views for row in v.rows if row["status"] == "ranked"})

    @property
    def anchor(self) -> bool:
        """Whether its pack is a regression anchor."""
        return any(v.anchor for v in self.views)


def _fixed(frame: pd.DataFrame) -> tuple[tuple[BoardColumn, ...], tuple[tuple[str, str, str], ...]]:
    """Return the columns to show and the facts every row shares (collapsed into the header)."""
    fixed: list[tuple[str, str, str]] = []
    hidden = set()
    fps = set(frame["fingerprint"])
    if len(set(frame["pack"])) == 1 and len(fps) == 1:
        fp = str(next(iter(fps)))
        fixed.append(("pack", str(frame["pack"].iloc[0]), ""))
        fixed.append(("fingerprint", _shortfp(fp), fp))
        hidden.add("pack")
    if frame["spec_version"].nunique() == 1:
        fixed.append(("SPEC", str(frame["spec_version"].iloc[0]), ""))
        hidden.add("spec_version")
    columns = tuple(c for c in BOARD_COLUMNS if not (c.collapsible and c.key in hidden))
    return columns, tuple(fixed)


def board_views(boards: Sequence[Board]) -> list[BoardView]:
    """Return the boards with their template rows."""
    out = []
    for b in boards:
        rows = _rows(b.frame)
        for r in rows:
            r["badges"] = list(r["all_badges"])
        out.append(
            BoardView(
                key=b.key,
                title=b.title,
                pack=b.pack,
                fingerprints=b.fingerprints,
                frame=b.frame,
                rows=rows,
                n_ranked=int((b.frame["status"] == "ranked").sum()),
                anchor=is_anchor(b.pack),
                substrate=b.substrate,
                group=b.group,
                group_title=b.group_title,
                facts=b.facts,
                prices=b.prices,
                tables=b.tables,
                contamination=b.contamination,
                withheld=tuple(leak.text() for leak in b.withheld),
            )
        )
    return out


def board_groups(views: Sequence[BoardView]) -> list[BoardGroup]:
    """Return the boards grouped by pack (in the order given), each group's shared columns
    and badges worked out (a badge every row of every board of the group carries is said once
    above its table, and left out of its rows)."""
    by_group: dict[str, list[BoardView]] = {}
    for v in views:
        by_group.setdefault(v.group, []).append(v)
    out = []
    for key, members in by_group.items():
        frame = pd.concat([v.frame for v in members], ignore_index=True)
        columns, fixed = _fixed(frame)
        rows = [r for v in members for r in v.rows]
        for r in rows:
            r["badges"] = list(r["all_badges"])
        common = _collapse_badges(rows)
        out.append(BoardGroup(key, members[0].group_title, members, columns, fixed, tuple(common)))
    return out


ROWS_INLINE = 100
"""Rows of each board on the home page; the rest are loaded from the board's row shards when
a reader sorts, filters, re-prices or asks for them all, so the page stays small at any number
of systems."""


def board_rows_html(
    templates: Path, group: BoardGroup, view: BoardView, start: int = 0
) -> list[str]:
    """Return the HTML of each row of one board from position ``start`` on, in its default
    order: the macro the home page renders its rows with, so a row loaded later is the row the
    page would have held."""
    row = environment(templates).get_template("macros.html.j2").module.board_row  # type: ignore[attr-defined]
    return [str(row(r, group.columns, view.facts)) for r in view.rows[start:]]


def leaderboard_page(
    templates: Path,
    views: Sequence[BoardView],
    n_refused: int,
    n_withdrawn: int,
    trust_note: str = "",
    across: frozenset[str] = frozenset(),
    rows_inline: int = ROWS_INLINE,
    shards: Mapping[str, int] | None = None,
    pooled: Sequence[tuple[str, str]] = (),
) -> GeneratedPage:
    """Return the home page: one table per (SPEC major, pack, split), one substrate's board
    at a time, sortable and filterable.

    ``trust_note`` (set when signatures were checked against a private trust
    configuration) is printed above the boards; ``across`` are the groups with a system that
    ran more than one substrate (each links to its part of the substrates page). Each board
    holds its first ``rows_inline`` rows; ``shards`` says, per board with more, how many row
    shards (:func:`effectbench.site._prices.board_scripts`) the page loads when a reader asks;
    ``pooled`` links each board pooling packs ((substrate, page)).
    """
    groups = board_groups(views)
    body = (
        environment(templates)
        .get_template("leaderboard.html.j2")
        .render(
            groups=groups,
            rows_inline=rows_inline,
            shards=shards or {},
            n_refused=n_refused,
            n_withdrawn=n_withdrawn,
            trust_note=trust_note,
            across=across,
            pooled=pooled,
            prices=views[0].prices if views else DEFAULT_PRICES,
            presets=PRICE_PRESETS,
            max_price=f"{MAX_PRICE:g}",
            verdict=verdict,
            tiers=TIERS,
        )
    )
    return GeneratedPage(
        "Leaderboard",
        body,
        tuple((g.key, g.title) for g in groups),
        hide=("navigation", "toc"),
        search_lead=lede(body),
    )


@dataclass(frozen=True)
class ChartArt:
    """A chart's drawings: the wide one and, where the chart has one, the phone's."""

    wide: Markup
    phone: Markup


@dataclass(frozen=True)
class ChartSection:
    """The three charts of one board."""

    key: str
    title: str
    frontier: Chart
    frontier_svg: ChartArt
    frontier_note: str
    gap: Chart
    gap_svg: ChartArt
    gap_note: str
    cells: Chart
    cells_svg: ChartArt
    cells_note: str
    cost: Chart | None = None
    """Measured cost against net value with the frontier (None: no system's cost measured)."""
    cost_svg: ChartArt | None = None
    unmeasured: tuple[str, ...] = ()
    """The ranked systems without a measured cost: named apart, never placed at zero."""


def charts_page(templates: Path, sections: Sequence[ChartSection]) -> GeneratedPage:
    """Return the charts page."""
    body = (
        environment(templates)
        .get_template("charts.html.j2")
        .render(sections=sections, no_measured_cost=NO_MEASURED_COST)
    )
    return GeneratedPage(
        "Charts",
        body,
        tuple((s.key, s.title) for s in sections),
        hide=("navigation",),
        search_lead=lede(body),
    )


LEDE = re.compile(r'<p class="eb-lede[^"]*">.*?</p>', re.S)
"""A generated page's opening paragraph."""


def lede(body: str) -> str:
    """Return the opening paragraph of a generated page: all the search index holds of a
    page whose body is mostly one big table or drawing (parsing it costs, finds nothing)."""
    found = LEDE.search(body)
    return found.group(0) if found else ""


def compare_page(templates: Path, views: Sequence[BoardView]) -> GeneratedPage:
    """Return the compare view's page (the view itself runs in the browser)."""
    body = environment(templates).get_template("compare.html.j2").render(boards=views)
    return GeneratedPage("Compare two systems", body, hide=("navigation", "toc"))


def episode_page(templates: Path, frames_policy: str) -> GeneratedPage:
    """Return the episode view's page (it renders receipts in the browser, by its address;
    ``frames_policy`` says which episodes' frames the site shows)."""
    body = environment(templates).get_template("episode.html.j2").render(policy=frames_policy)
    return GeneratedPage("Episode receipt", body, search=False, hide=("navigation", "toc"))


def downloads_page(templates: Path, tables: Tables, exports: Exports) -> GeneratedPage:
    """Return the downloads page (``tables``: the downloads, for their row counts;
    ``exports``: each board's EEE archive, and the formats not offered)."""
    body = (
        environment(templates)
        .get_template("downloads.html.j2")
        .render(
            n_board_rows=tables.n_board_rows,
            n_cell_rows=tables.n_cell_rows,
            n_episode_rows=tables.n_episode_rows,
            boards_eee=exports.boards,
            exports_missing=exports.not_offered_text,
        )
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
    ("badge", "Badge"),
    ("downloads", "Downloads"),
)

HEAT_BOUNDS = (0.10, 0.25, 0.50, 0.75)
"""Upper bounds of the heatmap's shades above 0 (a sixth shade holds the rest)."""
HEAT_LABELS = ("0", "≤10%", "≤25%", "≤50%", "≤75%", ">75%")


def heat_bin(rate: float) -> int:
    """Return the heatmap shade of a rate: 0 for exactly 0, then one per bound, 5 above."""
    if rate <= 0:
        return 0
    for i, bound in enumerate(HEAT_BOUNDS, start=1):
        if rate <= bound:
            return i
    return len(HEAT_BOUNDS) + 1


@dataclass(frozen=True)
class HeatCell:
    """One shaded cell: ``k/n`` and its shade."""

    k: int
    n: int
    rate: float
    bin: int


@dataclass(frozen=True)
class Heat:
    """A submission's heatmap: categories down, substrates across, SWER, over-halt and
    record-wrong in each."""

    substrates: tuple[str, ...]
    rows: list[tuple[str, list[tuple[tuple[str, HeatCell | None], ...]]]]
    bins: tuple[str, ...] = HEAT_LABELS


def _heat_cell(k: int, n: int) -> HeatCell:
    r = k / n if n else 0.0
    return HeatCell(k, n, r, heat_bin(r))


def heat_table(cells: Sequence[tuple[Cell, TaskTable]]) -> Heat:
    """Return the heatmap of one submission's cells (``cells``: each with its tasks,
    :attr:`Entry.cells`)."""
    substrates = substrate_order(c.substrate for c, _ in cells)
    by_key = {(c.category, c.substrate): (c, t) for c, t in cells}
    categories = sorted({c.category for c, _ in cells})
    rows = []
    for cat in categories:
        groups: list[tuple[tuple[str, HeatCell | None], ...]] = []
        for sub in substrates:
            cell, tasks = by_key.get((cat, sub), (None, None))
            wrong = int(tasks.k("record_wrong").sum()) if tasks is not None else 0
            groups.append(
                (
                    ("s", _heat_cell(cell.swer.numerator, cell.n) if cell else None),
                    ("o", _heat_cell(cell.over_halt.numerator, cell.n) if cell else None),
                    ("r", _heat_cell(wrong, cell.n) if cell else None),
                )
            )
        rows.append((cat, groups))
    return Heat(substrates, rows)


@dataclass(frozen=True)
class BadgeLink:
    """A ranked submission's badge: its file, text, width and the markdown to embed it."""

    path: str
    text: str
    width: float
    markdown: str
    absolute: bool = True
    """Whether the snippet's links are absolute (``site_url`` is set in ``mkdocs.yml``)."""


PLACES_RANKS = Markup("<!--eb-places-ranks-->")
"""The slot in a kept submission body for its rank on each board (:func:`fill_places`)."""
PLACES_VALUES = Markup("<!--eb-places-values-->")
"""The slot in a kept submission body for its net value on each board."""


def submission_body(
    templates: Path,
    entry: Entry,
    row: dict[str, Any],
    board: tuple[str, Prices],
    matrix: tuple[list[int], list[tuple[str, list[str]]]],
    downloads: Sequence[tuple[str, str]],
    badge: BadgeLink | None,
    trust_note: str = "",
    *,
    receipts: bool = False,
    frames_policy: str = "",
    exports: Sequence[tuple[str, str]] = (),
    exports_missing: Sequence[str] = (),
) -> str:
    """Return one submission page's body, compacted, with the two slots of
    :func:`fill_places` in it (``row``: its numbers over every episode; ``board``: the key
    and prices of the first board it is on, which its compare link and price note name;
    ``receipts``: its matrix and heatmap link to the episode view; ``exports``: the label and
    site path of each of its exports, ``exports_missing`` a line per format not offered).

    Everything in it depends on the bundle, its report and the code alone, so a build keeps
    it between builds (:mod:`effectbench.site._kept`); its place on the boards, which moves
    whenever a submission joins, is filled in on every build.
    """
    res = entry.results
    assert res is not None and entry.tasks is not None
    cells = []
    for c, (_, mine) in zip(cells_rows(entry), entry.cells, strict=True):
        cells.append({**c, "max_trials": max(mine.trials), "n_tasks": mine.n_tasks, "n_dropped": 0})
    order = list(OUTCOME_CODES)
    counts = sorted(
        res.outcome_counts.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else 99
    )
    env = environment(templates)
    hrefs = dict(downloads)
    trials, by_task = matrix
    matrix_data = {
        "slug": entry.slug,
        "receipts": receipts,
        "trials": trials,
        "names": {c: n for n, c in OUTCOME_CODES.items()},
        "tasks": [
            [task, "".join(_matrix_letter(o) for o in outcomes)] for task, outcomes in by_task
        ],
        "rows": hrefs.get("episodes.jsonl.gz", ""),
        "receipts_file": hrefs.get("receipts.jsonl.gz", ""),
    }
    body = env.get_template("submission.html.j2").render(
        e=entry,
        row=row,
        board_key=board[0],
        places_ranks=PLACES_RANKS,
        places_values=PLACES_VALUES,
        heat=heat_table(entry.cells),
        cells=cells,
        prices=board[1],
        outcome_counts=counts,
        matrix=matrix,
        matrix_data=matrix_data,
        outcome_code=OUTCOME_CODES,
        outcome_codes=[(c, n) for n, c in OUTCOME_CODES.items()],
        downloads=downloads,
        badge=badge,
        trust_note=trust_note,
        receipts=receipts,
        frames_policy=frames_policy,
        exports=exports,
        exports_missing=exports_missing,
    )
    assert body.count(PLACES_RANKS) == 1 and body.count(PLACES_VALUES) == 1
    return compact_html(body.strip())


def fill_places(
    templates: Path, body: str, placements: Sequence[tuple[BoardView, dict[str, Any]]]
) -> str:
    """Return a kept submission body (:func:`submission_body`) with its place on each board
    it is on (``placements``: the board, and its row there) put in its slots."""
    places = environment(templates).get_template("submission_places.html.j2").module
    ranks = str(places.ranks(placements))  # type: ignore[attr-defined]
    values = str(places.values(placements))  # type: ignore[attr-defined]
    return body.replace(PLACES_RANKS, ranks, 1).replace(PLACES_VALUES, values, 1)


def submission_page(entry: Entry, body: str) -> GeneratedPage:
    """Return one submission's page around its filled body (:func:`fill_places`).

    The page stays out of the theme's search index: the system finder
    (:mod:`effectbench.site._find`) finds it by the system's name.
    """
    return GeneratedPage(
        entry.name,
        body,
        SUBMISSION_HEADINGS,
        hide=("navigation",),
        search=False,
    )
