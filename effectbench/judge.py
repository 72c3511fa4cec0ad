"""The judge: one function decides an effect against two snapshots of the record.

A snapshot is the list of records the independent oracle read (``None`` when
the system of record was unreachable). The judge never guesses: whatever it
cannot decide from what was read is ``indeterminate``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from effectbench.effects import Effect, EffectKind
from effectbench.schema import OracleVerdict, Verdict

Record = Mapping[str, Any]
Snapshot = Sequence[Record]


def matches(record: Record, effect: Effect) -> bool:
    """Say whether ``record`` is selected by ``effect`` (its selector and idempotency key)."""
    return _matches(record, effect)


def _matches(record: Record, effect: Effect) -> bool:
    for key, want in effect.match.items():
        if key not in record or str(record[key]) != str(want):
            return False
    if effect.idempotency_key is not None:
        return str(record.get("idempotency_key")) == str(effect.idempotency_key)
    return True


def _verdict(
    effect: Effect,
    channel: str,
    before: Snapshot | None,
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
        before_reachable=before is not None,
        effect_correct=verdict is Verdict.CONFIRMED,
        effect_wrong_persisted=wrong,
        effect_absent=absent,
    )


def judge(
    effect: Effect, before: Snapshot | None, after: Snapshot | None, *, channel: str
) -> OracleVerdict:
    """Judge one resolved ``effect`` against the ``before`` and ``after`` snapshots."""
    if after is None:
        return _verdict(
            effect, channel, before, Verdict.INDETERMINATE, "system of record unreachable"
        )
    needs_baseline = effect.count_new_only or (
        effect.kind is EffectKind.RECORD_WRITTEN and effect.forbid_collateral_loss
    )
    if needs_baseline and before is None:
        return _verdict(
            effect,
            channel,
            before,
            Verdict.INDETERMINATE,
            "baseline unreadable: new records and collateral loss cannot be told apart",
        )
    matched = [r for r in after if _matches(r, effect)]
    if effect.count_new_only and before is not None:
        old_keys = {r.get(effect.key_field) for r in before}
        matched = [r for r in matched if r.get(effect.key_field) not in old_keys]
    n = len(matched)
    if effect.kind is EffectKind.FIELD_EQUALS:
        return _judge_field(effect, channel, before, matched)
    if effect.forbid_collateral_loss and before is not None:
        after_keys = {r.get(effect.key_field) for r in after}
        lost = [r for r in before if r.get(effect.key_field) not in after_keys]
        if lost:
            return _verdict(
                effect,
                channel,
                before,
                Verdict.REFUTED,
                f"{len(lost)} pre-existing record(s) vanished: collateral loss",
                observed=n,
                wrong=True,
            )
    if n == 0:
        return _verdict(
            effect,
            channel,
            before,
            Verdict.REFUTED,
            f"no record matches the selector, expected {effect.expected_count}: nothing persisted",
            observed=0,
            absent=True,
        )
    if n != effect.expected_count:
        return _verdict(
            effect,
            channel,
            before,
            Verdict.REFUTED,
            f"{n} records match the selector, expected exactly {effect.expected_count}",
            observed=n,
            wrong=True,
        )
    return _verdict(
        effect,
        channel,
        before,
        Verdict.CONFIRMED,
        f"exactly {n} matching record(s) written",
        observed=n,
    )


def _judge_field(
    effect: Effect, channel: str, before: Snapshot | None, matched: list[Record]
) -> OracleVerdict:
    n = len(matched)
    if n == 0:
        return _verdict(
            effect,
            channel,
            before,
            Verdict.REFUTED,
            "no record to read back: nothing persisted",
            observed=0,
            absent=True,
        )
    if n > 1:
        return _verdict(
            effect,
            channel,
            before,
            Verdict.REFUTED,
            f"{n} records match the selector; the read-back needs exactly one",
            observed=n,
            wrong=True,
        )
    got = matched[0].get(effect.field or "")
    if got is None or str(got) != str(effect.value):
        return _verdict(
            effect,
            channel,
            before,
            Verdict.REFUTED,
            f"field {effect.field!r} is {got!r}, expected {effect.value!r}",
            observed=1,
            wrong=True,
        )
    return _verdict(
        effect,
        channel,
        before,
        Verdict.CONFIRMED,
        f"field {effect.field!r} equals the expected value",
        observed=1,
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
