"""What the ticketing pack's design predicts for each task and arm (the api and web tests)."""

from __future__ import annotations

from collections.abc import Iterator

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
    # task: (screen_only, effect_verified [tickets REST], effect_verified_all [every REST surface])
    "clean_open": (SUCCESS, SUCCESS, SUCCESS),
    "credit_posted": (SUCCESS, SUCCESS, SUCCESS),
    "idempotent_retry": (SUCCESS, SUCCESS, SUCCESS),
    "reassign_ticket": (SUCCESS, SUCCESS, SUCCESS),
    "homonym_resolved": (SUCCESS, SUCCESS, SUCCESS),
    "clean_open_undeclared": (SUCCESS, OVER, OVER),
    "reassign_undeclared": (SUCCESS, OVER, OVER),
    "refusal_stale": (SWER, WRONG, WRONG),
    "refusal_ambiguous": (SWER, WRONG, WRONG),
    "refusal_ambiguous_undeclared": (SWER, SAFE, SAFE),
    "partial_description": (SWER, WRONG, WRONG),
    "partial_undeclared": (SWER, SAFE, SAFE),
    "duplicate_submit": (SWER, WRONG, WRONG),
    "optimistic_rollback": (SWER, SAFE, SAFE),
    "commit_then_timeout": (FALSE_ABORT, SUCCESS, SUCCESS),
    "session_expired": (SAFE, SAFE, SAFE),
    "validation_reject": (SAFE, SAFE, SAFE),
    # A lost update to a concurrent colleague: no readback whose baseline predates the
    # colleague's commit can see it; only the oracle, which observed that commit, does.
    "stale_priority": (SWER, SWER, SWER),
    "stale_contact": (SWER, SWER, SWER),
    "double_click": (SWER, WRONG, WRONG),
    "double_credit": (SWER, SWER, WRONG),
    "homonym_domain": (SWER, WRONG, WRONG),
    "homonym_code": (SWER, WRONG, WRONG),
    "noop_green": (SWER, SAFE, SAFE),
    "wrong_ticket_reassign": (SWER, WRONG, WRONG),
    "credit_wrong_customer": (SWER, SWER, WRONG),
    "noop_reassign": (SWER, SAFE, SAFE),
    "test-1": (SWER, WRONG, WRONG),
    "test-2": (SUCCESS, SUCCESS, SUCCESS),
    "test-3": (FALSE_ABORT, SUCCESS, SUCCESS),
}


def short(task_id: str) -> str:
    """Return a ticketing variant's task name (``ticketing::NAME[@substrate]`` -> ``NAME``)."""
    return task_id.removeprefix("ticketing::").split("@")[0]


def everything(value: object, depth: int = 0, seen: set[int] | None = None) -> Iterator[object]:
    """Yield ``value`` and what it holds (containers, attributes), a few levels deep."""
    seen = set() if seen is None else seen
    if id(value) in seen or depth > 5:
        return
    seen.add(id(value))
    yield value
    children: list[object] = []
    if isinstance(value, dict):
        children = [*value.keys(), *value.values()]
    elif isinstance(value, list | tuple | set):
        children = list(value)
    elif hasattr(value, "__dict__") and not isinstance(value, type):
        children = list(vars(value).values())
    for child in children:
        yield from everything(child, depth + 1, seen)
