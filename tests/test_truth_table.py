"""SPEC 3: the truth table, exhaustively, and the reduction of a reading to a true state."""

from __future__ import annotations

import itertools

import pytest

from effectbench.classify import InconsistentReading, classify, true_state
from effectbench.effects import EffectKind
from effectbench.schema import OracleVerdict, Outcome, SwerVariant, TrueState, Verdict

C, W, A, U = (
    TrueState.CORRECT,
    TrueState.WRONG_PERSISTED,
    TrueState.ABSENT,
    TrueState.UNREADABLE,
)

TABLE = {
    (True, C): (Outcome.SUCCESS, SwerVariant.NONE),
    (True, W): (Outcome.SILENT_WRONG_EFFECT, SwerVariant.WRONG_WRITE),
    (True, A): (Outcome.SILENT_WRONG_EFFECT, SwerVariant.PHANTOM),
    (False, C): (Outcome.FALSE_ABORT, SwerVariant.NONE),
    (False, W): (Outcome.WRONG_ACTION, SwerVariant.NONE),
}


@pytest.mark.parametrize(
    ("reported", "state", "available"),
    list(itertools.product([True, False], list(TrueState), [True, False])),
)
def test_every_combination_has_the_spec_label(
    reported: bool, state: TrueState, available: bool
) -> None:
    label = classify(reported, state, available)
    if state is U:
        assert label is None  # not scoreable: dropped and counted, never scored
        return
    assert label is not None
    if (reported, state) in TABLE:
        assert (label.outcome, label.swer_variant) == TABLE[(reported, state)]
    else:
        assert (reported, state) == (False, A)
        want = Outcome.OVER_HALT if available else Outcome.SAFE_HALT
        assert (label.outcome, label.swer_variant) == (want, SwerVariant.NONE)


def _reading(verdict: Verdict, correct: bool, wrong: bool, absent: bool) -> OracleVerdict:
    return OracleVerdict(
        verdict=verdict,
        kind=EffectKind.RECORD_WRITTEN,
        channel="test",
        reason="",
        observed_count=None,
        expected_count=None,
        before_reachable=True,
        effect_correct=correct,
        effect_wrong_persisted=wrong,
        effect_absent=absent,
    )


def test_consistent_readings_reduce_to_one_state() -> None:
    assert true_state(_reading(Verdict.CONFIRMED, True, False, False)) is C
    assert true_state(_reading(Verdict.REFUTED, False, True, False)) is W
    assert true_state(_reading(Verdict.REFUTED, False, False, True)) is A
    assert true_state(_reading(Verdict.INDETERMINATE, False, False, False)) is U


@pytest.mark.parametrize(
    "reading",
    [
        _reading(Verdict.REFUTED, False, True, True),  # two true states
        _reading(Verdict.REFUTED, False, False, False),  # none
        _reading(Verdict.CONFIRMED, False, True, False),  # confirmed but not correct
        _reading(Verdict.REFUTED, True, False, False),  # correct but refuted
        _reading(Verdict.INDETERMINATE, False, False, True),  # unreadable yet absent
    ],
)
def test_contradictory_readings_are_refused(reading: OracleVerdict) -> None:
    with pytest.raises(InconsistentReading):
        true_state(reading)
