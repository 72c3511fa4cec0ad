"""``effectbench site build``: verify every bundle, render the site, swap it into place.

Data flows one way: verifier reports -> :class:`Entry` values -> pandas boards
-> charts (SVG, cached by content) and pages (jinja2) -> mkdocs (in-process). The
submission pages skip mkdocs: it renders their frame once and they are written into it
(:mod:`~effectbench.site._shell`), each from a body kept between builds
(:mod:`~effectbench.site._kept`) with its place on the boards filled in afresh.
Those pages and the files published as they are (bundle copies, receipt shards,
downloads) are placed by the build itself, each linked from the previous output when
its bytes are already there unchanged (:mod:`~effectbench.site._publish`).
The site is built into a sibling temporary folder and swapped with the output
folder in one atomic exchange once mkdocs succeeded, so a failed build leaves
the previous site untouched; an output that is not a previous build is refused
before anything runs, and two builds into one folder never race
(:mod:`~effectbench.site._outdir`).

:func:`build_site` reads as its list of steps (:class:`_SiteBuild`); each
step's work lives in its own module: verification and the report cache
(:mod:`~effectbench.site._reports`), the row cache (:mod:`~effectbench.site._rows`),
withdrawals (:mod:`~effectbench.site._withdrawn`), boards
(:mod:`~effectbench.site._tables`), chart specs and their rendering
(:mod:`~effectbench.site._charts`, :mod:`~effectbench.site._render`), pages
(:mod:`~effectbench.site._pages`), badges (:mod:`~effectbench.site._badges`), the
compare view's data (:mod:`~effectbench.site._compare`), downloads
(:mod:`~effectbench.site._downloads`, :mod:`~effectbench.site._json`) and mkdocs
(:mod:`~effectbench.site._mkdocs`).

Speed and size: many bundles are verified on one pool of spawned worker
processes (:mod:`effectbench.site._pool`). Only the boards have SVG charts
(three each, inlined in the charts page so their marks link to the submission
pages); a submission's per-cell heatmap is an HTML table, so a thousand
submissions cost no chart rendering. Everything derived from a bundle is cached
by content under the cache folder (``reports/``, ``rows/``, ``charts/``,
``gzip/``, ``pages/``; ``output/`` holds what each output folder was given), so a
rebuild after one new bundle verifies, flattens and renders the page of only that.
"""

from __future__ import annotations

import gc
import os
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import partial
from itertools import chain
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import yaml
from markupsafe import Markup

from effectbench.errors import SiteBuildError
from effectbench.filenames import site_cache_home
from effectbench.findings import CheckId
from effectbench.metrics import DEFAULT_PRICES, Prices, task_rate
from effectbench.site._badges import result_badge
from effectbench.site._cache import default_seal
from effectbench.site._charts import (
    PHONE,
    Chart,
    cells_chart,
    cost_value_chart,
    frontier_chart,
    gap_chart,
)
from effectbench.site._compare import compare_scripts
from effectbench.site._compiled import SealedTemplateCode
from effectbench.site._digests import FileDigests
from effectbench.site._downloads import bundle_downloads, leaderboard_tables
from effectbench.site._entries import Entry, entry_from_report, unique_slugs
from effectbench.site._exports import Exports, board_exports, bundle_exports
from effectbench.site._find import Findable, find_scripts
from effectbench.site._json import SCHEMA_FILE, leaderboard_json, schema
from effectbench.site._kept import Kept, page_code
from effectbench.site._ledger import LedgerCheck
from effectbench.site._mkdocs import GeneratedPage, SitePages, load_site_config, run_mkdocs
from effectbench.site._monitors import (
    MonitorBoard,
    monitor_board,
    monitor_cells_chart,
    monitors_page,
    roc_chart,
)
from effectbench.site._outdir import check_out, locked, staging_folder, swap_in
from effectbench.site._pages import (
    ROWS_INLINE,
    SUBMISSION_HEADINGS,
    BadgeLink,
    BoardView,
    ChartArt,
    ChartSection,
    board_views,
    charts_page,
    compare_page,
    downloads_page,
    episode_page,
    fill_places,
    keep_compiled,
    leaderboard_page,
    refused_page,
    row_badges,
    submission_body,
    submission_page,
)
from effectbench.site._pool import Workers
from effectbench.site._pooled import PooledBoard, methodology_text, pooled_boards, pooled_page
from effectbench.site._prices import board_scripts
from effectbench.site._publish import OutputMemo, Source, publish_files
from effectbench.site._receipts import FRAMES_POLICY, Published, has_receipts, publish_receipts
from effectbench.site._render import ChartCache, ChartRenderer, VlConvertRenderer, inline_svg
from effectbench.site._reports import report_digest, verify_submissions
from effectbench.site._rows import matrix, rows_tables
from effectbench.site._sensitivity import (
    BoardAcross,
    boards_across,
    packs_page,
    substrates_page,
    systems_across_packs,
)
from effectbench.site._shell import SHELL_URI, list_in_sitemap, shell_page, shelled_pages
from effectbench.site._tables import (
    Board,
    KeptCells,
    KeptCounts,
    boards,
    cells_rows,
    entry_row,
    frontier,
    frontier_points,
    substrate_order,
)
from effectbench.site._withdrawn import Withdrawn, name_withdrawn, read_withdrawn
from verifier.ranking import rank_across, withheld
from verifier.records import RecordPolicy
from verifier.report import BundleReport

NO_SITE_URL = (
    "no site_url (mkdocs.yml takes it from EFFECTBENCH_SITE_URL), so the badge snippets link "
    "relative to the site and break when pasted into a README; set EFFECTBENCH_SITE_URL to "
    "the address the site is published at"
)
"""The build's note (and the badge section's) when snippets cannot be absolute."""
FRONTIER_CHART_SYSTEMS = 100
"""The frontier shows at most this many systems of a board (first in the default order)."""
GAP_CHART_SYSTEMS = 25
"""The gap chart shows at most this many systems of a board (first in the default order)."""
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
    def methodology(self) -> Path:
        """The methodology page (its dead-templates list filled in by the build)."""
        return self.root / "site" / "methodology.md"

    @property
    def withdrawn(self) -> Path:
        """The maintainers' list of withdrawn bundles."""
        return self.root / "site" / "withdrawn.yml"

    @property
    def site_url(self) -> str:
        """Return ``site_url`` of ``mkdocs.yml`` with a trailing slash, or "" when unset
        (read as mkdocs reads it: ``!ENV [EFFECTBENCH_SITE_URL, null]`` takes the variable)."""
        from mkdocs.utils.yaml import yaml_load

        try:
            cfg = yaml_load(self.config_file.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError):
            return ""
        url = str(cfg.get("site_url") or "") if isinstance(cfg, dict) else ""
        return url if not url or url.endswith("/") else url + "/"

    def check(self) -> None:
        """Refuse a root that lacks what every build reads."""
        if not self.config_file.is_file():
            raise SiteBuildError(f"{self.config_file} not found: run from the repository root")
        if not self.spec.is_file():
            raise SiteBuildError(f"{self.spec} not found: the SPEC page is rendered from it")


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
    receipt_frames: int = 0
    pages_kept: int = 0
    """Submission page bodies taken from the cache instead of rendered (:mod:`._kept`)."""
    pages_rendered: int = 0
    entries_kept: int = 0
    """Entries of ``leaderboard.json`` whose rates were kept (:mod:`._kept`)."""
    files_linked: int = 0
    """Files published as they are that were linked from the previous output (unchanged)."""
    files_written: int = 0
    receipt_shards: int = 0
    """Distinct receipt shards published (content-addressed, shared across submissions)."""
    receipt_shard_bytes: int = 0
    receipt_shard_unshared: int = 0
    """The shards' bytes if no two submissions shared one (each counted per submission)."""
    exports: int = 0
    """Export archives published (:mod:`effectbench.site._exports`), board ones aside."""
    exports_kept: int = 0
    """Of them, those kept from an earlier build."""
    n_monitors: int = 0
    """Monitor bundles accepted on the monitors board."""
    n_monitors_refused: int = 0
    """Key frames the site shows (the others stay in their bundles)."""
    build_date: str = ""
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    """What the reader of the build's output should know (one line each)."""

    def lines(self) -> list[str]:
        """Return the summary as printable lines."""
        t = ", ".join(f"{k} {v:.2f}s" for k, v in self.timings.items())
        return [
            f"built {self.out} ({self.n_pages} pages, build date {self.build_date})",
            f"bundles {self.n_bundles}: ranked {self.n_ranked}, preview {self.n_preview}, "
            f"refused {self.n_refused}, withdrawn {self.n_withdrawn}",
            f"monitors {self.n_monitors}, refused {self.n_monitors_refused}",
            f"charts rendered {self.charts_rendered}, from cache {self.charts_cached}; "
            f"receipt frames shown {self.receipt_frames}; submission pages kept "
            f"{self.pages_kept}, rendered {self.pages_rendered}; leaderboard.json entries kept "
            f"{self.entries_kept}; files linked from the previous output {self.files_linked}, "
            f"written {self.files_written}",
            f"receipt shards {self.receipt_shards} ({self.receipt_shard_bytes / 2**20:.1f} MiB; "
            f"{self.receipt_shard_unshared / 2**20:.1f} MiB if no two submissions shared one)",
            f"exports {self.exports} ({self.exports_kept} kept from an earlier build)",
            f"time: {t}",
            *(f"note: {n}" for n in self.notes),
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
    """Return the printed build date and the epoch mkdocs stamps files with (its midnight).

    The date is ``today`` if given, else the day of ``SOURCE_DATE_EPOCH`` when that is set
    (so two builds of the same inputs on different days are byte-identical), else today (UTC).
    """
    if today is None:
        epoch_env = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
        if epoch_env:
            if not epoch_env.isdigit():
                raise SiteBuildError(
                    f"SOURCE_DATE_EPOCH={epoch_env!r}: must be a whole number of seconds since "
                    "1970-01-01 UTC (reproducible-builds.org), or unset"
                )
            today = datetime.fromtimestamp(int(epoch_env), UTC).date()
        else:
            today = datetime.now(UTC).date()
    midnight = datetime(today.year, today.month, today.day, tzinfo=UTC)
    return today.isoformat(), int(midnight.timestamp())


@dataclass(frozen=True)
class BuildOptions:
    """What to build from, and how (the keyword arguments of :func:`build_site`)."""

    submissions: Path
    out: Path
    root: Path
    allow_unsigned: bool = False
    reports: Sequence[BundleReport] | None = None
    cache_dir: Path | None = None
    renderer: ChartRenderer | None = None
    today: date | None = None
    cache_reports: bool = True
    trust_config: Path | None = None
    records: RecordPolicy = RecordPolicy()
    """Where reproduction records are read (:mod:`verifier.records`)."""
    force_reproduce: bool = False
    """Re-run every reproducible bundle even when it has a valid record."""
    progress: Callable[[int, int], None] | None = None
    """Told ``(done, total)``: bundles verified, then the build's steps."""
    held_labels: Path | None = None
    """A folder holding the board's ``labels-test.json`` (the monitors board's held-out
    column); never published."""
    rows_inline: int = ROWS_INLINE
    """Rows of each board on the home page; the rest load from row shards on request."""
    ledger: LedgerCheck | None = None
    """The verification ledger the build may take reports from (:mod:`effectbench.site._ledger`);
    None: every bundle verified in full."""

    @property
    def cache_root(self) -> Path:
        """The folder of every content cache (reports, rows, charts): by default in this
        user's cache home, never in the repository (and only entries this machine sealed
        are read, wherever the folder is: :mod:`effectbench.site._cache`)."""
        return self.cache_dir or site_cache_home()

    @property
    def trust_note(self) -> str:
        """What the pages say when signatures were checked against a private root."""
        if self.trust_config is None:
            return ""
        return (
            f"checked against the private trust configuration {self.trust_config.name}, "
            "not the pinned production root"
        )


def build_site(
    submissions: Path,
    out: Path,
    *,
    root: Path,
    allow_unsigned: bool = False,
    reports: Sequence[BundleReport] | None = None,
    cache_dir: Path | None = None,
    renderer: ChartRenderer | None = None,
    today: date | None = None,
    cache_reports: bool = True,
    workers: int | None = None,
    trust_config: Path | None = None,
    records: RecordPolicy | None = None,
    force_reproduce: bool = False,
    progress: Callable[[int, int], None] | None = None,
    held_labels: Path | None = None,
    rows_inline: int = ROWS_INLINE,
    ledger: LedgerCheck | None = None,
) -> BuildSummary:
    """Verify ``submissions`` (unless ``reports`` are given) and build the site into ``out``.

    Signatures are checked against the verifier's pinned production root, or
    against ``trust_config`` (a private Sigstore instance's trust configuration).
    Reproducible bundles are judged by their reproduction records (``records``) and
    re-run only without one (or all of them with ``force_reproduce``); a bundle this
    machine cannot re-run is refused alone, and the summary names it. ``progress`` is told
    ``(done, total)`` as bundles are verified and then as each step of the build ends.
    The monitors board verifies the monitor bundles of ``root/monitors/bundles/`` against the
    corpus ``root/monitors/corpus.lock.json`` pins; ``held_labels`` is a folder holding the
    board's test labels (their totals only are shown). Each board on the home page holds its
    first ``rows_inline`` rows; the rest are loaded from its row shards when a reader asks.
    With ``ledger``, a bundle whose files hash to its signed verification summary takes the
    ledger's report (a sample of them verified in full); the summary's notes name every
    refusal.

    ``workers`` is the number of worker processes for verification and charts
    (default: the CPUs available, at most 4; 1 keeps everything in this process).
    Workers are started with *spawn*, which re-imports the main module: a script
    that calls this must do so under ``if __name__ == "__main__":``.
    """
    protected = [root, submissions, cache_dir or BuildOptions(submissions, out, root).cache_root]
    out = check_out(Path(out), protected)  # before anything runs: never lose a user's files
    options = BuildOptions(
        submissions,
        out,
        root,
        allow_unsigned=allow_unsigned,
        reports=reports,
        cache_dir=cache_dir,
        renderer=renderer,
        today=today,
        cache_reports=cache_reports,
        trust_config=trust_config,
        records=records or RecordPolicy(),
        force_reproduce=force_reproduce,
        progress=progress,
        held_labels=held_labels,
        rows_inline=rows_inline,
        ledger=ledger,
    )
    try:
        with locked(out), Workers(workers) as pool, _collector_paused():
            return _SiteBuild(options, pool).run()
    except BrokenProcessPool as exc:
        raise SiteBuildError(
            f"a worker process of the build died ({exc}); a script that builds the site must "
            "call build_site under `if __name__ == '__main__':`, or pass workers=1"
        ) from None


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cycle collector for the build (as it was before, after).

    A build holds every verifier report, entry and table it reads until it ends, and makes
    few reference cycles: each run of the collector traversed that growing heap again. At
    10,000 submissions it was half of a rebuild's verify stage (22 s with it, 12 s without)
    and a ninth of a cold build's CPU at 1,000 (75 s, 67 s), for 0.7% more peak memory
    (measured by hand: ``gc.disable()`` before builds of ``benchmarks/bench_site.py``'s
    synthetic folders, no script isolates it).
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@dataclass(frozen=True)
class _BoardCharts:
    """The three charts of one board on the charts page."""

    view: BoardView
    frontier: Chart
    frontier_note: str
    gap: Chart
    gap_note: str
    cells: Chart
    cells_note: str
    cost: Chart | None = None
    """Measured cost against net value with the frontier (None: no measured cost)."""
    unmeasured: tuple[str, ...] = ()
    """The ranked systems without a measured cost (named beside it, never placed)."""


MAX_WITHHELD = 10
"""Bundles a build withholds for errors in rendering them before it stops: more are the
build's own fault, not one bundle's (and each withheld bundle runs the steps again)."""


class _Withheld(Exception):
    """Rendering one bundle failed: the build withholds it and runs its steps again."""

    def __init__(self, path: str, error: Exception) -> None:
        super().__init__(path)
        self.path = path
        self.error = error


class _SiteBuild:
    """One build: the steps of :meth:`run`, in order, and what each hands the next."""

    def __init__(self, options: BuildOptions, pool: Workers) -> None:
        self.options = options
        self.pool = pool
        self._bundles_seen = 0
        self._done_steps = 0
        self._n_steps = len(self._steps()) + 2
        """The steps of :meth:`run` (verify and mkdocs included), told ``progress`` after the
        bundles."""
        self.sources = SiteSources(options.root)
        self.summary = BuildSummary(out=options.out)
        self.clock = _Clock(self.summary.timings)
        self.day, self.epoch = build_day(options.today)
        self.summary.build_date = self.day
        self.rows_dir = options.cache_root / "rows"
        self.digests = FileDigests(
            options.cache_root / "reports" if options.cache_reports else None, default_seal()
        )
        """The bundle files' digests, kept between local builds by their stat data."""
        self.compiled = (
            SealedTemplateCode(options.cache_root / "templates", default_seal())
            if options.cache_reports
            else None
        )
        """The templates' compiled code, kept between local builds (ours and the theme's)."""
        keep_compiled(self.sources.templates, self.compiled)
        self.reports: Sequence[BundleReport] = ()
        """Filled by :meth:`verify`; a bundle the build cannot render is withheld in them."""
        self._read_as: dict[str, tuple[BundleReport, str]] = {}
        """The reports as verification returned them, by path, each with the digest of the
        JSON it was read from."""
        self._page_code = ""
        self.withheld: list[str] = []
        """The bundles the build could not render (withheld, each with its error's kind)."""
        self._clear_steps()

    def _clear_steps(self) -> None:
        """Set what the steps after :meth:`verify` fill to empty (again, when they run again
        after a bundle was withheld)."""
        self.entries: list[Entry] = []
        self.refused: list[Entry] = []
        self.withdrawn: list[Withdrawn] = []
        self.boards: list[Board] = []
        self.pooled: list[PooledBoard] = []
        self.views: list[BoardView] = []
        self.board_charts: list[_BoardCharts] = []
        self.svg_of: dict[str, Markup] = {}
        self.badges: dict[str, BadgeLink] = {}
        self.rows_of: dict[str, pa.Table] = {}
        self.across: list[BoardAcross] = []
        self.pages: dict[str, GeneratedPage] = {}
        self.shelled: dict[str, GeneratedPage] = {}
        """The submission pages, by slug: written into the frame mkdocs renders once
        (:mod:`effectbench.site._shell`), not by mkdocs."""
        self.report_of: dict[str, BundleReport] = {}
        self._report_digests: dict[str, str] = {}
        self._kept: dict[str, Kept] = {}
        self.copies: dict[str, Path] = {}
        self.texts: dict[str, str | bytes] = {}
        self.receipts = Published()
        self.exports = Exports()
        self.monitors = MonitorBoard()
        self.monitor_charts: tuple[Chart, Chart] | None = None

    def run(self) -> BuildSummary:
        """Run every step, timing each under its name; return the summary."""
        self.sources.check()
        self.verify()
        self.clock.lap("verify")
        self._tell("verify")
        notes = list(self.summary.notes)
        while True:
            try:
                self._render()
                break
            except _Withheld as stop:  # that bundle is withheld; the others are built again
                self.reports = [
                    withheld(r, stop.error) if r.path == stop.path else r for r in self.reports
                ]
                self.withheld.append(f"{Path(stop.path).name} ({type(stop.error).__name__})")
                if len(self.withheld) > MAX_WITHHELD:
                    raise SiteBuildError(
                        f"rendering failed for {len(self.withheld)} bundle(s), the last "
                        f"{Path(stop.path).name} ({type(stop.error).__name__}: {stop.error}): "
                        "more than one bundle's fault"
                    ) from stop.error
                self.summary.notes[:] = notes
                self._done_steps = 1  # verify: the steps after it run again
                self._clear_steps()
        if self.withheld:
            self.summary.notes.append(
                f"{len(self.withheld)} bundle(s) could not be rendered and are withheld "
                f"(ranking.unrendered, on the refused page): {', '.join(self.withheld)}"
            )
        for kept in self._kept.values():
            kept.prune()  # the cache holds this build's parts, not every code's
        problems = {k.problem for k in self._kept.values() if k.problem}
        self.summary.notes.extend(sorted(problems))
        self.summary.n_pages = len(self.pages) + len(self.shelled)  # the shell out, SPEC in
        self.mkdocs_and_swap()
        self.digests.save()  # what verify, rows, downloads and publishing learnt of files
        self.clock.lap("mkdocs")
        self._tell("mkdocs")
        return self.summary

    @contextmanager
    def _rendering(self, entry: Entry) -> Iterator[None]:
        """Render one bundle's part: any error in it withholds that bundle (:class:`_Withheld`)."""
        try:
            yield
        except Exception as exc:  # noqa: BLE001 - whatever one bundle does, the build goes on
            raise _Withheld(str(entry.path), exc) from exc

    def _render(self) -> None:
        """Run the steps after :meth:`verify`, timing each under its name."""
        for name, step in self._steps():
            step()
            self.clock.lap(name)
            self._tell(name)

    def _steps(self) -> tuple[tuple[str, Callable[[], None]], ...]:
        """The steps after :meth:`verify` and before mkdocs, in order, by name."""
        return (
            ("tables", self.select_and_tabulate),
            ("monitors", self.verify_monitors),
            ("chart specs", self.plan_charts),
            ("charts", self.render_charts),
            ("read rows", self.read_rows),
            ("receipts", self.write_receipts),
            ("badges", self.write_badges),
            ("exports", self.write_exports),
            ("pages", self.write_pages),
            ("downloads", self.write_downloads),
        )

    def _tell(self, step: str) -> None:
        if self.options.progress is None:
            return
        self._done_steps += 1
        bundles = self._bundles_seen
        self.options.progress(bundles + self._done_steps, bundles + self._n_steps)

    def _tell_bundles(self, done: int, total: int) -> None:
        self._bundles_seen = total
        if self.options.progress is not None:
            self.options.progress(done, total + self._n_steps)

    def verify(self) -> None:
        """Verify every bundle (reusing cached reports), unless reports were given."""
        o = self.options
        if o.reports is not None:
            self.reports = o.reports
            return
        self.reports = verify_submissions(
            o.submissions,
            o.allow_unsigned,
            o.cache_root / "reports" if o.cache_reports else None,
            workers=self.pool,
            rows_dir=self.rows_dir,
            trust_config=o.trust_config,
            records=o.records,
            force_reproduce=o.force_reproduce,
            progress=self._tell_bundles,
            digests=self.digests,
            read_as=self._read_as,
            ledger=self._ledger(),
        )
        if o.ledger is not None:
            self.summary.notes.extend(o.ledger.notes)
        unable = [
            Path(r.path).name
            for r in self.reports
            if CheckId.REPRODUCE_UNAVAILABLE in r.finding_ids()
        ]
        if unable:
            self.summary.notes.append(
                f"{len(unable)} bundle(s) need a re-run this machine cannot do and are not "
                f"ranked: {', '.join(unable)}; run make reproduce (it installs the screens, "
                "re-runs them and records the result), then build again"
            )

    def _ledger(self) -> LedgerCheck | None:
        """The build's ledger, remembering the checkpoint it trusts in the build's cache."""
        ledger = self.options.ledger
        if ledger is not None and ledger.cache_root is None:
            ledger.cache_root = self.options.cache_root
        return ledger

    def select_and_tabulate(self) -> None:
        """Apply the rules across bundles (copies, withdrawals), turn reports into entries,
        set the withdrawn aside and group the rest into boards."""
        withdrawn = read_withdrawn(self.sources.withdrawn)
        self.reports = rank_across(self.reports, [w.rule for w in withdrawn])
        slugs = unique_slugs(list(self.reports))
        every = [entry_from_report(r, s) for r, s in zip(self.reports, slugs, strict=True)]
        self.report_of = dict(zip(slugs, self.reports, strict=True))
        held = [
            (e.content_hash, e.rows_hash, r.measured_hash or "", e.path.name, e.name)
            for e, r in zip(every, self.reports, strict=True)
        ]
        self.withdrawn = name_withdrawn(withdrawn, held)
        gone = {r.path for r in self.reports if CheckId.RANKING_WITHDRAWN in r.finding_ids()}
        self.entries = [e for e in every if str(e.path) not in gone]
        self.refused = [e for e in self.entries if not e.accepted]
        s = self.summary
        s.n_bundles = len(every)
        s.n_ranked = sum(e.status == "ranked" for e in self.entries if e.accepted)
        s.n_preview = sum(e.status == "preview" for e in self.entries if e.accepted)
        s.n_refused = len(self.refused)
        s.n_withdrawn = len(self.withdrawn)
        self.boards = boards(self.entries, counted=KeptCounts(self.kept("counts")))
        self.pooled = pooled_boards(self.boards)
        self.views = board_views(self.boards)

    def verify_monitors(self) -> None:
        """Verify the monitor bundles against the corpus made again from the verified
        submissions, and plan the monitors board's two charts."""
        o = self.options
        root = o.root.resolve()
        slugs: dict[Path, str] = {}
        for e in self.entries:
            try:
                slugs[e.path.resolve().relative_to(root)] = e.slug
            except ValueError:
                continue
        published = {e.slug for e in self.entries if has_receipts(e)}
        self.monitors = monitor_board(
            o.root,
            self.reports,
            slugs,
            published,
            held_labels=o.held_labels,
            allow_unsigned=o.allow_unsigned,
            trust_config=o.trust_config,
            cache=o.cache_root / "corpus" if o.cache_reports else None,
        )
        rows = self.monitors.rows
        if rows:
            self.monitor_charts = (
                roc_chart("monitors-roc", rows),
                monitor_cells_chart("monitors-cells", rows, self.monitors.cells),
            )
        s = self.summary
        s.n_monitors = len(rows)
        s.n_monitors_refused = len(self.monitors.refused)

    def plan_charts(self) -> None:
        """Build every chart's spec: three per board (submission pages carry HTML heatmaps)."""
        by_slug = {e.slug: e for e in self.entries}
        for view in self.views:
            frame = _distinct_names(view.frame, by_slug)
            top_frontier = frame.head(FRONTIER_CHART_SYSTEMS)
            top_gap = frame.head(GAP_CHART_SYSTEMS)
            top_cells = frame.head(CELLS_CHART_SYSTEMS)
            frontier_note = (
                f"the first {len(top_frontier)} systems in the default order; every system "
                "is on the board"
                if len(frame) > len(top_frontier)
                else ""
            )
            gap_note = (
                f"the first {len(top_gap)} in the default order"
                if len(frame) > len(top_gap)
                else ""
            )
            cells_note = (
                f"the first {len(top_cells)} systems in the default order; every system's "
                "cells are on its own page"
                if len(frame) > len(top_cells)
                else ""
            )
            self.board_charts.append(
                _BoardCharts(
                    view=view,
                    frontier=frontier_chart(
                        f"{view.key}-frontier", top_frontier, view.prices, view.facts
                    ),
                    frontier_note=frontier_note,
                    gap=gap_chart(f"{view.key}-gap", top_gap),
                    gap_note=gap_note,
                    cells=cells_chart(f"{view.key}-cells", _per_system_cells(top_cells, by_slug)),
                    cells_note=cells_note,
                    cost=cost_value_chart(
                        f"{view.key}-cost", frame, frontier(frontier_points(frame))
                    ),
                    unmeasured=tuple(
                        str(n)
                        for n in frame.loc[
                            (frame["status"] == "ranked") & frame["cost"].isna(), "system"
                        ]
                    ),
                )
            )

    def render_charts(self) -> None:
        """Render the charts that changed (the rest come from the cache) and keep their SVG."""
        charts = [c for b in self.board_charts for c in (b.frontier, b.gap, b.cells, b.cost) if c]
        charts += list(self.monitor_charts or ())
        renderer = self.options.renderer or VlConvertRenderer(pool=self.pool)
        cache = ChartCache(self.options.cache_root / "charts", renderer)
        specs = {name: spec for c in charts for name, spec in c.specs.items()}
        paths = cache.svg_paths(list(specs.values()))
        self.svg_of = {
            name: Markup(inline_svg(p.read_text(encoding="utf-8")))
            for name, p in zip(specs, paths, strict=True)
        }
        self.summary.charts_rendered = cache.stats.rendered
        self.summary.charts_cached = cache.stats.cached

    def read_rows(self) -> None:
        """Read every accepted bundle's flattened rows (from the row cache when kept there)."""
        for e in self.entries:
            with self._rendering(e):
                self.rows_of.update(rows_tables([e], self.rows_dir, self.digests))

    def write_receipts(self) -> None:
        """Publish every accepted bundle's receipts (text) and the key frames the site shows."""
        self.receipts = publish_receipts(
            self.entries,
            self.options.cache_root / "receipts",
            self.digests.digest,
            guard=self._rendering,
        )
        self.texts.update(self.receipts.texts)
        self.copies.update(self.receipts.copies)
        self.summary.receipt_frames = len(self.receipts.copies)
        self.summary.receipt_shards = self.receipts.shards
        self.summary.receipt_shard_bytes = self.receipts.shard_bytes
        self.summary.receipt_shard_unshared = self.receipts.shard_ref_bytes

    def write_badges(self) -> None:
        """Write the badge of every ranked submission (``badges/SLUG.svg``); its snippet's
        links are absolute under ``site_url`` (said in one line when that is not set)."""
        site = self.sources.site_url
        if not site and any(e.status == "ranked" for e in self.entries):
            self.summary.notes.append(NO_SITE_URL)
        for e in self.entries:
            if e.status != "ranked" or e.results is None:
                continue
            with self._rendering(e):
                self._badge(e, site)

    def _badge(self, e: Entry, site: str) -> None:
        """Write submission ``e``'s badge and its snippet."""
        tasks, results = e.tasks, e.results
        assert tasks is not None and results is not None  # ranked: counted, and its results
        badge = result_badge(
            e.pack,
            substrate_order(tasks.substrate),
            results.swer,
            results.over_halt,
            task_rate(tasks, "record_wrong"),
        )
        path = f"badges/{e.slug}.svg"
        self.texts[path] = badge.svg()
        image = f"{site}{path}" if site else path
        page = f"{site}submissions/{e.slug}.html" if site else f"submissions/{e.slug}.html"
        self.badges[e.slug] = BadgeLink(
            path=path,
            text=badge.text,
            width=badge.width,
            markdown=f"[![{badge.text}]({image})]({page})",
            absolute=bool(site),
        )

    def write_exports(self) -> None:
        """Export every accepted bundle as EEE records, ATIF trajectories and an Inspect log
        (each kept between local builds; a format whose package is not installed is not
        offered, and the summary says so)."""
        kept = self.kept("export.tar.xz")
        self.exports = bundle_exports(self.entries, kept, self._entry_digest, self._rendering)
        self.texts.update(self.exports.files)
        self.summary.exports = len(self.exports.files)
        self.summary.exports_kept = kept.hits
        self.summary.notes.extend(
            f"exports: {line}; make site installs it" for line in self.exports.not_offered_text
        )

    def _entry_digest(self, e: Entry) -> str:
        return self.report_digest(e.slug)

    def write_pages(self) -> None:
        """Render the leaderboard, charts, compare, refused and per-submission pages."""
        t = self.sources.templates
        note = self.options.trust_note
        self.across = boards_across(
            self.views, self.rows_of, {e.slug: e.tasks for e in self.entries if e.tasks}
        )
        scripts = board_scripts(self.views, t, self.options.rows_inline)
        self.texts.update(scripts.files)
        self.pages["index.md"] = leaderboard_page(
            t,
            self.views,
            len(self.refused),
            len(self.withdrawn),
            note,
            frozenset(a.key for a in self.across if a.systems),
            self.options.rows_inline,
            scripts.shards,
            [(p.substrate, p.page) for p in self.pooled],
        )
        for p in self.pooled:
            self.pages[f"pooled/{p.key}.md"] = pooled_page(t, p)
        titled = [(b.title, b.facts) for b in self.boards]
        titled += [(p.title, p.facts) for p in self.pooled]
        source = self.sources.methodology.read_text(encoding="utf-8")
        self.texts["methodology.md"] = methodology_text(source, titled)
        self.pages["charts.md"] = charts_page(
            t, [self._chart_section(b) for b in self.board_charts]
        )
        self.pages["compare.md"] = compare_page(t, self.views)
        self.pages["episode.md"] = episode_page(t, FRAMES_POLICY)
        self.pages["substrates.md"] = substrates_page(t, self.across)
        self.pages["packs.md"] = packs_page(t, systems_across_packs(self.views))
        self.texts.update(
            compare_scripts(self.views, self.rows_of, self.receipts.slugs, self.options.rows_inline)
        )
        self.pages["refused.md"] = refused_page(t, self.refused, self.withdrawn)
        self.pages["monitors.md"] = self._monitors_page()
        self._write_submission_pages()

    def _chart_section(self, b: _BoardCharts) -> ChartSection:
        """A board's part of the charts page."""
        return ChartSection(
            key=b.view.key,
            title=b.view.title,
            frontier=b.frontier,
            frontier_svg=self._art(b.frontier),
            frontier_note=b.frontier_note,
            gap=b.gap,
            gap_svg=self._art(b.gap),
            gap_note=b.gap_note,
            cells=b.cells,
            cells_svg=self._art(b.cells),
            cells_note=b.cells_note,
            cost=b.cost,
            cost_svg=self._art(b.cost) if b.cost else None,
            unmeasured=b.unmeasured,
        )

    def _monitors_page(self) -> GeneratedPage:
        roc, cells = self.monitor_charts or (None, None)
        return monitors_page(
            self.sources.templates,
            self.monitors,
            roc,
            self._art(roc) if roc is not None else None,
            cells,
            self._art(cells) if cells is not None else None,
        )

    def _write_submission_pages(self) -> None:
        """Render every accepted submission's page, and the search over them."""
        placed: dict[str, list[tuple[BoardView, dict[str, Any]]]] = {}
        for v in self.views:  # SPEC order of substrates within each pack
            for row in v.rows:
                placed.setdefault(row["slug"], []).append((v, row))
                if row.get("fresh_slug"):  # a fresh-instance entry is a column of its row
                    placed.setdefault(row["fresh_slug"], []).append((v, row))
        findable: list[Findable] = []
        kept = self.kept("html")
        for e in self.entries:
            if not e.accepted or e.tasks is None:
                continue
            with self._rendering(e):
                findable.append(self._submission_page(e, placed[e.slug], kept))
        if self.shelled:
            self.pages[SHELL_URI] = shell_page(SUBMISSION_HEADINGS, ("navigation",))
        self.summary.pages_kept = kept.hits
        self.summary.pages_rendered = kept.made
        self.texts.update(find_scripts(findable))

    def _submission_page(
        self, e: Entry, places: list[tuple[BoardView, dict[str, Any]]], kept: Kept
    ) -> Findable:
        """Render submission ``e``'s page (and its downloads); return its search entry."""
        assert e.tasks is not None
        t, note = self.sources.templates, self.options.trust_note
        copies, links = bundle_downloads(e, self.options.cache_root / "gzip", self.digests)
        substrates = "+".join(substrate_order(e.tasks.substrate))
        first = places[0][0]
        outcomes = matrix(self.rows_of[e.slug])
        badge = self.badges.get(e.slug)
        key = kept.key(
            (
                self.report_digest(e.slug),
                e.slug,
                repr((e.readme, e.files, e.same_as)),  # read beside the report
                repr(outcomes),
                repr(links),
                repr(badge),
                repr((self.exports.links.get(e.slug), self.exports.missing)),
                note,
                repr(e.slug in self.receipts.slugs),
                FRAMES_POLICY,
                first.key,
                repr(first.prices),
            )
        )
        make = partial(self._body, e, (first.key, first.prices), outcomes, links, badge)
        body = kept.get_or_make(key, make).decode("utf-8")
        self.shelled[e.slug] = submission_page(e, fill_places(t, body, places))
        self.copies.update(copies)
        return Findable(e.name, e.slug, " · ".join(filter(None, (e.pack, substrates, e.date))))

    def _body(
        self,
        e: Entry,
        board: tuple[str, Prices],
        outcomes: tuple[list[int], list[tuple[str, list[str]]]],
        links: list[tuple[str, str]],
        badge: BadgeLink | None,
    ) -> bytes:
        """Render submission ``e``'s page body (:func:`submission_body`), as UTF-8."""
        assert e.tasks is not None
        substrates = "+".join(substrate_order(e.tasks.substrate))
        whole = entry_row(e, e.tasks, substrates, DEFAULT_PRICES)
        whole["all_badges"] = row_badges(whole)
        body = submission_body(
            self.sources.templates,
            e,
            whole,
            board,
            outcomes,
            links,
            badge,
            self.options.trust_note,
            receipts=e.slug in self.receipts.slugs,
            frames_policy=FRAMES_POLICY,
            exports=self.exports.links.get(e.slug, ()),
            exports_missing=self.exports.not_offered_text,
        )
        return body.encode("utf-8")

    def kept(self, suffix: str) -> Kept:
        """Return the build's store of kept parts of one kind (:mod:`._kept`)."""
        if suffix not in self._kept:
            if not self._page_code:
                self._page_code = page_code(self.sources.templates)
            o = self.options
            folder = o.cache_root / "pages" if o.cache_reports else None
            self._kept[suffix] = Kept(folder, default_seal(), self._page_code, suffix)
        return self._kept[suffix]

    def report_digest(self, slug: str) -> str:
        """Return the digest (:func:`report_digest`) of submission ``slug``'s report as this
        build judged it (the rules across bundles applied): what a kept part of it is keyed by
        first."""
        if slug not in self._report_digests:
            report = self.report_of[slug]
            read, found = self._read_as.get(report.path, (None, ""))
            if read is not report:  # a rule across bundles changed it, or it was given
                found = report_digest(report.model_dump_json().encode("utf-8"), report.path)
            self._report_digests[slug] = found
        return self._report_digests[slug]

    def _art(self, chart: Chart) -> ChartArt:
        """Return a chart's drawings: the wide one, and the phone's where there is one."""
        return ChartArt(
            self.svg_of[chart.name], self.svg_of.get(f"{chart.name}@{PHONE}", Markup(""))
        )

    def write_downloads(self) -> None:
        """Write the whole-leaderboard downloads, their page and the SPEC page's source."""
        entries = {e.slug: e for e in self.entries}
        cells = KeptCells(self.kept("cells"), self.report_digest)
        tables = leaderboard_tables(self.boards, self.rows_of, entries, cells)
        self.texts.update(tables.files)
        kept = self.kept("json")
        self.texts["downloads/leaderboard.json"] = leaderboard_json(
            self.boards,
            entries,
            set(self.badges),
            self.day,
            self.across,
            lambda slug, board, make: kept.get_or_make(
                kept.key((self.report_digest(slug), slug, board)), make
            ),
            self.pooled,
        )
        self.summary.entries_kept = kept.hits
        self.texts[f"downloads/{SCHEMA_FILE}"] = schema()
        board_exports(self.exports, self.boards, entries)
        self.texts.update(self.exports.files)
        self.pages["downloads.md"] = downloads_page(self.sources.templates, tables, self.exports)
        # The SPEC is our own trusted markdown: mkdocs converts it (headings, tables, TOC).
        self.texts["spec.md"] = self.sources.spec.read_text(encoding="utf-8")

    def mkdocs_and_swap(self) -> None:
        """Run mkdocs into a staging folder, write the submission pages and the files
        published as they are into it (:mod:`._publish`), and swap it over ``out``."""
        converted = {k: v for k, v in self.texts.items() if k.endswith(".md")}
        files: dict[str, Source] = {k: v for k, v in self.texts.items() if k not in converted}
        files.update(self.copies)
        plugin = SitePages(self.pages, converted, files, self.compiled)
        shelled, epoch = self.shelled, self.epoch
        o = self.options
        memo_dir = o.cache_root / "output" if o.cache_reports else None
        memo = OutputMemo(memo_dir, o.out.resolve(), default_seal())

        def complete(staging: Path) -> None:
            pages = shelled_pages(staging, shelled) if shelled else ()
            done = publish_files(staging, chain(pages, files.items()), memo, self.digests.digest)
            self.summary.files_linked, self.summary.files_written = done.linked, done.written
            if shelled:
                list_in_sitemap(staging, list(shelled), epoch)

        _build_and_swap(self.sources, o.out, plugin, self.day, epoch, complete)
        memo.save()


def _distinct_names(frame: pd.DataFrame, entries: dict[str, Entry]) -> pd.DataFrame:
    """Return a board's frame with every system's name distinct, for its charts (a chart
    draws one mark, bar and colour per name): a name several entries share is followed by
    the substrates each ran, and by its slug where that is not enough."""
    counts = frame["system"].value_counts()
    if bool((counts <= 1).all()):
        return frame
    names = []
    for slug, name in zip(frame["slug"], frame["system"], strict=True):
        tasks = entries[slug].tasks
        if counts[name] > 1 and tasks is not None:
            name = f"{name} ({', '.join(substrate_order(tasks.substrate))})"
        names.append(name)
    twice = pd.Series(names).duplicated(keep=False).tolist()
    out = frame.copy()
    out["system"] = [
        f"{n} [{slug}]" if dup else n
        for n, slug, dup in zip(names, frame["slug"], twice, strict=True)
    ]
    return out


def _per_system_cells(frame: pd.DataFrame, entries: dict[str, Entry]) -> list[dict[str, object]]:
    return [
        {"system": system, "slug": slug, **cell}
        for slug, system in zip(frame["slug"], frame["system"], strict=True)
        for cell in cells_rows(entries[slug])
    ]


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
    staging = staging_folder(out)
    try:
        cfg = load_site_config(sources.config_file, staging, {"build_date": day})
        run_mkdocs(cfg, plugin, epoch)
        if not (staging / "index.html").is_file():
            raise SiteBuildError("mkdocs finished but wrote no index.html")
        if complete is not None:
            complete(staging)
        swap_in(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


__all__ = ["BuildOptions", "BuildSummary", "SiteSources", "build_day", "build_site"]
