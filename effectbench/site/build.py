"""``effectbench site build``: verify every bundle, render the site, swap it into place.

Data flows one way: verifier reports -> :class:`Entry` values -> pandas boards
-> charts (SVG, cached by content) and pages (jinja2) -> mkdocs (in-process).
The site is built into a sibling temporary folder and only renamed over the
output folder once mkdocs succeeded, so a failed build leaves the previous
site untouched.

Speed: many bundles are verified, and many charts rendered, on one pool of
spawned worker processes (:mod:`effectbench.site._pool`); charts render while
the pages are written and mkdocs runs, and join the staging folder after it.
Everything derived from a bundle is cached by content under the cache folder:
verifier reports (``reports/``, keyed by the bundle's bytes, its path, the
verdict-relevant code and the bytes of the Sigstore trust root it was verified
under), flattened rows (``rows/``, Arrow files keyed by the bytes of
``episodes.jsonl``) and chart SVGs (``charts/``, keyed by the spec), so a
rebuild after one new bundle verifies, flattens and renders only that.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pyarrow as pa
import yaml

from effectbench.bundle import parse_episode_line
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
from effectbench.site._pool import Workers
from effectbench.site._tables import (
    all_rows,
    boards,
    cells_rows,
    flat_rows,
    leaderboard_download,
    outcome_matrix,
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


VERIFY_DEPENDENCIES = ("pydantic", "pandas", "numpy", "orjson", "sigstore", "cryptography")
"""Installed packages whose version is part of the verifier-report cache key."""


def _verdict_source(rel: Path) -> bool:
    """Whether a package file can influence a verdict (so belongs in the report-cache key).

    Everything counts but the command-line front ends (``cli.py``, ``_cmd_*.py``,
    ``__main__.py``: argument parsing and printing, imported by no verification
    code) and the site itself; an edit to those keeps the cached reports.
    """
    if rel.suffix not in (".py", ".json", ".pem", ".txt") or "site" in rel.parts:
        return False
    return not (rel.name in ("cli.py", "__main__.py") or rel.name.startswith("_cmd_"))


def _code_fingerprint() -> str:
    # Everything whose change could change a verdict: the engine and the verifier (with
    # its pinned trust root) and the libraries they lean on. Computed once per build; a
    # report is reused only under the very same code.
    import platform
    from importlib.metadata import PackageNotFoundError, version

    import effectbench
    import verifier

    digest = hashlib.sha256(f"python {platform.python_version()}\0".encode())
    for dist in VERIFY_DEPENDENCIES:
        try:
            digest.update(f"{dist} {version(dist)}\0".encode())
        except PackageNotFoundError:
            digest.update(f"{dist} absent\0".encode())
    for package in (effectbench, verifier):
        base = Path(next(iter(package.__path__))).resolve()
        for f in sorted(base.rglob("*")):
            rel = f.relative_to(base)
            if f.is_file() and _verdict_source(rel):
                digest.update(f"{package.__name__}/{rel}".encode() + b"\0" + f.read_bytes())
    return digest.hexdigest()


def _file_digests(bundle: Path) -> dict[str, str] | None:
    """Return sha256 per file of a bundle folder (recursively); None if it holds a link."""
    if bundle.is_symlink():
        return None
    out: dict[str, str] = {}
    stack = [(bundle, "")]
    while stack:
        folder, prefix = stack.pop()
        with os.scandir(folder) as it:
            items = sorted(it, key=lambda e: e.name)
        for item in items:
            if item.is_symlink():
                return None  # let the verifier judge links afresh every time
            rel = prefix + item.name
            if item.is_dir():
                stack.append((Path(item.path), rel + "/"))
            elif item.is_file():
                with open(item.path, "rb") as fh:
                    out[rel] = hashlib.file_digest(fh, "sha256").hexdigest()
    return dict(sorted(out.items()))


PINNED_TRUST = "pinned"
"""The trust part of a report-cache key under the verifier's pinned production root
(whose file is part of the code fingerprint)."""


def trust_key(trust_config: Path | None) -> str:
    """Return what a report-cache key records of the trust root: its content's hash.

    The pinned production root is :data:`PINNED_TRUST`; a ``--trust-config`` file
    counts by its bytes, so editing it (or pointing the same path at another
    instance) never reuses a report verified under the old root.
    """
    if trust_config is None:
        return PINNED_TRUST
    try:
        with open(trust_config, "rb") as fh:
            return "sha256:" + hashlib.file_digest(fh, "sha256").hexdigest()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise DataError(
            f"cannot read the trust configuration: {reason}", file=str(trust_config)
        ) from None


def _report_key(
    bundle: Path,
    digests: dict[str, str] | None,
    code: str,
    allow_unsigned: bool,
    trust: str = PINNED_TRUST,
) -> str | None:
    if digests is None:
        return None
    digest = hashlib.sha256(f"{code}\0{bundle}\0{allow_unsigned}\0{trust}".encode())
    for name, file_digest in digests.items():
        digest.update(f"{name}\0{file_digest}\0".encode())
    return digest.hexdigest()


ROWS_FORMAT = "site-rows-1"
"""Version of the per-bundle row tables kept in the cache (bump when ``flat_rows`` changes)."""


def _parse_rows(data: bytes, episodes: Path) -> list[dict[str, Any]]:
    lines = enumerate(data.split(b"\n"), start=1)
    return [parse_episode_line(line, str(episodes), n) for n, line in lines if line.strip()]


def _rows_table(episodes: Path, rows_dir: Path | None, *, load: bool = True) -> pa.Table | None:
    """Return a bundle's rows flattened (:func:`flat_rows`), kept in ``rows_dir`` by content.

    The cache file is named after the bytes actually read, so it always matches
    them. With ``load`` false (a pool worker filling the cache) an existing file
    is left alone and None is returned.
    """
    data = episodes.read_bytes()
    target = None
    if rows_dir is not None:
        key = hashlib.sha256(f"{ROWS_FORMAT}\0".encode() + data).hexdigest()
        target = rows_dir / f"{key}.arrow"
        if load:
            table = _read_rows(target)
            if table is not None:
                return table
        elif target.is_file():
            return None
    table = flat_rows(_parse_rows(data, episodes))
    if target is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        with pa.OSFile(str(tmp), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        tmp.replace(target)
    return table


def _read_rows(target: Path) -> pa.Table | None:
    try:
        with pa.memory_map(str(target)) as source:
            return pa.ipc.open_file(source).read_all()
    except (OSError, pa.ArrowInvalid):
        return None  # absent or damaged: rebuilt from the bundle


@dataclass(frozen=True)
class _VerifyJob:
    bundle: str
    allow_unsigned: bool
    rows_dir: str | None
    """Where to keep the bundle's flattened rows if it is accepted (None: do not)."""
    trust_config: str | None = None
    """A private Sigstore trust configuration (None: the pinned production root)."""


def _verify_jobs(jobs: list[_VerifyJob]) -> list[bytes]:
    """Verify bundles (in a pool worker or inline); return each report as JSON."""
    from verifier.api import VerifyOptions, verify_bundle

    out = []
    for job in jobs:
        bundle = Path(job.bundle)
        trust = Path(job.trust_config) if job.trust_config is not None else None
        options = VerifyOptions(allow_unsigned=job.allow_unsigned, trust_config=trust)
        report = verify_bundle(bundle, options)
        episodes = bundle / "episodes.jsonl"
        if job.rows_dir and report.accepted and episodes.is_file():
            _rows_table(episodes, Path(job.rows_dir), load=False)
        out.append(orjson.dumps(report.to_json()))
    return out


VERIFY_POOL_THRESHOLD = 64
"""Start pool workers for verification only when at least this many bundles need it."""


def verify_submissions(
    submissions: Path,
    allow_unsigned: bool = False,
    cache_dir: Path | None = None,
    *,
    workers: Workers | None = None,
    rows_dir: Path | None = None,
    trust_config: Path | None = None,
) -> list[Any]:
    """Run the verifier over every bundle in ``submissions`` (the site's only data source).

    Signatures are verified under the verifier's pinned production root unless
    ``trust_config`` names a private Sigstore trust configuration (tests).
    With ``cache_dir``, a bundle whose files, path, verifier code and trust root
    are byte-identical to an earlier run reuses that run's report (local rebuilds);
    without it (CI) every bundle is verified afresh. Many bundles are verified on ``workers``. With
    ``rows_dir``, the flattened rows of each newly verified, accepted bundle are kept
    there (keyed by the content of its ``episodes.jsonl``).
    """
    from verifier.api import is_bundle, verify_path
    from verifier.report import BundleReport

    if not submissions.is_dir():
        raise DataError("the submissions folder does not exist", file=str(submissions))
    trust = trust_key(trust_config)  # also: an unreadable trust file is a clear error up front
    try:
        if is_bundle(submissions):
            from verifier.api import VerifyOptions

            options = VerifyOptions(allow_unsigned=allow_unsigned, trust_config=trust_config)
            return list(verify_path(submissions, options))
        # The same folders, in the same order, as verify_path(submissions) would verify.
        bundles = sorted(
            p for p in submissions.iterdir() if p.is_dir() or (p.is_symlink() and not p.is_file())
        )
    except PermissionError as exc:
        raise DataError(f"cannot read: {exc.strerror}", file=str(submissions)) from None
    if not bundles:
        return []  # nothing submitted yet: an empty leaderboard, not an error
    code = _code_fingerprint() if cache_dir is not None else ""
    if cache_dir is not None:
        cache_dir.mkdir(parents=True, exist_ok=True)
    reports: list[Any] = [None] * len(bundles)
    todo: list[tuple[int, Path | None, _VerifyJob]] = []
    for i, bundle in enumerate(bundles):
        cached = None
        if cache_dir is not None:
            key = _report_key(bundle, _file_digests(bundle), code, allow_unsigned, trust)
            cached = cache_dir / f"{key}.json" if key else None
        if cached is not None and cached.is_file():
            reports[i] = BundleReport.model_validate_json(cached.read_bytes())
            continue
        rows_at = str(rows_dir) if rows_dir is not None else None
        trust_at = str(trust_config) if trust_config is not None else None
        todo.append((i, cached, _VerifyJob(str(bundle), allow_unsigned, rows_at, trust_at)))
    jobs = [job for _, _, job in todo]
    results: Iterable[bytes]
    if workers is not None and workers.worth_it(len(jobs), VERIFY_POOL_THRESHOLD):
        results = workers.submit_chunks(_verify_jobs, jobs)  # read while the rest runs
    else:
        results = _verify_jobs(jobs)
    for (i, cached, _), data in zip(todo, results, strict=True):
        if cached is not None:
            tmp = cached.with_name(f".{cached.name}.tmp")
            tmp.write_bytes(data)
            tmp.replace(cached)
        reports[i] = BundleReport.model_validate_json(data)
    return reports


def _rows_tables(entries: Sequence[Entry], rows_dir: Path | None) -> dict[str, pa.Table]:
    """Return the flattened rows of every accepted entry, from the cache when kept there."""
    out: dict[str, pa.Table] = {}
    for e in entries:
        if e.accepted:
            episodes = e.path / "episodes.jsonl"
            table = _rows_table(episodes, rows_dir) if episodes.is_file() else None
            out[e.slug] = table if table is not None else pa.table({})
    return out


DOWNLOAD_NAMES = {
    "submission.json": "submission.json",
    "episodes.jsonl": "episodes.jsonl",
    "submission.sigstore.json": "submission.sigstore.json",
    "README.md": "README.txt",
}
"""Bundle file -> published name (a README is published as text, never as a page)."""


def _per_system_cells(frame: pd.DataFrame, entries: dict[str, Entry]) -> list[dict[str, Any]]:
    return [
        {"system": system, **cell}
        for slug, system in zip(frame["slug"], frame["system"], strict=True)
        for cell in cells_rows(entries[slug])
    ]


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
    cache_reports: bool = True,
    workers: int | None = None,
    trust_config: Path | None = None,
) -> BuildSummary:
    """Verify ``submissions`` (unless ``reports`` are given) and build the site into ``out``.

    Signatures are checked against the verifier's pinned production root, or
    against ``trust_config`` (a private Sigstore instance's trust configuration).

    ``workers`` is the number of worker processes for verification and charts
    (default: the CPUs available, at most 4; 1 keeps everything in this process).
    Workers are started with *spawn*, which re-imports the main module: a script
    that calls this must do so under ``if __name__ == "__main__":``.
    """
    try:
        with Workers(workers) as pool:
            return _build_site(
                submissions,
                out,
                root=root,
                allow_unsigned=allow_unsigned,
                reports=reports,
                cache_dir=cache_dir,
                renderer=renderer,
                today=today,
                cache_reports=cache_reports,
                pool=pool,
                trust_config=trust_config,
            )
    except BrokenProcessPool as exc:
        raise SiteBuildError(
            f"a worker process of the build died ({exc}); a script that builds the site must "
            "call build_site under `if __name__ == '__main__':`, or pass workers=1"
        ) from None


def _build_site(
    submissions: Path,
    out: Path,
    *,
    root: Path,
    allow_unsigned: bool,
    reports: Sequence[Any] | None,
    cache_dir: Path | None,
    renderer: ChartRenderer | None,
    today: date | None,
    cache_reports: bool,
    pool: Workers,
    trust_config: Path | None = None,
) -> BuildSummary:
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
    rows_dir = cache_root / "rows"
    if reports is None:
        reports = verify_submissions(
            submissions,
            allow_unsigned,
            cache_root / "reports" if cache_reports else None,
            workers=pool,
            rows_dir=rows_dir,
            trust_config=trust_config,
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

    # Charts: build every spec first, then start rendering the stale ones in one batch
    # (on the pool's workers when there are many) while the pages are written.
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
            heatmaps[e.slug] = heatmap_chart(f"heatmap-{e.slug}", e.name, cells_rows(e))
    charts += list(heatmaps.values())
    clock.lap("chart specs")
    cache = ChartCache(cache_root / "charts", renderer or VlConvertRenderer(pool=pool))
    svg_paths = cache.start([c.spec for c in charts])
    svg_of = {c.name: p for c, p in zip(charts, svg_paths, strict=True)}
    summary.charts_rendered = cache.stats.rendered
    summary.charts_cached = cache.stats.cached
    clock.lap("charts")

    rows_of = _rows_tables(entries, rows_dir)
    clock.lap("read rows")

    pages: dict[str, GeneratedPage] = {}
    copies: dict[str, Path] = {}
    texts: dict[str, str | bytes] = {}
    trust_note = (
        f"checked against the private trust configuration {trust_config.name}, "
        "not the pinned production root"
        if trust_config is not None
        else ""
    )
    pages["index.md"] = leaderboard_page(
        sources.templates, views, len(refused), len(withdrawn), trust_note
    )
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
            _matrix(rows_of[e.slug]),
            downloads,
            trust_note,
        )
    clock.lap("pages")

    board_table = leaderboard_download(board_list)
    episodes = all_rows(list(rows_of.items()))
    texts["downloads/leaderboard.csv"] = board_table.to_csv(
        index=False, lineterminator="\n", float_format="%.6f"
    )
    texts["downloads/leaderboard.parquet"] = _parquet(board_table)
    texts["downloads/episodes.parquet"] = _parquet_table(episodes)
    pages["downloads.md"] = downloads_page(sources.templates, len(board_table), episodes.num_rows)
    # The SPEC is our own trusted markdown: mkdocs converts it (headings, tables, TOC).
    texts["spec.md"] = sources.spec.read_text(encoding="utf-8")
    clock.lap("downloads")
    summary.n_pages = len(pages) + 1

    def add_charts(staging: Path) -> None:
        # mkdocs never reads the charts (pages reference them from pre-rendered HTML),
        # so it runs while the workers still render; the files join the site after it.
        clock.lap("mkdocs")
        cache.finish()
        (staging / "charts").mkdir(exist_ok=True)
        for path in sorted(set(svg_paths)):
            shutil.copyfile(path, staging / "charts" / path.name)
        clock.lap("charts (wait for the rest)")

    _build_and_swap(sources, out, SitePages(pages, copies, texts), day, epoch, add_charts)
    return summary


def _matrix(rows: pa.Table) -> tuple[list[int], list[tuple[str, list[str]]]]:
    if rows.num_rows == 0:
        return [], []
    return outcome_matrix(
        rows.column("task_id").to_pylist(),
        rows.column("trial").to_pylist(),
        rows.column("outcome").to_pylist(),
    )


def _parquet_table(table: pa.Table) -> bytes:
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    return buf.getvalue()


def _parquet(frame: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    frame.to_parquet(buf, index=False, compression="zstd")
    return buf.getvalue()


def _build_and_swap(
    sources: SiteSources,
    out: Path,
    plugin: SitePages,
    day: str,
    epoch: int,
    complete: Callable[[Path], None] | None = None,
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
        if complete is not None:
            complete(staging)
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
    "trust_key",
    "write_table",
]
