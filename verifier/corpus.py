"""The board's monitor corpus: made only from verified bundles, as its lock pins it.

A corpus is made from bundles the verifier accepted, with every receipt checked:

* the dev split from the board's **ranked** bundles of ``submissions/`` that carry receipts
  (their reports, from the same verification the boards use);
* the test split from the held-out bundles (``monitors/heldout/``, listed in its
  ``index.json``), verified here as unsigned previews (the board made them; their rows are
  re-scored from the oracle's readings and their receipts derived again like any other).

:func:`lock_corpus` pins the corpus those give now (``monitor corpus --lock``; a new
version when its digest changes). :func:`board_corpus` makes the locked corpus again, and
says, source by source, why it cannot (``monitor.corpus_source``): a source missing, changed
since it was locked, or not verified here, or a corpus of another digest. The labels come
from the verified rows only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from effectbench.errors import DataError
from effectbench.findings import CheckId, Family, Finding
from effectbench.monitors.corpus import CORPUS_NAME, Corpus
from effectbench.monitors.heldout import read_index
from effectbench.monitors.sources import (
    LOCK_FILE,
    CorpusLock,
    CorpusSource,
    Located,
    assemble,
    read_lock,
)
from effectbench.schema import Split
from verifier.api import VerifyOptions, verify_bundle
from verifier.report import BundleReport, Status

__all__ = [
    "HELDOUT_FOLDER",
    "MONITORS_FOLDER",
    "BoardCorpus",
    "board_corpus",
    "corpus_sources",
    "lock_corpus",
]

MONITORS_FOLDER = "monitors"
"""The folder of the monitor track, at the repository root: the lock, the held-out bundles,
the monitor bundles."""
HELDOUT_FOLDER = "heldout"
"""The held-out bundles' folder, in :data:`MONITORS_FOLDER`."""


def _with_receipts(report: BundleReport) -> bool:
    return report.accepted and any(
        c.id is Family.RECEIPT and c.passed and not c.skipped for c in report.checks
    )


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _heldout_reports(heldout: Path) -> list[tuple[CorpusSource, BundleReport]]:
    """Verify every held-out bundle the index lists (as an unsigned preview)."""
    index = read_index(heldout)
    options = VerifyOptions(allow_unsigned=True, reproduce=False)
    out = []
    for entry in index.bundles:
        report = verify_bundle(heldout / entry.folder, options)
        source = CorpusSource(
            folder=entry.folder,  # made relative to the root by the caller
            content_hash=report.content_hash or "sha256:" + "0" * 64,
            split=Split.TEST,
            slice=entry.slice,
            notice=entry.notice,
        )
        out.append((source, report))
    return out


def corpus_sources(
    root: Path, reports: Sequence[BundleReport], heldout: Path | None
) -> list[Located]:
    """Return every source a corpus made now would have: the ranked bundles with receipts of
    ``reports`` (dev), then the held-out bundles of ``heldout`` (test; None: no test split);
    a held-out bundle the verifier refuses is a :class:`DataError` naming its findings."""
    located = []
    for report in sorted(reports, key=lambda r: r.path):
        if report.status is not Status.RANKED or not _with_receipts(report):
            continue
        if report.submission is None or report.submission.pack.split is not Split.DEV:
            continue
        path = Path(report.path)
        source = CorpusSource(
            folder=_relative(path, root),
            content_hash=report.content_hash or "",
            split=Split.DEV,
        )
        located.append(Located(source, path))
    held = _heldout_reports(heldout) if heldout is not None else []
    for source, report in held:
        assert heldout is not None
        path = heldout / source.folder
        if not _with_receipts(report):
            found = "; ".join(f"{f.check}: {f.message}" for c in report.checks for f in c.findings)
            raise DataError(
                f"the held-out bundle is refused, or carries no receipts: {found or 'no receipts'}",
                file=str(path),
            )
        moved = source.model_copy(update={"folder": _relative(path, root)})
        located.append(Located(moved, path))
    return located


def lock_corpus(
    root: Path,
    reports: Sequence[BundleReport],
    heldout: Path | None,
    previous: CorpusLock | None = None,
) -> tuple[CorpusLock, Corpus]:
    """Return the lock of the corpus the sources give now, and the corpus: the previous
    lock's version when the digest is unchanged, the next version otherwise."""
    located = corpus_sources(root, reports, heldout)
    version = previous.corpus.version if previous is not None else 1
    corpus = assemble(located, version)
    if previous is not None and corpus.ref.digest != previous.corpus.digest:
        corpus = assemble(located, version + 1)
    lock = CorpusLock(
        corpus=corpus.ref, episodes=len(corpus.views), sources=[x.source for x in located]
    )
    return lock, corpus


@dataclass(frozen=True)
class BoardCorpus:
    """The locked corpus made again, or why it cannot be."""

    lock: CorpusLock | None
    corpus: Corpus | None
    findings: list[Finding] = field(default_factory=list)
    """``monitor.corpus_source``: why the corpus cannot be made (empty when it was)."""
    note: str = ""
    """Why there is no corpus at all (no lock)."""


def _source_finding(source: CorpusSource, message: str) -> Finding:
    return Finding(CheckId.MONITOR_CORPUS_SOURCE, message, file=source.folder)


Assemble = Callable[[Sequence[Located], int, str], Corpus]
"""What makes a corpus of sources already checked against the lock (:func:`assemble`, or a
caller's cache of it)."""


def board_corpus(
    root: Path, reports: Sequence[BundleReport], make: Assemble = assemble
) -> BoardCorpus:
    """Make the corpus ``monitors/corpus.lock.json`` pins, from the ranked bundles of
    ``reports`` and the held-out bundles (verified here); or say why not. ``make`` assembles
    it once every source is found, verified and of the locked content hash."""
    lock_path = root / MONITORS_FOLDER / LOCK_FILE
    if not lock_path.is_file():
        return BoardCorpus(
            None,
            None,
            note=f"no corpus lock ({lock_path.name}): effectbench monitor corpus --lock writes one",
        )
    lock = read_lock(lock_path)
    by_path = {Path(r.path).resolve(): r for r in reports}
    heldout = root / MONITORS_FOLDER / HELDOUT_FOLDER
    held: dict[Path, BundleReport] = {}
    if any(s.split is Split.TEST for s in lock.sources):
        held = {(heldout / s.folder).resolve(): r for s, r in _heldout_reports(heldout)}
    findings: list[Finding] = []
    located: list[Located] = []
    for source in lock.sources:
        path = root / source.folder
        report = (held if source.split is Split.TEST else by_path).get(path.resolve())
        if report is None:
            findings.append(_source_finding(source, "not found among the verified bundles"))
        elif source.split is Split.DEV and report.status is not Status.RANKED:
            findings.append(_source_finding(source, f"not ranked here ({report.status.value})"))
        elif not _with_receipts(report):
            findings.append(_source_finding(source, "refused, or its receipts are unchecked"))
        elif report.content_hash != source.content_hash:
            findings.append(
                _source_finding(
                    source,
                    f"its content hash is {report.content_hash}, not the locked "
                    f"{source.content_hash}: it changed since the corpus was locked "
                    "(effectbench monitor corpus --lock locks a new corpus version)",
                )
            )
        else:
            located.append(Located(source, path))
    if findings:
        return BoardCorpus(lock, None, findings)
    corpus = make(located, lock.corpus.version, lock.corpus.name or CORPUS_NAME)
    if corpus.ref != lock.corpus:
        return BoardCorpus(
            lock,
            None,
            [
                Finding(
                    CheckId.MONITOR_CORPUS_SOURCE,
                    f"the locked sources give corpus {corpus.ref.digest}, not the locked "
                    f"{lock.corpus.digest}",
                    file=f"{MONITORS_FOLDER}/{LOCK_FILE}",
                )
            ],
        )
    return BoardCorpus(lock, corpus)
