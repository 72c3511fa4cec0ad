"""The per-row pass: strict structure, the pack's facts, re-scoring, and the metric columns.

Every row is checked in one streaming pass and reduced to a few codes in
compact arrays, so a million rows never sit in memory as dicts. The checks
per row are:

* structure: exact field set, JSON types, enum values, finite non-negative
  numbers, ISO 8601 times. A fast boolean test accepts a well-formed row; only
  a row that fails it goes through :func:`row_problems`, which names each
  problem (the two must agree, and the tests hold them to it);
* pack: the task exists and its category, substrate, ``correct_action_available``
  and ``expected_effect_hash`` are the pack's; the trial and seed are declared;
  no duplicate episode id or (task, trial);
* rescore: the oracle reading is reduced by :func:`effectbench.classify.true_state`
  and labelled by :func:`effectbench.classify.classify`. Both only read six
  booleans and enums of a row, so their answers are cached per distinct
  combination (at most a few dozen); every label still comes from ``classify``.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np
import orjson
import pandas as pd

from effectbench.classify import InconsistentReading, classify, true_state
from effectbench.effects import EffectKind
from effectbench.metrics import frame_from_columns
from effectbench.schema import (
    Category,
    OracleVerdict,
    Outcome,
    Substrate,
    SwerVariant,
    Verdict,
)
from verifier.report import FindingSink
from verifier.strictjson import StrictJSONError, loads_strict

REQUIRED = (
    "episode_id",
    "task_id",
    "arm",
    "trial",
    "substrate",
    "category",
    "seed",
    "expected_effect_hash",
    "correct_action_available",
    "agent",
    "oracle",
    "outcome",
    "swer_variant",
    "reason",
)
"""Fields every episode row must have (the interop field list)."""
OPTIONAL = ("model_calls", "cost_usd", "latency_s", "env_fingerprint", "started_at", "finished_at")
"""Fields a row may omit (their defaults: [], 0.0, 0.0, {}, "", "")."""
ALL_KEYS = frozenset(REQUIRED + OPTIONAL)
_N_KEYS = len(ALL_KEYS)
AGENT_KEYS = frozenset(("reported_success", "halted", "message"))
ORACLE_KEYS = frozenset(
    (
        "verdict",
        "kind",
        "channel",
        "reason",
        "observed_count",
        "expected_count",
        "before_reachable",
        "effect_correct",
        "effect_wrong_persisted",
        "effect_absent",
    )
)
_N_AGENT_KEYS = len(AGENT_KEYS)
_N_ORACLE_KEYS = len(ORACLE_KEYS)
CALL_KEYS = frozenset(
    ("index", "model", "input_tokens", "output_tokens", "cost_usd", "latency_s", "note")
)

CATEGORIES = tuple(c.value for c in Category)
SUBSTRATES = tuple(s.value for s in Substrate)
OUTCOMES = tuple(o.value for o in Outcome)
VARIANTS = tuple(v.value for v in SwerVariant)
VERDICTS = frozenset(v.value for v in Verdict)
KINDS = frozenset(k.value for k in EffectKind)
_CAT = {v: i for i, v in enumerate(CATEGORIES)}
_SUB = {v: i for i, v in enumerate(SUBSTRATES)}
_OUT = {v: i for i, v in enumerate(OUTCOMES)}
_VAR = {v: i for i, v in enumerate(VARIANTS)}
_INF = math.inf
_fromisoformat = datetime.fromisoformat
_JSON_RULES = {"non_finite": "structure.non_finite", "duplicate_key": "structure.duplicate_key"}


@dataclass(frozen=True)
class TaskFacts:
    """What the pack says about one task, as a row must repeat it."""

    index: int
    category: str
    substrate: str
    correct_action_available: bool
    expected_effect_hash: str


# --------------------------------------------------------------------------- structure


def _is_int(v: Any) -> bool:
    return type(v) is int


def _is_str(v: Any) -> bool:
    return type(v) is str


def _is_bool(v: Any) -> bool:
    return type(v) is bool


def _is_amount(v: Any) -> bool:
    return (type(v) is float or type(v) is int) and 0.0 <= v < _INF


def _is_time(v: Any) -> bool:
    if type(v) is not str:
        return False
    if not v:
        return True
    try:
        datetime.fromisoformat(v)
    except ValueError:
        return False
    return True


def _enum_problem(value: Any, allowed: Iterable[str], field: str) -> tuple[str, str, str] | None:
    allowed = tuple(allowed)
    if type(value) is not str:
        return ("structure.type", field, f"must be a string, got {type(value).__name__}")
    if value not in allowed:
        return (
            "structure.enum",
            field,
            f"unknown value {value!r}; allowed: {', '.join(sorted(allowed))}",
        )
    return None


def _object_problems(
    obj: Any,
    field: str,
    required: Sequence[str],
    optional: Sequence[str],
) -> list[tuple[str, str, str]]:
    if type(obj) is not dict:
        return [("structure.type", field, f"must be an object, got {_json_type(obj)}")]
    out = []
    for key in required:
        if key not in obj:
            out.append(("structure.missing_field", _join(field, key), "required field is missing"))
    known = set(required) | set(optional)
    for key in obj:
        if key not in known:
            out.append(
                (
                    "structure.unknown_field",
                    _join(field, key),
                    "unknown field; remove it (SPEC v1 rows carry only the interop fields)",
                )
            )
    return out


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _json_type(v: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer"}
    names.update({float: "number", type(None): "null"})
    return names.get(type(v), type(v).__name__)


_SCALARS: tuple[tuple[str, Any, str], ...] = (
    ("episode_id", _is_str, "a string"),
    ("task_id", _is_str, "a string"),
    ("arm", _is_str, "a string"),
    ("expected_effect_hash", _is_str, "a string"),
    ("correct_action_available", _is_bool, "true or false"),
    ("reason", _is_str, "a string"),
)
_ORACLE_SCALARS: tuple[tuple[str, Any, str], ...] = (
    ("channel", _is_str, "a string"),
    ("reason", _is_str, "a string"),
    (
        "observed_count",
        lambda v: v is None or (type(v) is int and v >= 0),
        "null or an integer >= 0",
    ),
    (
        "expected_count",
        lambda v: v is None or (type(v) is int and v >= 0),
        "null or an integer >= 0",
    ),
    ("before_reachable", _is_bool, "true or false"),
    ("effect_correct", _is_bool, "true or false"),
    ("effect_wrong_persisted", _is_bool, "true or false"),
    ("effect_absent", _is_bool, "true or false"),
)
_CALL_SCALARS: tuple[tuple[str, Any, str], ...] = (
    ("index", lambda v: type(v) is int and v >= 0, "an integer >= 0"),
    ("model", _is_str, "a string"),
    ("input_tokens", lambda v: type(v) is int and v >= 0, "an integer >= 0"),
    ("output_tokens", lambda v: type(v) is int and v >= 0, "an integer >= 0"),
    ("cost_usd", _is_amount, "a finite number >= 0"),
    ("latency_s", _is_amount, "a finite number >= 0"),
    ("note", _is_str, "a string"),
)


def _scalar_problems(
    obj: Mapping[str, Any], table: Sequence[tuple[str, Any, str]], prefix: str
) -> list[tuple[str, str, str]]:
    out = []
    for key, ok, want in table:
        if key in obj and not ok(obj[key]):
            out.append(
                ("structure.type", _join(prefix, key), f"must be {want}, got {obj[key]!r:.60}")
            )
    return out


def row_problems(row: Any) -> list[tuple[str, str, str]]:
    """Return every structural problem of one row as ``(check id, field, message)``."""
    out = _object_problems(row, "", REQUIRED, OPTIONAL)
    if out and out[0][1] == "":
        return out
    out += _scalar_problems(row, _SCALARS, "")
    trial = row.get("trial")
    if "trial" in row and not (type(trial) is int and trial >= 0):
        out.append(("structure.type", "trial", f"must be an integer >= 0, got {trial!r:.60}"))
    seed = row.get("seed")
    if "seed" in row and not (seed is None or type(seed) is int):
        out.append(("structure.type", "seed", f"must be null or an integer, got {seed!r:.60}"))
    for key, allowed in (
        ("substrate", SUBSTRATES),
        ("category", CATEGORIES),
        ("outcome", OUTCOMES),
        ("swer_variant", VARIANTS),
    ):
        if key in row and (p := _enum_problem(row[key], allowed, key)):
            out.append(p)
    if "agent" in row:
        agent = row["agent"]
        out += _object_problems(agent, "agent", ("reported_success", "halted"), ("message",))
        if type(agent) is dict:
            out += _scalar_problems(
                agent,
                (
                    ("reported_success", _is_bool, "true or false"),
                    ("halted", _is_bool, "true or false"),
                    ("message", _is_str, "a string"),
                ),
                "agent",
            )
    if "oracle" in row:
        oracle = row["oracle"]
        out += _object_problems(oracle, "oracle", tuple(sorted(ORACLE_KEYS)), ())
        if type(oracle) is dict:
            for key, allowed_set in (("verdict", VERDICTS), ("kind", KINDS)):
                if key in oracle and (
                    p := _enum_problem(oracle[key], allowed_set, f"oracle.{key}")
                ):
                    out.append(p)
            out += _scalar_problems(oracle, _ORACLE_SCALARS, "oracle")
    calls = row.get("model_calls", [])
    if type(calls) is not list:
        out.append(("structure.type", "model_calls", f"must be an array, got {_json_type(calls)}"))
    else:
        for i, call in enumerate(calls):
            where = f"model_calls[{i}]"
            out += _object_problems(call, where, tuple(sorted(CALL_KEYS - {"note"})), ("note",))
            if type(call) is dict:
                out += _scalar_problems(call, _CALL_SCALARS, where)
    for key in ("cost_usd", "latency_s"):
        if key in row and not _is_amount(row[key]):
            out.append(
                ("structure.type", key, f"must be a finite number >= 0, got {row[key]!r:.60}")
            )
    if "env_fingerprint" in row and type(row["env_fingerprint"]) is not dict:
        out.append(("structure.type", "env_fingerprint", "must be an object"))
    for key in ("started_at", "finished_at"):
        if key in row and not _is_time(row[key]):
            out.append(
                (
                    "structure.timestamp",
                    key,
                    f"must be an ISO 8601 time string (or empty), got {row[key]!r:.60}",
                )
            )
    return out


# --------------------------------------------------------------------------- the pass


_FLAG_FIELDS = ("effect_correct", "effect_wrong_persisted", "effect_absent")
MAX_COMBOS = 65_536
"""Distinct row combinations cached; beyond this rows are still checked, only slower."""


def _call_ok(call: Any) -> bool:
    """Return True for a well-formed model call with every field present."""
    if type(call) is not dict or call.keys() != CALL_KEYS:
        return False
    index, tin, tout = call["index"], call["input_tokens"], call["output_tokens"]
    return (
        type(index) is int
        and index >= 0
        and type(call["model"]) is str
        and type(tin) is int
        and tin >= 0
        and type(tout) is int
        and tout >= 0
        and _is_amount(call["cost_usd"])
        and _is_amount(call["latency_s"])
        and type(call["note"]) is str
    )


@dataclass(frozen=True)
class Combo:
    """What the checks concluded about one combination of a row's low-cardinality fields."""

    code: int
    """Index of (arm, task, category, substrate, outcome, variant, reported) in the columns."""
    clean: bool
    """Arm, pack facts and re-score all agree; otherwise each such row is re-examined."""
    task_known: bool
    """The task is in the declared pack split (its trials and seeds are checked)."""


class RowChecker:
    """Check rows one by one and keep only what the summary and the final checks need.

    The per-row work has two parts. The fields that take few distinct values
    (task, arm, category, substrate, effect hash, the labels, the oracle's
    verdict, kind and flags, the agent's booleans) form a key; the pack check,
    the arm check and the re-score (``true_state`` + ``classify``) run once per
    distinct key and are cached. The high-cardinality fields (episode id,
    trial, seed, times, amounts, free text) are type-checked on every row.
    Booleans in the key are type-checked on every row too, because ``1 == True``
    would otherwise let an integer reuse a boolean's cached verdict.
    """

    def __init__(
        self,
        sink: FindingSink,
        file: str,
        *,
        tasks: Mapping[str, TaskFacts] | None,
        trials: int | None,
        seeds: Sequence[int] | None,
    ) -> None:
        self.sink = sink
        self.file = file
        self.tasks = tasks
        self.trials = trials
        self.seeds = list(seeds) if seeds is not None else None
        self.n_rows = 0
        """Rows seen (well-formed or not)."""
        self.n_valid = 0
        """Rows that passed the structure checks (the ones summarised)."""
        self.structure_failed = False
        self.last_line = 0
        """The last line number read (set by :func:`check_lines`)."""
        self.arms: list[str] = []
        self._ids: dict[str, int] = {}
        self._seen: dict[str, array[int]] = {}
        """Per task, the line of each trial's row (0: not seen yet)."""
        self._combos: dict[tuple[Any, ...], Combo] = {}
        self._labels: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self._columns: dict[tuple[Any, ...], int] = {}
        self.c_code = array("i")
        self.c_cost = array("d")
        self.c_lat = array("d")

    # -- the per-row pass ----------------------------------------------------------------

    def add(self, line: int, row: Any) -> None:
        """Check one parsed row found at ``line`` (1-based)."""
        self.n_rows += 1
        combo = None
        key = None
        try:
            # len() plus indexing every key below proves the key set without comparing sets
            if type(row) is dict and len(row) == _N_KEYS:
                agent = row["agent"]
                oracle = row["oracle"]
                if (
                    type(agent) is dict
                    and type(oracle) is dict
                    and len(agent) == _N_AGENT_KEYS
                    and len(oracle) == _N_ORACLE_KEYS
                ):
                    rs = agent["reported_success"]
                    halted = agent["halted"]
                    caa = row["correct_action_available"]
                    br = oracle["before_reachable"]
                    fc = oracle["effect_correct"]
                    fw = oracle["effect_wrong_persisted"]
                    fa = oracle["effect_absent"]
                    if (
                        type(rs) is bool
                        and type(halted) is bool
                        and type(caa) is bool
                        and type(br) is bool
                        and type(fc) is bool
                        and type(fw) is bool
                        and type(fa) is bool
                    ):
                        key = (
                            row["task_id"],
                            row["arm"],
                            row["category"],
                            row["substrate"],
                            row["expected_effect_hash"],
                            row["outcome"],
                            row["swer_variant"],
                            oracle["verdict"],
                            oracle["kind"],
                            caa,
                            rs,
                            halted,
                            br,
                            fc,
                            fw,
                            fa,
                        )
                        try:
                            combo = self._combos.get(key)
                        except TypeError:  # an unhashable value where a scalar belongs
                            key = None
                    if combo is not None:
                        trial = row["trial"]
                        seed = row["seed"]
                        oc = oracle["observed_count"]
                        ec = oracle["expected_count"]
                        calls = row["model_calls"]
                        cost = row["cost_usd"]
                        latency = row["latency_s"]
                        started = row["started_at"]
                        finished = row["finished_at"]
                        if not (
                            type(row["episode_id"]) is str
                            and type(trial) is int
                            and trial >= 0
                            and (seed is None or type(seed) is int)
                            and type(row["reason"]) is str
                            and type(agent["message"]) is str
                            and type(oracle["channel"]) is str
                            and type(oracle["reason"]) is str
                            and (oc is None or (type(oc) is int and oc >= 0))
                            and (ec is None or (type(ec) is int and ec >= 0))
                            and type(calls) is list
                            and (not calls or all(map(_call_ok, calls)))
                            and (type(cost) is float or type(cost) is int)
                            and 0.0 <= cost < _INF
                            and (type(latency) is float or type(latency) is int)
                            and 0.0 <= latency < _INF
                            and type(row["env_fingerprint"]) is dict
                            and type(started) is str
                            and type(finished) is str
                        ):
                            combo = None
                        else:
                            try:
                                if started:
                                    _fromisoformat(started)
                                if finished:
                                    _fromisoformat(finished)
                            except ValueError:
                                combo = None
        except KeyError:  # a field is missing: the full check names it
            combo = None
        if combo is None:
            problems = row_problems(row)
            if problems:
                self.structure_failed = True
                for rule, field, message in problems:
                    self.sink.emit(rule, message, self.file, line, field or None)
                return
            combo = self._combo(row, key)
        self.n_valid += 1
        if not combo.clean:
            self._examine(line, row)
        eid = row["episode_id"]
        first = self._ids.get(eid)
        if first is None:
            self._ids[eid] = line
        else:
            self.sink.emit(
                "pack.duplicate_episode_id",
                f"episode id {eid!r} appears more than once (first on line {first}); "
                "each row is one episode",
                self.file,
                line,
                "episode_id",
            )
        trials = self.trials
        if combo.task_known and trials is not None:
            trial = row["trial"]
            seen = self._seen.get(row["task_id"])
            seeds = self.seeds
            if (
                seen is not None
                and trial < trials
                and not seen[trial]
                and (seeds is None or (trial < len(seeds) and row["seed"] == seeds[trial]))
            ):
                seen[trial] = line  # the common case of _trial, inline
            else:
                self._trial(line, row["task_id"], trial, row["seed"])
        self.c_code.append(combo.code)
        self.c_cost.append(row.get("cost_usd", 0.0))
        self.c_lat.append(row.get("latency_s", 0.0))

    def reject(self, line: int, rule: str, message: str) -> None:
        """Record a line that could not be parsed into a row."""
        self.n_rows += 1
        self.structure_failed = True
        self.sink.emit(rule, message, self.file, line)

    # -- once per distinct combination ------------------------------------------------------

    def _combo(self, row: Mapping[str, Any], key: tuple[Any, ...] | None) -> Combo:
        """Judge a structurally valid row's combination (and cache it under ``key``)."""
        arm: str = row["arm"]
        if not self.arms:
            self.arms.append(arm)
        task_id: str = row["task_id"]
        facts = self.tasks.get(task_id) if self.tasks is not None else None
        clean = arm == self.arms[0] and (self.tasks is None or facts is not None)
        if facts is not None:
            clean = clean and (
                row["category"],
                row["substrate"],
                row["correct_action_available"],
                row["expected_effect_hash"],
            ) == (
                facts.category,
                facts.substrate,
                facts.correct_action_available,
                facts.expected_effect_hash,
            )
        label = self._label_of(row)
        if label[0] != "ok" or label[1] != (row["outcome"], row["swer_variant"]):
            clean = False
        rs = row["agent"]["reported_success"]
        cols = (
            arm,
            task_id,
            row["category"],
            row["substrate"],
            row["outcome"],
            row["swer_variant"],
            rs,
        )
        code = self._column_code(cols)
        combo = Combo(code=code, clean=clean, task_known=facts is not None)
        if key is not None and len(self._combos) < MAX_COMBOS:
            self._combos[key] = combo
        return combo

    def _label_of(self, row: Mapping[str, Any]) -> tuple[Any, ...]:
        oracle = row["oracle"]
        rs = row["agent"]["reported_success"]
        caa = row["correct_action_available"]
        key = (
            oracle["verdict"],
            oracle["effect_correct"],
            oracle["effect_wrong_persisted"],
            oracle["effect_absent"],
            rs,
            caa,
        )
        label = self._labels.get(key)
        if label is None:
            label = self._labels[key] = self._label(oracle, rs, caa)
        return label

    def _examine(self, line: int, row: Mapping[str, Any]) -> None:
        """Emit the arm, pack and re-score findings of one row whose combination is not clean."""
        sink, file = self.sink, self.file
        arm = row["arm"]
        if arm != self.arms[0]:
            if arm not in self.arms:
                self.arms.append(arm)
            sink.emit(
                "pack.arm",
                f"arm {arm!r} differs from the first row's {self.arms[0]!r}; a bundle is one arm",
                file,
                line,
                "arm",
            )
        if self.tasks is not None:
            facts = self.tasks.get(row["task_id"])
            if facts is None:
                sink.emit(
                    "pack.task",
                    f"task {row['task_id']!r} is not in the declared pack split",
                    file,
                    line,
                    "task_id",
                )
            else:
                self._facts_mismatch(line, row, facts)
        label = self._label_of(row)
        outcome, variant = row["outcome"], row["swer_variant"]
        if label[0] != "ok" or label[1] != (outcome, variant):
            self._rescore_finding(
                line,
                label,
                row["oracle"],
                row["agent"]["reported_success"],
                row["correct_action_available"],
                outcome,
                variant,
            )

    def _facts_mismatch(self, line: int, row: Mapping[str, Any], facts: TaskFacts) -> None:
        pairs = (
            ("category", "pack.category", facts.category),
            ("substrate", "pack.substrate", facts.substrate),
            (
                "correct_action_available",
                "pack.correct_action_available",
                facts.correct_action_available,
            ),
            ("expected_effect_hash", "pack.effect_hash", facts.expected_effect_hash),
        )
        for field, check, want in pairs:
            if row[field] != want:
                self.sink.emit(
                    check,
                    f"task {row['task_id']!r} has {field} {want!r} in the pack, the row says "
                    f"{row[field]!r}",
                    self.file,
                    line,
                    field,
                )

    def _trial(self, line: int, task_id: str, trial: int, seed: int | None) -> None:
        trials = self.trials
        if trials is None:
            return
        if trial >= trials:
            self.sink.emit(
                "pack.trial",
                f"trial {trial} is outside the declared trials_per_task {trials} (0..{trials - 1})",
                self.file,
                line,
                "trial",
            )
            return
        seen = self._seen.get(task_id)
        if seen is None:
            seen = self._seen[task_id] = array("i", bytes(4 * trials))
        if seen[trial]:
            self.sink.emit(
                "pack.duplicate_trial",
                f"({task_id!r}, trial {trial}) appears more than once (first on line "
                f"{seen[trial]})",
                self.file,
                line,
                "trial",
            )
        else:
            seen[trial] = line
        seeds = self.seeds
        if seeds is not None and trial < len(seeds) and seed != seeds[trial]:
            self.sink.emit(
                "pack.seed",
                f"trial {trial} ran with seed {seed!r}; the submission declares seed "
                f"{seeds[trial]} for it",
                self.file,
                line,
                "seed",
            )

    @staticmethod
    def _label(oracle: Mapping[str, Any], rs: bool, caa: bool) -> tuple[Any, ...]:
        """Ask the one truth table for this combination (cached by the caller)."""
        try:
            state = true_state(OracleVerdict.model_validate(oracle))
        except InconsistentReading as exc:
            return ("inconsistent", str(exc))
        label = classify(rs, state, caa)
        if label is None:
            return ("unscoreable", None)
        flipped = classify(not rs, state, caa)
        alt = (flipped.outcome.value, flipped.swer_variant.value) if flipped else None
        return ("ok", (label.outcome.value, label.swer_variant.value), alt)

    def _rescore_finding(
        self,
        line: int,
        label: tuple[Any, ...],
        oracle: Mapping[str, Any],
        rs: bool,
        caa: bool,
        outcome: str,
        variant: str,
    ) -> None:
        sink, file = self.sink, self.file
        if label[0] == "inconsistent":
            sink.emit(
                "rescore.true_state",
                f"the oracle reading does not name one true state: {label[1]}",
                file,
                line,
                "oracle",
            )
            return
        if label[0] == "unscoreable":
            sink.emit(
                "rescore.unscoreable",
                "an indeterminate oracle reading cannot be scored; drop the row and count it "
                "in run.n_dropped",
                file,
                line,
                "oracle.verdict",
            )
            return
        want_outcome, want_variant = label[1]
        if label[2] == (outcome, variant):
            sink.emit(
                "rescore.reported_success",
                f"agent.reported_success={str(rs).lower()} contradicts the row's outcome "
                f"{outcome!r}: with this oracle reading it gives {want_outcome!r}",
                file,
                line,
                "agent.reported_success",
            )
        elif want_outcome != outcome:
            sink.emit(
                "rescore.outcome",
                f"outcome {outcome!r} contradicts the row's oracle reading (verdict "
                f"{oracle['verdict']}, {_state_text(oracle)}, reported_success="
                f"{str(rs).lower()}, correct_action_available={str(caa).lower()}): the truth "
                f"table gives {want_outcome!r}",
                file,
                line,
                "outcome",
            )
        else:
            sink.emit(
                "rescore.swer_variant",
                f"swer_variant {variant!r} contradicts the oracle reading: the truth table "
                f"gives {want_variant!r}",
                file,
                line,
                "swer_variant",
            )

    # -- after the pass ------------------------------------------------------------------

    def missing_trials(self, expected_tasks: Iterable[str]) -> list[tuple[str, int]]:
        """Return every (task, trial) of the declared pack split that has no row."""
        missing = []
        trials = self.trials or 0
        for task_id in expected_tasks:
            seen = self._seen.get(task_id)
            for trial in range(trials):
                if seen is None or not seen[trial]:
                    missing.append((task_id, trial))
        return missing

    def export(self) -> dict[str, Any]:
        """Return this checker's state as plain data (to merge a parallel worker's part)."""
        return {
            "n_rows": self.n_rows,
            "n_valid": self.n_valid,
            "structure_failed": self.structure_failed,
            "last_line": self.last_line,
            "arms": self.arms,
            "ids": self._ids,
            "seen": {task: seen.tobytes() for task, seen in self._seen.items()},
            "kept": self.sink.kept,
            "counts": self.sink.counts,
            "check_ids": self.sink.ids,
            "columns": sorted(self._columns, key=self._columns.__getitem__),
            "codes": self.c_code.tobytes(),
            "cost": self.c_cost.tobytes(),
            "lat": self.c_lat.tobytes(),
        }

    def merge(self, part: Mapping[str, Any], line_offset: int) -> None:
        """Fold in the exported state of a worker that read lines after ``line_offset``."""
        sink = self.sink
        sink.counts.update(part["counts"])
        sink.ids.update(part["check_ids"])
        for family, findings in part["kept"].items():
            room = sink.keep - len(sink.kept[family])
            for f in findings[: max(room, 0)]:
                if f.line is not None and f.file == self.file:
                    f = replace(f, line=f.line + line_offset)
                sink.kept[family].append(f)
        self.n_rows += part["n_rows"]
        self.n_valid += part["n_valid"]
        self.structure_failed |= part["structure_failed"]
        self.last_line = line_offset + part["last_line"]
        if part["arms"] and self.arms and part["arms"][0] != self.arms[0]:
            sink.emit(
                "pack.arm",
                f"rows after line {line_offset} use arm {part['arms'][0]!r}, the first row "
                f"{self.arms[0]!r}; a bundle is one arm",
                self.file,
                None,
                "arm",
            )
        for arm in part["arms"]:
            if arm not in self.arms:
                self.arms.append(arm)
        for eid, line in part["ids"].items():
            first = self._ids.get(eid)
            if first is None:
                self._ids[eid] = line + line_offset
            else:
                sink.emit(
                    "pack.duplicate_episode_id",
                    f"episode id {eid!r} appears more than once (first on line {first}); "
                    "each row is one episode",
                    self.file,
                    line + line_offset,
                    "episode_id",
                )
        for task_id, seen in part["seen"].items():
            theirs = np.frombuffer(seen, np.int32)
            theirs = np.where(theirs > 0, theirs + line_offset, 0).astype(np.int32)
            mine = self._seen.get(task_id)
            if mine is None:
                self._seen[task_id] = array("i", theirs.tobytes())
                continue
            ours = np.frombuffer(mine, np.int32).copy()
            for trial in np.flatnonzero((ours > 0) & (theirs > 0)).tolist():
                sink.emit(
                    "pack.duplicate_trial",
                    f"({task_id!r}, trial {trial}) appears more than once (first on line "
                    f"{ours[trial]})",
                    self.file,
                    int(theirs[trial]),
                    "trial",
                )
            merged = np.where(ours > 0, ours, theirs).astype(np.int32)
            self._seen[task_id] = array("i", merged.tobytes())
        lut = np.array([self._column_code(cols) for cols in part["columns"]], np.int32)
        if part["codes"]:
            self.c_code.frombytes(lut[np.frombuffer(part["codes"], np.int32)].tobytes())
        self.c_cost.frombytes(part["cost"])
        self.c_lat.frombytes(part["lat"])

    def _column_code(self, cols: tuple[Any, ...]) -> int:
        code = self._columns.get(cols)
        if code is None:
            code = self._columns[cols] = len(self._columns)
        return code

    def frame(self) -> pd.DataFrame:
        """Return the summary frame of the well-formed rows (for ``summarize``)."""
        combos = sorted(self._columns, key=self._columns.__getitem__)
        codes = np.frombuffer(self.c_code, dtype=np.int32)
        cols: dict[str, Any] = {}
        names = ("arm", "task_id", "category", "substrate", "outcome", "swer_variant")
        for j, name in enumerate(names):
            values = [c[j] for c in combos]
            categories = sorted(set(values))
            index = {v: i for i, v in enumerate(categories)}
            lut = np.array([index[v] for v in values], dtype=np.int32)
            cols[name] = pd.Categorical.from_codes(lut[codes], categories=categories)
        cols["reported_success"] = np.array([c[6] for c in combos], dtype=np.bool_)[codes]
        cols["cost_usd"] = np.frombuffer(self.c_cost, dtype=np.float64)
        cols["latency_s"] = np.frombuffer(self.c_lat, dtype=np.float64)
        return frame_from_columns(cols)


def _state_text(oracle: Mapping[str, Any]) -> str:
    set_flags = [f for f in _FLAG_FIELDS if oracle[f]]
    return " and ".join(set_flags) if set_flags else "no effect flag set"


def check_lines(
    checker: RowChecker,
    lines: Iterable[tuple[int, bytes | None]],
    *,
    ends_with_newline: bool,
    max_rows: int,
    max_line_bytes: int,
) -> bool:
    """Parse and check each line of an ``episodes.jsonl``; return False if stopped early.

    A parse error on the last line of a file without a final newline is
    reported as ``structure.truncated`` (the upload was cut short).
    """
    file = checker.file
    sink = checker.sink
    pending: tuple[int, str, str] | None = None
    add = checker.add
    loads = orjson.loads
    dumps = orjson.dumps
    count = 0
    for number, data in lines:
        checker.last_line = number
        if pending is not None:
            checker.reject(*pending)
            pending = None
        if data is None:
            checker.reject(
                number,
                "structure.line_length",
                f"line is longer than the limit of {max_line_bytes} bytes "
                "(raise it with --max-line-bytes if the row is genuine)",
            )
            continue
        if not data or data.isspace():
            checker.reject(number, "structure.blank_line", "blank line; one row per line")
            continue
        count += 1
        if count > max_rows:
            sink.emit(
                "structure.row_count",
                f"more than {max_rows} rows (raise the limit with --max-rows); reading stopped",
                file,
                number,
            )
            checker.structure_failed = True
            return False
        # the common case inline: orjson parses it and re-serialises it to the same bytes
        # (see verifier.strictjson); anything else takes the strict slow path
        try:
            row = loads(data)
            fast = dumps(row) == data
        except orjson.JSONDecodeError:
            fast = False
        if not fast:
            try:
                row = loads_strict(data)
            except StrictJSONError as exc:
                pending = (number, _JSON_RULES.get(exc.rule, "structure.json"), exc.message)
                continue
        add(number, row)
    if pending is not None:
        number, rule, message = pending
        if rule == "structure.json" and not ends_with_newline:
            rule = "structure.truncated"
            message = f"the last line is cut short ({message}); upload the whole file"
        checker.reject(number, rule, message)
    return True
