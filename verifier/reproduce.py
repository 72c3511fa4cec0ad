"""The ``reproduce`` check: re-run a shipped baseline and compare row for row.

Only a shipped baseline on a pack that declares ``deterministic = True`` can be
re-executed by the verifier. Rows are matched by (task, trial) and compared on
every field except the timings (``latency_s``, ``started_at``, ``finished_at``
and a model call's ``latency_s``), which no re-run reproduces.

The re-run covers the split's tasks on the substrates the bundle's rows name.
Which rows are re-run (:func:`rerun_pairs`) is never the submitter's choice. Every
row is re-run, but for one kind of bundle: a maintainers' listed reference bundle
(:mod:`verifier.references`, listed by content hash, outside ``submissions/``), whose
rows on a screen substrate (web, desktop, remote display) of a pack with real front
ends, beyond :attr:`~verifier.limits.Limits.reproduce_screen_rows` of them, are
re-run as a sample of that size chosen from its listed content hash. A sample drawn
from anything a submitter writes (its rows, their timings) can be ground: a submitter
who varies a free field until the sample misses every forged row gets "reproduced"
for rows nobody re-ran. A listed reference's bytes are fixed by the maintainers before
it is listed, so its sample is fixed too; any other bundle that claims a shipped
baseline pays for a re-run of every row (once: the re-run's signed record,
:mod:`verifier.records`, serves every later build). The report says how many rows
were re-run (``reproduced_rows`` of ``n_rows``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from effectbench.baselines import baseline_names, get_baseline
from effectbench.bundle import RECEIPTS_FILE, SUBMISSION_FILE, SubmissionHeader
from effectbench.errors import EffectBenchError
from effectbench.findings import CheckId, Family
from effectbench.frontends import require_substrate
from effectbench.hashing import canonical_hash
from effectbench.receipts.collect import evidence_of
from effectbench.run.runner import evaluate
from effectbench.schema import EpisodeRecord
from effectbench.seam import BenchmarkProvider, ChecksFrontEnds, is_deterministic
from verifier.limits import Limits
from verifier.receipts import change_set_digest
from verifier.report import FindingSink
from verifier.rows import strip_fields


def first_difference(got: Any, want: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """Return ``(field, got, want)`` of the first difference, or None when equal."""
    if isinstance(want, dict) and isinstance(got, dict):
        return _dict_difference(got, want, path)
    if isinstance(want, list) and isinstance(got, list):
        return _list_difference(got, want, path)
    if got != want or type(got) is not type(want):
        return (path.rstrip("."), got, want)
    return None


def _dict_difference(
    got: dict[Any, Any], want: dict[Any, Any], path: str
) -> tuple[str, Any, Any] | None:
    for key in list(want) + [k for k in got if k not in want]:
        if key not in got or key not in want:
            return (f"{path}{key}", got.get(key, "<absent>"), want.get(key, "<absent>"))
        diff = first_difference(got[key], want[key], f"{path}{key}.")
        if diff:
            return diff
    return None


def _list_difference(got: list[Any], want: list[Any], path: str) -> tuple[str, Any, Any] | None:
    if len(want) != len(got):
        return (path.rstrip("."), got, want)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        diff = first_difference(g, w, f"{path.rstrip('.')}[{i}].")
        if diff:
            return diff
    return None


def applicable(header: SubmissionHeader, pack: BenchmarkProvider | None) -> str | None:
    """Return why reproduction does not apply, or None when it does."""
    if header.system.baseline is None:
        return "not a shipped baseline: nothing to re-run"
    if pack is None:
        return "unknown pack"
    if not is_deterministic(pack):
        return f"pack {pack.name!r} is not deterministic: baselines cannot be re-run exactly"
    return None


@dataclass(frozen=True)
class Rerun:
    """How a re-run ended."""

    reproduced: bool
    """Every re-run row matched (and the re-run dropped what the bundle declares)."""
    rows: int
    """The bundle's rows the re-run compared (all of them, or a listed reference's sample)."""


def rerun_pairs(
    tasks: Sequence[Any],
    trials: int,
    pack: BenchmarkProvider,
    limits: Limits,
    sample_from: str | None,
) -> set[tuple[str, int]] | None:
    """Return the (task, trial) pairs to re-run, or None for every one of them.

    ``sample_from`` is a listed reference bundle's content hash (None for any other
    bundle: every row is re-run). Only a listed reference on a pack whose screen
    substrates run real front ends (:class:`ChecksFrontEnds`) with more screen rows
    than :attr:`Limits.reproduce_screen_rows` is sampled; MockMed's in-process "web"
    tasks cost no browser and are all re-run. Nothing a submitter writes (rows,
    timings, free text) enters the choice.
    """
    if sample_from is None or not isinstance(pack, ChecksFrontEnds):
        return None
    screen = {t.task_id for t in tasks if t.substrate.is_screen}
    pairs = [(t, trial) for t in sorted(screen) for trial in range(trials)]
    if len(pairs) <= limits.reproduce_screen_rows:
        return None
    ranked = sorted(pairs, key=lambda p: canonical_hash([sample_from, p[0], p[1]]))
    chosen = set(ranked[: limits.reproduce_screen_rows])
    others = {
        (t.task_id, trial) for t in tasks if t.task_id not in screen for trial in range(trials)
    }
    return chosen | others


def missing_component(
    tasks: Sequence[Any], pack: BenchmarkProvider, only: set[tuple[str, int]] | None
) -> str | None:
    """Return the one line naming what a re-run of ``tasks`` (``only`` those pairs) lacks
    here (a Python extra, Chromium, an X server...), or None when it can run.

    Only a pack with real front ends (:class:`ChecksFrontEnds`) needs anything for its
    screen substrates; MockMed's in-process "web" tasks need nothing.
    """
    if not isinstance(pack, ChecksFrontEnds):
        return None
    wanted = {t.task_id for t in tasks} if only is None else {p[0] for p in only}
    substrates = {t.substrate for t in tasks if t.task_id in wanted and t.substrate.is_screen}
    for substrate in sorted(substrates, key=lambda s: s.value):
        try:
            require_substrate(substrate)
        except EffectBenchError as exc:
            return exc.diagnostics()
    return None


def _compare_change_sets(
    rows: list[EpisodeRecord],
    submitted: Mapping[tuple[str, int], str],
    name: str,
    sink: FindingSink,
) -> None:
    """Compare each re-run row's change set with its submitted receipt's (by digest)."""
    for row in rows:
        evidence = evidence_of(row)
        want = submitted.get((row.task_id, row.trial))
        if evidence is None or want is None:
            continue
        got = change_set_digest(evidence.receipt)
        if got != want:
            changes = evidence.receipt.changes
            n = 0 if changes is None else len(changes.rows)
            sink.emit(
                CheckId.REPRODUCE_CHANGE_SET,
                f"re-running {name!r} on task {row.task_id!r} trial {row.trial} changes the "
                f"record otherwise ({n} changed rows) than the submitted receipt says",
                RECEIPTS_FILE,
                None,
                "changes",
            )


@dataclass
class FrameMatch:
    """How the re-run's key frames compare with the submitted ones, episode by episode.

    Frames are compared by name (each is named by its hash) only where both the receipt
    and the re-run have frames: a screenshot depends on the machine's fonts and browser
    build as well as on the episode, so a difference is reported, never a finding.
    """

    same: int = 0
    differ: int = 0

    def note(self) -> str:
        """One sentence for the ``reproduce`` step (empty when no frame was compared)."""
        n = self.same + self.differ
        if not n:
            return ""
        return (
            f"; key frames: {self.same} of {n} re-run episodes showed the submitted frames "
            "exactly (a screen's pixels also depend on the machine's fonts and browser)"
        )


def _compare_frames(
    rows: list[EpisodeRecord],
    submitted: Mapping[tuple[str, int], tuple[str, ...]],
    match: FrameMatch,
) -> None:
    for row in rows:
        evidence = evidence_of(row)
        want = submitted.get((row.task_id, row.trial))
        if evidence is None or not want or not evidence.receipt.frames:
            continue
        got = tuple(f.name for f in evidence.receipt.frames)
        if got == want:
            match.same += 1
        else:
            match.differ += 1


def reproduce(
    header: SubmissionHeader,
    pack: BenchmarkProvider,
    rows: Iterable[tuple[int, dict[str, Any]]],
    n_rows: int,
    sink: FindingSink,
    file: str,
    limits: Limits,
    change_sets: Mapping[tuple[str, int], str] | None = None,
    frames: tuple[Mapping[tuple[str, int], tuple[str, ...]], FrameMatch] | None = None,
    sample_from: str | None = None,
) -> Rerun:
    """Re-run the declared baseline and compare its rows (:func:`rerun_pairs`: every one,
    unless ``sample_from`` names a listed reference's content hash).

    With ``change_sets`` (each (task, trial)'s receipt's change-set digest) the re-run's
    change sets are compared too; with ``frames`` (each receipt's frame names, and where to
    count) its key frames are (:class:`FrameMatch`).
    """
    before = sink.counts[Family.REPRODUCE]
    name = header.system.baseline
    assert name is not None
    if name not in baseline_names(pack):
        sink.emit(
            CheckId.REPRODUCE_UNKNOWN_BASELINE,
            f"system.baseline {name!r} is not a shipped baseline of pack {pack.name!r} "
            f"(known: {', '.join(baseline_names(pack))}); set it to null for your own system",
            SUBMISSION_FILE,
            None,
            "system.baseline",
        )
        return Rerun(False, 0)
    rows = list(rows)
    tasks = _tasks_of(header, pack, rows)
    sample = rerun_pairs(tasks, header.trials_per_task, pack, limits, sample_from)
    if _cannot_rerun(header, pack, tasks, sample, n_rows, sink, limits):
        return Rerun(False, 0)
    run = evaluate(
        get_baseline(name, pack),
        pack,
        trials=header.trials_per_task,
        seeds=header.seeds,
        tasks=tasks,
        only=sample,
    )
    if sample is not None:
        rows = _in_sample(rows, sample)
    if sample is None and len(run.dropped) != header.run.n_dropped:
        sink.emit(
            CheckId.REPRODUCE_DROPPED,
            f"the re-run drops {len(run.dropped)} trials, the submission declares "
            f"{header.run.n_dropped}",
            SUBMISSION_FILE,
            None,
            "run.n_dropped",
        )
    expected = {(r.task_id, r.trial): strip_fields(r.to_row()) for r in run.rows}
    if change_sets is not None:
        _compare_change_sets(run.rows, change_sets, name, sink)
    if frames is not None:
        _compare_frames(run.rows, *frames)
    _compare_rows(rows, expected, name, sink, file)
    return Rerun(sink.counts[Family.REPRODUCE] == before, len(rows))


def _tasks_of(
    header: SubmissionHeader, pack: BenchmarkProvider, rows: list[tuple[int, dict[str, Any]]]
) -> list[Any]:
    """The pack's tasks of the bundle's split on the substrates its rows name."""
    split = header.pack.split.value
    named = {str(row.get("substrate")) for _, row in rows}
    return [t for t in pack.tasks() if t.split.value == split and t.substrate.value in named]


def _in_sample(
    rows: list[tuple[int, dict[str, Any]]], sample: set[tuple[str, int]]
) -> list[tuple[int, dict[str, Any]]]:
    """The rows of the (task, trial) pairs of ``sample``."""
    return [(line, row) for line, row in rows if (row.get("task_id"), row.get("trial")) in sample]


def _cannot_rerun(
    header: SubmissionHeader,
    pack: BenchmarkProvider,
    tasks: list[Any],
    sample: set[tuple[str, int]] | None,
    n_rows: int,
    sink: FindingSink,
    limits: Limits,
) -> bool:
    """Say (with its finding) whether the re-run is over the limit of episodes, or needs a
    component this machine does not have."""
    name = header.system.baseline
    planned = len(sample) if sample is not None else len(tasks) * header.trials_per_task
    if max(planned, n_rows if sample is None else 0) > limits.max_reproduce_rows:
        sink.emit(
            CheckId.REPRODUCE_TOO_LARGE,
            f"re-running {name!r} would run {planned} episodes ({len(tasks)} tasks x "
            f"{header.trials_per_task} trials) for {n_rows} rows, over the limit of "
            f"{limits.max_reproduce_rows} (raise it with --max-reproduce-rows, or sign the "
            "bundle instead)",
            SUBMISSION_FILE,
            None,
            "trials_per_task",
        )
        return True
    missing = missing_component(tasks, pack, sample)
    if missing is not None:
        sink.emit(
            CheckId.REPRODUCE_UNAVAILABLE,
            f"this bundle has no reproduction record, and re-running {name!r} here is not "
            f"possible: {missing}; run make reproduce (it installs the screens, re-runs the "
            "bundle and records the result) or install what is named",
            SUBMISSION_FILE,
            None,
            "system.baseline",
        )
        return True
    return False


def _compare_rows(
    rows: list[tuple[int, dict[str, Any]]],
    expected: dict[tuple[str, int], dict[str, Any]],
    name: str,
    sink: FindingSink,
    file: str,
) -> None:
    """Each row against the re-run's (``expected``, emptied as it is read): an extra row, a
    differing one, and each re-run row the bundle lacks."""
    for line, row in rows:
        key = (row.get("task_id"), row.get("trial"))
        want = expected.pop(key, None)  # type: ignore[arg-type]
        if want is None:
            sink.emit(
                CheckId.REPRODUCE_EXTRA_ROW,
                f"re-running {name!r} gives no row for task {key[0]!r} trial {key[1]!r}",
                file,
                line,
            )
            continue
        diff = first_difference(strip_fields(row), want)
        if diff:
            field, got, exp = diff
            sink.emit(
                CheckId.REPRODUCE_MISMATCH,
                f"re-running {name!r} gives {exp!r:.80}, the row says {got!r:.80}",
                file,
                line,
                field,
            )
    for task_id, trial in sorted(expected):
        sink.emit(
            CheckId.REPRODUCE_MISSING_ROW,
            f"re-running {name!r} gives a row for task {task_id!r} trial {trial} that the "
            "bundle lacks",
            file,
        )
