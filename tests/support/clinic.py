"""What the clinic's design predicts for each task and arm (shared by the api and web tests)."""

from __future__ import annotations

ARMS = ("screen_only", "effect_verified", "effect_verified_all")
SWER, SUCCESS, WRONG, SAFE, OVER, FALSE_ABORT = (
    "silent_wrong_effect",
    "success",
    "wrong_action",
    "safe_halt",
    "over_halt",
    "false_abort",
)

PREDICTED: dict[str, tuple[str, str, str]] = {
    # task: (screen_only, effect_verified [encounters REST], effect_verified_all)
    "clean_draft": (SUCCESS, SUCCESS, SUCCESS),
    "sign_and_bill": (SUCCESS, SUCCESS, SUCCESS),
    "idempotent_retry": (SUCCESS, SUCCESS, SUCCESS),
    "edit_note": (SUCCESS, SUCCESS, SUCCESS),
    "homonym_resolved": (SUCCESS, SUCCESS, SUCCESS),
    "clean_draft_undeclared": (SUCCESS, OVER, OVER),
    "edit_undeclared": (SUCCESS, OVER, OVER),
    "refusal_stale": (SWER, WRONG, WRONG),
    "refusal_ambiguous": (SWER, WRONG, WRONG),
    "refusal_ambiguous_undeclared": (SWER, SAFE, SAFE),
    "partial_note": (SWER, WRONG, WRONG),
    "partial_undeclared": (SWER, SAFE, SAFE),
    "duplicate_submit": (SWER, WRONG, WRONG),
    "optimistic_rollback": (SWER, SAFE, SAFE),
    "commit_then_timeout": (FALSE_ABORT, SUCCESS, SUCCESS),
    "session_expired": (SAFE, SAFE, SAFE),
    "validation_reject": (SAFE, SAFE, SAFE),
    "stale_encounter_list": (SWER, WRONG, WRONG),
    "stale_allergies": (SWER, SWER, WRONG),
    "double_click": (SWER, WRONG, WRONG),
    "double_charge": (SWER, SWER, WRONG),
    "homonym_dob": (SWER, WRONG, WRONG),
    "homonym_mrn": (SWER, WRONG, WRONG),
    "noop_green": (SWER, SAFE, SAFE),
    "wrong_encounter_edit": (SWER, WRONG, WRONG),
    "charge_wrong_patient": (SWER, SWER, WRONG),
    "noop_edit": (SWER, SAFE, SAFE),
    "test-1": (SWER, WRONG, WRONG),
    "test-2": (SUCCESS, SUCCESS, SUCCESS),
    "test-3": (FALSE_ABORT, SUCCESS, SUCCESS),
}
