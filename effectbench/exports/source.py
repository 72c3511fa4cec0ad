"""What an export reads: one accepted bundle's declaration, rows, receipts and verified numbers.

The command line verifies first (the verifier decides what is accepted) and hands the
verifier's verdict over as a :class:`Verified`; this module reads the bundle's files and
nothing else. Every date an export writes is taken from here (the run's times, the rows'),
never from the clock, so the same bundle always exports to the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import orjson
from pydantic import ValidationError

from effectbench.bundle import RECEIPTS_VERSION, SubmissionHeader
from effectbench.classify import classify
from effectbench.errors import DataError
from effectbench.exports.handles import Handles, published_handles
from effectbench.filenames import EPISODES_FILE, RECEIPTS_FILE, SUBMISSION_FILE
from effectbench.metrics import Results, TaskTable
from effectbench.receipts.files import iter_lines
from effectbench.receipts.model import Receipt
from effectbench.schema import EpisodeRecord, Outcome, Split, TrueState

SCRIPTED = "scripted"
"""The model of a shipped baseline (a reference arm): no model, a script."""
UNKNOWN = "unknown"
"""The model of a system whose bundle names none."""


@dataclass(frozen=True)
class Verified:
    """What the verifier established of a bundle, as an export states it."""

    status: str
    """``ranked`` or ``preview`` (an unsigned preview, exported with ``--allow-unsigned``)."""
    signer: str | None
    """The verified Sigstore identity and issuer, or None (unsigned)."""
    reproduced: bool | None
    """Whether the verifier's re-run of a shipped baseline matched (None: not re-run)."""
    content_hash: str | None
    """The bundle's content hash (what the reference and withdrawn lists name it by)."""

    @property
    def unsigned_preview(self) -> bool:
        """Whether the bundle is an unsigned preview, never ranked."""
        return self.status == "preview"

    def details(self) -> dict[str, str]:
        """Return the verdict as flat strings (what every format's metadata carries)."""
        return {
            "verifier_status": self.status,
            "unsigned_preview": "true" if self.unsigned_preview else "false",
            "signer": self.signer or "",
            "reproduced": {True: "true", False: "false", None: "not re-run"}[self.reproduced],
            "bundle_content_hash": self.content_hash or "",
        }


@dataclass(frozen=True)
class Episode:
    """One scored row with its receipt (None in a bundle of format 1)."""

    row: EpisodeRecord
    receipt: Receipt | None
    handle: str
    """The task's opaque handle (every trial's; :mod:`effectbench.exports.handles`)."""
    trial_handle: str
    """The episode's own opaque handle."""

    @property
    def reference(self) -> Outcome:
        """The outcome the truth table gives the desired behaviour on this task: a correct
        effect reported as such when the correct action was available, else the halt."""
        row = self.row
        label = (
            classify(True, TrueState.CORRECT, True)
            if row.correct_action_available
            else classify(False, TrueState.ABSENT, False)
        )
        assert label is not None  # both states are readable
        return label.outcome

    @property
    def said(self) -> str:
        """The agent's claim as one line: what it reported (its message aside)."""
        claim = self.row.agent
        success, halted = str(claim.reported_success).lower(), str(claim.halted).lower()
        return f"reported_success={success}, halted={halted}"

    @property
    def is_correct(self) -> bool:
        """Whether the episode ended in :attr:`reference`."""
        return self.row.outcome == self.reference


@dataclass(frozen=True)
class BundleSource:
    """One accepted bundle, read for export."""

    folder: Path
    header: SubmissionHeader
    episodes: list[Episode]
    results: Results
    """The results block the verifier recomputed from the rows."""
    tasks: TaskTable
    """The rows counted per task (or per cluster of tasks), as the board counts them."""
    verified: Verified

    @property
    def name(self) -> str:
        """The bundle's folder name: what every exported file is named after."""
        return self.folder.name

    @property
    def sequestered(self) -> bool:
        """Whether the bundle ran the pack's sequestered ``test`` split (its task ids are never
        exported: :mod:`effectbench.exports.handles`)."""
        return self.header.pack.split is Split.TEST

    @property
    def has_receipts(self) -> bool:
        """Whether the bundle carries receipts (format 2)."""
        return self.header.effectbench_bundle_version >= RECEIPTS_VERSION

    @property
    def substrates(self) -> list[str]:
        """The substrates the rows cover, sorted (one board each)."""
        return sorted({str(e.row.substrate) for e in self.episodes})

    @property
    def started_at(self) -> str:
        """When the run started: the declaration's time, else the earliest row's ("" if
        neither says)."""
        if self.header.run.started_at:
            return self.header.run.started_at
        times = sorted(e.row.started_at for e in self.episodes if e.row.started_at)
        return times[0] if times else ""

    @property
    def finished_at(self) -> str:
        """When the run finished: the declaration's time, else the latest row's, else the
        start."""
        if self.header.run.finished_at:
            return self.header.run.finished_at
        times = sorted(e.row.finished_at for e in self.episodes if e.row.finished_at)
        return times[-1] if times else self.started_at

    @property
    def effectbench_version(self) -> str:
        """The version of EffectBench the run recorded, else ``unknown``."""
        return self.header.environment.dependencies.get("effectbench", UNKNOWN)

    @property
    def agent_version(self) -> str:
        """The system's version: the bundle's own field when it has one; a shipped
        baseline's is the EffectBench it ships with; else ``unknown``."""
        declared = getattr(self.header.system, "version", None)
        if declared:
            return str(declared)
        return self.effectbench_version if self.header.system.baseline is not None else UNKNOWN

    @property
    def harness(self) -> str:
        """The system's harness: the bundle's own field when it has one, else its name."""
        return str(getattr(self.header.system, "harness", None) or self.header.system.name)

    @property
    def model(self) -> str:
        """The system's model: the bundle's own field when it has one; ``scripted`` for a
        shipped baseline; else the models the rows' model calls name; else ``unknown``."""
        declared = getattr(self.header.system, "model", None)
        if declared:
            return str(declared)
        if self.header.system.baseline is not None:
            return SCRIPTED
        named = sorted({c.model for e in self.episodes for c in e.row.model_calls if c.model})
        return ",".join(named) if named else UNKNOWN

    @property
    def model_id(self) -> str:
        """``harness/model``: the system as one id (EEE's ``model_info.id``)."""
        return f"{self.harness}/{self.model}"


def epoch_seconds(stamp: str) -> str:
    """Return an ISO 8601 time as whole seconds since the Unix epoch ("0" when empty or not a
    time)."""
    try:
        return str(int(datetime.fromisoformat(stamp).timestamp()))
    except ValueError:
        return "0"


def _lines(path: Path) -> list[tuple[int, bytes]]:
    return [(n, line) for n, line in enumerate(iter_lines(path), start=1) if line.strip()]


def _published(
    sub: Path, header: SubmissionHeader, verified: Verified, task_ids: list[str]
) -> Handles:
    """Return the bundle's published handles (a :class:`DataError` naming ``sub`` if none)."""
    try:
        return published_handles(
            header.pack.fingerprint, str(header.pack.split), verified.content_hash or "", task_ids
        )
    except ValueError as exc:
        raise DataError(f"cannot be exported: {exc}", file=str(sub)) from None


def read_source(
    folder: Path,
    results: Results,
    tasks: TaskTable,
    verified: Verified,
    handle: Handles | None = None,
) -> BundleSource:
    """Read the accepted bundle in ``folder`` for export.

    ``handle`` gives a task's opaque handle (``trial`` None) or an episode's; by default the
    published handles (:func:`effectbench.exports.handles.published_handles`), the same on
    every machine. Raises :class:`DataError` naming the file and line of anything that cannot
    be read (the verifier accepted it, so only a change since then can cause that).
    """
    sub = folder / SUBMISSION_FILE
    try:
        doc = orjson.loads(sub.read_bytes())
        if not isinstance(doc, dict):
            raise ValueError(f"{SUBMISSION_FILE} is not a JSON object")
        header = SubmissionHeader.model_validate({k: v for k, v in doc.items() if k != "results"})
        rows = [(n, EpisodeRecord.from_json(line)) for n, line in _lines(folder / EPISODES_FILE)]
        receipts: list[Receipt | None] = [None] * len(rows)
        if header.effectbench_bundle_version >= RECEIPTS_VERSION:
            receipts = [Receipt.from_json(line) for _, line in _lines(folder / RECEIPTS_FILE)]
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror or exc}", file=str(exc.filename)) from None
    except (ValidationError, ValueError) as exc:
        raise DataError(f"changed since it was verified ({exc})", file=str(folder)) from None
    if len(receipts) != len(rows):
        raise DataError(
            f"{len(receipts)} receipts for {len(rows)} rows", file=str(folder / RECEIPTS_FILE)
        )
    if handle is None:
        handle = _published(sub, header, verified, [row.task_id for _, row in rows])
    episodes = [
        Episode(
            row=row,
            receipt=receipt,
            handle=handle(row.task_id, None),
            trial_handle=handle(row.task_id, row.trial),
        )
        for (_, row), receipt in zip(rows, receipts, strict=True)
    ]
    episodes.sort(key=lambda e: (str(e.row.substrate), e.handle, e.row.trial))
    return BundleSource(folder, header, episodes, results, tasks, verified)


__all__ = [
    "SCRIPTED",
    "UNKNOWN",
    "BundleSource",
    "Episode",
    "Verified",
    "epoch_seconds",
    "read_source",
]
