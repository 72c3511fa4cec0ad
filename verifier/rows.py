"""The per-row pass: every row's structure, the pack's facts, re-scoring, the metric columns.

Every row is checked in one streaming pass and reduced to a few codes in
compact arrays, so a million rows never sit in memory as dicts. Per row:

* structure: the rules of :mod:`verifier.rowschema` (one table). A row that
  its generated fast test accepts yields its combination key; any other row
  goes through :func:`~verifier.rowschema.row_problems`, which names each
  problem;
* pack and re-score, once per distinct combination of the cached fields (task,
  arm, category, substrate, effect hash, labels, the oracle's reading, the
  agent's booleans): :meth:`RowChecker._combo` asks the pack's task facts
  (:mod:`verifier.pack`) and the one truth table (:mod:`verifier.rescore`) and
  keeps the findings, which every row of that combination then reports under
  its own line. There is no second, per-row version of these rules;
* bookkeeping on every row: episode ids, the (task, trial) pairs and seeds.

Reading lines into rows is :mod:`verifier.scan`'s; :meth:`RowChecker.export`
and :meth:`RowChecker.merge` let its parallel workers' parts be folded together.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import orjson

from effectbench.findings import CheckId, Finding
from effectbench.metrics import CODED_COLUMNS, COLLATERAL_COLUMN, Coded, CodedFrame
from verifier.pack import TaskFacts, count_problem, facts_findings
from verifier.report import FindingSink
from verifier.rescore import rescore_findings, truth_table_label
from verifier.rowschema import Problem, fast_key, row_problems

MAX_COMBOS = 65_536
"""Distinct row combinations cached; beyond this rows are still checked, only slower."""
TIMING_FIELDS = frozenset(("latency_s", "started_at", "finished_at"))
"""Row fields no re-run or copy reproduces (and a model call's ``latency_s``)."""
UNSCORED_FIELDS = TIMING_FIELDS | {"episode_id", "arm"}
"""Row fields left out of a row's digest: its timings and the names a copy may change."""
DIGEST_BYTES = 16
"""Bytes of one row's digest (blake2b)."""


def strip_fields(row: Any, fields: frozenset[str] = TIMING_FIELDS) -> Any:
    """Return ``row`` without ``fields`` (and without each model call's ``latency_s``)."""
    if not isinstance(row, dict):
        return row
    out = {k: v for k, v in row.items() if k not in fields}
    calls = out.get("model_calls")
    if calls and isinstance(calls, list):
        out["model_calls"] = [
            {k: v for k, v in c.items() if k != "latency_s"} if isinstance(c, dict) else c
            for c in calls
        ]
    return out


def row_digest(row: Mapping[str, Any]) -> bytes:
    """Return the digest of what a row scored: every field but :data:`UNSCORED_FIELDS`.

    Two rows with the same task, trial, seed, readings, labels, messages and
    costs have the same digest whatever their key order, spacing, timings,
    episode id or arm name, so a copied run is recognised however it was re-typed.
    """
    if not isinstance(row, dict):
        kept: Any = strip_fields(row, UNSCORED_FIELDS)
    else:  # strip_fields, by popping five keys from a copy rather than rebuilding the dict
        kept = row.copy()
        for name in UNSCORED_FIELDS:
            kept.pop(name, None)
        calls = kept.get("model_calls")
        if calls and isinstance(calls, list):
            kept["model_calls"] = strip_fields({"model_calls": calls})["model_calls"]
    data = orjson.dumps(kept, option=orjson.OPT_SORT_KEYS)
    return hashlib.blake2b(data, digest_size=DIGEST_BYTES).digest()


_ORACLE_MEASURED = (
    "verdict",
    "kind",
    "observed_count",
    "expected_count",
    "before_reachable",
    "effect_correct",
    "effect_wrong_persisted",
    "effect_absent",
)
_ROWS_LABEL = b"effectbench rows 1\0"
_MEASURED_LABEL = b"effectbench measured 1\0"


def measured_digest(row: Mapping[str, Any]) -> bytes:
    """Return the digest of what a row measured: its outcome, SWER variant, the agent's
    claim and halt and the oracle's reading (verdict, kind, counts, effect flags).

    Free text (messages, reasons, the oracle's channel), the environment's
    fingerprint, the seed, ids, timings, costs and model calls are left out: two runs
    that measured the same thing on a (task, trial) have the same digest however
    their rows were re-worded, re-seeded or re-fingerprinted.
    """
    agent, oracle = row["agent"], row["oracle"]
    values = [
        row["outcome"],
        row["swer_variant"],
        agent["reported_success"],
        agent["halted"],
        *(oracle[k] for k in _ORACLE_MEASURED),
    ]
    return hashlib.blake2b(orjson.dumps(values), digest_size=DIGEST_BYTES).digest()


def _fold(label: bytes, digests: Mapping[str, bytes | bytearray]) -> str:
    """Return one hash over per-task digest strips (each trial's digest, in trial order)."""
    digest = hashlib.sha256(label)
    for task_id in sorted(digests):
        digest.update(task_id.encode("utf-8", "surrogatepass") + b"\0")
        digest.update(digests[task_id])
    return "sha256:" + digest.hexdigest()


def measured_hash_of(rows: Iterable[Mapping[str, Any]], trials: int) -> str:
    """Return the measured hash of well-formed ``rows`` of a run of ``trials`` trials per
    task, as :meth:`RowChecker.measured_hash` computes it (the first row of a trial counts)."""
    strips: dict[str, bytearray] = {}
    seen: set[tuple[str, int]] = set()
    for row in rows:
        task_id, trial = row["task_id"], row["trial"]
        if not 0 <= trial < trials or (task_id, trial) in seen:
            continue
        seen.add((task_id, trial))
        strip = strips.setdefault(task_id, bytearray(DIGEST_BYTES * trials))
        strip[DIGEST_BYTES * trial : DIGEST_BYTES * (trial + 1)] = measured_digest(row)
    return _fold(_MEASURED_LABEL, strips)


@dataclass(frozen=True)
class Combo:
    """What the checks concluded about one combination of a row's cached fields."""

    code: int
    """Index of (arm, task, category, substrate, outcome, variant, reported) in the columns."""
    findings: tuple[Problem, ...]
    """The arm, pack and re-score findings every row of this combination gets."""
    task_known: bool
    """The task is in the declared pack split (its trials and seeds are checked)."""
    facts: TaskFacts | None = None
    """The task's facts when a per-row count rule applies to it (else None)."""


def _duplicate_id(eid: str, first: int) -> str:
    return (
        f"episode id {eid!r} appears more than once (first on line {first}); "
        "each row is one episode"
    )


def _duplicate_trial(task_id: str, trial: int, first: int) -> str:
    return f"({task_id!r}, trial {trial}) appears more than once (first on line {first})"


_DUPLICATE_FIELD = {
    CheckId.PACK_DUPLICATE_EPISODE_ID: "episode_id",
    CheckId.PACK_DUPLICATE_TRIAL: "trial",
}
_AFTER_DUPLICATES = {CheckId.PACK_TRIAL: 2, CheckId.PACK_SEED: 3}
"""Where a row's own findings fall among the duplicates a merge finds for it (see
:meth:`RowChecker.merge`): a row's findings come in the order :meth:`RowChecker.add`
emits them, the episode id's duplicate (1) before its trial's findings (2, then the
seed, 3), every other one (0) before both."""
_MERGED_RANK = {CheckId.PACK_DUPLICATE_EPISODE_ID: 1, CheckId.PACK_DUPLICATE_TRIAL: 2}


class RowChecker:
    """Check rows one by one and keep only what the summary and the final checks need."""

    def __init__(
        self,
        sink: FindingSink,
        file: str,
        *,
        tasks: Mapping[str, TaskFacts] | None,
        trials: int | None,
        seeds: Sequence[int] | None,
        arms: Sequence[str] = (),
        instance: bool = False,
    ) -> None:
        self.sink = sink
        self.file = file
        self.tasks = tasks
        self.instance = instance
        """The pack split is an instance drawn from a seed: a row of a task outside it is named
        once for the bundle (``pack.instance_task``, :mod:`verifier.instances`), not per row."""
        self.trials = trials
        self.seeds = list(seeds) if seeds is not None else None
        self.n_rows = 0
        """Rows seen (well-formed or not)."""
        self.n_valid = 0
        """Rows that passed the structure checks (the ones summarised)."""
        self.structure_failed = False
        self.last_line = 0
        """The last line number read (set by :func:`verifier.scan.check_lines`)."""
        self.arms: list[str] = list(arms)
        """Every arm seen, the first row's first (a parallel worker is given the file's)."""
        self._dup_refs: dict[tuple[str, int], Any] = {}
        """What each kept duplicate finding is about, by (check, line): the episode id or
        the task and trial, and the first line, so a merge can name the file's first line
        (see :meth:`merge`)."""
        self._ids: dict[str, int] = {}
        self._seen: dict[str, array[int]] = {}
        self._named: set[str] = set()
        """Every task id a valid row names, in the pack or not."""
        """Per task, the line of each trial's row (0: not seen yet)."""
        self._digests: dict[str, bytearray] = {}
        """Per task, each trial's :func:`row_digest` (zeros: not seen yet)."""
        self._measured: dict[str, bytearray] = {}
        """Per task, each trial's :func:`measured_digest` (zeros: not seen yet)."""
        self._combos: dict[tuple[Any, ...], Combo] = {}
        self._labels: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self._columns: dict[tuple[Any, ...], int] = {}
        self.c_code = array("i")
        self.c_cost = array("d")
        self.c_lat = array("d")
        self.c_trial = array("i")
        """Each well-formed row's trial (first-try success reads it)."""
        self.c_calls = array("b")
        """Whether each well-formed row made a model call (its cost is measured)."""

    # -- the per-row pass ----------------------------------------------------------------

    def add(self, line: int, row: Any) -> None:
        """Check one parsed row found at ``line`` (1-based)."""
        self.n_rows += 1
        key = fast_key(row)
        combo = None
        if key is not None:
            try:
                combo = self._combos.get(key)
            except TypeError:  # an unhashable value where a string belongs
                key = None
        if combo is None:
            problems = row_problems(row)
            if problems:
                self.structure_failed = True
                for rule, field, message in problems:
                    self.sink.emit(rule, message, self.file, line, field or None)
                return
            combo = self._combo(row, key)
        self.n_valid += 1
        sink, file = self.sink, self.file
        for rule, field, message in combo.findings:
            sink.emit(rule, message, file, line, field)
        if combo.facts is not None:
            problem = count_problem(row, combo.facts)
            if problem is not None:
                sink.emit(problem[0], problem[2], file, line, problem[1])
        eid = row["episode_id"]
        first = self._ids.get(eid)
        if first is None:
            self._ids[eid] = line
        else:
            message = _duplicate_id(eid, first)
            self._duplicate(CheckId.PACK_DUPLICATE_EPISODE_ID, line, (eid, first), message)
        if combo.task_known and self.trials is not None:
            self._trial(line, row)
        self.c_code.append(combo.code)
        self.c_cost.append(row.get("cost_usd", 0.0))
        self.c_lat.append(row.get("latency_s", 0.0))
        self.c_trial.append(row["trial"])
        self.c_calls.append(1 if row.get("model_calls") else 0)

    def _duplicate(self, check: CheckId, line: int, about: Any, message: str) -> None:
        """Report a row seen before (noting what it is about while the finding is kept)."""
        kept = self.sink.kept[check.family.value]
        before = len(kept)
        self.sink.emit(check, message, self.file, line, _DUPLICATE_FIELD[check])
        if len(kept) > before:
            self._dup_refs[(check.value, line)] = about

    def reject(self, line: int, rule: CheckId, message: str) -> None:
        """Record a line that could not be parsed into a row."""
        self.n_rows += 1
        self.structure_failed = True
        self.sink.emit(rule, message, self.file, line)

    def _trial(self, line: int, row: Mapping[str, Any]) -> None:
        task_id: str = row["task_id"]
        trial: int = row["trial"]
        seed: int | None = row["seed"]
        trials = self.trials
        assert trials is not None
        if trial >= trials:
            self.sink.emit(
                CheckId.PACK_TRIAL,
                f"trial {trial} is outside the declared trials_per_task {trials} (0..{trials - 1})",
                self.file,
                line,
                "trial",
            )
            return
        seen = self._seen.get(task_id)
        if seen is None:
            seen = self._seen[task_id] = array("i", bytes(4 * trials))
            self._digests[task_id] = bytearray(DIGEST_BYTES * trials)
            self._measured[task_id] = bytearray(DIGEST_BYTES * trials)
        first = seen[trial]
        if first:
            message = _duplicate_trial(task_id, trial, first)
            self._duplicate(CheckId.PACK_DUPLICATE_TRIAL, line, (task_id, trial, first), message)
        else:
            seen[trial] = line
            at = DIGEST_BYTES * trial
            self._digests[task_id][at : at + DIGEST_BYTES] = row_digest(row)
            self._measured[task_id][at : at + DIGEST_BYTES] = measured_digest(row)
        seeds = self.seeds
        if seeds is not None and trial < len(seeds) and seed != seeds[trial]:
            self.sink.emit(
                CheckId.PACK_SEED,
                f"trial {trial} ran with seed {seed!r}; the submission declares seed "
                f"{seeds[trial]} for it",
                self.file,
                line,
                "seed",
            )

    # -- once per distinct combination ------------------------------------------------------

    def _combo(self, row: Mapping[str, Any], key: tuple[Any, ...] | None) -> Combo:
        """Judge a structurally valid row's combination (and cache it under ``key``)."""
        arm: str = row["arm"]
        if arm not in self.arms:
            self.arms.append(arm)
        findings: list[Problem] = []
        if arm != self.arms[0]:
            findings.append(
                (
                    CheckId.PACK_ARM,
                    "arm",
                    f"arm {arm!r} differs from the first row's {self.arms[0]!r}; "
                    "a bundle is one arm",
                )
            )
        task_id: str = row["task_id"]
        self._named.add(task_id)
        facts = self.tasks.get(task_id) if self.tasks is not None else None
        if self.tasks is not None and facts is None and not self.instance:
            findings.append(
                (
                    CheckId.PACK_TASK,
                    "task_id",
                    f"task {task_id!r} is not in the declared pack split",
                )
            )
        if facts is not None:
            findings += facts_findings(row, facts)
        findings += rescore_findings(self._label_of(row), row)
        cols = (
            arm,
            task_id,
            row["category"],
            row["substrate"],
            row["outcome"],
            row["swer_variant"],
            row["agent"]["reported_success"],
        )
        combo = Combo(
            code=self._column_code(cols),
            findings=tuple(findings),
            task_known=facts is not None,
            facts=facts if facts is not None and facts.count_multiple > 1 else None,
        )
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
            label = self._labels[key] = truth_table_label(oracle, rs, caa)
        return label

    # -- after the pass ------------------------------------------------------------------

    def episode_ids(self) -> Mapping[str, int]:
        """Return every well-formed row's episode id and the line of its first row."""
        return self._ids

    def seen_tasks(self) -> set[str]:
        """Return the task ids that have at least one row."""
        return set(self._seen)

    def named_tasks(self) -> set[str]:
        """Return every task id a structurally valid row names (in the pack split or not)."""
        return set(self._named)

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

    def rows_hash(self) -> str | None:
        """Return the hash of the scored rows, in (task, trial) order (None when unread).

        It is the same for two bundles whose rows are identical up to key order,
        spacing, line order, timings, episode ids and arm name: a copy of a run
        keeps its rows hash (:func:`row_digest` of each row).
        """
        if self.structure_failed or not self.n_valid or self.trials is None:
            return None
        return _fold(_ROWS_LABEL, self._digests)

    def measured_hash(self) -> str | None:
        """Return the hash of what the rows measured, per (task, trial) in order (None when
        unread): equal for two bundles whose every (task, trial) has the same
        :func:`measured_digest`, whatever their free text, fingerprints or seeds."""
        if self.structure_failed or not self.n_valid or self.trials is None:
            return None
        return _fold(_MEASURED_LABEL, self._measured)

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
            "named": sorted(self._named),
            "digests": {task: bytes(d) for task, d in self._digests.items()},
            "dup_refs": self._dup_refs,
            "measured": {task: bytes(d) for task, d in self._measured.items()},
            "kept": self.sink.kept,
            "counts": self.sink.counts,
            "check_ids": self.sink.ids,
            "columns": sorted(self._columns, key=self._columns.__getitem__),
            "codes": self.c_code.tobytes(),
            "cost": self.c_cost.tobytes(),
            "lat": self.c_lat.tobytes(),
        }

    def _merge_ids(
        self,
        ids: Mapping[str, int],
        line_offset: int,
        found: list[tuple[int, int, bool, Finding]],
    ) -> None:
        """Take a worker's episode ids; one seen before is a duplicate (into ``found``)."""
        for eid, line in ids.items():
            first = self._ids.get(eid)
            if first is None:
                self._ids[eid] = line + line_offset
                continue
            dup = Finding(
                CheckId.PACK_DUPLICATE_EPISODE_ID,
                _duplicate_id(eid, first),
                self.file,
                line + line_offset,
                "episode_id",
            )
            found.append((line + line_offset, _MERGED_RANK[dup.check], True, dup))

    def _merge_seen(
        self,
        task_id: str,
        theirs: np.ndarray,
        their_digests: np.ndarray,
        their_measured: np.ndarray,
        found: list[tuple[int, int, bool, Finding]],
    ) -> None:
        """Take a worker's trials of ``task_id`` (their lines ``theirs``, made whole-file)
        with their digests; a trial both read is a duplicate (into ``found``)."""
        mine = self._seen.get(task_id)
        if mine is None:
            self._seen[task_id] = array("i", theirs.tobytes())
            self._digests[task_id] = bytearray(their_digests.tobytes())
            self._measured[task_id] = bytearray(their_measured.tobytes())
            return
        ours = np.frombuffer(mine, np.int32).copy()
        take = (ours == 0) & (theirs > 0)
        for strips, theirs_strip in (
            (self._digests, their_digests),
            (self._measured, their_measured),
        ):
            mine_strip = np.frombuffer(strips[task_id], np.uint8).reshape(-1, DIGEST_BYTES)
            mine_strip[take] = theirs_strip.reshape(-1, DIGEST_BYTES)[take]
        for trial in np.flatnonzero((ours > 0) & (theirs > 0)).tolist():
            dup = Finding(
                CheckId.PACK_DUPLICATE_TRIAL,
                _duplicate_trial(task_id, trial, int(ours[trial])),
                self.file,
                int(theirs[trial]),
                "trial",
            )
            found.append((int(theirs[trial]), _MERGED_RANK[dup.check], True, dup))
        merged = np.where(ours > 0, ours, theirs).astype(np.int32)
        self._seen[task_id] = array("i", merged.tobytes())

    def merge(self, part: Mapping[str, Any], line_offset: int) -> None:
        """Fold in the exported state of a worker that read lines after ``line_offset``.

        The result is a sequential read's, finding for finding and in order: the rows
        the worker saw first that this checker saw before are duplicates found here, each
        put among the worker's findings of its line where :meth:`add` would have emitted
        it; a duplicate the worker found within its part names the file's first line;
        only then are the first findings of each kind kept (the worker was given the
        file's first arm, so its rows were judged against it).
        """
        sink, file = self.sink, self.file
        found: list[tuple[int, int, bool, Finding]] = []
        """This part's findings: (line, rank within the line, found here, finding)."""
        for findings in part["kept"].values():
            for f in findings:
                if f.line is not None and f.file == file:
                    f = self._as_read_whole(f, part["dup_refs"], line_offset)
                found.append((f.line or 0, _AFTER_DUPLICATES.get(f.check, 0), False, f))
        self._merge_ids(part["ids"], line_offset, found)
        self.n_rows += part["n_rows"]
        self.n_valid += part["n_valid"]
        self._named.update(part["named"])
        self.structure_failed |= part["structure_failed"]
        self.last_line = line_offset + part["last_line"]
        for arm in part["arms"]:
            if arm not in self.arms:
                self.arms.append(arm)
        for task_id, seen in part["seen"].items():
            theirs = np.frombuffer(seen, np.int32)
            theirs = np.where(theirs > 0, theirs + line_offset, 0).astype(np.int32)
            their_digests = np.frombuffer(part["digests"][task_id], np.uint8)
            their_measured = np.frombuffer(part["measured"][task_id], np.uint8)
            self._merge_seen(task_id, theirs, their_digests, their_measured, found)
        sink.counts.update(part["counts"])
        sink.ids.update(part["check_ids"])
        for _, _, here, f in sorted(found, key=lambda item: item[:2]):  # stable: as emitted
            if here:
                sink.add(f)
                continue
            kept = sink.kept[f.check.family.value]  # the worker's: counted with its counts
            if len(kept) < sink.keep:
                kept.append(f)
        lut = np.array([self._column_code(cols) for cols in part["columns"]], np.int32)
        if part["codes"]:
            self.c_code.frombytes(lut[np.frombuffer(part["codes"], np.int32)].tobytes())
        self.c_cost.frombytes(part["cost"])
        self.c_lat.frombytes(part["lat"])

    def _as_read_whole(
        self, f: Finding, refs: Mapping[tuple[str, int], Any], line_offset: int
    ) -> Finding:
        """Return a worker's finding as a sequential read says it: at its line in the file,
        and a duplicate naming the file's first line (not the part's) when it is earlier."""
        assert f.line is not None
        about = refs.get((f.check.value, f.line))
        message = f.message
        if f.check is CheckId.PACK_DUPLICATE_EPISODE_ID and about is not None:
            eid, first = about
            message = _duplicate_id(eid, self._ids.get(eid, first + line_offset))
        elif f.check is CheckId.PACK_DUPLICATE_TRIAL and about is not None:
            task_id, trial, first = about
            seen = self._seen.get(task_id)
            earlier = seen[trial] if seen is not None else 0
            message = _duplicate_trial(task_id, trial, earlier or first + line_offset)
        return replace(f, line=f.line + line_offset, message=message)

    def _column_code(self, cols: tuple[Any, ...]) -> int:
        code = self._columns.get(cols)
        if code is None:
            code = self._columns[cols] = len(self._columns)
        return code

    def frame(self, collateral: Sequence[bool] | None = None) -> CodedFrame:
        """Return the summary frame of the well-formed rows (for ``summarize``; no pandas);
        with ``collateral`` (one flag per row, from their receipts) the collateral-write
        events."""
        combos = sorted(self._columns, key=self._columns.__getitem__)
        codes = np.frombuffer(self.c_code, dtype=np.int32)
        coded: dict[str, Coded] = {}
        for j, name in enumerate(CODED_COLUMNS):
            values = [c[j] for c in combos]
            categories = sorted(set(values))
            index = {v: i for i, v in enumerate(categories)}
            lut = np.array([index[v] for v in values], dtype=np.int32)
            coded[name] = Coded(lut[codes], categories)
        arrays = {
            "reported_success": np.array([c[6] for c in combos], dtype=np.bool_)[codes],
            "cost_usd": np.frombuffer(self.c_cost, dtype=np.float64),
            "latency_s": np.frombuffer(self.c_lat, dtype=np.float64),
        }
        if collateral is not None and len(collateral) == len(codes):
            arrays[COLLATERAL_COLUMN] = np.asarray(collateral, dtype=np.bool_)
        return CodedFrame(coded, arrays)
