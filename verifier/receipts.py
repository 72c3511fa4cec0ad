"""The ``receipt`` family: every row's receipt is there, whole, and derives the row again.

A bundle of format 2 holds one receipt per row (line *i* of ``receipts.jsonl`` for the row
on line *i* of ``episodes.jsonl``) and the key frames they name in ``frames/``. For every
pair the check asks:

* is the receipt a receipt (:class:`effectbench.receipts.model.Receipt`, strict), of this
  row's episode, trial and seed (``receipt.malformed``, ``receipt.order``, ``receipt.missing``,
  ``receipt.extra``)?
* is its task the pack's task (title, category, substrate, whether the correct action was
  available, the mechanism the pack states; ``receipt.task``)?
* are its claim and reading the row's (``receipt.claim``, ``receipt.reading``), and does the
  one truth table (:func:`effectbench.classify.classify`), asked with them and the task, give
  the receipt's truth row and the row's label (``receipt.outcome``)?
* does each declared effect's reading name the pack's contract resolved for the trial, does
  the judge (:func:`effectbench.judge.decide`) give its verdict from its evidence again, does
  the evidence of a new-records effect agree with the rows the change set inserted, and does
  the reading follow (confirmed only when every effect holds; confirmed whenever every effect
  holds and nothing collateral changed; ``receipt.evidence``)?
* does the change set name only the pack's tables and the untouched ones right
  (``receipt.change_set``), are its collateral marks the task's allowance applied again
  (:func:`effectbench.changes.collateral`; ``receipt.collateral``), and does it hold what the
  reading reports: a write when the effect persisted wrong, exactly the collateral changes
  its reason names, the deletions its evidence counts as lost (``receipt.thinned``)?
* are its frames files of ``frames/`` with the hash their names state, images within the
  limits (:mod:`verifier.frames`: the image formats, their metadata, and the decoded pixels
  per frame and per bundle, read from each header), that decode, once, to the size their
  headers state (in a child process held to a memory and a time limit), and (on a screen
  substrate of a pack with front ends) the first, report and last frame all there
  (``receipt.frame_*``, ``receipt.frames``)? Does ``frames/`` hold a frame no receipt
  names (``receipt.frame_unreferenced``)?
* is every text plain text, no markup or script address (``receipt.markup``)?

Nothing here re-implements a rule: each question is put to the engine function that the
harness used to write the receipt. The result also gives each row's collateral flag (the
collateral-write rate's events) and each (task, trial)'s change-set digest (reproduction).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from effectbench.bundle import (
    FRAMES_DIR,
    RECEIPTS_FILE,
    RECEIPTS_VERSION,
    SubmissionHeader,
    iter_episode_lines,
)
from effectbench.changes import AllowedChange, collateral, plain_row, plain_value
from effectbench.classify import InconsistentReading, true_state
from effectbench.effects import Effect, EffectKind
from effectbench.findings import CheckId
from effectbench.hashing import canonical_hash
from effectbench.judge import selects
from effectbench.kit.tables import COLLATERAL_REASON, describe_changes
from effectbench.receipts.collect import allowances
from effectbench.receipts.derive import decided, describe, label_of, row_changes
from effectbench.receipts.model import FRAME_NAME, FRAME_ROLES, Change, EffectReading, Receipt
from effectbench.schema import EpisodeRecord, Substrate, TaskSpec, TrueState, Verdict
from effectbench.seam import (
    BenchmarkProvider,
    ChecksFrontEnds,
    DeclaresChanges,
    DeclaresInitialState,
    StatesMechanism,
)
from verifier.frames import FrameBudget, Header, ToDecode, decode_frames, frame_header
from verifier.instances import instance_seed, is_fresh, rerun_hint
from verifier.limits import Limits
from verifier.pack import Kept
from verifier.report import FindingSink, Step

SCREEN_SUBSTRATES = frozenset({Substrate.WEB, Substrate.DESKTOP, Substrate.REMOTE_DISPLAY})
"""Substrates whose episodes show pixels (on a pack with real front ends)."""
MARKUP = re.compile(r"<\s*[A-Za-z!/?]|javascript\s*:|vbscript\s*:", re.IGNORECASE)
"""What makes a text markup or a script: a tag's start, a script address."""
ADDRESS_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s"})
"""The letters other than ASCII ones that :data:`MARKUP`'s case-blind match takes for a letter
of ``javascript`` or ``vbscript`` (dotted and dotless i, long s), as that letter."""


def markup_in(text: str) -> re.Match[str] | None:
    """Return :data:`MARKUP`'s first match in ``text``, or None.

    A match needs a ``<``, or a script address, which lower-cased (after
    :data:`ADDRESS_FOLD`) reads ``javascript`` or ``vbscript``: a text with neither is
    decided without the case-blind search (the common case, 30 times faster).
    """
    if "<" not in text:
        folded = text.translate(ADDRESS_FOLD) if not text.isascii() else text
        low = folded.lower()
        if "javascript" not in low and "vbscript" not in low:
            return None
    return MARKUP.search(text)


@dataclass
class ReceiptResult:
    """What the receipt step established."""

    step: Step
    collateral: list[bool] | None = None
    """Per row, in file order: a change outside the task's allowance (None when unknown)."""
    change_sets: dict[tuple[str, int], str] = field(default_factory=dict)
    """Per (task, trial): the digest of its receipt's change set (for reproduction)."""
    frame_sets: dict[tuple[str, int], tuple[str, ...]] = field(default_factory=dict)
    """Per (task, trial) on a screen: its receipt's frame names in order (for reproduction)."""


def change_set_digest(receipt: Receipt) -> str:
    """Return the digest of a receipt's change set (what reproduction compares)."""
    changes = receipt.changes
    return canonical_hash(None if changes is None else changes.model_dump(mode="json"))


def _texts(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """Yield every text inside a receipt's JSON data (keys included) with its field path."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            where = f"{path}.{k}" if path else str(k)
            yield where, str(k)
            yield from _texts(v, where)
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            yield from _texts(v, f"{path}[{i}]")


def _joined_texts(value: Any) -> str:
    """Return every text inside a receipt's JSON data (keys included) joined by NUL.

    :data:`MARKUP` matches no NUL, so it finds a match in the joined text exactly when it
    finds one in some text on its own (:func:`_texts` then says where).
    """
    texts: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, Mapping):
            texts.extend(str(k) for k in item)
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return "\0".join(texts)


def _holds_markup(value: Any) -> bool:
    """Return whether some text inside a receipt's JSON data (keys included) holds
    :data:`MARKUP` (the answer of :func:`_texts` text by text, in one search).

    Compact JSON holds every text as it is unless the text has a character JSON escapes (a
    quote, a backslash, a control character). Without a backslash in it, a text's match is
    therefore a match in the JSON, which is searched at once; a match there is confirmed text
    by text, so one spanning two texts is dismissed. With a backslash, or data JSON cannot
    hold, the texts are joined by NUL and searched (:func:`_joined_texts`).
    """
    try:
        text: str | None = orjson.dumps(value).decode()
    except orjson.JSONEncodeError:  # an integer past 64 bits, a key that is not a text
        text = None
    if text is None or "\\" in text:
        return markup_in(_joined_texts(value)) is not None
    if markup_in(text) is None:
        return False
    return any(markup_in(t) for _, t in _texts(value, ""))


class _Task:
    """What the check needs of one task: its spec, and per seed the resolved contract, the
    initial record and the allowed changes, each worked out once. It keeps no provider: a
    task's data depend on the pack's code and its fingerprint only (:func:`receipt_tasks`)."""

    def __init__(self, pack: BenchmarkProvider, spec: TaskSpec) -> None:
        self.spec = spec
        self.mechanism = pack.mechanism(spec) if isinstance(pack, StatesMechanism) else ""
        self._trials: dict[int | None, tuple[dict[str, Any], tuple[Effect, ...]]] = {}
        self._initial: dict[int | None, dict[str, dict[tuple[Any, ...], Mapping[str, Any]]]] = {}
        self._allowed: dict[
            tuple[int | None, tuple[str, ...]], tuple[AllowedChange, ...] | None
        ] = {}

    def trial(
        self, pack: BenchmarkProvider, seed: int | None
    ) -> tuple[dict[str, Any], tuple[Effect, ...]]:
        if seed not in self._trials:
            params = pack.trial_params(self.spec, seed if seed is not None else 0)
            effects = tuple(e.resolve(params) for e in self.spec.expected_effect)
            self._trials[seed] = (params, effects)
        return self._trials[seed]

    def allowed(
        self, pack: BenchmarkProvider, seed: int | None, tables: list[str]
    ) -> tuple[AllowedChange, ...] | None:
        key = (seed, tuple(tables))
        if key not in self._allowed:
            params, _ = self.trial(pack, seed)
            self._allowed[key] = allowances(pack, self.spec, params, tables)
        return self._allowed[key]

    def initial(
        self, pack: BenchmarkProvider, seed: int | None
    ) -> dict[str, dict[tuple[Any, ...], Mapping[str, Any]]] | None:
        """The record as provisioned, per table its rows (as the pack gives them) by key;
        None: the pack says not. :func:`plain_row` gives a row as a change set states it."""
        if not isinstance(pack, DeclaresInitialState):
            return None
        if seed not in self._initial:
            params, _ = self.trial(pack, seed)
            tables = pack.initial_tables(self.spec, params)
            self._initial[seed] = {
                name: {t.key_of(r): r for r in t.rows} for name, t in tables.items()
            }
        return self._initial[seed]


TASKS_KEPT = 4
"""How many packs' task data a process keeps between bundles (:func:`receipt_tasks`)."""
_kept_tasks: Kept[tuple[type, str], dict[str, _Task]] = Kept(TASKS_KEPT)


def receipt_tasks(pack: BenchmarkProvider, pack_fingerprint: str = "") -> dict[str, _Task]:
    """Return the check's data of every task of ``pack``, by task id.

    With the pack's fingerprint (its manifest's hash: the tasks, their payload wiring, the
    system of record), the data are kept for the next bundle of the same provider class and
    fingerprint, for the last :data:`TASKS_KEPT` packs: a board's bundles mostly share a pack,
    and the initial records and allowances were worked out again for each. Without it, the
    data are this bundle's own.
    """

    def make() -> dict[str, _Task]:
        return {t.task_id: _Task(pack, t) for t in pack.tasks()}

    if not pack_fingerprint:
        return make()
    return _kept_tasks.get((type(pack), pack_fingerprint), make)


class ReceiptChecker:
    """Check the receipts of one bundle against its rows and its pack."""

    def __init__(
        self,
        sink: FindingSink,
        pack: BenchmarkProvider,
        frames: Mapping[str, Path],
        limits: Limits,
        pack_fingerprint: str = "",
    ) -> None:
        self.sink = sink
        self.pack = pack
        self.frames = frames
        self.limits = limits
        self.tasks = receipt_tasks(pack, pack_fingerprint)
        self.tables = set(pack.record_tables()) if isinstance(pack, DeclaresChanges) else None
        self.screens = isinstance(pack, ChecksFrontEnds)
        self.named: set[str] = set()
        self._frame_verdicts: dict[str, tuple[CheckId, str] | None] = {}
        self._budget = FrameBudget(limits.max_bundle_frame_pixels)
        self._to_decode: list[ToDecode] = []
        """Frames whose header passed, decoded together after every pair (:meth:`finish`)."""
        self.collateral: list[bool] | None = []
        self.change_sets: dict[tuple[str, int], str] = {}
        self.frame_sets: dict[tuple[str, int], tuple[str, ...]] = {}
        self.episode_ids: Mapping[str, int] = {}
        """Every row's episode id (to tell a receipt of no row from one out of place)."""

    def _emit(self, check: CheckId, message: str, line: int, where: str | None = None) -> None:
        self.sink.emit(check, message, RECEIPTS_FILE, line, where)

    def pair(self, line: int, row: Mapping[str, Any] | None, raw: bytes | None) -> None:
        """Check receipt line ``line`` (``raw``; None: no such line) against its row."""
        if raw is None:
            self._unknown()
            self._emit(
                CheckId.RECEIPT_MISSING,
                f"no receipt for the row on line {line} of episodes.jsonl "
                f"({row.get('episode_id') if row else '?'}); receipts.jsonl ends before it",
                line,
            )
            return
        receipt = self._parse(line, raw)
        if receipt is None:
            self._unknown()
            return
        self.named.update(f.name for f in receipt.frames if FRAME_NAME.fullmatch(f.name))
        if row is None:
            self._unknown()
            self._emit(
                CheckId.RECEIPT_EXTRA,
                f"a receipt for episode {receipt.episode_id!r}, which has no row (episodes.jsonl "
                "has fewer lines)",
                line,
                "episode_id",
            )
            return
        record = EpisodeRecord.model_validate(row)
        if not self._same_episode(line, receipt, record):
            self._unknown()
            return
        self._check(line, receipt, record, raw)

    def _unknown(self) -> None:
        self.collateral = None

    def _parse(self, line: int, raw: bytes) -> Receipt | None:
        try:
            return Receipt.from_json(raw)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"]) or None
            self._emit(CheckId.RECEIPT_MALFORMED, f"not a receipt: {err['msg']}", line, where)
        except ValueError as exc:
            self._emit(CheckId.RECEIPT_MALFORMED, f"not JSON: {str(exc)[:160]}", line)
        return None

    def _same_episode(self, line: int, receipt: Receipt, row: EpisodeRecord) -> bool:
        if receipt.episode_id != row.episode_id and receipt.episode_id not in self.episode_ids:
            self._emit(
                CheckId.RECEIPT_EXTRA,
                f"a receipt for episode {receipt.episode_id!r}, which has no row; row {line} is "
                f"episode {row.episode_id!r}",
                line,
                "episode_id",
            )
            return False
        if receipt.episode_id != row.episode_id:
            self._emit(
                CheckId.RECEIPT_ORDER,
                f"this line holds the receipt of episode {receipt.episode_id!r}, but row {line} "
                f"is episode {row.episode_id!r}: receipts follow the rows, one per row",
                line,
                "episode_id",
            )
            return False
        if (receipt.task_id, receipt.trial, receipt.seed) != (row.task_id, row.trial, row.seed):
            self._emit(
                CheckId.RECEIPT_ORDER,
                f"the receipt is of task {receipt.task_id!r} trial {receipt.trial} seed "
                f"{receipt.seed}, its row of task {row.task_id!r} trial {row.trial} seed "
                f"{row.seed}",
                line,
                "task_id",
            )
            return False
        return True

    def _check(self, line: int, receipt: Receipt, row: EpisodeRecord, raw: bytes) -> None:
        task = self.tasks.get(row.task_id)
        if task is None:  # the pack check names the row
            self._unknown()
            return
        self._check_markup(line, receipt, raw)
        self._check_task(line, receipt, task)
        self._check_claim(line, receipt, row, task)
        self._check_evidence(line, receipt, row, task)
        self._check_frames(line, receipt, task)
        if receipt.changes is not None:
            self.change_sets[(row.task_id, row.trial)] = change_set_digest(receipt)
        if receipt.frames:
            self.frame_sets[(row.task_id, row.trial)] = tuple(f.name for f in receipt.frames)
        if self.collateral is not None:
            if receipt.collateral is None:
                self.collateral = None
            else:
                self.collateral.append(receipt.collateral)

    def _check_markup(self, line: int, receipt: Receipt, raw: bytes) -> None:
        """``receipt.markup``: no text of the receipt (``raw``: its line) holds markup."""
        text = raw.decode("utf-8", "replace")  # it parsed as JSON: it is UTF-8
        if "\\" not in text and markup_in(text) is None:
            return  # nothing escaped: every text of the receipt is in its line as it is
        data = receipt.to_json()
        if not _holds_markup(data):
            return  # the common case, decided without building every field's path
        for where, text in _texts(data, ""):
            found = markup_in(text)
            if found is not None:
                self._emit(
                    CheckId.RECEIPT_MARKUP,
                    f"holds {found.group(0)!r} at position {found.start()}: a receipt is plain "
                    "text, never markup or a script address",
                    line,
                    where,
                )
                return

    def _check_task(self, line: int, receipt: Receipt, task: _Task) -> None:
        spec = task.spec
        want = {
            "title": spec.title,
            "category": spec.category,
            "substrate": spec.substrate,
            "correct_action_available": spec.correct_action_available,
            "mechanism": task.mechanism,
        }
        for name, value in want.items():
            got = getattr(receipt.task, name)
            if got != value:
                self._emit(
                    CheckId.RECEIPT_TASK,
                    f"the receipt says {got!r}, the pack's task {value!r}",
                    line,
                    f"task.{name}",
                )
                return

    def _check_claim(self, line: int, receipt: Receipt, row: EpisodeRecord, task: _Task) -> None:
        if receipt.claim != row.agent:
            self._emit(
                CheckId.RECEIPT_CLAIM,
                f"the receipt quotes {receipt.claim.model_dump()!r:.160}, the row reports "
                f"{row.agent.model_dump()!r:.160}",
                line,
                "claim",
            )
        if receipt.reading != row.oracle:
            self._emit(
                CheckId.RECEIPT_READING,
                f"the receipt's reading ({receipt.reading.verdict.value}: "
                f"{receipt.reading.reason!r:.100}) is not the row's ({row.oracle.verdict.value}: "
                f"{row.oracle.reason!r:.100})",
                line,
                "reading",
            )
        available = task.spec.correct_action_available
        truth = receipt.truth
        try:
            label = label_of(receipt.claim.reported_success, receipt.reading, available)
            state = true_state(receipt.reading)
        except InconsistentReading as exc:
            self._emit(CheckId.RECEIPT_OUTCOME, f"its reading names no true state: {exc}", line)
            return
        derived = None if label is None else (label.outcome, label.swer_variant)
        stated = (truth.outcome, truth.swer_variant)
        inputs = (truth.reported_success, truth.true_state, truth.correct_action_available)
        if inputs != (receipt.claim.reported_success, state, available):
            self._emit(
                CheckId.RECEIPT_OUTCOME,
                f"the truth row's inputs {[str(i) for i in inputs]} are not the receipt's claim "
                f"({receipt.claim.reported_success}), the true state of its reading "
                f"({state.value}) and the task's correct_action_available ({available})",
                line,
                "truth",
            )
        elif derived != stated or stated != (row.outcome, row.swer_variant):
            said = "unscoreable" if derived is None else f"{derived[0].value}/{derived[1].value}"
            self._emit(
                CheckId.RECEIPT_OUTCOME,
                f"the truth table gives {said} for the receipt's claim and reading; the receipt "
                f"says {truth.outcome.value}/{truth.swer_variant.value}, the row "
                f"{row.outcome.value}/{row.swer_variant.value}",
                line,
                "truth.outcome",
            )

    def _check_evidence(self, line: int, receipt: Receipt, row: EpisodeRecord, task: _Task) -> None:
        declares = self.tables is not None
        changes, effects = receipt.changes, receipt.effects
        if changes is None or effects is None:
            if declares:
                self._emit(
                    CheckId.RECEIPT_CHANGE_SET,
                    "the receipt has no change set or no effect readings, but the pack's "
                    "oracle reads its record as tables",
                    line,
                    "changes",
                )
            return
        if self._bad_tables(line, receipt) or self._not_from_initial(line, receipt, row, task):
            return
        _, contract = task.trial(self.pack, row.seed)
        if len(effects) != len(contract):
            self._emit(
                CheckId.RECEIPT_EVIDENCE,
                f"{len(effects)} effect readings for a contract of {len(contract)} effects",
                line,
                "effects",
            )
            return
        holds = []
        for i, (effect, reading) in enumerate(zip(contract, effects, strict=True)):
            state = self._effect_state(line, i, effect, reading, receipt)
            if state is None:
                return
            holds.append(state is TrueState.CORRECT)
        if self._check_collateral(line, receipt, row, task) and not self._check_reported(
            line, receipt
        ):
            return  # the change set was thinned: the verdict's checks below would read it
        self._check_verdict(line, receipt, row, holds)

    def _effect_state(
        self, line: int, i: int, effect: Effect, reading: EffectReading, receipt: Receipt
    ) -> TrueState | None:
        """Effect ``i``'s true state as its reading's evidence decides it, when the reading
        describes the contract's effect and states that decision (else None: refused)."""
        assert receipt.changes is not None
        got = reading.model_dump(exclude={"evidence", "verdict", "state"})
        want = describe(i, effect, receipt.changes.tables)
        if got != want:
            self._wrong_description(line, i, got, want)
            return None
        verdict, state = decided(effect, reading)
        if (verdict, state) != (reading.verdict, reading.state):
            self._emit(
                CheckId.RECEIPT_EVIDENCE,
                f"effect {i}'s evidence gives {verdict.value} ({state.value}), the receipt "
                f"says {reading.verdict.value} ({reading.state.value})",
                line,
                f"effects[{i}].verdict",
            )
            return None
        if effect.count_new_only and not self._new_rows_agree(line, i, effect, receipt):
            return None
        return state

    def _wrong_description(
        self, line: int, i: int, got: dict[str, Any], want: dict[str, Any]
    ) -> None:
        """Effect ``i``'s reading describes another effect than the contract's: on a fresh
        instance, a payload not drawn from its seed."""
        wrong = next(k for k in want if got.get(k) != want[k])
        payload = wrong in ("match", "expected") and is_fresh(self.pack)
        self._emit(
            CheckId.PACK_INSTANCE_PAYLOAD if payload else CheckId.RECEIPT_EVIDENCE,
            f"effect {i} says {wrong} {got.get(wrong)!r}; the pack's contract for this "
            f"trial says {want[wrong]!r}"
            + (
                f": the payload was not drawn from the bundle's instance seed; "
                f"{rerun_hint(self.pack.name, instance_seed(self.pack))}"
                if payload
                else ""
            ),
            line,
            f"effects[{i}].{wrong}",
        )

    def _check_verdict(
        self, line: int, receipt: Receipt, row: EpisodeRecord, holds: list[bool]
    ) -> None:
        """The reading's verdict agrees with the effects that hold and the collateral."""
        confirmed = row.oracle.verdict is Verdict.CONFIRMED
        clean = receipt.collateral is False
        if confirmed and not all(holds):
            self._emit(
                CheckId.RECEIPT_EVIDENCE,
                "the reading is confirmed, yet a declared effect does not hold in the receipt's "
                "evidence",
                line,
                "reading.verdict",
            )
        elif not confirmed and all(holds) and clean:
            self._emit(
                CheckId.RECEIPT_EVIDENCE,
                "every declared effect holds and nothing collateral changed, yet the reading is "
                "not confirmed",
                line,
                "reading.verdict",
            )

    def _bad_tables(self, line: int, receipt: Receipt) -> bool:
        changes = receipt.changes
        assert changes is not None
        if self.tables is not None:
            unknown = sorted(set(changes.tables) - self.tables)
            if unknown:
                self._emit(
                    CheckId.RECEIPT_CHANGE_SET,
                    f"table {unknown[0]!r} is not one of the pack's "
                    f"({', '.join(sorted(self.tables))})",
                    line,
                    "changes.tables",
                )
                return True
        touched = {c.table for c in changes.rows}
        outside = sorted(touched - set(changes.tables))
        untouched = sorted(set(changes.tables) - touched)
        if outside or changes.untouched != untouched or changes.tables != sorted(changes.tables):
            what = (
                f"a change on table {outside[0]!r}, which the change set does not list"
                if outside
                else f"untouched tables {changes.untouched}, but the changes leave {untouched}"
            )
            self._emit(CheckId.RECEIPT_CHANGE_SET, what, line, "changes.untouched")
            return True
        return False

    def _not_from_initial(
        self, line: int, receipt: Receipt, row: EpisodeRecord, task: _Task
    ) -> bool:
        """Say (with its finding) whether the change set's before side is not the record as
        the pack provisions it: an updated or deleted row that was not there, or not with
        the values stated; an inserted row that was there already."""
        changes = receipt.changes
        if changes is None or not changes.rows:
            return False  # nothing changed: no before side to compare
        initial = task.initial(self.pack, row.seed)
        if initial is None:
            return False
        for i, c in enumerate(changes.rows):
            provisioned = initial.get(c.table, {}).get(
                tuple(plain_value(v) for v in c.key.values())
            )
            problem = _before_side_problem(
                c, None if provisioned is None else plain_row(provisioned)
            )
            if problem is not None:
                self._emit(
                    CheckId.RECEIPT_CHANGE_SET,
                    f"the {c.change} row {dict(c.key)} of {c.table} {problem} (the pack's "
                    "provisioned record says otherwise)",
                    line,
                    f"changes.rows[{i}]",
                )
                return True
        return False

    def _new_rows_agree(self, line: int, i: int, effect: Effect, receipt: Receipt) -> bool:
        """A new-records effect picks exactly the inserted rows its selector picks."""
        changes, reading = receipt.changes, (receipt.effects or [])[i]
        assert changes is not None
        table = reading.table
        picked = [
            c.values
            for c in changes.rows
            if c.change == "inserted"
            and c.table == table
            and selects(c.values, effect.match, effect.idempotency_key)
        ]
        values = (
            [r.get(effect.field or "") for r in picked]
            if effect.kind is EffectKind.FIELD_EQUALS
            else []
        )
        if reading.evidence.matched != len(picked) or reading.evidence.values != values:
            self._emit(
                CheckId.RECEIPT_EVIDENCE,
                f"effect {i} counts {reading.evidence.matched} new records "
                f"{reading.evidence.values!r:.80}, but the change set inserts {len(picked)} it "
                f"selects {values!r:.80}",
                line,
                f"effects[{i}].evidence",
            )
            return False
        return True

    def _check_collateral(
        self, line: int, receipt: Receipt, row: EpisodeRecord, task: _Task
    ) -> bool:
        """``receipt.collateral``: the marks are the task's allowance applied again (say
        whether they are)."""
        changes = receipt.changes
        assert changes is not None
        allowed = task.allowed(self.pack, row.seed, changes.tables)
        marks = [c.collateral for c in changes.rows]
        if allowed is None:
            if any(marks) or receipt.collateral is not None:
                self._emit(
                    CheckId.RECEIPT_COLLATERAL,
                    "the pack states no allowed change set, so nothing can be marked collateral",
                    line,
                    "collateral",
                )
                return False
            return True
        want = list(collateral(row_changes(changes), allowed))
        if marks != want:
            at = next(i for i, (a, b) in enumerate(zip(marks, want, strict=True)) if a != b)
            c = changes.rows[at]
            self._emit(
                CheckId.RECEIPT_COLLATERAL,
                f"the {c.change} row {c.key} of {c.table} is marked "
                f"{'collateral' if marks[at] else 'allowed'}; the task's allowed change set "
                f"makes it {'collateral' if want[at] else 'allowed'}",
                line,
                f"changes.rows[{at}].collateral",
            )
        elif receipt.collateral != any(want):
            self._emit(
                CheckId.RECEIPT_COLLATERAL,
                f"collateral is {receipt.collateral}, but the marked changes say {any(want)}",
                line,
                "collateral",
            )
        else:
            return True
        return False

    def _check_reported(self, line: int, receipt: Receipt) -> bool:
        """``receipt.thinned``: the change set holds what the oracle's reading reports (say
        whether it does).

        * a reading whose effect persisted wrong reports a write: the change set holds one;
        * a reading whose reason reports collateral changes (the kit's words,
          :data:`~effectbench.kit.tables.COLLATERAL_REASON`) names exactly the changes the
          change set marks collateral (:func:`~effectbench.kit.tables.describe_changes`);
        * an effect whose evidence says records present before were lost: the change set
          deletes at least as many rows of its table.
        """
        changes = receipt.changes
        assert changes is not None
        reading = receipt.reading
        if reading.effect_wrong_persisted and not changes.rows:
            self._emit(
                CheckId.RECEIPT_THINNED,
                "the reading reports a wrong effect that persisted, but the change set holds no "
                "change: what the oracle read changed is left out",
                line,
                "changes.rows",
            )
            return False
        if reading.reason.startswith(COLLATERAL_REASON):
            marked = [c for c in changes.rows if c.collateral]
            named = describe_changes(
                row_changes(changes.model_copy(update={"rows": marked})).changes
            )
            reported = reading.reason[len(COLLATERAL_REASON) :]
            if named != reported:
                self._emit(
                    CheckId.RECEIPT_THINNED,
                    f"the reading reports the collateral changes {reported!r:.200}; the change "
                    f"set marks {named or 'none'!r:.200}",
                    line,
                    "changes.rows",
                )
                return False
        for i, effect in enumerate(receipt.effects or []):
            lost = effect.evidence.lost
            deleted = sum(
                1 for c in changes.rows if c.change == "deleted" and effect.table in (None, c.table)
            )
            if lost > deleted:
                self._emit(
                    CheckId.RECEIPT_THINNED,
                    f"effect {i}'s evidence says {lost} record(s) of {effect.table} were lost; the "
                    f"change set deletes {deleted}",
                    line,
                    f"effects[{i}].evidence.lost",
                )
                return False
        return True

    def _check_frames(self, line: int, receipt: Receipt, task: _Task) -> None:
        for i, ref in enumerate(receipt.frames):
            where = f"frames[{i}].name"
            if FRAME_NAME.fullmatch(ref.name) is None:
                self._emit(
                    CheckId.RECEIPT_FRAME_NAME,
                    f"frame name {ref.name!r:.80} is not <sha256>.webp or .png; it is never opened",
                    line,
                    where,
                )
                continue
            self.named.add(ref.name)
            path = self.frames.get(ref.name)
            if path is None:
                self._emit(
                    CheckId.RECEIPT_FRAME_MISSING,
                    f"frame {ref.name} is not in {FRAMES_DIR}/",
                    line,
                    where,
                )
                continue
            if ref.name not in self._frame_verdicts:
                found = frame_header(path, ref.name, self.limits, self._budget)
                if isinstance(found, Header):
                    self._frame_verdicts[ref.name] = None
                    self._to_decode.append(ToDecode(path, ref.name, found))
                else:
                    self._frame_verdicts[ref.name] = found
                    self.sink.emit(found[0], found[1], f"{FRAMES_DIR}/{ref.name}")
        if self.screens and task.spec.substrate in SCREEN_SUBSTRATES:
            roles = {ref.role for ref in receipt.frames}
            lacking = [r for r in FRAME_ROLES if r not in roles]
            if lacking:
                self._emit(
                    CheckId.RECEIPT_FRAMES,
                    f"an episode on {task.spec.substrate.value} without its {lacking[0]} frame",
                    line,
                    "frames",
                )

    def finish(self) -> None:
        """After every pair: decode the frames whose headers passed (in child processes,
        :func:`verifier.frames.decode_frames`) and report frames no receipt names."""
        said = decode_frames(self._to_decode, self.limits)
        for frame, problem in zip(self._to_decode, said, strict=True):
            if problem is not None:
                self.sink.emit(CheckId.RECEIPT_FRAME_IMAGE, problem, f"{FRAMES_DIR}/{frame.name}")
        for name in sorted(set(self.frames) - self.named):
            self.sink.emit(
                CheckId.RECEIPT_FRAME_UNREFERENCED,
                "no receipt names this frame; remove it",
                f"{FRAMES_DIR}/{name}",
            )


def unranked_reason(header: SubmissionHeader | None, pack: BenchmarkProvider | None) -> str:
    """Say why a bundle may not be ranked for want of receipts, or "".

    A pack that records receipts (it names its record's tables and the changes each task
    allows, :class:`~effectbench.seam.DeclaresChanges`: its receipts hold the change sets the
    collateral-write rate is counted from) ranks bundles of format
    :data:`~effectbench.bundle.RECEIPTS_VERSION` only; a bundle of an earlier format is shown
    as an unranked preview, with this reason.
    """
    if header is None or header.effectbench_bundle_version >= RECEIPTS_VERSION:
        return ""
    records = isinstance(pack, DeclaresChanges)
    if not records:
        return ""
    return (
        f"format {header.effectbench_bundle_version}: made without receipts, so nothing shows "
        f"its evidence and its collateral writes are not measured; pack {header.pack.name} "
        f"records receipts, and only bundles of format {RECEIPTS_VERSION} or later are ranked "
        "on it"
    )


def _before_side_problem(c: Change, was: dict[str, Any] | None) -> str | None:
    """What is wrong with a changed row's before side given the row as the pack provisions
    it (``was``; None: not there); None when nothing."""
    if c.change == "inserted":
        return None if was is None else "was there before the episode"
    if was is None:
        return "was not there before the episode"
    if c.change == "deleted":
        return None if was == c.values else "is stated with other values than it had"
    old = {k: v[0] for k, v in (c.fields or {}).items()}
    differs = [k for k, v in old.items() if was.get(k) != v]
    return f"had another {differs[0]} before the episode" if differs else None


def _unexpected_receipts(
    header: SubmissionHeader,
    receipts_file: Path | None,
    frames: Mapping[str, Path] | None,
    sink: FindingSink,
) -> ReceiptResult:
    """A bundle of a format without receipts: any receipts or frames it holds are refused."""
    for name, present in ((RECEIPTS_FILE, receipts_file), (f"{FRAMES_DIR}/", frames)):
        if present is not None:
            sink.emit(
                CheckId.STRUCTURE_UNEXPECTED_FILE,
                f"a bundle of format {header.effectbench_bundle_version} holds no receipts; "
                f"declare effectbench_bundle_version {RECEIPTS_VERSION}",
                name,
            )
    note = (
        f"format {header.effectbench_bundle_version}: made without receipts (the rows are "
        "re-scored; nothing shows their evidence)"
    )
    return ReceiptResult(Step(True, note))


def check_receipts(
    header: SubmissionHeader | None,
    pack: BenchmarkProvider | None,
    rows: Iterator[tuple[int, dict[str, Any]]] | None,
    receipts_file: Path | None,
    frames: Mapping[str, Path] | None,
    sink: FindingSink,
    limits: Limits,
    *,
    ready: bool,
    episode_ids: Mapping[str, int],
    pack_fingerprint: str = "",
) -> ReceiptResult:
    """Run the ``receipt`` family on a bundle (``ready``: its rows and pack checked out;
    ``pack_fingerprint``: the pack's, which lets its task data be kept for the next bundle)."""
    if header is None:
        return ReceiptResult(Step(True, "not run: submission.json unreadable"))
    if header.effectbench_bundle_version != RECEIPTS_VERSION:
        return _unexpected_receipts(header, receipts_file, frames, sink)
    if receipts_file is None:
        sink.emit(
            CheckId.RECEIPT_MISSING,
            f"a bundle of format {RECEIPTS_VERSION} holds {RECEIPTS_FILE}: one receipt per row",
            RECEIPTS_FILE,
        )
        return ReceiptResult(Step())
    if not ready or pack is None or rows is None:
        return ReceiptResult(Step(True, "not run: the rows or the pack could not be checked"))
    checker = ReceiptChecker(sink, pack, frames or {}, limits, pack_fingerprint)
    checker.episode_ids = episode_ids
    lines = iter_episode_lines(receipts_file, limits.max_receipt_line_bytes)
    n = 0
    for pair in zip_longest(rows, lines):
        n += pair[1] is not None
        (number, row), (at, raw) = pair[0] or (None, None), pair[1] or (None, None)
        line = number if number is not None else at
        assert line is not None
        if raw is None and at is not None:  # a line over the length limit
            checker._unknown()
            sink.emit(
                CheckId.RECEIPT_MALFORMED,
                f"longer than the limit of {limits.max_receipt_line_bytes} bytes "
                "(--max-receipt-line-bytes)",
                RECEIPTS_FILE,
                at,
            )
            continue
        checker.pair(line, row, raw)
    checker.finish()
    note = f"{n} receipts, {len(checker.named)} frames"
    return ReceiptResult(
        Step(note=note), checker.collateral, checker.change_sets, checker.frame_sets
    )
