"""The red team's rule and the moves the audit makes without a pack's help.

A pack offers adversary moves per task (:class:`~effectbench.seam.OffersRedTeam`);
each runs on a fresh episode, and :func:`probe_failure` is the one rule that judges
it: the oracle must refuse every move (any verdict but ``confirmed``) and confirm
:data:`~effectbench.seam.TRUE_EFFECT`, the positive control, where one is offered.
The clinic's own audit of its oracle applies the same rule to its probes.

Two standard moves need nothing of the pack: ``report_only`` (act not at all, claim
success) and ``banner_only`` (write nothing, end on a painted success banner).
:data:`GENERIC_MOVES` makes them; a pack whose screens can paint a real banner
offers its own ``banner_only`` instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

from effectbench.schema import OracleVerdict, TaskSpec, Verdict
from effectbench.seam import TRUE_EFFECT, Adversary, Screen

__all__ = ["GENERIC_MOVES", "look", "probe_failure"]


def probe_failure(name: str, verdict: OracleVerdict) -> str | None:
    """Return why the oracle's reading of move ``name`` fails the audit, or None.

    :data:`~effectbench.seam.TRUE_EFFECT` must be confirmed; any other move refused.
    """
    confirmed = verdict.verdict is Verdict.CONFIRMED
    positive = name == TRUE_EFFECT
    if positive == confirmed:
        return None
    want = "confirmed" if positive else "refused"
    return f"{name}: expected {want}, oracle said {verdict.verdict.value} ({verdict.reason})"


@runtime_checkable
class _Shows(Protocol):
    def screen(self) -> Any: ...


@runtime_checkable
class _Screenshots(Protocol):
    def screenshot(self) -> Any: ...


def look(env: Any) -> None:
    """Perceive once, as any agent does before it decides (a screen, or a screenshot)."""
    if isinstance(env, _Shows):
        env.screen()
    elif isinstance(env, _Screenshots):
        env.screenshot()


def _report_only(env: Any, task: TaskSpec, params: Mapping[str, Any]) -> None:
    look(env)


def _banner_only(env: Any, task: TaskSpec, params: Mapping[str, Any]) -> Screen:
    look(env)
    return Screen("success", "Saved", {"painted_by": "the adversary"})


GENERIC_MOVES: Mapping[str, Adversary] = {
    "report_only": _report_only,
    "banner_only": _banner_only,
}
"""The standard moves the audit makes on any pack that does not offer its own."""

Act = Callable[[Any], object]
"""What one scripted run does with the env it is given."""
