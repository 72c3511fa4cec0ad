"""The judge: one function decides an effect against two snapshots of the record.

A snapshot is the list of records the independent oracle read (``None`` when
the system of record was unreachable). The judge never guesses: whatever it
cannot decide from what was read is ``indeterminate``.

Judging is two steps, each one function: :func:`gather` reads what the rule
looks at out of the two snapshots (an :class:`Evidence`: how many records the
selector picks, the read-back field's values, how many earlier records vanished),
and :func:`decide` turns that evidence into the verdict. An episode's receipt
carries the evidence, so the verifier decides it again with the same function.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from effectbench.effects import Effect, EffectKind
from effectbench.schema import OracleVerdict, Verdict

Record = Mapping[str, Any]
Snapshot = Sequence[Record]


def selects(record: Record, match: Mapping[str, Any], idempotency_key: Any = None) -> bool:
    """Say whether a selector picks ``record``: every field of ``match`` equals the record's
    (compared as strings) and, when ``idempotency_key`` is set, the record carries that key."""
    for key, want in match.items():
        if key not in record or str(record[key]) != str(want):
            return False
    if idempotency_key is not None:
        return str(record.get("idempotency_key")) == str(idempotency_key)
    return True


def matches(record: Record, effect: Effect) -> bool:
    """Say whether ``record`` is selected by ``effect`` (its selector and idempotency key)."""
    return _matches(record, effect)


def _matches(record: Record, effect: Effect) -> bool:
    return selects(record, effect.match, effect.idempotency_key)


@dataclass(frozen=True)
class Evidence:
    """What the rule of one effect reads from the two snapshots (and nothing else)."""

    matched: int
    """Records the selector picks (only records new since the baseline with ``count_new_only``)."""
    values: tuple[Any, ...] = ()
    """``field_equals``: the field's value in each picked record, as read (None: absent);
    compared with the expected value as strings."""
    lost: int = 0
    """``record_written`` with ``forbid_collateral_loss``: earlier records that vanished."""


def selected(effect: Effect, before: Snapshot | None, after: Snapshot) -> list[Record]:
    """Return the records of ``after`` the effect's selector picks (new ones only when the
    effect counts new records only and the baseline was read)."""
    picked = [r for r in after if _matches(r, effect)]
    if effect.count_new_only and before is not None:
        old_keys = {r.get(effect.key_field) for r in before}
        picked = [r for r in picked if r.get(effect.key_field) not in old_keys]
    return picked


def gather(effect: Effect, before: Snapshot | None, after: Snapshot) -> Evidence:
    """Return the :class:`Evidence` of ``effect`` in a readable ``after`` snapshot."""
    picked = selected(effect, before, after)
    if effect.kind is EffectKind.FIELD_EQUALS:
        field = effect.field or ""
        values = tuple(r.get(field) for r in picked)
        return Evidence(matched=len(picked), values=values)
    lost = 0
    if effect.forbid_collateral_loss and before is not None:
        after_keys = {r.get(effect.key_field) for r in after}
        lost = sum(1 for r in before if r.get(effect.key_field) not in after_keys)
    return Evidence(matched=len(picked), lost=lost)


def _verdict(
    effect: Effect,
    channel: str,
    before_reachable: bool,
    verdict: Verdict,
    reason: str,
    *,
    observed: int | None = None,
    wrong: bool = False,
    absent: bool = False,
) -> OracleVerdict:
    expected = effect.expected_count if effect.kind is EffectKind.RECORD_WRITTEN else None
    return OracleVerdict(
        verdict=verdict,
        kind=effect.kind,
        channel=channel,
        reason=reason,
        observed_count=observed,
        expected_count=expected,
        before_reachable=before_reachable,
        effect_correct=verdict is Verdict.CONFIRMED,
        effect_wrong_persisted=wrong,
        effect_absent=absent,
    )


def decide(
    effect: Effect, evidence: Evidence, *, channel: str, before_reachable: bool = True
) -> OracleVerdict:
    """Decide ``effect`` from its evidence: the one rule of SPEC 4's typed effects."""
    if effect.kind is EffectKind.FIELD_EQUALS:
        return _decide_field(effect, evidence, channel, before_reachable)
    n = evidence.matched
    if evidence.lost:
        return _verdict(
            effect,
            channel,
            before_reachable,
            Verdict.REFUTED,
            f"{evidence.lost} pre-existing record(s) vanished: collateral loss",
            observed=n,
            wrong=True,
        )
    if n == 0:
        return _verdict(
            effect,
            channel,
            before_reachable,
            Verdict.REFUTED,
            f"no record matches the selector, expected {effect.expected_count}: nothing persisted",
            observed=0,
            absent=True,
        )
    if n != effect.expected_count:
        return _verdict(
            effect,
            channel,
            before_reachable,
            Verdict.REFUTED,
            f"{n} records match the selector, expected exactly {effect.expected_count}",
            observed=n,
            wrong=True,
        )
    return _verdict(
        effect,
        channel,
        before_reachable,
        Verdict.CONFIRMED,
        f"exactly {n} matching record(s) written",
        observed=n,
    )


def _decide_field(
    effect: Effect, evidence: Evidence, channel: str, before_reachable: bool
) -> OracleVerdict:
    n = evidence.matched
    if n == 0:
        return _verdict(
            effect,
            channel,
            before_reachable,
            Verdict.REFUTED,
            "no record to read back: nothing persisted",
            observed=0,
            absent=True,
        )
    if n > 1:
        return _verdict(
            effect,
            channel,
            before_reachable,
            Verdict.REFUTED,
            f"{n} records match the selector; the read-back needs exactly one",
            observed=n,
            wrong=True,
        )
    got = evidence.values[0] if evidence.values else None
    if got is None or str(got) != str(effect.value):
        return _verdict(
            effect,
            channel,
            before_reachable,
            Verdict.REFUTED,
            f"field {effect.field!r} is {got!r}, expected {effect.value!r}",
            observed=1,
            wrong=True,
        )
    return _verdict(
        effect,
        channel,
        before_reachable,
        Verdict.CONFIRMED,
        f"field {effect.field!r} equals the expected value",
        observed=1,
    )


def judge(
    effect: Effect, before: Snapshot | None, after: Snapshot | None, *, channel: str
) -> OracleVerdict:
    """Judge one resolved ``effect`` against the ``before`` and ``after`` snapshots."""
    if after is None:
        return _verdict(
            effect,
            channel,
            before is not None,
            Verdict.INDETERMINATE,
            "system of record unreachable",
        )
    needs_baseline = effect.count_new_only or (
        effect.kind is EffectKind.RECORD_WRITTEN and effect.forbid_collateral_loss
    )
    if needs_baseline and before is None:
        return _verdict(
            effect,
            channel,
            False,
            Verdict.INDETERMINATE,
            "baseline unreadable: new records and collateral loss cannot be told apart",
        )
    return decide(
        effect, gather(effect, before, after), channel=channel, before_reachable=before is not None
    )


def judge_contract(
    effects: Sequence[Effect],
    before: Snapshot | None,
    after: Snapshot | None,
    *,
    channel: str,
) -> OracleVerdict:
    """Judge a declared contract: the first effect not confirmed decides, else the last."""
    if not effects:
        raise ValueError("an effect contract needs at least one effect")
    verdict: OracleVerdict | None = None
    for effect in effects:
        verdict = judge(effect, before, after, channel=channel)
        if verdict.verdict is not Verdict.CONFIRMED:
            return verdict
    assert verdict is not None
    return verdict


REREADS = 2
"""How many more times the oracle reads an unreadable record before the episode is dropped."""


class ReadsRecord(Protocol):
    """An oracle as :func:`read_verdict` uses it: it judges the record against a baseline."""

    def judge(self, before: Any) -> OracleVerdict: ...


def read_verdict(oracle: ReadsRecord, before: Any) -> OracleVerdict:
    """Judge the episode against ``before``, re-reading an unreadable record (SPEC 3).

    The one rule for an unreadable record: the runner, the conformance check and the
    inspect door call it, so an indeterminate reading is re-read the same number of times."""
    verdict = oracle.judge(before)
    for _ in range(REREADS):  # an unreadable record is re-read, never guessed
        if verdict.verdict is not Verdict.INDETERMINATE:
            break
        verdict = oracle.judge(before)
    return verdict
