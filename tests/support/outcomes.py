"""Outcome counts written out by hand (the independent side of the metric tests)."""

from __future__ import annotations

from effectbench.metrics import EVENTS, TaskTable


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


def outcome_table(per_unit: list[list[str]], ids: list[str], unit: str = "template") -> TaskTable:
    """A table of one system from each unit's outcomes (every task's correct action available;
    a template holds 2 tasks), its events counted by :func:`outcome_counts`."""
    counts = [outcome_counts(o) for o in per_unit]
    return TaskTable(
        task_id=ids,
        category=["control"] * len(ids),
        substrate=["api"] * len(ids),
        trials=[len(o) for o in per_unit],
        events={e: [c[e] for c in counts] for e in EVENTS},
        correct_action_available=[True] * len(ids),
        unit_tasks=[2] * len(ids) if unit == "template" else None,
        unit=unit,
    )
