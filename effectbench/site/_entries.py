"""What the site shows about one bundle: a flat, typed view of a verifier report.

The verifier's :class:`BundleReport` is the only source; :func:`entry_from_report`
reads it once, and every table, chart and page consumes :class:`Entry` values,
never the report or raw JSON. Anything a submitter wrote (name, description,
README) is kept as plain text here; escaping happens in the templates.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from effectbench.bundle import (
    EPISODES_FILE,
    README_FILE,
    RECEIPTS_FILE,
    SIGNATURE_FILE,
    SUBMISSION_FILE,
    folder_problem,
    slugify,
)
from effectbench.metrics import Cell, Results, SubstrateUsage, TaskRate, TaskTable, task_rate
from effectbench.packs import canonical_pack
from effectbench.showable import make_showable
from verifier import report as report_model
from verifier.limits import Limits
from verifier.report import NOT_APPLICABLE_SKIPS, BundleReport

README_LIMIT = Limits().max_readme_bytes
"""Bytes of a README the site reads, refused bundle or not (the verifier's limit)."""

Status = Literal["ranked", "preview", "refused"]

SHOWN_NAME_MAX = 120
"""Characters of a name the site shows; a longer one (only a refused bundle can have it) is cut."""
SHOWN_TEXT_MAX = 4000
"""Characters of a description or URL the site shows."""


def instance_kind(public_seed: bool | None, committed: bool | None) -> str:
    """Return how a bundle's generated instance was drawn (:attr:`Entry.instance`)."""
    if public_seed is None:
        return ""
    if public_seed:
        return "public"
    return "fresh" if committed else "fresh-uncommitted"


def shown(text: str, limit: int = SHOWN_NAME_MAX) -> str:
    """Return ``text`` safe to show anywhere (a page, a chart, a CSV cell).

    Every character :mod:`effectbench.showable` does not allow becomes U+FFFD and the
    text is cut to ``limit`` characters: a refused bundle with a hostile name still gets
    its row on the refused page, and never stops the build (the chart renderer aborts
    on ESC and on U+FFFE).
    """
    text = make_showable(text)
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


NOT_RECORDED = "not recorded"
"""What the site says of a harness or model a bundle does not record (made before it could)."""


def _recorded(part: Any, keys: Sequence[str]) -> dict[str, str] | None:
    """Return a recorded harness or model as shown text (None: not recorded)."""
    if not isinstance(part, dict):
        return None
    return {k: shown(str(part[k])) for k in keys if part.get(k) is not None}


NOT_APPLICABLE_SKIP = frozenset(f.value for f in NOT_APPLICABLE_SKIPS)
"""The check families whose skip means "does not apply" rather than "could not run"."""


@dataclass(frozen=True)
class FindingView:
    """One verifier finding: check id, message and where it applies."""

    check: str
    message: str
    file: str | None = None
    line: int | None = None
    field: str | None = None

    @property
    def where(self) -> str:
        """Return ``file:line field`` with whatever location is known."""
        text = self.file or ""
        if self.line is not None:
            text += f":{self.line}"
        if self.field:
            text += f" {self.field}" if text else self.field
        return text


@dataclass(frozen=True)
class CheckView:
    """One check family's outcome as the verifier reported it."""

    id: str
    title: str
    passed: bool
    n_findings: int
    findings: tuple[FindingView, ...] = ()
    skipped: bool = False
    note: str = ""


@dataclass(frozen=True)
class SignerView:
    """Who signed the bundle (verified), and when."""

    identity: str
    issuer: str
    signed_at: str = ""


@dataclass(frozen=True)
class Entry:
    """Everything the site renders about one bundle."""

    slug: str
    """URL-safe, unique name of the bundle (its folder name, sanitised)."""
    path: Path
    """The bundle folder (or upstream document) the verifier read."""
    kind: str
    status: Status
    name: str
    unranked: str = ""
    """Why the verifier shows this accepted bundle as a preview whatever its signature
    (:attr:`verifier.report.BundleReport.unranked`); empty otherwise."""
    description: str = ""
    url: str | None = None
    baseline: str | None = None
    spec_version: str = ""
    pack: str = ""
    fingerprint: str = ""
    split: str = ""
    trials: int | None = None
    seeds: tuple[int, ...] = ()
    date: str = ""
    """The verified date: the signature's log time or the reference list's date (else "")."""
    run: dict[str, Any] = field(default_factory=dict)
    environment: dict[str, Any] = field(default_factory=dict)
    declared_signer: dict[str, Any] | None = None
    signer: SignerView | None = None
    reproduced: bool | None = None
    reproduced_rows: str = ""
    """What a re-run compared when ``reproduced``: ``"12/81"`` (rows re-run / rows), else ""."""
    instance: str = ""
    """A generated pack's instance: ``public`` (its published dev seed), ``fresh`` (a seed
    derived from a verified commitment and a later beacon round), ``fresh-uncommitted`` (a
    fresh seed without a commitment); empty for a pack that draws none."""
    results: Results | None = None
    checks: tuple[CheckView, ...] = ()
    readme: str | None = None
    files: tuple[str, ...] = ()
    """Bundle files offered for download (``submission.json``, ``episodes.jsonl`` ...)."""
    content_hash: str = ""
    rows_hash: str = ""
    n_dropped: int = 0
    """Trials of the run without a scored row (``run.dropped``)."""
    same_as: str = ""
    """The slug of an entry verified earlier that measured the same on every (task, trial)
    (the verifier's ``same_measurements_as``; flagged on the board), else ""."""
    tasks: TaskTable | None = None
    """The scored rows counted per task (the verifier's; set with ``results``)."""
    drop_reasons: tuple[tuple[str, int], ...] = ()
    """Each reason a trial was dropped, with how many (``run.dropped``), by count."""
    usage: dict[str, SubstrateUsage] | None = None
    """Per substrate, the rows' first-try successes and model cost (the verifier's)."""
    harness: dict[str, str] | None = None
    """The harness the bundle records (``name``, ``version``, ``config_digest``), shown text;
    None: not recorded."""
    model: dict[str, str] | None = None
    """The model the bundle records (``provider``, ``id``), shown text; None: not recorded."""

    @property
    def harness_text(self) -> str:
        """The harness as the board says it (``inspect_ai 0.3.2``), or ``not recorded``."""
        if self.harness is None:
            return NOT_RECORDED
        return " ".join(p for p in (self.harness["name"], self.harness.get("version", "")) if p)

    @property
    def model_text(self) -> str:
        """The model as the board says it (``openai/gpt-4o``), or ``not recorded``."""
        if self.model is None:
            return NOT_RECORDED
        return f"{self.model['provider']}/{self.model['id']}"

    @cached_property
    def cells(self) -> tuple[tuple[Cell, TaskTable], ...]:
        """Each (category x substrate) cell of the results with its tasks (sliced once)."""
        if self.results is None or self.tasks is None:
            return ()
        tasks = self.tasks
        return tuple((c, tasks.of_cell(c.category, c.substrate)) for c in self.results.cells)

    @cached_property
    def _cell_rates(self) -> dict[tuple[int, str], TaskRate]:
        return {}

    def cell_rate(self, index: int, event: str) -> TaskRate:
        """Return rate ``event`` of cell ``index`` of :attr:`cells`, counted once for every
        page, chart and download that shows it."""
        key = (index, event)
        found = self._cell_rates.get(key)
        if found is None:
            found = self._cell_rates[key] = task_rate(self.cells[index][1], event)
        return found

    @property
    def default_seeds(self) -> bool:
        """Whether the run used SPEC's default seeds, ``0 .. trials - 1`` (one per trial)."""
        return self.trials is not None and self.seeds == tuple(range(self.trials))

    @property
    def measured(self) -> bool:
        """Whether latency and cost are the run's own, vouched for by a signature.

        A bundle ranked by its re-run alone shows "not measured": the re-run
        reproduces the rows, not the submitter's timings and costs.
        """
        return not (self.reproduced and self.signer is None)

    @property
    def accepted(self) -> bool:
        """Whether the verifier accepted the bundle (ranked or preview)."""
        return self.status != "refused" and self.results is not None

    @property
    def link(self) -> str | None:
        """Return the system's URL if it is a web address to link to (http or https), else None.

        Anything else (``javascript:``, ``data:``, a relative path) is shown as text only.
        """
        if not self.url:
            return None
        try:
            parts = urlsplit(self.url)
        except ValueError:
            return None
        if parts.scheme.lower() in ("http", "https") and parts.hostname:
            return self.url
        return None

    @property
    def spec_major(self) -> str:
        """Return the SPEC major version (``"1"``), or ``"?"`` when unknown."""
        head = self.spec_version.split(".", 1)[0]
        return head if head.isdigit() else "?"

    @property
    def board_key(self) -> tuple[str, str, str]:
        """Return ``(spec major, pack, split)``: one leaderboard per triple.

        ``pack`` is the pack's canonical name (an alias is normalised), so one
        pack never has two boards, and a ``test`` run never shares a board with
        ``dev`` runs.
        """
        return (self.spec_major, self.pack, self.split)

    @property
    def failed_checks(self) -> tuple[CheckView, ...]:
        """Return the checks that count against the bundle (the refused page lists these).

        A check with findings, or one that could not run because of an earlier
        failure; a re-run that does not apply (not a shipped baseline, or a pack
        that is not deterministic) is skipped without counting against anyone.
        """
        return tuple(
            c
            for c in self.checks
            if c.n_findings or not (c.passed or (c.skipped and c.id in NOT_APPLICABLE_SKIP))
        )


def _checks(report: BundleReport) -> tuple[CheckView, ...]:
    return tuple(
        CheckView(
            id=str(check.id),
            title=check.title,
            passed=check.passed,
            n_findings=check.n_findings,
            findings=tuple(
                FindingView(f.check, f.message, f.file, f.line, f.field) for f in check.findings
            ),
            skipped=check.skipped,
            note=check.note,
        )
        for check in report.checks
    )


def own_file(path: Path) -> bool:
    """Whether ``path`` is a regular file of its own: not a symlink, not a hard link.

    The site shows and publishes a bundle's files, refused bundle or not: a link would
    publish whatever it points at.
    """
    try:
        info = path.lstat()
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_nlink == 1


def _readme(path: Path, limit: int = README_LIMIT) -> str | None:
    """Return at most ``limit`` bytes of the bundle's README as text (never a whole big file)."""
    readme = path / README_FILE if path.is_dir() else None
    if readme is None or not own_file(readme):
        return None
    try:
        with readme.open("rb") as fh:
            data = fh.read(limit + 1)
    except OSError:
        return None
    text = data[:limit].decode("utf-8", errors="replace")
    return text + ("\n[cut at the size limit]" if len(data) > limit else "")


DOWNLOADABLE = (SUBMISSION_FILE, EPISODES_FILE, RECEIPTS_FILE, SIGNATURE_FILE, README_FILE)
"""Bundle files the submission page links to, when present."""


def entry_from_report(report: BundleReport, slug: str | None = None) -> Entry:
    """Return the site's view of one verifier :class:`~verifier.report.BundleReport`."""
    path = Path(report.path)
    sub = report.submission.model_dump(mode="json") if report.submission is not None else {}
    run = sub.get("run") or {}
    status: Status = report.status.value
    dropped = run.get("dropped") or ()
    return Entry(
        slug=slug or slug_of(path),
        path=path,
        kind=report.kind,
        status=status,
        unranked=report.unranked,
        **_system_fields(sub.get("system") or {}, report.results, path),
        spec_version=shown(str(sub.get("spec_version") or "")),
        **_pack_fields(sub.get("pack") or {}),
        trials=sub.get("trials_per_task"),
        seeds=tuple(sub.get("seeds") or ()),
        date=report.verified_at[:10],
        run=dict(run),
        environment=dict(sub.get("environment") or {}),
        declared_signer=sub.get("signer"),
        signer=_signer_view(report.signer),
        reproduced=report.reproduced,
        instance=instance_kind(report.public_seed, report.instance_committed),
        reproduced_rows=_reproduced_rows(report),
        results=report.results,
        checks=_checks(report),
        readme=_readme(path),
        files=tuple(f for f in DOWNLOADABLE if path.is_dir() and own_file(path / f)),
        **_hash_fields(report),
        n_dropped=len(dropped),
        tasks=report.tasks,
        drop_reasons=_drop_reasons(dropped),
        usage=report.usage,
        harness=_recorded(sub.get("harness"), ("name", "version", "config_digest")),
        model=_recorded(sub.get("model"), ("provider", "id")),
    )


def _system_fields(system: dict[str, Any], results: Results | None, path: Path) -> dict[str, Any]:
    """An entry's name (the system's, else the arm's, else the folder's), description, URL
    and baseline, as shown."""
    name = str(system.get("name") or (results.arm if results is not None else "") or path.name)
    return {
        "name": shown(name),
        "description": shown(str(system.get("description") or ""), SHOWN_TEXT_MAX),
        "url": shown(str(system.get("url") or ""), SHOWN_TEXT_MAX) or None,
        "baseline": system.get("baseline") or None,
    }


def _hash_fields(report: BundleReport) -> dict[str, str]:
    """An entry's content and rows hashes, and the slug of the bundle it measured alike."""
    same = report.same_measurements_as
    return {
        "content_hash": report.content_hash or "",
        "rows_hash": report.rows_hash or "",
        "same_as": slug_of(Path(same)) if same else "",
    }


def _pack_fields(pack: dict[str, Any]) -> dict[str, Any]:
    """An entry's pack (its canonical name), fingerprint and split."""
    return {
        "pack": canonical_pack(shown(str(pack.get("name") or ""))),
        "fingerprint": str(pack.get("fingerprint") or ""),
        "split": str(pack.get("split") or ""),
    }


def _signer_view(signer: report_model.SignerView | None) -> SignerView | None:
    if signer is None:
        return None
    return SignerView(identity=signer.identity, issuer=signer.issuer, signed_at=signer.signed_at)


def _reproduced_rows(report: BundleReport) -> str:
    """``re-run/rows`` of a reproduced bundle (else empty)."""
    if report.reproduced and report.reproduced_rows is not None:
        return f"{report.reproduced_rows}/{report.n_rows}"
    return ""


def _drop_reasons(dropped: Sequence[Any]) -> tuple[tuple[str, int], ...]:
    """Return (reason, count) of the dropped trials, the most frequent first."""
    counts: dict[str, int] = {}
    for d in dropped:
        reason = shown(str(d.get("reason") or "unknown")) if isinstance(d, dict) else "unknown"
        counts[reason] = counts.get(reason, 0) + 1
    return tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def slug_of(path: Path) -> str:
    """Return the page name of a bundle: its folder name, which the folder rule makes a slug.

    A folder that breaks the rule (only a refused bundle) gets ``refused-<slug>-<hash>``,
    which no rule-abiding folder name can equal, so two bundles never share a page.
    """
    name = path.name
    if path.is_dir() and folder_problem(name) is None:
        return name
    digest = hashlib.sha256(os.fsencode(name)).hexdigest()[:10]
    return f"refused-{slugify(path.stem if path.is_file() else name)[:40]}-{digest}"


def unique_slugs(reports: Sequence[BundleReport]) -> list[str]:
    """Return the slug of each report, in order (distinct: a folder's name is unique)."""
    return [slug_of(Path(report.path)) for report in reports]
