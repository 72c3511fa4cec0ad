"""Producing bundles: a run becomes a submission, an upstream document becomes a bundle.

The library behind ``effectbench submit`` and ``effectbench import`` (signing is
:mod:`effectbench.signatures`). Nothing here judges a bundle; that is the
verifier's. Every user mistake (an impossible ``--out``, an unreadable README or
document) is a :class:`~effectbench.errors.DataError` or
:class:`~effectbench.errors.UsageError` naming the file.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import orjson

from effectbench._version import SPEC_VERSION
from effectbench.baselines import get_baseline, reference_description
from effectbench.bundle import (
    BUNDLE_VERSION,
    MAX_LINE_BYTES,
    RECEIPTS_VERSION,
    SCRIPTED_PROVIDER,
    AttemptRecord,
    DroppedPair,
    EnvironmentInfo,
    HarnessInfo,
    InstanceDecl,
    ModelInfo,
    PackRef,
    RunInfo,
    SignerDecl,
    Submission,
    SystemInfo,
    folder_problem,
    slugify,
    upstream_submission,
    write_bundle,
)
from effectbench.errors import DataError, UsageError
from effectbench.manifest import fingerprint
from effectbench.metrics import episode_frame, summarize
from effectbench.packs import get_pack
from effectbench.run.runner import RunResult, evaluate
from effectbench.schema import EpisodeRecord, Split
from effectbench.seam import BenchmarkProvider, DrawsInstances
from effectbench.strictjson import StrictJSONError, load_document
from effectbench.variants import choose, tasks_on

__all__ = [
    "DEPENDENCIES",
    "Imported",
    "ReferenceSpec",
    "bundle_folder",
    "dependency_versions",
    "import_document",
    "make_submission",
    "model_from_rows",
    "now",
    "read_readme",
    "reference_bundle",
    "scripted",
    "write_submission",
]

DEPENDENCIES = ("effectbench", "pydantic", "numpy", "pandas", "orjson")
"""Packages whose versions a bundle records in ``environment.dependencies``."""


def dependency_versions() -> dict[str, str]:
    """Return the installed version of each of :data:`DEPENDENCIES` (absent ones left out)."""
    out = {}
    for name in DEPENDENCIES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            continue
    return out


def now() -> str:
    """Return the current time, ISO 8601 UTC (the run's start and end times)."""
    return datetime.now(UTC).isoformat()


def _write_error(exc: OSError, where: Path) -> DataError:
    name = exc.filename if isinstance(exc.filename, str) else str(where)
    return DataError(f"cannot write: {exc.strerror or exc}", file=name)


def bundle_folder(out: Path, name: str, when: str | None = None, *, other: str = "--name") -> Path:
    """Return ``out/<YYYY-MM-DD>_<slug>`` (refusing one that already exists or cannot be made).

    ``when`` is an ISO time whose date names the folder (default: today). Checked
    before a run starts, so a long run never ends in an unwritable folder. ``other``
    is the option the user can change to pick another folder (named if it exists).
    """
    day = (when or now())[:10]
    try:
        date.fromisoformat(day)
        dated = len(day) == 10 and day[4] == day[7] == "-"
    except ValueError:
        dated = False
    if not dated:
        raise DataError(f"{when!r} does not start with a date (YYYY-MM-DD) to name the folder by")
    out = Path(out)
    folder = out / f"{day}_{slugify(name)}"
    problem = folder_problem(folder.name)
    if problem is not None or folder.parent != out:  # never: the slug is plain ASCII
        raise UsageError(f"cannot name a bundle folder after {name!r}: {problem}")
    try:
        existing = out
        while not os.path.lexists(existing) and existing != existing.parent:
            existing = existing.parent
        if not existing.is_dir():
            raise UsageError(f"--out {out}: {existing} is not a folder")
        if not os.access(existing, os.W_OK | os.X_OK):
            raise DataError("cannot write: Permission denied", file=str(existing))
        if folder.exists() or folder.is_symlink():
            raise UsageError(f"{folder} already exists; choose another {other} or remove it")
    except OSError as exc:
        raise _write_error(exc, out) from None
    return folder


def read_readme(path: Path) -> str:
    """Return the text of a submitter's README (a :class:`DataError` names an unreadable one)."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read the README: {exc}", file=str(path)) from None


def make_submission(
    run: RunResult,
    pack: BenchmarkProvider,
    system: SystemInfo,
    *,
    trials: int,
    split: Split,
    started_at: str,
    finished_at: str,
    seeds: Sequence[int] | None = None,
    signer: SignerDecl | None = None,
    instances: InstanceDecl | None = None,
    harness: HarnessInfo | None = None,
    model: ModelInfo | None = None,
) -> Submission:
    """Return the :class:`Submission` of a finished run (claims computed by ``summarize``).

    ``seeds`` are the seeds the run used, by trial (default ``0..trials-1``, the
    runner's own default). A run whose every row carries its receipt makes a bundle of
    format 2 (receipts and frames beside the rows). Every dropped (task, trial) of ``run``
    is listed in ``run.dropped`` with its reason, and ``run.n_dropped`` is their number;
    every attempt that did not count is in ``run.attempts`` and ``run.n_attempts`` counts
    them all. ``harness`` and ``model`` are recorded as given (None: not recorded).
    """
    attempt_of = run.attempt_of()
    dropped = [
        DroppedPair(
            task_id=d.task_id,
            trial=d.trial,
            reason=d.reason,
            detail=d.detail,
            attempt=attempt_of.get((d.task_id, d.trial), 1),
        )
        for d in run.dropped
    ]
    from effectbench.receipts.files import all_carry_receipts

    attempts = [
        AttemptRecord(
            task_id=a.task_id, trial=a.trial, attempt=a.attempt, ending=a.ending, detail=a.detail
        )
        for a in run.attempts
    ]
    return Submission(
        effectbench_bundle_version=(
            RECEIPTS_VERSION if all_carry_receipts(run.rows) else BUNDLE_VERSION
        ),
        spec_version=SPEC_VERSION,
        system=system,
        signer=signer,
        pack=PackRef(name=pack.name, fingerprint=fingerprint(pack.manifest()), split=split),
        trials_per_task=trials,
        seeds=list(range(trials)) if seeds is None else list(seeds),
        run=RunInfo(
            n_dropped=len(dropped),
            dropped=dropped,
            n_attempts=run.n_attempts,
            attempts=attempts,
            started_at=started_at,
            finished_at=finished_at,
        ),
        environment=EnvironmentInfo(
            python=platform.python_version(),
            platform=platform.platform(),
            dependencies=dependency_versions(),
        ),
        results=summarize(episode_frame(run.rows), arm=run.arm),
        instances=instances,
        harness=harness,
        model=model,
    )


def model_from_rows(rows: Iterable[EpisodeRecord]) -> ModelInfo | None:
    """Return the model every model call of ``rows`` names, when they name one and name it
    ``PROVIDER/ID``; None otherwise (no calls, several models, no provider said)."""
    from effectbench.bundle import model_of

    names = {call.model for row in rows for call in row.model_calls}
    if len(names) != 1:
        return None
    try:
        return model_of(names.pop())
    except ValueError:
        return None


def scripted(baseline: str) -> tuple[HarnessInfo, ModelInfo]:
    """Return the harness and model of a shipped baseline: this package's harness running the
    baseline's script, which calls no model."""
    ours = dependency_versions().get("effectbench", "")
    return (
        HarnessInfo(name=f"baseline:{baseline}", version=ours),
        ModelInfo(provider=SCRIPTED_PROVIDER, id=baseline),
    )


def write_submission(
    folder: Path,
    submission: Submission,
    rows: Iterable[EpisodeRecord | Mapping[str, Any]],
    readme: str | None = None,
) -> Path:
    """Write the bundle into ``folder`` (see :func:`effectbench.bundle.write_bundle`).

    An operating-system error becomes a :class:`DataError` naming the file.
    """
    try:
        return write_bundle(folder, submission, rows, readme=readme)
    except OSError as exc:
        raise _write_error(exc, folder) from None


@dataclass(frozen=True)
class ReferenceSpec:
    """One of the maintainers' reference bundles: a shipped baseline on a pack."""

    folder_slug: str
    """The slug of its folder under ``submissions/`` (``<date>_<slug>``)."""
    pack: str
    baseline: str
    trials: int = 10
    split: Split = Split.DEV
    substrate: str | None = None
    """The substrates it runs (a ``--substrate`` value; None: the pack's default)."""
    seed: str | None = None
    """The instance seed of a generated pack it draws its tasks from (None: the public dev
    seed)."""


def reference_bundle(spec: ReferenceSpec, folder: Path) -> Path:
    """Run ``spec``'s baseline and write its unsigned reference bundle into ``folder``.

    The system is exactly the baseline (its name, its reference description, no
    URL, no README), the identity a bundle ranked by reproduction alone must have.
    """
    pack = get_pack(spec.pack)
    instances = None
    if spec.seed is not None:
        if not isinstance(pack, DrawsInstances):
            raise UsageError(f"reference {spec.folder_slug}: pack {spec.pack} draws no instances")
        pack = pack.instantiate(spec.seed)
        instances = InstanceDecl(seed=spec.seed)
    tasks = tasks_on(pack, choose(pack, spec.substrate), spec.split.value)
    started = now()
    run = evaluate(get_baseline(spec.baseline, pack), pack, trials=spec.trials, tasks=tasks)
    system = SystemInfo(
        name=spec.baseline,
        description=reference_description(spec.baseline),
        baseline=spec.baseline,
    )
    harness, model = scripted(spec.baseline)
    submission = make_submission(
        run,
        pack,
        system,
        trials=spec.trials,
        split=spec.split,
        started_at=started,
        finished_at=now(),
        instances=instances,
        harness=harness,
        model=model,
    )
    return write_submission(folder, submission, run.rows)


@dataclass(frozen=True)
class Imported:
    """What :func:`import_document` wrote."""

    folder: Path
    """The new bundle folder."""
    n_rows: int
    """Rows carried over unchanged."""


def _read_document(path: Path) -> Any:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror}", file=str(path)) from None
    try:
        return load_document(data)
    except StrictJSONError as exc:
        raise DataError(exc.message, file=str(path)) from None


def import_document(document: Path, out: Path) -> Imported:
    """Convert an upstream single-document submission into a bundle below ``out``.

    The bundle folder is ``out/<date of its first episode>_<slug of system.name>``;
    rows and the claimed results are carried over unchanged, so the bundle
    verifies exactly when the document does.
    """
    doc = _read_document(document)
    try:
        submission, rows = upstream_submission(doc)
    except DataError as exc:
        raise DataError(exc.message, file=str(document), field=exc.field) from None
    for i, row in enumerate(rows):
        size = len(orjson.dumps(row)) if isinstance(row, dict) else 0
        if size > MAX_LINE_BYTES:
            raise DataError(
                f"the row is {size} bytes as a line of the bundle's episodes file, over the "
                f"{MAX_LINE_BYTES} the verifier reads; the bundle would be refused",
                file=str(document),
                field=f"episodes[{i}]",
            )
    try:
        folder = bundle_folder(
            out, submission.system.name, submission.run.started_at or None, other="--out folder"
        )
    except DataError as exc:
        raise DataError(
            f"the first episode's started_at: {exc.message}",
            file=str(document),
            field="episodes[].started_at",
        ) from None
    write_submission(folder, submission, rows)
    return Imported(folder=folder, n_rows=len(rows))
