"""The ``pack`` family: the declared pack, and each row's agreement with its task and trials.

:func:`check_pack` runs once per submission (the pack is known, its fingerprint,
seeds, trials and split); :func:`facts_findings` compares a row with its task's
facts (run once per distinct combination by :mod:`verifier.rows`);
:func:`check_drops` compares the (task, trial) pairs without a row
with ``run.dropped`` and applies the drop caps.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from effectbench.attempts import attempt_problems
from effectbench.bundle import SubmissionHeader
from effectbench.effects import contract_hash
from effectbench.errors import UsageError
from effectbench.findings import CheckId
from effectbench.kit.generate import GenerationError
from effectbench.manifest import fingerprint
from effectbench.packs import get_pack
from effectbench.reachability import ANY_STATE, reachable
from effectbench.schema import TrueState
from effectbench.seam import (
    BenchmarkProvider,
    ClustersTasks,
    ExplainsAbsentSplit,
    is_deterministic,
)
from verifier.accepted import acceptance_problem
from verifier.instances import InstanceFacts, instance_pack
from verifier.report import FindingSink
from verifier.rowschema import Problem

MIN_RANKED_TRIALS = 3
"""Trials per task a ranked entry needs (fewer cannot show pass^k or stability)."""


@dataclass(frozen=True)
class TaskFacts:
    """What the pack says about one task, as a row must repeat it."""

    index: int
    """The task's position in the pack split."""
    category: str
    substrate: str
    correct_action_available: bool
    expected_effect_hash: str
    """``effectbench.effects.contract_hash`` of the task's primary effect."""
    reachable: frozenset[str] = frozenset(s.value for s in ANY_STATE)
    """The true states an honest episode can read (the pack's published table)."""
    count_multiple: int = 1
    """A ``record_written`` reading's ``observed_count`` is a multiple of this."""
    cluster: str = ""
    """The group its outcomes correlate within (:class:`~effectbench.seam.ClustersTasks`);
    empty: the task itself, SPEC 1.3's unit."""


def pack_tasks(pack: BenchmarkProvider, split: str) -> dict[str, TaskFacts]:
    """Return the facts of every task of ``pack`` in ``split``, by task id."""
    out: dict[str, TaskFacts] = {}
    for task in pack.tasks():
        if task.split.value != split:
            continue
        can = reachable(pack, task)
        out[task.task_id] = TaskFacts(
            index=len(out),
            category=task.category.value,
            substrate=task.substrate.value,
            correct_action_available=task.correct_action_available,
            expected_effect_hash=contract_hash(task.expected_effect[0]),
            reachable=frozenset(s.value for s in can.states),
            count_multiple=can.count_multiple,
            cluster=pack.cluster_of(task) if isinstance(pack, ClustersTasks) else "",
        )
    return out


K = TypeVar("K")
V = TypeVar("V")


class Kept(Generic[K, V]):
    """The values made for the last ``bound`` keys asked for (the least recently used goes
    first): what a verifying process keeps of a pack between bundles."""

    def __init__(self, bound: int) -> None:
        self.bound = bound
        self._values: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K, make: Callable[[], V]) -> V:
        """Return the value kept for ``key``, made by ``make`` if there is none."""
        if key in self._values:
            self._values.move_to_end(key)
        else:
            self._values[key] = make()
            while len(self._values) > self.bound:
                self._values.popitem(last=False)
        return self._values[key]


FACTS_KEPT = 8
"""How many (pack, split) task facts a process keeps between bundles (:func:`kept_pack_tasks`)."""
_kept_facts: Kept[tuple[type, str, str], dict[str, TaskFacts]] = Kept(FACTS_KEPT)


def kept_pack_tasks(
    pack: BenchmarkProvider, pack_fingerprint: str, split: str
) -> dict[str, TaskFacts]:
    """Return :func:`pack_tasks`, kept for the next bundle of the same provider class,
    fingerprint (the manifest's hash: the tasks and their wiring) and split, for the last
    :data:`FACTS_KEPT` of them: a board's bundles mostly share a pack."""
    key = (type(pack), pack_fingerprint, split)
    return dict(_kept_facts.get(key, lambda: pack_tasks(pack, split)))


def clusters_of(tasks: Mapping[str, TaskFacts]) -> dict[str, str] | None:
    """Return each task's statistical cluster by task id, or None when every task is its own
    (:func:`effectbench.metrics.tasks.task_table` then counts tasks)."""
    if not any(f.cluster for f in tasks.values()):
        return None
    return {tid: f.cluster or tid for tid, f in tasks.items()}


def check_pack(
    header: SubmissionHeader, sink: FindingSink, file: str, fields: Mapping[str, str]
) -> tuple[BenchmarkProvider | None, dict[str, TaskFacts] | None, InstanceFacts | None, str]:
    """Check the pack declaration; return the pack (drawn from the bundle's instance seed, for
    a generated pack: :mod:`verifier.instances`), its task facts, the instance's facts and the
    pack's fingerprint ("" where there is no pack).

    ``fields`` maps a header field (``pack.name``...) to its name in ``file``.
    """
    ref = header.pack
    try:
        public = get_pack(ref.name)
    except UsageError as exc:
        sink.emit(CheckId.PACK_UNKNOWN, exc.diagnostics(), file, None, fields["pack.name"])
        return None, None, None, ""
    except GenerationError as exc:
        sink.emit(
            CheckId.PACK_INSTANCE_GENERATOR,
            f"pack {ref.name!r} cannot draw its tasks: {exc}",
            file,
            None,
            fields["pack.name"],
        )
        return None, None, None, ""
    pack, instance = instance_pack(public, header, sink, file)
    if pack is None:
        return None, None, None, ""
    refused = acceptance_problem(ref.name)
    if refused is not None:
        sink.emit(CheckId.PACK_NOT_ACCEPTED, refused, file, None, fields["pack.name"])
    actual = fingerprint(pack.manifest())
    if ref.fingerprint != actual:
        sink.emit(
            CheckId.PACK_FINGERPRINT,
            f"pack {ref.name!r} has fingerprint {actual} here, the submission declares "
            f"{ref.fingerprint}; run against the released pack (effectbench manifest "
            "--fingerprint)",
            file,
            None,
            fields["pack.fingerprint"],
        )
    _check_trials(header, sink, file, fields)
    tasks = kept_pack_tasks(pack, actual, ref.split.value)
    if not tasks:
        why = pack.split_absent(ref.split.value) if isinstance(pack, ExplainsAbsentSplit) else None
        sink.emit(
            CheckId.PACK_SPLIT,
            f"pack {ref.name!r} has no task in split {ref.split.value!r}"
            + (f": {why}" if why else ""),
            file,
            None,
            "pack.split",
        )
    return pack, tasks, instance, actual


def _check_trials(
    header: SubmissionHeader, sink: FindingSink, file: str, fields: Mapping[str, str]
) -> None:
    trials = header.trials_per_task
    if len(header.seeds) != trials:
        sink.emit(
            CheckId.PACK_SEEDS,
            f"{trials} trials per task need {trials} seeds, the submission lists "
            f"{len(header.seeds)}",
            file,
            None,
            fields["seeds"],
        )
    elif len(set(header.seeds)) != len(header.seeds):
        sink.emit(
            CheckId.PACK_SEEDS, "seeds repeat; each trial needs its own seed", file, None, "seeds"
        )
    if trials < MIN_RANKED_TRIALS:
        sink.emit(
            CheckId.PACK_MIN_TRIALS,
            f"{trials} trials per task; a leaderboard entry needs at least {MIN_RANKED_TRIALS} "
            f"(re-run with --trials {MIN_RANKED_TRIALS} or more; under inspect_ai, --epochs "
            f"{MIN_RANKED_TRIALS} or more; over MCP, trials 0 to {MIN_RANKED_TRIALS - 1} of every "
            "task)",
            file,
            None,
            fields["trials_per_task"],
        )


def facts_findings(row: Mapping[str, Any], facts: TaskFacts) -> list[Problem]:
    """Return a finding for each fact of the task that the row does not repeat."""
    pairs = (
        ("category", CheckId.PACK_CATEGORY, facts.category),
        ("substrate", CheckId.PACK_SUBSTRATE, facts.substrate),
        (
            "correct_action_available",
            CheckId.PACK_CORRECT_ACTION_AVAILABLE,
            facts.correct_action_available,
        ),
        ("expected_effect_hash", CheckId.PACK_EFFECT_HASH, facts.expected_effect_hash),
    )
    found: list[Problem] = [
        (
            check,
            field,
            f"task {row['task_id']!r} has {field} {want!r} in the pack, "
            f"the row says {row[field]!r}",
        )
        for field, check, want in pairs
        if row[field] != want
    ]
    state = _reading_state(row["oracle"])
    if state is not None and state not in facts.reachable:
        can = ", ".join(s for s in facts.reachable) or "none"
        found.append(
            (
                CheckId.PACK_UNREACHABLE_STATE,
                "oracle",
                f"the oracle reads {state}, which no honest episode of task "
                f"{row['task_id']!r} can reach (it can read: {can}; see the pack's "
                "reachability table)",
            )
        )
    return found


def _reading_state(oracle: Mapping[str, Any]) -> str | None:
    """Return the one true state a reading names (None for none or several: ``rescore``'s)."""
    flags = (
        (TrueState.CORRECT, oracle["effect_correct"]),
        (TrueState.WRONG_PERSISTED, oracle["effect_wrong_persisted"]),
        (TrueState.ABSENT, oracle["effect_absent"]),
    )
    named = [state.value for state, on in flags if on is True]
    return named[0] if len(named) == 1 else None


def count_problem(row: Mapping[str, Any], facts: TaskFacts) -> Problem | None:
    """Return the finding of a ``record_written`` count its task can never read, or None."""
    oracle = row["oracle"]
    count = oracle["observed_count"]
    if facts.count_multiple == 1 or oracle["kind"] != "record_written" or count is None:
        return None
    if count % facts.count_multiple == 0:
        return None
    return (
        CheckId.PACK_UNREACHABLE_STATE,
        "oracle.observed_count",
        f"the oracle counts {count} records, but every save of task {row['task_id']!r} writes "
        f"{facts.count_multiple}: an honest count is a multiple of {facts.count_multiple}",
    )


MAX_DROPS_PER_TASK = 1
"""Dropped trials a task may have (on a pack that is not deterministic)."""
MAX_DROPPED_SHARE = 0.05
"""Share of all (task, trial) pairs that may be dropped (on a pack that is not deterministic)."""


def _pairs(pairs: Sequence[tuple[str, int]]) -> str:
    shown = ", ".join(f"{t} trial {i}" for t, i in pairs[:5])
    return shown + (", ..." if len(pairs) > 5 else "")


def check_drops(
    missing: Sequence[tuple[str, int]],
    header: SubmissionHeader,
    tasks: Mapping[str, TaskFacts],
    pack: BenchmarkProvider | None,
    sink: FindingSink,
    file: str,
    rows_file: str,
) -> None:
    """Compare the pairs without a row with ``run.dropped``, then apply the drop caps.

    Every (task, trial) of the split without a row must be listed in ``run.dropped``
    (``pack.missing_trials``) and nothing else may be (``pack.dropped_list``);
    every task needs a row (``pack.task_uncovered``); and drops are capped
    (``pack.drop_cap``): none on a deterministic pack, else at most one trial per
    task and 5% of all pairs, so a run cannot delete the trials that hurt it.
    """
    run = header.run
    trials = header.trials_per_task
    if run.n_dropped != len(run.dropped):
        sink.emit(
            CheckId.PACK_DROPPED_LIST,
            f"run.n_dropped is {run.n_dropped} but run.dropped lists {len(run.dropped)} "
            "trials; list every dropped (task, trial) with its reason",
            file,
            None,
            "run.dropped",
        )
    listed: dict[tuple[str, int], int] = {}
    for i, d in enumerate(run.dropped):
        pair = (d.task_id, d.trial)
        if pair in listed:
            problem = f"is listed twice (first as run.dropped[{listed[pair]}])"
        elif d.task_id not in tasks or d.trial >= trials:
            problem = "is not a (task, trial) of the declared split and trials"
        else:
            listed[pair] = i
            continue
        sink.emit(
            CheckId.PACK_DROPPED_LIST,
            f"{d.task_id} trial {d.trial} {problem}",
            file,
            None,
            f"run.dropped[{i}]",
        )
    absent = set(missing)
    unlisted = [p for p in missing if p not in listed]
    if unlisted:
        sink.emit(
            CheckId.PACK_MISSING_TRIALS,
            f"{len(unlisted)} (task, trial) pairs have no row and are not listed in "
            f"run.dropped ({_pairs(unlisted)}); every task needs trials_per_task rows, "
            "less the drops listed with their reason",
            rows_file,
        )
    present = sorted(p for p in listed if p not in absent)
    if present:
        sink.emit(
            CheckId.PACK_DROPPED_LIST,
            f"run.dropped lists {len(present)} pairs that have a row ({_pairs(present)}); "
            "list only the trials without a row",
            file,
            None,
            "run.dropped",
        )
    per_task: dict[str, int] = {}
    for task_id, _ in missing:
        per_task[task_id] = per_task.get(task_id, 0) + 1
    uncovered = [t for t, n in per_task.items() if n >= trials]
    if uncovered:
        shown = ", ".join(uncovered[:5]) + (", ..." if len(uncovered) > 5 else "")
        sink.emit(
            CheckId.PACK_TASK_UNCOVERED,
            f"{len(uncovered)} tasks of split {header.pack.split.value!r} have no row "
            f"({shown}); a ranked entry covers every task of its split",
            rows_file,
        )
    _check_drop_caps(missing, per_task, header, len(tasks), pack, sink, file)
    _check_attempts(missing, len(tasks) * trials, header, sink, file)


def _check_attempts(
    missing: Sequence[tuple[str, int]],
    n_cells: int,
    header: SubmissionHeader,
    sink: FindingSink,
    file: str,
) -> None:
    """``pack.attempts``: every earlier attempt kept and numbered, none replacing a result.

    A cell without a row is a drop; a cell with a row is the attempt after its earlier
    ones, so only the cells named in ``run.attempts`` or dropped need looking at.
    """
    run = header.run
    drops = {(d.task_id, d.trial): d.attempt for d in run.dropped}
    absent = set(missing)
    outcomes: dict[tuple[str, int], int | None] = {
        (a.task_id, a.trial): None for a in run.attempts if (a.task_id, a.trial) not in absent
    }
    outcomes.update({pair: drops[pair] for pair in missing if pair in drops})
    # a pair with neither a row nor a drop was never attempted (pack.missing_trials says so):
    # it counts as no attempt, so a short run is never mistaken for a corrupted one
    attempted = n_cells - sum(1 for pair in missing if pair not in drops)
    declared = run.n_attempts if run.n_attempts is not None else attempted
    for problem in attempt_problems(run.attempts, outcomes, declared, attempted):
        field = f"run.attempts[{problem.index}]" if problem.index is not None else "run"
        sink.emit(CheckId.PACK_ATTEMPTS, problem.message, file, None, field)


def _check_drop_caps(
    missing: Sequence[tuple[str, int]],
    per_task: Mapping[str, int],
    header: SubmissionHeader,
    n_tasks: int,
    pack: BenchmarkProvider | None,
    sink: FindingSink,
    file: str,
) -> None:
    if not missing:
        return
    listed = f"{len(header.run.dropped)} listed in run.dropped"
    if is_deterministic(pack):
        sink.emit(
            CheckId.PACK_DROP_CAP,
            f"{len(missing)} trials have no row ({listed}), but pack {header.pack.name!r} is "
            "deterministic: an honest run scores every trial; re-run those trials",
            file,
            None,
            "run.dropped",
        )
        return
    over = sorted(t for t, n in per_task.items() if n > MAX_DROPS_PER_TASK)
    if over:
        sink.emit(
            CheckId.PACK_DROP_CAP,
            f"{len(over)} tasks drop more than {MAX_DROPS_PER_TASK} trial "
            f"({', '.join(over[:5])}{', ...' if len(over) > 5 else ''}); re-run them",
            file,
            None,
            "run.dropped",
        )
    allowed = int(MAX_DROPPED_SHARE * header.trials_per_task * n_tasks)
    if len(missing) > allowed:
        sink.emit(
            CheckId.PACK_DROP_CAP,
            f"{len(missing)} trials have no row ({listed}), over {MAX_DROPPED_SHARE:.0%} of "
            f"the run (at most {allowed}); re-run them",
            file,
            None,
            "run.dropped",
        )
