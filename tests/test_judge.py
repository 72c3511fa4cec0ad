"""The judge: one rule per test, on real snapshots."""

from __future__ import annotations

from effectbench.effects import Effect, EffectKind, Param, contract_hash
from effectbench.judge import judge, judge_contract
from effectbench.packs.mockmed import EFFECT, MockMedProvider
from effectbench.schema import Verdict

WRITTEN = Effect(
    kind=EffectKind.RECORD_WRITTEN,
    match={"patient_id": "p1", "type": "Triage"},
    forbid_collateral_loss=True,
)
NOTE = Effect(
    kind=EffectKind.FIELD_EQUALS,
    match={"patient_id": "p1", "type": "Triage"},
    field="note",
    value=Param(name="note"),
)
OTHER = {"key": "k0", "patient_id": "p2", "type": "Triage", "note": "old"}


def row(key: str, note: str = "n1", **extra: str) -> dict[str, str]:
    return {"key": key, "patient_id": "p1", "type": "Triage", "note": note, **extra}


def test_missing_record_is_absent() -> None:
    v = judge(WRITTEN, [OTHER], [OTHER], channel="t")
    assert (v.verdict, v.effect_absent, v.observed_count) == (Verdict.REFUTED, True, 0)


def test_exactly_one_record_is_confirmed() -> None:
    v = judge(WRITTEN, [OTHER], [OTHER, row("k1")], channel="t")
    assert v.verdict is Verdict.CONFIRMED and v.effect_correct


def test_duplicate_is_a_wrong_write() -> None:
    v = judge(WRITTEN, [OTHER], [OTHER, row("k1"), row("k2")], channel="t")
    assert (v.verdict, v.effect_wrong_persisted, v.observed_count) == (Verdict.REFUTED, True, 2)


def test_partial_save_fails_the_read_back() -> None:
    effect = NOTE.resolve({"note": "n1"})
    v = judge(effect, [OTHER], [OTHER, row("k1", note="")], channel="t")
    assert (v.verdict, v.effect_wrong_persisted, v.kind) == (Verdict.REFUTED, True, "field_equals")


def test_collateral_loss_is_a_wrong_write_even_with_the_right_count() -> None:
    v = judge(WRITTEN, [OTHER], [row("k1")], channel="t")
    assert (v.verdict, v.effect_wrong_persisted, v.observed_count) == (Verdict.REFUTED, True, 1)


def test_idempotency_key_counts_only_this_trials_records() -> None:
    keyed = WRITTEN.model_copy(update={"idempotency_key": Param(name="idem")}).resolve(
        {"idem": "key-a"}
    )
    after = [OTHER, row("k1", idempotency_key="key-a"), row("k2", idempotency_key="key-b")]
    assert judge(keyed, [OTHER], after, channel="t").verdict is Verdict.CONFIRMED
    deduplicated = [OTHER, row("k1", idempotency_key="key-a")]
    assert judge(keyed, [OTHER], deduplicated, channel="t").verdict is Verdict.CONFIRMED
    twice = [*deduplicated, row("k3", idempotency_key="key-a")]
    assert judge(keyed, [OTHER], twice, channel="t").effect_wrong_persisted


def test_count_new_only_ignores_records_present_before() -> None:
    new_only = WRITTEN.model_copy(update={"count_new_only": True, "forbid_collateral_loss": False})
    before = [OTHER, row("k0")]
    assert judge(new_only, before, [*before, row("k1")], channel="t").verdict is Verdict.CONFIRMED
    assert judge(new_only, before, before, channel="t").effect_absent


def test_count_new_only_with_an_unreadable_baseline_is_indeterminate() -> None:
    new_only = WRITTEN.model_copy(update={"count_new_only": True})
    v = judge(new_only, None, [row("k1")], channel="t")
    assert v.verdict is Verdict.INDETERMINATE
    assert not (v.effect_correct or v.effect_wrong_persisted or v.effect_absent)
    assert v.before_reachable is False


def test_unreachable_record_is_indeterminate_never_a_guess() -> None:
    v = judge_contract(EFFECT, [OTHER], None, channel="t")
    assert v.verdict is Verdict.INDETERMINATE


def test_the_first_unconfirmed_effect_decides() -> None:
    effect = tuple(e.resolve({"note": "n1"}) for e in EFFECT)
    ok = judge_contract(effect, [OTHER], [OTHER, row("k1")], channel="t")
    assert (ok.verdict, ok.kind) == (Verdict.CONFIRMED, "field_equals")
    dup = judge_contract(effect, [OTHER], [OTHER, row("k1"), row("k2")], channel="t")
    assert (dup.verdict, dup.kind) == (Verdict.REFUTED, "record_written")


def test_resolution_does_not_change_the_contract_hash() -> None:
    assert contract_hash(NOTE) != contract_hash(NOTE.resolve({"note": "n1"}))
    assert str(NOTE.value) == "{note}"
    assert contract_hash(WRITTEN) == contract_hash(EFFECT[0])


def test_trial_isolation_a_correct_row_of_one_trial_never_satisfies_another() -> None:
    pack = MockMedProvider()
    task = pack.tasks()[0]
    for i in range(5):
        row_i = row("k1", note=pack.trial_params(task, i)["note"])
        for j in range(5):
            effect = tuple(e.resolve(pack.trial_params(task, j)) for e in task.expected_effect)
            v = judge_contract(effect, [OTHER], [OTHER, row_i], channel="t")
            assert (v.verdict is Verdict.CONFIRMED) == (i == j)
