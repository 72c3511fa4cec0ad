"""``effectbench site build``: verify every bundle, render the site, swap it into place.

Data flows one way: verifier reports -> :class:`Entry` values -> pandas boards
-> charts (SVG, cached by content) and pages (jinja2) -> mkdocs (in-process).
The site is built into a sibling temporary folder and only renamed over the
output folder once mkdocs succeeded, so a failed build leaves the previous
site untouched.
"""

from __future__ import annotations

import hashlib
import io
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import yaml

from effectbench.errors import DataError, SiteBuildError
from effectbench.site._charts import (
    Chart,
    ChartCache,
    ChartRenderer,
    VlConvertRenderer,
    cells_chart,
    frontier_chart,
    gap_chart,
    heatmap_chart,
)
from effectbench.site._entries import Entry, entry_from_report, unique_slugs
from effectbench.site._mkdocs import GeneratedPage, SitePages, load_site_config, run_mkdocs
from effectbench.site._pages import (
    BoardView,
    ChartSection,
    Withdrawn,
    board_views,
    charts_page,
    downloads_page,
    leaderboard_page,
    refused_page,
    submission_page,
)
from effectbench.site._tables import (
    boards,
    cells_frame,
    flat_rows,
    leaderboard_download,
    write_table,
)

GAP_CHART_SYSTEMS = 25
"""The gap chart shows at most this many systems of a board (lowest SWER first)."""
CELLS_CHART_SYSTEMS = 6
"""The per-cell chart shows at most this many systems of a board."""


@dataclass(frozen=True)
class SiteSources:
    """Where the hand-written parts of the site live (all under the repository root)."""

    root: Path

    @property
    def config_file(self) -> Path:
        """``mkdocs.yml``."""
        return self.root / "mkdocs.yml"

    @property
    def templates(self) -> Path:
        """The jinja2 templates of the generated pages."""
        return self.root / "site" / "templates"

    @property
    def spec(self) -> Path:
        """The SPEC rendered as the SPEC page."""
        return self.root / "SPEC.md"

    @property
    def withdrawn(self) -> Path:
        """The maintainers' list of withdrawn bundles."""
        return self.root / "site" / "withdrawn.yml"


@dataclass
class BuildSummary:
    """What a build did, for the command line and the benchmark."""

    out: Path
    n_bundles: int = 0
    n_ranked: int = 0
    n_preview: int = 0
    n_refused: int = 0
    n_withdrawn: int = 0
    n_pages: int = 0
    charts_rendered: int = 0
    charts_cached: int = 0
    build_date: str = ""
    timings: dict[str, float] = field(default_factory=dict)

    def lines(self) -> list[str]:
        """Return the summary as printable lines."""
        t = ", ".join(f"{k} {v:.2f}s" for k, v in self.timings.items())
        return [
            f"built {self.out} ({self.n_pages} pages, build date {self.build_date})",
            f"bundles {self.n_bundles}: ranked {self.n_ranked}, preview {self.n_preview}, "
            f"refused {self.n_refused}, withdrawn {self.n_withdrawn}",
            f"charts rendered {self.charts_rendered}, from cache {self.charts_cached}",
            f"time: {t}",
        ]


class _Clock:
    def __init__(self, timings: dict[str, float]) -> None:
        self.timings = timings
        self.last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.timings[name] = self.timings.get(name, 0.0) + now - self.last
        self.last = now


def build_day(today: date | None = None) -> tuple[str, int]:
    """Return the printed build date and the epoch mkdocs stamps files with (its midnight)."""
    import os

    if today is None:
        epoch_env = os.environ.get("SOURCE_DATE_EPOCH")
        if epoch_env and epoch_env.isdigit():
            today = datetime.fromtimestamp(int(epoch_env), UTC).date()
        else:
            today = datetime.now(UTC).date()
    midnight = datetime(today.year, today.month, today.day, tzinfo=UTC)
    return today.isoformat(), int(midnight.timestamp())


def read_withdrawn(path: Path) -> list[Withdrawn]:
    """Read ``site/withdrawn.yml`` (a list of {bundle, reason, date}); absent means none."""
    if not path.is_file():
        return []
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise DataError(f"not valid YAML: {exc}", file=str(path), line=line) from None
    if not isinstance(data, list):
        raise DataError("expected a list of withdrawn bundles", file=str(path))
    out = []
    for i, item in enumerate(data):
        if not isinstance(item, dict) or not item.get("bundle") or not item.get("reason"):
            raise DataError(
                "each entry needs 'bundle' (folder name) and 'reason'",
                file=str(path),
                field=f"[{i}]",
            )
        out.append(
            Withdrawn(
                bundle=str(item["bundle"]),
                reason=str(item["reason"]),
                date=str(item.get("date", "")),
            )
        )
    return out


def _code_fingerprint() -> str:
    # Everything whose change could change a verdict: the engine and the verifier (with
    # its pinned trust root). A report is reused only under the very same code.
    import effectbench
    import verifier

    digest = hashlib.sha256()
    for package in (effectbench, verifier):
        base = Path(next(iter(package.__path__))).resolve()
        for f in sorted(base.rglob("*")):
            rel = f.relative_to(base)
            if (
                f.is_file()
                and f.suffix in (".py", ".json", ".pem", ".txt")
                and "site" not in rel.parts
            ):
                digest.update(str(rel).encode() + b"\0" + f.read_bytes())
    return digest.hexdigest()


def _bundle_key(bundle: Path, code: str, allow_unsigned: bool) -> str | None:
    digest = hashlib.sha256(f"{code}\0{bundle}\0{allow_unsigned}".encode())
    for f in sorted(bundle.rglob("*")):
        if f.is_symlink():
            return None  # let the verifier judge links afresh every time
        if f.is_file():
            digest.update(str(f.relative_to(bundle)).encode() + b"\0" + f.read_bytes() + b"\0")
    return digest.hexdigest()


def verify_submissions(
    submissions: Path, allow_unsigned: bool = False, cache_dir: Path | None = None
) -> list[Any]:
    """Run the verifier over every bundle in ``submissions`` (the site's only data source).

    With ``cache_dir``, a bundle whose files, path and verifier code are byte-identical
    to an earlier run reuses that run's report (local rebuilds); without it (CI) every
    bundle is verified afresh.
    """
    from verifier.api import VerifyOptions, verify_path
    from verifier.report import BundleReport

    if not submissions.is_dir():
        raise DataError("the submissions folder does not exist", file=str(submissions))
    bundles = sorted(p for p in submissions.iterdir() if p.is_dir())
    if not bundles:
        return []  # nothing submitted yet: an empty leaderboard, not an error
    options = VerifyOptions(allow_unsigned=allow_unsigned)
    if cache_dir is None:
        return list(verify_path(submissions, options))
    cache_dir.mkdir(parents=True, exist_ok=True)
    code = _code_fingerprint()
    reports: list[Any] = []
    for bundle in bundles:
        key = _bundle_key(bundle, code, allow_unsigned)
        cached = cache_dir / f"{key}.json" if key else None
        if cached is not None and cached.is_file():
            reports.append(BundleReport.model_validate_json(cached.read_bytes()))
            continue
        (report,) = verify_path(bundle, options)
        if cached is not None:
            tmp = cached.with_suffix(".tmp")
            tmp.write_bytes(orjson.dumps(report.to_json()))
            tmp.replace(cached)
        reports.append(report)
    return reports


def _read_rows(entry: Entry) -> list[dict[str, Any]]:
    from effectbench.bundle import read_episodes

    path = entry.path / "episodes.jsonl"
    if not path.is_file():
        return []
    return list(read_episodes(path))


DOWNLOAD_NAMES = {
    "submission.json": "submission.json",
    "episodes.jsonl": "episodes.jsonl",
    "submission.sigstore.json": "submission.sigstore.json",
    "README.md": "README.txt",
}
"""Bundle file -> published name (a README is published as text, never as a page)."""


def _per_system_cells(frame: pd.DataFrame, entries: dict[str, Entry]) -> pd.DataFrame:
    parts = []
    for slug, system in zip(frame["slug"], frame["system"], strict=True):
        cells = cells_frame(entries[slug])
        cells.insert(0, "system", system)
        parts.append(cells)
    return pd.concat(parts, ignore_index=True)


def _chart_src(prefix: str, path: Path) -> str:
    return f"{prefix}charts/{path.name}"


def build_site(
    submissions: Path,
    out: Path,
    *,
    root: Path,
    allow_unsigned: bool = False,
    reports: Sequence[Any] | None = None,
    cache_dir: Path | None = None,
    renderer: ChartRenderer | None = None,
    today: date | None = None,
    read_rows: Callable[[Entry], list[dict[str, Any]]] = _read_rows,
    cache_reports: bool = True,
) -> BuildSummary:
    """Verify ``submissions`` (unless ``reports`` are given) and build the site into ``out``."""
    sources = SiteSources(root)
    if not sources.config_file.is_file():
        raise SiteBuildError(f"{sources.config_file} not found: run from the repository root")
    if not sources.spec.is_file():
        raise SiteBuildError(f"{sources.spec} not found: the SPEC page is rendered from it")
    summary = BuildSummary(out=out)
    clock = _Clock(summary.timings)
    day, epoch = build_day(today)
    summary.build_date = day

    cache_root = cache_dir or root / ".cache" / "effectbench-site"
    if reports is None:
        reports = verify_submissions(
            submissions, allow_unsigned, cache_root / "reports" if cache_reports else None
        )
    clock.lap("verify")
    slugs = unique_slugs(list(reports))
    all_entries = [entry_from_report(r, s) for r, s in zip(reports, slugs, strict=True)]
    withdrawn = read_withdrawn(sources.withdrawn)
    gone = {w.bundle for w in withdrawn}
    names = {e.path.name: e.name for e in all_entries}
    withdrawn = [
        Withdrawn(w.bundle, w.reason, w.date, names.get(w.bundle, "(not in submissions/)"))
        for w in withdrawn
    ]
    entries = [e for e in all_entries if e.path.name not in gone]
    refused = [e for e in entries if not e.accepted]
    summary.n_bundles = len(all_entries)
    summary.n_ranked = sum(e.status == "ranked" for e in entries if e.accepted)
    summary.n_preview = sum(e.status == "preview" for e in entries if e.accepted)
    summary.n_refused = len(refused)
    summary.n_withdrawn = len(withdrawn)
    by_slug = {e.slug: e for e in entries}

    board_list = boards(entries)
    views = board_views(board_list)
    clock.lap("tables")

    rows_by_slug = {e.slug: read_rows(e) for e in entries if e.accepted}
    clock.lap("read rows")

    # Charts: build every spec first, then render the stale ones in one batch.
    charts: list[Chart] = []
    sections_raw: list[tuple[BoardView, Chart, Chart, str, Chart, str]] = []
    for view in views:
        frame = view.frame
        top_gap = frame.head(GAP_CHART_SYSTEMS)
        top_cells = frame.head(CELLS_CHART_SYSTEMS)
        f = frontier_chart(f"{view.key}-frontier", frame)
        g = gap_chart(f"{view.key}-gap", top_gap)
        c = cells_chart(f"{view.key}-cells", _per_system_cells(top_cells, by_slug))
        gap_note = f"the {len(top_gap)} with the lowest SWER" if len(frame) > len(top_gap) else ""
        cells_note = (
            f"the {len(top_cells)} systems with the lowest SWER; every system's cells are "
            "on its own page"
            if len(frame) > len(top_cells)
            else ""
        )
        charts += [f, g, c]
        sections_raw.append((view, f, g, gap_note, c, cells_note))
    heatmaps: dict[str, Chart] = {}
    for e in entries:
        if e.accepted:
            heatmaps[e.slug] = heatmap_chart(f"heatmap-{e.slug}", e.name, cells_frame(e))
    charts += list(heatmaps.values())
    clock.lap("chart specs")
    cache = ChartCache(
        cache_root / "charts",
        renderer or VlConvertRenderer(),
    )
    svg_paths = cache.svg_paths([c.spec for c in charts])
    svg_of = {c.name: p for c, p in zip(charts, svg_paths, strict=True)}
    summary.charts_rendered = cache.stats.rendered
    summary.charts_cached = cache.stats.cached
    clock.lap("charts")

    pages: dict[str, GeneratedPage] = {}
    copies: dict[str, Path] = {f"charts/{p.name}": p for p in svg_paths}
    texts: dict[str, str | bytes] = {}
    pages["index.md"] = leaderboard_page(sources.templates, views, len(refused), len(withdrawn))
    pages["charts.md"] = charts_page(
        sources.templates,
        [
            ChartSection(
                key=v.key,
                title=v.title,
                frontier=f,
                frontier_src=_chart_src("", svg_of[f.name]),
                gap=g,
                gap_src=_chart_src("", svg_of[g.name]),
                gap_note=gn,
                cells=c,
                cells_src=_chart_src("", svg_of[c.name]),
                cells_note=cn,
            )
            for v, f, g, gn, c, cn in sections_raw
        ],
    )
    pages["refused.md"] = refused_page(sources.templates, refused, withdrawn)
    view_of = {slug: v for v in views for slug in v.frame["slug"]}
    row_of = {row["slug"]: row for v in views for row in v.rows}
    for e in entries:
        if not e.accepted:
            continue
        downloads = []
        for name in e.files:
            published = DOWNLOAD_NAMES[name]
            copies[f"submissions/{e.slug}/{published}"] = e.path / name
            downloads.append((published, f"{e.slug}/{published}"))
        pages[f"submissions/{e.slug}.md"] = submission_page(
            sources.templates,
            e,
            row_of[e.slug],
            view_of[e.slug],
            heatmaps[e.slug],
            _chart_src("../", svg_of[heatmaps[e.slug].name]),
            rows_by_slug[e.slug],
            downloads,
        )
    clock.lap("pages")

    board_table = leaderboard_download(board_list)
    episode_parts = [flat_rows(slug, rows) for slug, rows in rows_by_slug.items() if rows]
    episodes = pd.concat(episode_parts, ignore_index=True) if episode_parts else pd.DataFrame()
    texts["downloads/leaderboard.csv"] = board_table.to_csv(
        index=False, lineterminator="\n", float_format="%.6f"
    )
    texts["downloads/leaderboard.parquet"] = _parquet(board_table)
    texts["downloads/episodes.parquet"] = _parquet(episodes)
    pages["downloads.md"] = downloads_page(sources.templates, len(board_table), len(episodes))
    # The SPEC is our own trusted markdown: mkdocs converts it (headings, tables, TOC).
    texts["spec.md"] = sources.spec.read_text(encoding="utf-8")
    clock.lap("downloads")
    summary.n_pages = len(pages) + 1

    _build_and_swap(sources, out, SitePages(pages, copies, texts), day, epoch)
    clock.lap("mkdocs")
    return summary


def _parquet(frame: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    frame.to_parquet(buf, index=False, compression="zstd")
    return buf.getvalue()


def _build_and_swap(
    sources: SiteSources, out: Path, plugin: SitePages, day: str, epoch: int
) -> None:
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = out.parent / f".{out.name}.building"
    old = out.parent / f".{out.name}.previous"
    for leftover in (staging, old):
        if leftover.exists():
            shutil.rmtree(leftover)
    try:
        cfg = load_site_config(sources.config_file, staging, {"build_date": day})
        run_mkdocs(cfg, plugin, epoch)
        if not (staging / "index.html").is_file():
            raise SiteBuildError("mkdocs finished but wrote no index.html")
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if out.exists():
        out.rename(old)
    staging.rename(out)
    shutil.rmtree(old, ignore_errors=True)


__all__ = [
    "BuildSummary",
    "SiteSources",
    "build_day",
    "build_site",
    "read_withdrawn",
    "write_table",
]
