"""What ``effectbench verify`` reports: one :class:`BundleReport` per submission.

``BundleReport.to_json()`` is the documented ``--json`` schema the site reads
(see ``docs/verifier-report.md``); :func:`format_report` is the readable form.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from effectbench.bundle import Submission
from effectbench.findings import CheckId, Family, Finding
from effectbench.metrics import Results, SubstrateUsage, TaskTable

REPORT_VERSION = 1
"""Version of the ``--json`` schema; bumped only on an incompatible change."""
KEEP_FINDINGS = 20
"""Findings kept per check; the rest are only counted."""


TITLES = {
    Family.STRUCTURE: "files, size limits, strict JSON, field types and enums",
    Family.SPEC: "spec version parses and is comparable with this leaderboard",
    Family.PACK: "known pack and fingerprint; tasks, trials and seeds as declared",
    Family.RESCORE: "every row re-labelled by the truth table from its oracle reading",
    Family.RECEIPT: "every row's receipt present and whole, its label derived again from it",
    Family.CLAIMS: "the results block recomputed from the rows",
    Family.SIGNATURE: "Sigstore signature by the declared signer",
    Family.REPRODUCE: "shipped baseline re-run row for row on a deterministic pack",
    Family.RANKING: "not a copy of a bundle verified earlier, nor withdrawn (across bundles)",
    Family.MONITOR: "a monitor bundle's scores cover its corpus once each, as declared",
}


SUBMISSION_FAMILIES = tuple(f for f in Family if f is not Family.MONITOR)
"""The families a submission bundle's report holds, in order (a monitor bundle's report is
:mod:`verifier.monitors`'s)."""
NOT_APPLICABLE_SKIPS = frozenset((Family.RECEIPT, Family.REPRODUCE, Family.RANKING))
"""Families whose skipped step means "does not apply here" rather than "could not run"."""


class Status(StrEnum):
    """The verdict on one submission."""

    RANKED = "ranked"
    PREVIEW = "preview"
    REFUSED = "refused"


@dataclass(frozen=True)
class Step:
    """How one check family's step ended: whether it ran, and a note for the report."""

    skipped: bool = False
    """The step did not run (an earlier failure, or it does not apply)."""
    note: str = ""
    """Why it was skipped, or what it established (readable, not parsed)."""


class SignerView(BaseModel):
    """The verified signer (mirrors ``effectbench.signatures.SignerInfo``)."""

    model_config = ConfigDict(frozen=True)

    identity: str
    issuer: str
    signed_at: str


class CheckReport(BaseModel):
    """The result of one check family."""

    model_config = ConfigDict(frozen=True)

    id: Family
    title: str
    passed: bool
    """The check ran and found nothing wrong."""
    skipped: bool = False
    """The check did not run (an earlier failure, or not applicable; see ``note``)."""
    note: str = ""
    """Why a check was skipped or what it established (readable, not parsed)."""
    n_findings: int
    findings: list[Finding]
    """The first findings (at most 20); ``n_findings`` counts all of them."""


class BundleReport(BaseModel):
    """The verdict on one bundle or upstream document, with every check's findings."""

    model_config = ConfigDict(frozen=True)

    report_version: int = REPORT_VERSION
    path: str
    kind: Literal["bundle", "upstream"]
    status: Status
    accepted: bool
    """``status`` is ranked or preview (exit status 0)."""
    checks: list[CheckReport]
    submission: Submission | None
    results: Results | None
    """The results block recomputed from the rows (None when rows could not be read)."""
    signer: SignerView | None
    reproduced: bool | None
    """True when every re-run row matched; None when not applicable."""
    n_rows: int
    """Rows read from the episodes (valid or not)."""
    verified_at: str = ""
    """When the bundle is known to have existed, from verified data only: the signature's
    log time, or the reference list's date for a listed reference bundle; else empty."""
    content_hash: str | None = None
    """:func:`effectbench.hashing.content_hash` of the bundle files the signature covers (or
    of the document): what the reference and withdrawn lists name a bundle by."""
    usage: dict[str, SubstrateUsage] | None = None
    """Per substrate, the rows' first-try task successes and model cost
    (:func:`effectbench.metrics.substrate_usage`); None when the rows could not all be read."""
    tasks: TaskTable | None = None
    """The rows counted per task (:func:`effectbench.metrics.task_table`): what the board's
    task-clustered intervals, comparisons and net values read (None with ``results``)."""
    rows_hash: str | None = None
    """The hash of the scored rows (:meth:`verifier.rows.RowChecker.rows_hash`): equal for
    copies of one run however re-typed, renamed or re-timed; None when unread."""
    measured_hash: str | None = None
    """The hash of what the rows measured (:meth:`verifier.rows.RowChecker.measured_hash`):
    equal for copies of one run whatever their free text, fingerprints or seeds."""
    reproduced_rows: int | None = None
    """How many of the ``n_rows`` rows the re-run compared (all of them, or a listed
    reference's sample), by itself or by its record; None when nothing was re-run.
    "Reproduced" means these rows only."""
    instance_seed: str | None = None
    """The seed a generated pack's tasks were drawn from (None: the pack draws none)."""
    public_seed: bool | None = None
    """True for a generated pack's published dev seed (a public-seed bundle, flagged on the
    board), False for a fresh instance; None when the pack draws none."""
    instance_committed: bool | None = None
    """For a fresh instance: True when its seed was derived from a verified commitment and a
    later beacon round, False when it carries none; None otherwise."""
    same_measurements_as: str | None = None
    """Set by the ranking rules: the path of a bundle verified earlier whose every
    (task, trial) measured the same (a near-identical entry, flagged on the board)."""
    unranked: str = ""
    """Why an accepted bundle is shown as a preview and never ranked, whatever its signature
    (:func:`verifier.receipts.unranked_reason`: a bundle without receipts on a pack that
    records them); empty when nothing but its signature decides."""

    def to_json(self) -> dict[str, Any]:
        """Return the report as JSON-ready data (the documented ``--json`` schema)."""
        return self.model_dump(mode="json")

    def check(self, family: Family | str) -> CheckReport:
        """Return the report of check family ``family``."""
        for c in self.checks:
            if c.id == family:
                return c
        raise KeyError(family)

    def finding_ids(self) -> set[str]:
        """Return the check ids of every kept finding (for tests and summaries)."""
        return {f.check for c in self.checks for f in c.findings}


class FindingSink:
    """Collects findings per family: keeps the first few, counts every one."""

    def __init__(self, keep: int = KEEP_FINDINGS) -> None:
        self.keep = keep
        self.kept: dict[str, list[Finding]] = {f.value: [] for f in Family}
        self.counts: Counter[str] = Counter()
        self.ids: Counter[str] = Counter()

    def add(self, finding: Finding) -> None:
        """Record ``finding`` under the family of its check id."""
        family = finding.check.family.value
        self.counts[family] += 1
        self.ids[finding.check] += 1
        if len(self.kept[family]) < self.keep:
            self.kept[family].append(finding)

    def emit(
        self,
        check: CheckId,
        message: str,
        file: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        """Record a finding built from its parts."""
        self.add(Finding(check, message, file, line, field))

    def failed(self, family: Family) -> bool:
        """Return whether ``family`` has any finding."""
        return self.counts[family.value] > 0

    def report(self, family: Family, step: Step) -> CheckReport:
        """Return the :class:`CheckReport` of ``family``, whose step ended as ``step``.

        A step that was skipped yet found something is reported as run (and failed).
        """
        n = self.counts[family.value]
        return CheckReport(
            id=family,
            title=TITLES[family],
            passed=n == 0 and not step.skipped,
            skipped=step.skipped and n == 0,
            note=step.note,
            n_findings=n,
            findings=list(self.kept[family.value]),
        )


def decide_status(
    checks: list[CheckReport],
    *,
    signature_verified: bool,
    signature_present: bool,
    ranked_unsigned: bool,
    allow_unsigned: bool,
    unranked: str = "",
) -> Status:
    """Apply the status rule of the interface contract.

    Refused when any non-signature check failed or was skipped (but for the
    steps that may not apply), or when a signature is present but does not
    verify; otherwise ranked when the signature verified, or when the bundle is
    a listed reference bundle that reproduced row for row (``ranked_unsigned``), unless
    something else keeps it from the rank (``unranked`` says what: it is then a preview);
    otherwise preview when unsigned previews are allowed; otherwise refused.
    """
    for c in checks:
        if c.id is Family.SIGNATURE:
            continue
        if c.n_findings or (c.skipped and c.id not in NOT_APPLICABLE_SKIPS):
            return Status.REFUSED
    if signature_present and not signature_verified:
        return Status.REFUSED
    if signature_verified or ranked_unsigned:
        return Status.PREVIEW if unranked else Status.RANKED
    return Status.PREVIEW if allow_unsigned else Status.REFUSED


def _where(f: Finding) -> str:
    parts = []
    if f.file:
        parts.append(f.file + (f":{f.line}" if f.line is not None else ""))
    elif f.line is not None:
        parts.append(f"row {f.line}")
    if f.field:
        parts.append(f.field)
    return ": ".join(parts)


def format_report(report: BundleReport, *, max_rows: int = 5) -> str:
    """Return the readable report: the verdict, then each check and its first findings."""
    head = f"{report.path} ({report.kind}): {report.status.value.upper()}"
    lines = [head]
    sub = report.submission
    if sub is not None:
        lines.append(
            f"  system {sub.system.name!r} on {sub.pack.name}, {report.n_rows} rows, "
            f"{sub.trials_per_task} trials per task, spec {sub.spec_version}"
        )
    for c in report.checks:
        if c.n_findings:
            mark = "FAIL"
        elif c.skipped:
            mark = "skip"
        else:
            mark = "ok  "
        extra = (
            f" ({c.n_findings} finding{'s' if c.n_findings != 1 else ''})" if c.n_findings else ""
        )
        lines.append(f"  [{mark}] {c.id.value:<9} {c.title}{extra}")
        if c.note:
            lines.append(f"         {c.note}")
        for f in c.findings[:max_rows]:
            where = _where(f)
            lines.append(f"         {f.check}: {where + ': ' if where else ''}{f.message}")
        if c.n_findings > max_rows:
            lines.append(f"         ... and {c.n_findings - max_rows} more (see --json)")
    if report.signer is not None:
        lines.append(f"  signed by {report.signer.identity} ({report.signer.issuer})")
    if report.unranked:
        lines.append(f"  not ranked: {report.unranked}")
    if report.results is not None:
        r = report.results
        lines.append(
            f"  recomputed: SWER {r.swer.numerator}/{r.swer.denominator}, over-halt "
            f"{r.over_halt.numerator}/{r.over_halt.denominator}, task success "
            f"{r.task_success.numerator}/{r.task_success.denominator}"
        )
    return "\n".join(lines)
