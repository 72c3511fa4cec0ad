"""Harness faults for the inspect tests: an oracle that can no longer read the record."""

from __future__ import annotations

from typing import Any

from effectbench.schema import Verdict


def make_unreadable(oracle: Any, reason: str) -> None:
    """Make ``oracle`` judge every episode ``indeterminate`` for ``reason`` (never guessed)."""
    judge = oracle.judge

    def unreadable(before: Any) -> Any:
        return judge(before).model_copy(
            update={
                "verdict": Verdict.INDETERMINATE,
                "reason": reason,
                "effect_correct": False,
                "effect_wrong_persisted": False,
                "effect_absent": False,
            }
        )

    oracle.judge = unreadable
