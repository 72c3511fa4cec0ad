"""What a receipt holds by rule: written by the harness, derived again by the verifier.

Each function here is the one place its rule is applied to a receipt:

* :func:`effect_readings`: per declared effect, what the judge reads and decides
  (:func:`effectbench.judge.gather` then :func:`effectbench.judge.decide`);
  :func:`decided` decides a receipt's evidence again;
* :func:`changes_of` and :func:`row_changes`: the change set as a receipt holds it, each
  change marked collateral by :func:`effectbench.changes.collateral`, and back;
* :func:`truth_of` and :func:`label_of`: the truth table's inputs and its label
  (:func:`effectbench.classify.classify`);
* :func:`describe`: an effect as its reading names it, to compare with the pack's contract.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from effectbench.changes import (
    AllowedChange,
    ChangeSet,
    RowChange,
    Table,
    collateral,
    plain_value,
)
from effectbench.classify import Label, classify, true_state
from effectbench.effects import Effect, EffectKind
from effectbench.judge import Evidence, decide, gather
from effectbench.receipts.model import (
    Change,
    Changes,
    EffectEvidence,
    EffectReading,
    TruthRow,
)
from effectbench.schema import EpisodeRecord, OracleVerdict, TrueState, Verdict

DECIDE_CHANNEL = "receipt"
"""The channel name :func:`decided` passes the judge (it does not affect the verdict)."""


def table_of(effect: Effect, tables: Sequence[str]) -> str | None:
    """Return the table ``effect`` reads: its surface, or the record's only table."""
    if effect.surface is not None:
        return effect.surface
    return tables[0] if len(tables) == 1 else None


def describe(index: int, effect: Effect, tables: Sequence[str]) -> dict[str, Any]:
    """Return what a reading says of a resolved effect (everything but its evidence)."""
    kind = effect.kind
    return {
        "index": index,
        "kind": kind,
        "table": table_of(effect, tables),
        "match": {k: str(v) for k, v in effect.match.items()},
        "field": effect.field if kind is EffectKind.FIELD_EQUALS else None,
        "expected": effect.expected_count
        if kind is EffectKind.RECORD_WRITTEN
        else str(effect.value),
        "idempotency_key": None if effect.idempotency_key is None else str(effect.idempotency_key),
        "count_new_only": effect.count_new_only,
        "forbid_collateral_loss": effect.forbid_collateral_loss,
    }


def _state(verdict: OracleVerdict) -> TrueState:
    return true_state(verdict)


def effect_readings(
    effects: Sequence[Effect], before: Mapping[str, Table], after: Mapping[str, Table]
) -> list[EffectReading]:
    """Return each resolved effect's reading: its evidence in the two readings and the verdict."""
    names = sorted(set(before) | set(after))
    out = []
    for i, effect in enumerate(effects):
        table = table_of(effect, names)
        rows_before = list(before[table].rows) if table is not None and table in before else []
        rows_after = list(after[table].rows) if table is not None and table in after else []
        found = gather(effect, rows_before, rows_after)
        evidence = EffectEvidence(
            matched=found.matched,
            values=[plain_value(v) for v in found.values],
            lost=found.lost,
        )
        verdict = decide(effect, found, channel=DECIDE_CHANNEL)
        out.append(
            EffectReading(
                **describe(i, effect, names),
                evidence=evidence,
                verdict=verdict.verdict,
                state=_state(verdict),
            )
        )
    return out


def decided(effect: Effect, reading: EffectReading) -> tuple[Verdict, TrueState]:
    """Decide a reading's evidence again (the judge's rule); return the verdict and state."""
    evidence = Evidence(
        matched=reading.evidence.matched,
        values=tuple(reading.evidence.values),
        lost=reading.evidence.lost,
    )
    verdict = decide(effect, evidence, channel=DECIDE_CHANNEL)
    return verdict.verdict, _state(verdict)


def changes_of(changes: ChangeSet, allowances: Sequence[AllowedChange] | None) -> Changes:
    """Return the change set as a receipt holds it; with ``allowances``, each change outside
    them is marked collateral (without, none is)."""
    flags = collateral(changes, allowances) if allowances is not None else None
    rows = [
        Change(
            **c.to_json(),
            collateral=bool(flags[i]) if flags is not None else False,
        )
        for i, c in enumerate(changes.changes)
    ]
    return Changes(tables=list(changes.tables), untouched=list(changes.untouched), rows=rows)


def row_changes(changes: Changes) -> ChangeSet:
    """Return a receipt's change set as :class:`~effectbench.changes.ChangeSet` (to apply the
    collateral rule to it again)."""
    return ChangeSet(
        tables=tuple(changes.tables),
        changes=tuple(
            RowChange(
                table=c.table,
                change=c.change,
                key=dict(c.key),
                values=dict(c.values),
                fields={k: (v[0], v[1]) for k, v in (c.fields or {}).items()},
            )
            for c in changes.rows
        ),
    )


def truth_of(row: EpisodeRecord) -> TruthRow:
    """Return a row's truth-table inputs and its label."""
    return TruthRow(
        reported_success=row.agent.reported_success,
        true_state=true_state(row.oracle),
        correct_action_available=row.correct_action_available,
        outcome=row.outcome,
        swer_variant=row.swer_variant,
    )


def label_of(reported_success: bool, reading: OracleVerdict, available: bool) -> Label | None:
    """Return the truth table's label for a claim, a reading and the task's availability."""
    return classify(reported_success, true_state(reading), available)
