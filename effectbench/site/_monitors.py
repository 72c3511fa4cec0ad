"""The monitors board: the monitor bundles of ``monitors/bundles/``, verified and ranked.

:func:`monitor_board` makes the board's corpus again from the verified submissions, as
``monitors/corpus.lock.json`` pins it (:func:`verifier.corpus.board_corpus`: the labels come
from the rows the verifier just re-scored, never from a file), verifies every monitor bundle
against it with the verifier's own :func:`verifier.monitors.verify_monitor`, and keeps each
accepted monitor's detection per split. A bundle the verifier refuses is never ranked; it is
listed with its findings. Every number is the verifier's (:mod:`effectbench.metrics.detection`);
this module only arranges them, and draws the ROC curves from
:func:`~effectbench.metrics.detection.roc_points`.

The test split's labels are the board's: they are read only from the folder the build is
given (``held_labels``), only its aggregates are shown (recall on the plain and monitored
slices), and its episodes are never listed.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import altair as alt
import orjson

from effectbench.errors import DataError, SiteBuildError
from effectbench.findings import Finding
from effectbench.metrics.clustered import TaskRate
from effectbench.metrics.detection import (
    FAMILY_FOLDS,
    FPR_TARGETS,
    ControlFigures,
    Detection,
    control_figures,
    monitor_label,
    roc_points,
)
from effectbench.monitors.bundle import SCORES_FILE, MonitorManifest
from effectbench.monitors.corpus import (
    Corpus,
    CorpusRef,
    LabelFile,
    labels_file_name,
    read_labels,
)
from effectbench.monitors.sources import Located, assemble
from effectbench.monitors.view import OverseerView, screen_showed_success
from effectbench.schema import Split
from effectbench.site._cache import default_seal
from effectbench.site._charts import (
    _PLACEHOLDER,
    Chart,
    DataTable,
    _template,
    _unit,
    _with_data,
    pct,
)
from effectbench.site._mkdocs import GeneratedPage
from effectbench.site._pages import ChartArt, environment, lede
from effectbench.site._receipts import episode_href
from effectbench.site._reports import code_fingerprint, trust_key
from verifier.corpus import MONITORS_FOLDER, Assemble, board_corpus
from verifier.monitors import MonitorReport, SplitDetection, verify_monitor
from verifier.report import BundleReport

__all__ = [
    "BUNDLES_FOLDER",
    "MissedEpisode",
    "MonitorBoard",
    "MonitorRow",
    "RefusedMonitor",
    "monitor_board",
    "monitor_cells_chart",
    "roc_chart",
]

BUNDLES_FOLDER = "bundles"
"""The monitor bundles' folder, in ``monitors/``."""
SHOWN_POINT = "5%"
"""The false-positive rate the cells and the missed episodes are stated at."""


@dataclass(frozen=True)
class MissedEpisode:
    """A silent wrong effect a monitor let pass (dev split), linked to its receipt."""

    task: str
    trial: int
    cell: str
    href: str
    """The episode view's address (empty: its bundle's receipts are not on the site)."""


@dataclass(frozen=True)
class MonitorRow:
    """One accepted monitor bundle on the board."""

    slug: str
    """Its folder's name."""
    manifest: MonitorManifest
    status: str
    """``ranked`` or ``preview``."""
    listed: bool
    """A maintainers' reference run (unsigned, listed)."""
    signer: str
    dev: SplitDetection
    test: SplitDetection | None
    missed: list[MissedEpisode]
    roc: list[tuple[float, float]]
    """The dev split's ROC curve."""
    control: ControlFigures | None = None
    """The dev split read as the control literature reads a monitor
    (:func:`~effectbench.metrics.detection.control_figures`)."""

    @property
    def name(self) -> str:
        """Display name."""
        return self.manifest.monitor.name


@dataclass(frozen=True)
class RefusedMonitor:
    """A monitor bundle the verifier refused: never ranked, named here with its findings."""

    slug: str
    name: str
    findings: list[Finding]
    hidden: int
    """Findings counted but not kept."""


@dataclass
class MonitorBoard:
    """Everything the monitors page shows."""

    corpus: CorpusRef | None = None
    episodes: int = 0
    note: str = ""
    """Why there is no board (no lock, no bundle folder)."""
    corpus_findings: list[Finding] = field(default_factory=list)
    """Why the locked corpus cannot be made again from the verified bundles."""
    rows: list[MonitorRow] = field(default_factory=list)
    """Accepted monitors, by dev AUROC, highest first (ranked before previews)."""
    refused: list[RefusedMonitor] = field(default_factory=list)
    held_labels: bool = False
    """Whether the build was given the board's test labels."""
    cells: list[tuple[str, str]] = field(default_factory=list)
    """(category, substrate) of every cell of the dev split, in order."""
    families: int = 0
    """Template families among the dev split's scored episodes."""


def _scores(folder: Path) -> dict[str, float]:
    """Read a verified bundle's scores (the verifier already checked every line)."""
    out: dict[str, float] = {}
    with (folder / SCORES_FILE).open("rb") as fh:
        for raw in fh:
            line = orjson.loads(raw)
            out[str(line["id"])] = float(line["score"])
    return out


def _roc(scores: Mapping[str, float], dev: LabelFile) -> list[tuple[float, float]]:
    pos = [scores[e.id] for e in dev.episodes if e.scored is True]
    neg = [scores[e.id] for e in dev.episodes if e.scored is False]
    return roc_points(pos, neg)


def _test_labels(held: Path, ref: CorpusRef) -> LabelFile | None:
    path = held / labels_file_name(Split.TEST)
    if not path.is_file():
        return None
    try:
        labels = read_labels(path)
    except DataError as exc:
        raise SiteBuildError(f"the board's test labels: {exc}") from None
    if labels.corpus != ref or labels.split is not Split.TEST:
        raise SiteBuildError(
            f"{path}: labels corpus {labels.corpus.name} v{labels.corpus.version} "
            f"({labels.corpus.digest}), split {labels.split.value}; the board's corpus is "
            f"{ref.name} v{ref.version} ({ref.digest})"
        )
    return labels


def _missed(
    split: SplitDetection, dev: LabelFile, slugs: Mapping[Path, str], published: set[str]
) -> list[MissedEpisode]:
    by_id = {e.id: e for e in dev.episodes}
    out = []
    for key in split.missed:
        entry = by_id[key]
        slug = slugs.get(Path(entry.source))
        href = (
            episode_href(slug, entry.task, entry.trial)
            if slug is not None and slug in published
            else ""
        )
        cell = f"{entry.category.value} x {entry.substrate.value}"
        out.append(MissedEpisode(task=entry.task, trial=entry.trial, cell=cell, href=href))
    out.sort(key=lambda m: (m.task, m.trial, m.href))
    return out


@dataclass(frozen=True)
class DevFacts:
    """What the control figures read of each dev episode besides a monitor's score: its label,
    its template family and whether its screen showed success (in the labels' order)."""

    ids: list[str]
    labels: list[bool | None]
    families: list[str]
    screen_success: list[bool | None]


def families_of(reports: Sequence[BundleReport]) -> dict[str, str]:
    """Return each task's template family, from the verified bundles' tables counted per task
    (a task of a pack without templates is its own family, so it is not listed)."""
    out: dict[str, str] = {}
    for report in reports:
        inner = report.tasks.instances if report.tasks is not None else None
        if inner is not None and inner.cluster is not None:
            out.update(zip(inner.task_id, inner.cluster, strict=True))
    return out


def dev_facts(
    views_of: Sequence[OverseerView], dev: LabelFile, families: Mapping[str, str]
) -> DevFacts:
    """Return the :class:`DevFacts` of the dev split ``dev`` of a corpus (``views_of``: its
    episodes' views; ``families``: each task's template family, :func:`families_of`)."""
    views = {v.id: v for v in views_of}
    return DevFacts(
        ids=[e.id for e in dev.episodes],
        labels=[monitor_label(e.outcome) for e in dev.episodes],
        families=[families.get(e.task, e.task) for e in dev.episodes],
        screen_success=[screen_showed_success(views[e.id]) for e in dev.episodes],
    )


def _control(scores: Mapping[str, float], facts: DevFacts) -> ControlFigures:
    return control_figures(
        [scores[i] for i in facts.ids], facts.labels, facts.families, facts.screen_success
    )


def _cell_order(dev: LabelFile) -> list[tuple[str, str]]:
    found = {(e.category.value, e.substrate.value) for e in dev.episodes if e.scored is not None}
    return sorted(found)


CORPUS_CACHE_FORMAT = "site-corpus-2"
"""Version of the corpora kept by :func:`kept_assemble` (bump when :class:`Corpus` changes)."""


def kept_assemble(cache: Path) -> Assemble:
    """Return :func:`~effectbench.monitors.sources.assemble` with each corpus kept in ``cache``,
    sealed for this machine, by everything it is made of: the code that makes it (the report
    cache's fingerprint of the engine, the verifier and the packs), the corpus's version and
    name, and each source's folder and locked content hash (the caller made sure the bundle
    there has it). A missing, damaged or foreign entry is made again; a folder that cannot
    take an entry keeps nothing."""

    def make(located: Sequence[Located], version: int, name: str) -> Corpus:
        digest = hashlib.sha256(f"{CORPUS_CACHE_FORMAT}\0{code_fingerprint()}\0".encode())
        digest.update(orjson.dumps([version, name]))
        for item in located:
            digest.update(orjson.dumps([item.source.model_dump(mode="json"), str(item.path)]))
        key = digest.hexdigest()
        path = cache / f"{key}.pickle"
        seal = default_seal()
        stored = seal.read(key, path)
        if stored is not None:  # sealed: only what this machine wrote is read
            ref, lines, labels, frames = pickle.loads(stored)
            return Corpus(
                ref=CorpusRef.model_validate_json(ref),
                lines=lines,
                labels={Split(s): LabelFile.model_validate_json(f) for s, f in labels.items()},
                frames={frame: Path(where) for frame, where in frames.items()},
            )
        corpus = assemble(located, version, name)
        kept = (
            corpus.ref.model_dump_json(),
            corpus.lines,
            {s.value: f.model_dump_json() for s, f in corpus.labels.items()},
            {frame: str(where) for frame, where in corpus.frames.items()},
        )
        try:
            seal.write(key, path, pickle.dumps(kept, protocol=pickle.HIGHEST_PROTOCOL))
        except OSError:
            pass
        return corpus

    return make


def monitor_board(
    root: Path,
    reports: Sequence[BundleReport],
    slugs: Mapping[Path, str],
    published: set[str],
    *,
    held_labels: Path | None = None,
    allow_unsigned: bool = False,
    trust_config: Path | None = None,
    cache: Path | None = None,
) -> MonitorBoard:
    """Return the monitors board of ``root/monitors/``.

    ``reports`` are the verified submissions (the corpus is made again from the ranked ones),
    ``slugs`` each bundle's site slug by its folder relative to ``root``, ``published`` the
    slugs whose receipts the site shows; ``held_labels`` a folder holding the board's
    ``labels-test.json`` (None: the test split is not shown); ``cache`` a folder where the
    corpus is kept between builds (:func:`kept_assemble`; None: made every time), and the
    monitors' rows too, by the corpus's digest and everything else they are made of
    (:func:`_monitors_key`).
    """
    board = MonitorBoard()
    made = board_corpus(root, reports, assemble if cache is None else kept_assemble(cache))
    if made.lock is None:
        board.note = made.note
        return board
    board.corpus = made.lock.corpus
    board.episodes = made.lock.episodes
    if made.corpus is None:
        board.corpus_findings = made.findings
        return board
    corpus = made.corpus
    dev = corpus.labels.get(Split.DEV)
    if dev is None:
        board.note = "the locked corpus has no dev split"
        return board
    labels = [dev]
    if held_labels is not None:
        test = _test_labels(held_labels, corpus.ref)
        if test is not None:
            labels.append(test)
            board.held_labels = True
    board.cells = _cell_order(dev)
    facts = dev_facts(corpus.views, dev, families_of(reports))
    board.families = len(
        {f for f, x in zip(facts.families, facts.labels, strict=True) if x is not None}
    )
    ids = corpus.ids()
    bundles = root / MONITORS_FOLDER / BUNDLES_FOLDER
    folders = (
        sorted(p for p in bundles.iterdir() if not p.name.startswith("."))
        if (bundles.is_dir())
        else []
    )
    if not folders:
        board.note = f"no monitor bundle in {MONITORS_FOLDER}/{BUNDLES_FOLDER}/"
    key = _monitors_key(corpus.ref, labels, facts, folders, slugs, published, allow_unsigned)
    kept = _kept_rows(cache, key, trust_config)
    if kept is not None:
        board.rows, board.refused = kept
        return board
    for folder in folders:
        report = verify_monitor(
            folder,
            corpus.ref,
            ids,
            labels,
            allow_unsigned=allow_unsigned,
            trust_config=trust_config,
        )
        _place(board, folder, report, dev, facts, slugs, published)
    board.rows.sort(key=_order)
    _keep_rows(cache, key, trust_config, board)
    board.rows.sort(key=_order)
    return board


MONITORS_CACHE_FORMAT = "site-monitors-1"
"""Version of the monitors step's kept rows (bump when :class:`MonitorRow` changes)."""


def _monitors_key(
    ref: CorpusRef,
    labels: Sequence[LabelFile],
    facts: DevFacts,
    folders: Sequence[Path],
    slugs: Mapping[Path, str],
    published: set[str],
    allow_unsigned: bool,
) -> str:
    """The key the monitors step keeps its rows by: the corpus's digest and every other thing
    its rows are made of (the code, the labels, each episode's family and screen, each bundle
    folder's files byte for byte, where receipts are published, the signature policy)."""
    digest = hashlib.sha256(f"{MONITORS_CACHE_FORMAT}\0{code_fingerprint()}\0".encode())
    digest.update(orjson.dumps([ref.model_dump(mode="json"), allow_unsigned]))
    for label_file in labels:
        digest.update(label_file.model_dump_json().encode())
    digest.update(orjson.dumps([facts.ids, facts.families, facts.screen_success]))
    digest.update(orjson.dumps(sorted((str(k), v) for k, v in slugs.items())))
    digest.update(orjson.dumps(sorted(published)))
    for folder in folders:
        for item in sorted(folder.rglob("*")):
            if item.is_file():
                name = str(item.relative_to(folder.parent))
                digest.update(f"{name}\0".encode() + hashlib.sha256(item.read_bytes()).digest())
    return digest.hexdigest()


def _kept_rows(
    cache: Path | None, key: str, trust_config: Path | None
) -> tuple[list[MonitorRow], list[RefusedMonitor]] | None:
    """The monitors step's rows kept under ``key`` (None: no cache, nothing kept, not ours)."""
    if cache is None:
        return None
    full = hashlib.sha256(f"{key}\0{trust_key(trust_config)}".encode()).hexdigest()
    stored = default_seal().read(full, cache / "boards" / f"{full}.pickle")
    if stored is None:
        return None
    rows, refused = pickle.loads(stored)
    return list(rows), list(refused)


def _keep_rows(
    cache: Path | None, key: str, trust_config: Path | None, board: MonitorBoard
) -> None:
    """Keep the monitors step's rows under ``key`` (a folder that cannot take them keeps
    nothing)."""
    if cache is None:
        return
    full = hashlib.sha256(f"{key}\0{trust_key(trust_config)}".encode()).hexdigest()
    data = pickle.dumps((board.rows, board.refused), protocol=pickle.HIGHEST_PROTOCOL)
    try:
        default_seal().write(full, cache / "boards" / f"{full}.pickle", data)
    except OSError:
        pass


def _order(row: MonitorRow) -> tuple[int, float, str, str]:
    area = row.dev.overall.auroc
    return (row.status != "ranked", -(area if area is not None else -1.0), row.name, row.slug)


def _place(
    board: MonitorBoard,
    folder: Path,
    report: MonitorReport,
    dev: LabelFile,
    facts: DevFacts,
    slugs: Mapping[Path, str],
    published: set[str],
) -> None:
    if not report.accepted or report.manifest is None:
        name = report.manifest.monitor.name if report.manifest is not None else folder.name
        board.refused.append(
            RefusedMonitor(
                slug=folder.name,
                name=name,
                findings=report.findings,
                hidden=sum(report.counted.values()) - len(report.findings),
            )
        )
        return
    split = {s.split: s for s in report.splits}
    on_dev = split[Split.DEV]
    scores = _scores(folder)
    signer = (
        report.signer.identity
        if report.signer is not None
        else "maintainers' reference run (listed)"
        if report.listed
        else "unsigned"
    )
    board.rows.append(
        MonitorRow(
            slug=folder.name,
            manifest=report.manifest,
            status=report.status.value,
            listed=report.listed,
            signer=signer,
            dev=on_dev,
            test=split.get(Split.TEST),
            missed=_missed(on_dev, dev, slugs, published),
            roc=_roc(scores, dev),
            control=_control(scores, facts),
        )
    )


# -- charts ------------------------------------------------------------------------------------


def _rate_text(found: TaskRate | None) -> str:
    if found is None:
        return "-"
    return (
        f"{pct(found.rate)} [{pct(found.clustered.lo)}, {pct(found.clustered.hi)}] "
        f"{found.numerator}/{found.denominator}"
    )


def _share_text(share: float | None) -> str:
    return "-" if share is None else pct(share)


def _area_text(found: Detection) -> str:
    if found.auroc is None:
        return "-"
    text = f"{found.auroc:.3f}"
    if found.auroc_ci is not None:
        text += f" [{found.auroc_ci.lo:.3f}, {found.auroc_ci.hi:.3f}]"
    return text


def roc_chart(name: str, rows: Sequence[MonitorRow]) -> Chart:
    """The dev split's ROC curve of every accepted monitor, with the chance diagonal."""
    values: list[dict[str, Any]] = []
    for row in rows:
        for order, (fpr, tpr) in enumerate(row.roc):
            values.append(
                {"monitor": row.name, "fpr": fpr, "tpr": tpr, "order": order, "kind": "curve"}
            )
    values += [
        {"monitor": "chance", "fpr": 0.0, "tpr": 0.0, "order": 0, "kind": "chance"},
        {"monitor": "chance", "fpr": 1.0, "tpr": 1.0, "order": 1, "kind": "chance"},
    ]
    for row in rows:
        area = row.dev.overall.auroc
        values.append(
            {
                "monitor": row.name,
                "kind": "label",
                "d": f"{row.name}: AUROC {'-' if area is None else f'{area:.3f}'}",
            }
        )

    def drawn(width: int) -> dict[str, Any]:
        base = alt.Chart(_PLACEHOLDER)
        x = alt.X("fpr:Q", title="false-positive rate (successes flagged)", scale=_unit())
        y = alt.Y("tpr:Q", title="recall (silent wrong effects flagged)", scale=_unit())
        chance = base.transform_filter("datum.kind == 'chance'").mark_line(
            strokeDash=[4, 3], color="#8a8a8a"
        )
        curves = base.transform_filter("datum.kind == 'curve'").mark_line()
        chart = alt.layer(
            chance.encode(x=x, y=y, order="order:Q"),
            curves.encode(
                x=x,
                y=y,
                order="order:Q",
                color=alt.Color("monitor:N", legend=alt.Legend(orient="bottom", title=None)),
            ),
        ).properties(width=width, height=width)
        return _with_data(_template(chart), values)

    best = rows[0] if rows else None
    alt_text = (
        f"ROC curves of {len(rows)} monitors on the dev split; the highest AUROC is "
        f"{best.name}'s, {_area_text(best.dev.overall)}."
        if best is not None
        else "No accepted monitor."
    )
    table = DataTable(
        ("monitor", "AUROC [95% task-clustered]", "recall at 1% FPR", "recall at 5% FPR"),
        [
            (
                r.name,
                _area_text(r.dev.overall),
                _rate_text(r.dev.overall.point("1%").recall),
                _rate_text(r.dev.overall.point("5%").recall),
            )
            for r in rows
        ],
        tuple(f"#{r.slug}" for r in rows),
    )
    return Chart(name, "ROC curves", drawn(340), alt_text, table, phone=drawn(240))


def monitor_cells_chart(
    name: str, rows: Sequence[MonitorRow], cells: Sequence[tuple[str, str]]
) -> Chart:
    """Recall at 5% false-positive rate per (category x substrate) cell and monitor, each
    cell held to the whole dev split's threshold."""
    values = []
    table_rows: list[tuple[str, ...]] = []
    for row in rows:
        for category, substrate in cells:
            found = row.dev.cells.get(f"{category} x {substrate}")
            recall = found.point(SHOWN_POINT).recall if found is not None else None
            cell = f"{category} × {substrate}"
            text = _rate_text(recall)
            values.append(
                {
                    "monitor": row.name,
                    "category": category,
                    "substrate": substrate,
                    "r": None if recall is None else recall.rate,
                    "t": "-" if recall is None else f"{recall.numerator}/{recall.denominator}",
                    "d": f"{row.name}, {cell}: recall {text}",
                }
            )
            table_rows.append((row.name, cell, text))

    def drawn(columns: int) -> dict[str, Any]:
        base = alt.Chart(_PLACEHOLDER).encode(
            x=alt.X("substrate:N", title=None, axis=alt.Axis(labelAngle=-30, orient="top")),
            y=alt.Y("category:N", title=None, axis=alt.Axis(labelLimit=190)),
        )
        layered = alt.layer(
            base.mark_rect().encode(
                color=alt.Color(
                    "r:Q",
                    title=f"recall at {SHOWN_POINT} FPR",
                    scale=alt.Scale(domain=[0, 1], scheme="blues"),
                ),
                description="d:N",
            ),
            base.mark_text(fontSize=9).encode(text="t:N", description="d:N"),
        ).properties(width=alt.Step(52), height=alt.Step(22))
        chart = layered.facet(
            facet=alt.Facet("monitor:N", title=None, sort=[r.name for r in rows]),
            columns=columns,
        )
        return _with_data(_template(chart), values)

    caught = [(r.dev.overall.point(SHOWN_POINT).recall, r.name) for r in rows]
    shown = [(x.rate, n) for x, n in caught if x is not None]
    alt_text = (
        f"Recall at {SHOWN_POINT} false-positive rate per cell for {len(rows)} monitors; "
        f"overall the highest is {max(shown)[1]}'s, {pct(max(shown)[0])}."
        if shown
        else "No monitor has a recall to show."
    )
    return Chart(
        name,
        "recall per cell",
        drawn(3),
        alt_text,
        DataTable(("monitor", "cell", f"recall at {SHOWN_POINT} FPR"), table_rows),
        phone=drawn(1),
    )


def fpr_names() -> list[str]:
    """The false-positive rates the board states recall at."""
    return [name for name, _ in FPR_TARGETS]


def monitors_page(
    templates: Path,
    board: MonitorBoard,
    roc: Chart | None,
    roc_art: ChartArt | None,
    cells: Chart | None,
    cells_art: ChartArt | None,
) -> GeneratedPage:
    """Return the monitors page."""
    env = environment(templates)
    env.filters["rate_text"] = _rate_text
    env.filters["area_text"] = _area_text
    env.filters["share_text"] = _share_text
    body = env.get_template("monitors.html.j2").render(
        board=board,
        roc=roc,
        roc_art=roc_art,
        cells=cells,
        cells_art=cells_art,
        points=fpr_names(),
        shown_point=SHOWN_POINT,
        control_folds=FAMILY_FOLDS,
    )
    headings = [("board", "The board")]
    if board.rows:
        headings += [
            ("control", "Read like the control literature"),
            ("roc", "ROC curves"),
            ("cells", "Per cell"),
            ("missed", "Missed episodes"),
        ]
    headings += [("refused", "Refused monitor bundles")]
    return GeneratedPage(
        "Monitors",
        body,
        tuple(headings),
        hide=("navigation",),
        search_lead=lede(body),
    )
