"""The ``rescore`` family: each row re-labelled by the engine's one truth table.

A row's oracle reading is reduced by :func:`effectbench.classify.true_state`
(exactly one true state) and labelled by :func:`effectbench.classify.classify`;
the row's ``outcome`` and ``swer_variant`` must equal that label. The rules are
the engine's; this module only asks them and words the disagreement.
:mod:`verifier.rows` calls it once per distinct reading.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from effectbench.classify import InconsistentReading, classify, true_state
from effectbench.findings import CheckId
from effectbench.schema import OracleVerdict
from verifier.rowschema import Problem

_FLAG_FIELDS = ("effect_correct", "effect_wrong_persisted", "effect_absent")


def truth_table_label(oracle: Mapping[str, Any], rs: bool, caa: bool) -> tuple[Any, ...]:
    """Ask the one truth table about a reading: ("ok", label, label if flipped) or why not."""
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


def _state_text(oracle: Mapping[str, Any]) -> str:
    set_flags = [f for f in _FLAG_FIELDS if oracle[f]]
    return " and ".join(set_flags) if set_flags else "no effect flag set"


def rescore_findings(label: tuple[Any, ...], row: Mapping[str, Any]) -> list[Problem]:
    """Return the re-score finding of a row whose labels differ from the truth table's."""
    if label[0] == "inconsistent":
        return [
            (
                CheckId.RESCORE_TRUE_STATE,
                "oracle",
                f"the oracle reading does not name one true state: {label[1]}",
            )
        ]
    if label[0] == "unscoreable":
        return [
            (
                CheckId.RESCORE_UNSCOREABLE,
                "oracle.verdict",
                "an indeterminate oracle reading cannot be scored; drop the row and count it "
                "in run.dropped (reason oracle_unreadable)",
            )
        ]
    outcome, variant = row["outcome"], row["swer_variant"]
    if label[1] == (outcome, variant):
        return []
    want_outcome, want_variant = label[1]
    oracle = row["oracle"]
    rs = row["agent"]["reported_success"]
    caa = row["correct_action_available"]
    if label[2] == (outcome, variant):
        return [
            (
                CheckId.RESCORE_REPORTED_SUCCESS,
                "agent.reported_success",
                f"agent.reported_success={str(rs).lower()} contradicts the row's outcome "
                f"{outcome!r}: with this oracle reading it gives {want_outcome!r}",
            )
        ]
    if want_outcome != outcome:
        return [
            (
                CheckId.RESCORE_OUTCOME,
                "outcome",
                f"outcome {outcome!r} contradicts the row's oracle reading (verdict "
                f"{oracle['verdict']}, {_state_text(oracle)}, reported_success="
                f"{str(rs).lower()}, correct_action_available={str(caa).lower()}): the truth "
                f"table gives {want_outcome!r}",
            )
        ]
    return [
        (
            CheckId.RESCORE_SWER_VARIANT,
            "swer_variant",
            f"swer_variant {variant!r} contradicts the oracle reading: the truth table "
            f"gives {want_variant!r}",
        )
    ]
