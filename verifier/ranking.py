"""The ``ranking`` family: rules that need every bundle at once (a folder of bundles, the site).

A bundle is judged alone by :func:`verifier.api.verify_bundle`; these rules can
only be judged across bundles, or by the site that builds them into one board:

* ``ranking.withdrawn``: the maintainers withdrew a bundle by its content hash
  (or rows hash); a byte-identical or row-identical copy is withdrawn with it,
  whatever its folder is called, and so is a bundle that measured the same as a
  withdrawn one still in the folder (its measured hash);
* ``ranking.reference_copy``: a bundle that measured the same as a listed
  reference bundle on every (task, trial) (the reference list holds each one's
  measured hash) and is not that reference is refused, whatever its date: a
  reference's run is never ranked again under another name;
* ``ranking.unrendered``: the site build could not render a bundle (any error, named); it
  withholds that bundle (:func:`withheld`) and publishes the others;
* ``ranking.duplicate``: a copy of a bundle accepted earlier (same content hash,
  or same rows hash: the same run re-typed, re-timed, renamed or re-signed) is
  not ranked twice. "Earlier" is the verified time (the signature's log time or
  the reference list's first listing date), never a folder name, so backdating
  a folder wins nothing; bundles without a verified time come after every
  verified one.

Each rule refuses the later copy with a finding that names the first. A bundle
that measured the same as one accepted earlier (same measured hash: outcomes and
readings per (task, trial), whatever its free text, fingerprints or seeds) but is
not a row-identical copy stays ranked, flagged with ``same_measurements_as``:
on a deterministic pack two honest systems can measure alike, so the board shows
the likeness and the reader judges.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from effectbench.findings import CheckId, Family, Finding
from verifier.references import Reference, load_references
from verifier.report import BundleReport, CheckReport, Status

__all__ = ["Withdrawal", "rank_across", "withheld"]

_UNVERIFIED = "~"
"""Sorts after every ISO date: bundles without a verified time come last."""


@dataclass(frozen=True)
class Withdrawal:
    """One entry of the maintainers' withdrawn list."""

    content_hash: str
    """The withdrawn bundle's content hash (``sha256:...``)."""
    reason: str
    rows_hash: str = ""
    """Its rows hash, when the list gives one (so a row-identical copy is withdrawn too)."""
    date: str = ""


def _with_findings(report: BundleReport, findings: list[Finding]) -> BundleReport:
    checks = []
    for c in report.checks:
        if c.id is Family.RANKING:
            c = CheckReport(
                id=c.id,
                title=c.title,
                passed=False,
                skipped=False,
                note="",
                n_findings=len(findings),
                findings=findings,
            )
        checks.append(c)
    return report.model_copy(update={"checks": checks, "status": Status.REFUSED, "accepted": False})


def withheld(report: BundleReport, error: BaseException) -> BundleReport:
    """Return ``report`` refused with ``ranking.unrendered``: the site could not render it
    (``error``), so the build withholds it and goes on with the others."""
    what = f"{type(error).__name__}: {str(error)[:300]}"
    message = (
        f"the site could not render this bundle ({what}); it is withheld from the board, "
        "the other bundles are published"
    )
    return _with_findings(report, [Finding(CheckId.RANKING_UNRENDERED, message)])


def _passed(report: BundleReport, note: str) -> BundleReport:
    checks = [
        CheckReport(
            id=c.id, title=c.title, passed=True, skipped=False, note=note, n_findings=0, findings=[]
        )
        if c.id is Family.RANKING
        else c
        for c in report.checks
    ]
    return report.model_copy(update={"checks": checks})


def _hashes(report: BundleReport) -> list[str]:
    return [h for h in (report.content_hash, report.rows_hash) if h]


def _reference_copy(
    report: BundleReport, by_measure: Mapping[str, Reference], listed: Mapping[str, Reference]
) -> Finding | None:
    """The finding of a bundle that measured the same as a listed reference it is not."""
    ref = by_measure.get(report.measured_hash or "")
    if ref is None or (report.content_hash or "") in listed:
        return None
    return Finding(
        CheckId.RANKING_REFERENCE_COPY,
        f"every (task, trial) measured the same as the maintainers' reference bundle "
        f"{ref.folder} ({ref.baseline} on {ref.pack}, listed {ref.date}); a reference's run "
        "is not ranked again under another name, whatever its date",
    )


def rank_across(
    reports: Sequence[BundleReport],
    withdrawn: Sequence[Withdrawal] = (),
    references: Mapping[str, Reference] | None = None,
) -> list[BundleReport]:
    """Apply the ``ranking`` rules to the reports of a folder of bundles (same order back).

    ``references`` is the maintainers' reference list (default: the verifier's own).
    """
    listed = load_references() if references is None else references
    by_measure = {r.measured_hash: r for r in listed.values() if r.measured_hash}
    gone = _withdrawn_hashes(reports, withdrawn)
    order = sorted(
        range(len(reports)), key=lambda i: (reports[i].verified_at or _UNVERIFIED, reports[i].path)
    )
    seen = _Seen()
    out = list(reports)
    for i in order:
        out[i] = _ranked(reports[i], gone, by_measure, listed, seen)
    return out


def _withdrawn_hashes(
    reports: Sequence[BundleReport], withdrawn: Sequence[Withdrawal]
) -> dict[str, Withdrawal]:
    """Every hash a withdrawal covers: its bundle's content and rows, and the rows and
    measurements of a withdrawn bundle still here (its copies, however re-typed, go too)."""
    gone = {w.content_hash: w for w in withdrawn}
    gone.update({w.rows_hash: w for w in withdrawn if w.rows_hash})
    for r in reports:
        hit = next((gone[h] for h in _hashes(r) if h in gone), None)
        if hit is None:
            continue
        for h in (r.rows_hash, r.measured_hash):
            if h:
                gone.setdefault(h, hit)
    return gone


@dataclass
class _Seen:
    """What the bundles ranked so far (in verification order) hold: the first bundle of each
    content or rows hash, and of each measured hash."""

    first: dict[str, BundleReport] = field(default_factory=dict)
    measured_first: dict[str, BundleReport] = field(default_factory=dict)


def _ranked(
    r: BundleReport,
    gone: Mapping[str, Withdrawal],
    by_measure: Mapping[str, Reference],
    listed: Mapping[str, Reference],
    seen: _Seen,
) -> BundleReport:
    """One bundle's report with the ranking rules' finding or pass (a refused bundle as it
    is); ``seen`` learns it when it is ranked."""
    hashes = [*_hashes(r), *([r.measured_hash] if r.measured_hash else [])]
    hit = next((gone[h] for h in hashes if h in gone), None)
    if hit is not None:
        message = f"withdrawn by the maintainers ({hit.reason})" + (
            f" on {hit.date}" if hit.date else ""
        )
        return _with_findings(r, [Finding(CheckId.RANKING_WITHDRAWN, message)])
    if not r.accepted:
        return r
    copied = _reference_copy(r, by_measure, listed)
    if copied is not None:
        return _with_findings(r, [copied])
    earlier = next((seen.first[h] for h in _hashes(r) if h in seen.first), None)
    if earlier is not None:
        same = "byte-identical" if earlier.content_hash == r.content_hash else "row-identical"
        message = (
            f"a {same} copy of {earlier.path} (verified {earlier.verified_at or 'earlier'}); "
            "a run is ranked once, under the bundle verified first"
        )
        return _with_findings(r, [Finding(CheckId.RANKING_DUPLICATE, message)])
    for h in _hashes(r):
        seen.first.setdefault(h, r)
    return _passed_or_alike(r, seen.measured_first)


def _passed_or_alike(r: BundleReport, measured_first: dict[str, BundleReport]) -> BundleReport:
    """A ranked bundle's pass, flagged when an earlier bundle measured the same."""
    alike = measured_first.get(r.measured_hash) if r.measured_hash else None
    if alike is None:
        if r.measured_hash:
            measured_first[r.measured_hash] = r
        return _passed(r, "no copy of an earlier bundle, not withdrawn")
    note = (
        f"not a copy, but every (task, trial) measured the same as {alike.path} "
        f"(verified {alike.verified_at or 'earlier'}): flagged on the board"
    )
    return _passed(r, note).model_copy(update={"same_measurements_as": alike.path})
