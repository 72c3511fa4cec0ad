"""Outcome counts written out by hand (the independent side of the metric tests)."""

from __future__ import annotations


def outcome_counts(outcomes: list[str]) -> dict[str, int]:
    """Each event of EVENTS counted over a list of outcomes, written out here by hand."""
    return {
        "swer": sum(o in ("phantom", "silent_wrong_write") for o in outcomes),
        "swer_wrong_write": outcomes.count("silent_wrong_write"),
        "swer_phantom": outcomes.count("phantom"),
        "record_wrong": sum(o in ("silent_wrong_write", "wrong_action") for o in outcomes),
        "wrong_action": outcomes.count("wrong_action"),
        "over_halt": outcomes.count("over_halt"),
        "safe_halt": outcomes.count("safe_halt"),
        "task_success": outcomes.count("success"),
        "false_abort": outcomes.count("false_abort"),
        "correct_effect": sum(o in ("success", "false_abort") for o in outcomes),
        "screen_success": sum(o in ("success", "phantom", "silent_wrong_write") for o in outcomes),
    }
