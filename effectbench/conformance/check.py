"""The conformance audit: does a pack's oracle keep the SPEC 5.2.1 attestations it claims?

:func:`check_pack` runs scripted episodes of every task on the chosen substrates, dev
and test split alike (a sequestered task's findings name the task and the rule, never
its details), each on a fresh state provisioned by the pack:

* **do nothing** (the ``report_only`` adversary): the agent only looks. On a task
  without a correct action (or attesting refusal controls) the record must be
  unchanged: two oracle snapshots compare equal;
* **the scripted attempt** (:class:`~effectbench.seam.ScriptedPack`, what the shipped
  baselines click): a blind write, never read as correct on a task without a correct
  action. After it, what the agent was given (env, parameters, task) is walked and
  compared with the oracle (:mod:`.isolation`);
* **a cross-trial write**: the scripted attempt with another trial's parameters, in
  this trial's episode; the oracle must not confirm it;
* **the red team**: each adversary move the pack offers
  (:class:`~effectbench.seam.OffersRedTeam`) and the generic ones, each refused by the
  oracle (:func:`.redteam.probe_failure`).

Every reading of a run through the env's own actions (the first three) must lie in
the pack's reachable-state table. Parameters are compared over ``trials`` trials.

Then the doability audit (:func:`effectbench.kit.audit.audit_doability`) on the substrates
``doability`` names: every task's required values against what the front end's controls can
enter, and an informed agent on every task with a correct action (``pack.undoable``).

Then the blindness audit (:mod:`.blindness`): what a system observes before its first action on
every dev task (and fresh instances of a pack that draws them) must not predict the category,
trap against control or an expected halt (``pack.blindness``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import effectbench.conformance.blindness as _blindness
import effectbench.kit.audit as _kit  # the module alone: the kit's audit imports this package
from effectbench.classify import InconsistentReading, true_state
from effectbench.conformance.ids import AuditId
from effectbench.conformance.isolation import ReadTrace, isolation_problems, reach, tracing
from effectbench.conformance.redteam import GENERIC_MOVES, Act, probe_failure
from effectbench.effects import contract_hash
from effectbench.errors import EffectBenchError
from effectbench.hashing import canonical_hash
from effectbench.judge import read_verdict
from effectbench.reachability import reachable
from effectbench.run.view import agent_view
from effectbench.schema import (
    Category,
    OracleVerdict,
    Split,
    Substrate,
    TaskSpec,
    TrueState,
    Verdict,
)
from effectbench.seam import (
    RED_TEAM_MOVES,
    TRUE_EFFECT,
    BenchmarkProvider,
    ChecksFrontEnds,
    NotApplicable,
    OffersRedTeam,
    ScriptedPack,
)
from effectbench.variants import choose, tasks_on

__all__ = ["TRIALS", "Finding", "Report", "check_pack"]

TRIALS = 10
"""Trials whose parameters must all differ (the SPEC's default trial count)."""
WITHHELD = "details withheld (a sequestered task)"


@dataclass(frozen=True)
class Finding:
    """One failed check: its id, the task (None: the pack as a whole) and what was seen."""

    id: AuditId
    task_id: str | None
    message: str

    def line(self) -> str:
        """Return the finding as one line: ``id  task  [attestation] message``."""
        return (
            f"{self.id.value}\t{self.task_id or '(pack)'}\t[{self.id.attestation}] {self.message}"
        )

    def to_json(self) -> dict[str, Any]:
        """Return the finding as a JSON object."""
        return {
            "id": self.id.value,
            "attestation": self.id.attestation,
            "task_id": self.task_id,
            "message": self.message,
        }


@dataclass
class Report:
    """What one audit of a pack found."""

    pack: str
    substrates: tuple[Substrate, ...]
    tasks: int = 0
    sequestered: int = 0
    episodes: int = 0
    seconds: float = 0.0
    findings: list[Finding] = field(default_factory=list)
    moves: dict[str, int] = field(default_factory=dict)
    """Adversary move -> tasks it ran on."""
    not_applicable: dict[str, dict[str, int]] = field(default_factory=dict)
    """Standard move -> the reason the pack gave -> tasks it gave it on."""
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    """Split -> category -> tasks (each task once, whatever the substrates checked)."""
    blindness: list[_blindness.TargetResult] = field(default_factory=list)
    """The blindness audit's result per target (one line each)."""
    blindness_episodes: int = 0
    """Episodes the blindness audit observed."""
    blindness_seconds: float = 0.0
    doability: list[_kit.Doability] = field(default_factory=list)
    """The doability audit's result per substrate it ran on (one line each)."""

    @property
    def passed(self) -> bool:
        """Whether the pack passes: no finding at all."""
        return not self.findings

    def summary(self, note: str = "") -> str:
        """Return the verdict in one line: tasks, substrates, episodes, seconds (and ``note``)."""
        where = ", ".join(s.value for s in self.substrates)
        verdict = "passes" if self.passed else f"fails: {len(self.findings)} finding(s)"
        return (
            f"pack {self.pack} {verdict} ({self.tasks} tasks on {where}, {self.sequestered} "
            f"sequestered; {self.episodes} episodes in {self.seconds:.2f} s"
            + (f"; {note}" if note else "")
            + ")"
        )

    def blindness_lines(self) -> list[str]:
        """Return one line per blindness target: its best AUROC and top features, or why
        it was not cross-validated."""
        return [r.line() for r in self.blindness]

    def doability_lines(self) -> list[str]:
        """Return one line per substrate the doability audit ran on."""
        return [d.line() for d in self.doability]

    def count_lines(self) -> list[str]:
        """Return one line per split: its tasks per category (C1-C7, then the controls)."""
        return count_lines(self.counts)

    def to_json(self) -> dict[str, Any]:
        """Return the report as a JSON object (sequestered details already withheld)."""
        return {
            "pack": self.pack,
            "passed": self.passed,
            "substrates": [s.value for s in self.substrates],
            "tasks": self.tasks,
            "sequestered_tasks": self.sequestered,
            "tasks_per_split_and_category": self.counts,
            "episodes": self.episodes,
            "seconds": round(self.seconds, 3),
            "findings": [f.to_json() for f in self.findings],
            "red_team": {"moves": self.moves, "not_applicable": self.not_applicable},
            "blindness": {
                "threshold": _blindness.THRESHOLD,
                "episodes": self.blindness_episodes,
                "seconds": round(self.blindness_seconds, 3),
                "targets": [r.to_json() for r in self.blindness],
            },
            "doability": [
                {
                    "substrate": d.substrate.value,
                    "informed_runs": d.informed,
                    "compared": d.compared,
                    "undoable": len(d.undoable),
                    "seconds": round(d.seconds, 3),
                }
                for d in self.doability
            ],
        }


@dataclass
class _Run:
    """One scripted episode's result."""

    verdict: OracleVerdict | None = None
    unchanged: bool | None = None
    """The record compared equal before and after (when asked)."""
    problem: str | None = None
    """Why the run could not be made or read."""
    isolation: list[tuple[AuditId, str]] = field(default_factory=list)
    move_failed: str | None = None
    """What the act raised (an adversary move that was not made)."""


class _ActFailed(Exception):
    pass


def _described(exc: BaseException) -> str:
    if isinstance(exc, EffectBenchError):
        return exc.diagnostics()
    return f"{type(exc).__name__}: {exc}"


Progress = Callable[[int, int, int], None]
"""Told after each task: tasks done, tasks in all, episodes run so far."""


class _Audit:
    def __init__(
        self,
        pack: BenchmarkProvider,
        tasks: Sequence[TaskSpec],
        trials: int,
        report: Report,
        progress: Progress | None = None,
    ) -> None:
        self.pack = pack
        self.tasks = tasks
        self.trials = trials
        self.report = report
        self.progress = progress
        self.positives = 0
        self.unoffered: dict[str, list[TaskSpec]] = {}

    # -- findings ----------------------------------------------------------------------

    def find(self, audit_id: AuditId, task: TaskSpec | None, message: str) -> None:
        secret = task is not None and task.split is Split.TEST
        finding = Finding(audit_id, task.task_id if task else None, WITHHELD if secret else message)
        if not any(f.id is audit_id and f.task_id == finding.task_id for f in self.report.findings):
            self.report.findings.append(finding)

    # -- one episode -------------------------------------------------------------------

    def episode(
        self,
        task: TaskSpec,
        params: Mapping[str, Any],
        act: Act,
        *,
        compare: bool = False,
        inspect: bool = False,
    ) -> _Run:
        """Provision trial 0 of ``task``, read, let ``act`` act on the env, read and judge."""
        self.report.episodes += 1
        trace = ReadTrace()
        try:
            with self.pack.provision(task, 0, dict(params)) as episode:
                with tracing(trace):
                    before = episode.oracle.snapshot()
                if before is None:
                    return _Run(problem="the oracle could not read the record before the episode")
                try:
                    act(episode.env)
                except Exception as exc:
                    raise _ActFailed(_described(exc)) from exc
                run = _Run()
                if compare:
                    with tracing(trace):
                        run.unchanged = episode.oracle.snapshot() == before
                with tracing(trace):
                    run.verdict = read_verdict(episode.oracle, before)
                failure = episode.health()
                if failure is not None:
                    return _Run(problem=f"the episode's infrastructure failed: {failure}")
                if inspect:
                    agent_task = agent_view(task, params, 0, episode.env)
                    agent = reach([episode.env, dict(params), agent_task])
                    oracle = reach([episode.oracle])
                    run.isolation = isolation_problems(agent, episode.oracle, oracle, trace)
                return run
        except _ActFailed as exc:
            return _Run(move_failed=str(exc))
        except Exception as exc:  # the pack's own code failed: a finding, never a traceback
            return _Run(problem=f"provisioning or the oracle raised {_described(exc)}")

    def readable(self, task: TaskSpec, what: str, run: _Run) -> OracleVerdict | None:
        """Return the run's reading, or report why there is none (``audit.run_failed``)."""
        if run.problem is not None:
            self.find(AuditId.RUN_FAILED, task, f"{what}: {run.problem}")
            return None
        if run.move_failed is not None:
            self.find(AuditId.RUN_FAILED, task, f"{what} raised {run.move_failed}")
            return None
        verdict = run.verdict
        assert verdict is not None
        try:
            state = true_state(verdict)
        except InconsistentReading as exc:
            self.find(
                AuditId.RUN_FAILED, task, f"{what}: the oracle's reading is inconsistent ({exc})"
            )
            return None
        if state is TrueState.UNREADABLE:
            self.find(AuditId.RUN_FAILED, task, f"{what}: the oracle could not read the record")
            return None
        return verdict

    def in_table(self, task: TaskSpec, what: str, verdict: OracleVerdict) -> None:
        """Report a reading of an honest run (through the env) outside the pack's table."""
        outside = reachable(self.pack, task).outside(
            true_state(verdict), verdict.kind.value, verdict.observed_count
        )
        if outside is not None:
            self.find(AuditId.REACHABLE_OUTSIDE, task, f"{what}: {outside}")

    # -- the checks --------------------------------------------------------------------

    def payload(self, task: TaskSpec) -> list[dict[str, Any]]:
        params = [self.pack.trial_params(task, t) for t in range(self.trials)]
        keys = [canonical_hash(_jsonable(p)) for p in params]
        if len(set(keys)) < len(keys):
            i, j = _first_repeat(keys)
            self.find(AuditId.PAYLOAD_REPEATS, task, f"trials {i} and {j} get the same parameters")
        contracts = [
            tuple(contract_hash(e.resolve(p)) for e in task.expected_effect) for p in params
        ]
        if len(set(contracts)) < len(contracts):
            i, j = _first_repeat(contracts)
            self.find(
                AuditId.PAYLOAD_UNBOUND,
                task,
                f"trials {i} and {j} bind the same contract (no parameter of the trial's "
                "payload appears in the effect)",
            )
        return params

    def do_nothing(self, task: TaskSpec, params: Mapping[str, Any]) -> None:
        """Only look (the generic ``report_only`` move): on a refusal control nothing changes."""
        refusal = not task.correct_action_available or task.oracle.refusal_controls
        move = GENERIC_MOVES["report_only"]
        run = self.episode(
            task,
            params,
            _adversary(move, task, params),
            compare=True,
            inspect=not isinstance(self.pack, ScriptedPack),
        )
        self.record_move("report_only")
        verdict = self.readable(task, "doing nothing", run)
        if verdict is None:
            return
        self.isolation(task, run)
        if refusal and run.unchanged is False:
            self.find(
                AuditId.REFUSAL_ROWS_CHANGED,
                task,
                f"the record changed while the agent only looked (the oracle reads "
                f"{true_state(verdict).value}: {verdict.reason})",
            )
        self.in_table(task, "doing nothing", verdict)
        self.red_team_reading(task, "report_only", verdict)

    def isolation(self, task: TaskSpec, run: _Run) -> None:
        for audit_id, message in run.isolation:
            self.find(audit_id, task, message)

    def scripted(self, task: TaskSpec, params: Sequence[Mapping[str, Any]]) -> None:
        pack = self.pack
        assert isinstance(pack, ScriptedPack)
        own = params[0]
        run = self.episode(task, own, lambda env: pack.attempt(env, task, own), inspect=True)
        verdict = self.readable(task, "the scripted attempt", run)
        if verdict is not None:
            self.isolation(task, run)
            self.in_table(task, "the scripted attempt", verdict)
            confirmed = verdict.verdict is Verdict.CONFIRMED
            if confirmed and not task.correct_action_available:
                self.find(
                    AuditId.REFUSAL_BLIND_WRITE,
                    task,
                    f"the task has no correct action, yet the oracle confirms the scripted "
                    f"attempt ({verdict.reason})",
                )
            if confirmed and task.correct_action_available:
                self.positives += 1
        other = params[1]
        run = self.episode(task, own, lambda env: pack.attempt(env, task, other))
        verdict = self.readable(task, "the cross-trial write", run)
        if verdict is None:
            return
        self.in_table(task, "the cross-trial write", verdict)
        if verdict.verdict is Verdict.CONFIRMED:
            self.find(
                AuditId.PAYLOAD_CROSS_TRIAL,
                task,
                f"trial 0's oracle confirms the scripted write of trial 1's payload "
                f"({verdict.reason})",
            )

    def moves_of(self, task: TaskSpec) -> Mapping[str, Any]:
        if not isinstance(self.pack, OffersRedTeam):
            return {}
        moves = dict(self.pack.red_team(task))
        for name in RED_TEAM_MOVES:
            if name not in moves and name not in GENERIC_MOVES:
                self.unoffered.setdefault(name, []).append(task)
        return moves

    def record_move(self, name: str) -> None:
        self.report.moves[name] = self.report.moves.get(name, 0) + 1

    def red_team_reading(self, task: TaskSpec, name: str, verdict: OracleVerdict) -> None:
        failure = probe_failure(name, verdict)
        if name == TRUE_EFFECT:
            if failure is None:
                self.positives += 1
            else:
                self.find(AuditId.REDTEAM_NO_POSITIVE, task, failure)
        elif failure is not None:
            self.find(AuditId.REDTEAM_SATISFIED, task, failure)

    def red_team(self, task: TaskSpec, params: Mapping[str, Any], moves: Mapping[str, Any]) -> None:
        chosen: dict[str, Any] = {"banner_only": GENERIC_MOVES["banner_only"], **moves}
        for name, move in chosen.items():
            if isinstance(move, NotApplicable):
                reasons = self.report.not_applicable.setdefault(name, {})
                reasons[move.reason] = reasons.get(move.reason, 0) + 1
                continue
            run = self.episode(task, params, _adversary(move, task, params))
            self.record_move(name)
            if run.move_failed is not None:
                self.find(AuditId.REDTEAM_MOVE_FAILED, task, f"{name} raised {run.move_failed}")
                continue
            verdict = self.readable(task, f"the red-team move {name}", run)
            if verdict is not None:
                self.red_team_reading(task, name, verdict)

    # -- the pack as a whole -----------------------------------------------------------

    def attestations(self) -> None:
        for task in self.tasks:
            o = task.oracle
            false = [
                name
                for name, value in (
                    ("isolated_from_agent", o.isolated_from_agent),
                    ("trial_unique_payload", o.trial_unique_payload),
                    ("adversarially_audited", o.adversarially_audited),
                )
                if not value
            ]
            if false:
                self.find(AuditId.ATTEST_FALSE, task, "attests " + ", ".join(false) + " false")
        if any(t.oracle.refusal_controls for t in self.tasks) and not any(
            t.category is Category.CONTROL and not t.correct_action_available
            for t in self.pack.tasks()
        ):
            self.find(
                AuditId.REFUSAL_NONE_SHIPPED,
                None,
                "some tasks attest refusal_controls; no control task lacks a correct action",
            )

    def run(self) -> None:
        self.attestations()
        for done, task in enumerate(self.tasks, 1):
            params = self.payload(task)
            moves = self.moves_of(task)
            self.do_nothing(task, params[0])
            if isinstance(self.pack, ScriptedPack):
                self.scripted(task, params)
            self.red_team(task, params[0], moves)
            if self.progress is not None:
                self.progress(done, len(self.tasks), self.report.episodes)
        self.pack_level()

    def pack_level(self) -> None:
        pack = self.pack
        if not isinstance(pack, ScriptedPack):
            for audit_id in (AuditId.PAYLOAD_UNCHECKED, AuditId.REFUSAL_UNCHECKED):
                self.find(audit_id, None, f"pack {pack.name!r} has no attempt(env, task, params)")
        if not isinstance(pack, OffersRedTeam):
            self.find(
                AuditId.REDTEAM_UNCHECKED,
                None,
                f"pack {pack.name!r} offers no red_team(task); only the generic moves "
                f"({', '.join(GENERIC_MOVES)}) ran",
            )
        for name, tasks in self.unoffered.items():
            shown = [t.task_id for t in tasks if t.split is not Split.TEST][:3]
            more = len(tasks) - len(shown)
            listed = ", ".join(shown) + (f" and {more} more" if more else "")
            self.find(
                AuditId.REDTEAM_UNCHECKED,
                None,
                f"{name} ({RED_TEAM_MOVES[name]}) is neither offered nor declared not "
                f"applicable on {len(tasks)} task(s): {listed}",
            )
        if self.positives == 0 and self.tasks:
            self.find(
                AuditId.REDTEAM_NO_POSITIVE,
                None,
                "no run produced a reading the oracle confirms (no true_effect move, no "
                "confirmed scripted attempt on a task with a correct action)",
            )


def _adversary(move: Callable[..., object], task: TaskSpec, params: Mapping[str, Any]) -> Act:
    def act(env: Any) -> object:
        return move(env, task, params)

    return act


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return repr(value)


def _first_repeat(keys: Sequence[object]) -> tuple[int, int]:
    seen: dict[object, int] = {}
    for j, key in enumerate(keys):
        if key in seen:
            return seen[key], j
        seen[key] = j
    raise ValueError("no repeat")


def count_lines(counts: Mapping[str, Mapping[str, int]]) -> list[str]:
    """Return one line per split of :func:`split_category_counts`: its tasks per category."""
    return [
        f"{split}: {sum(per.values())} tasks: "
        + ", ".join(f"{category} {n}" for category, n in per.items())
        for split, per in counts.items()
    ]


def split_category_counts(tasks: Sequence[Any]) -> dict[str, dict[str, int]]:
    """Return how many of ``tasks`` (task specs, or a pack's definitions: anything with a
    ``split`` and a ``category``) each split holds per category, in the schema's orders (a
    split or a category without tasks is left out)."""
    return {
        split.value: {
            c.value: n
            for c in Category
            if (n := sum(t.split is split and t.category is c for t in tasks))
        }
        for split in Split
        if any(t.split is split for t in tasks)
    }


def check_pack(
    pack: BenchmarkProvider,
    *,
    substrate: str | None = None,
    trials: int = TRIALS,
    progress: Progress | None = None,
    doability: str | None = None,
    blindness: str | None = None,
) -> Report:
    """Audit ``pack`` on the substrates ``substrate`` names (``--substrate``; None: the
    pack's default) and return what was found; an empty report passes. ``progress`` is told
    after each task (the command line shows it). The doability audit runs on the substrates
    ``doability`` names (``--doability``; None: the checked ones, ``none``: no substrate); the
    blindness audit observes the substrates ``blindness`` names (``--blindness-substrate``;
    None: the audited ones)."""
    if trials < 2:
        raise ValueError("trial-unique payloads need at least 2 trials to compare")
    substrates = choose(pack, substrate)
    doable = substrates if doability is None else doability_substrates(pack, doability)
    seen = substrates if blindness is None else choose(pack, blindness)
    if isinstance(pack, ChecksFrontEnds):
        for s in dict.fromkeys((*substrates, *doable, *seen)):
            pack.front_end(s)  # a missing system package says so now, in one line
    tasks = tasks_on(pack, substrates)
    report = Report(pack=pack.name, substrates=substrates)
    report.tasks = len(tasks)
    report.sequestered = sum(t.split is Split.TEST for t in tasks)
    report.counts = split_category_counts([t for t in tasks if t.substrate is substrates[0]])
    clock = time.perf_counter()
    _Audit(pack, tasks, trials, report, progress).run()
    check_doability(pack, doable, report, trials)
    blind = time.perf_counter()
    check_blindness(pack, seen, report)
    report.blindness_seconds = time.perf_counter() - blind
    report.seconds = time.perf_counter() - clock
    return report


def doability_substrates(pack: BenchmarkProvider, text: str) -> tuple[Substrate, ...]:
    """Parse a ``--doability`` value for ``pack``: substrates as ``--substrate`` takes them,
    or ``none``."""
    return () if text.strip() == "none" else choose(pack, text)


def check_doability(
    pack: BenchmarkProvider, substrates: Sequence[Substrate], report: Report, trials: int
) -> None:
    """Run the doability audit on ``substrates`` into ``report``: a line per substrate and a
    ``pack.undoable`` finding per task a front end cannot complete (a sequestered task's
    details withheld)."""
    for substrate in substrates:
        result = _kit.audit_doability(pack, substrate, tasks_on(pack, [substrate]), trials)
        report.doability.append(result)
        secret = {t.task_id for t in pack.tasks() if t.split is Split.TEST}
        for u in result.undoable:
            message = WITHHELD if u.task_id in secret else u.message()
            report.findings.append(Finding(AuditId.PACK_UNDOABLE, u.task_id, message))


def check_blindness(
    pack: BenchmarkProvider, substrates: Sequence[Substrate], report: Report
) -> None:
    """Run the blindness audit on each of ``substrates`` into ``report``: its lines, and a
    ``pack.blindness`` finding per target predicted above the threshold."""
    problems: list[str] = []
    for substrate in substrates:
        observed = _blindness.observe(pack, substrate, problems=problems)
        report.blindness_episodes += len(observed)
        report.blindness += _blindness.audit(observed, substrate)
    if problems:
        more = f" and {len(problems) - 1} more" if len(problems) > 1 else ""
        report.findings.append(
            Finding(
                AuditId.RUN_FAILED,
                None,
                f"the blindness audit could not provision {problems[0]}{more}",
            )
        )
    for result in report.blindness:
        if result.leaks:
            report.findings.append(Finding(AuditId.PACK_BLINDNESS, None, result.message()))
