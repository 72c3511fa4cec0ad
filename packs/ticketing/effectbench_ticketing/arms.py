"""The pack's own arm: effect verification over every REST surface.

``effect_verified`` (the shared baseline) asks the env for the product's verifier, which on
the support desk reads the tickets endpoint only. ``effect_verified_all`` is the same policy
with a verifier that reads every surface the service exposes (customers, agents, tickets,
comments, credits), the top rung of the ladder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from effectbench.api import AgentReport, AgentTask, ProductVerifier, Screen, get_baseline


class _AllSurfacesView:
    """An env view whose product verifier is the all-surfaces readback (all else the env's)."""

    def __init__(self, env: Any) -> None:
        self._env = env

    def __getattr__(self, name: str) -> Any:
        return getattr(self._env, name)

    def actions(self) -> Sequence[str]:
        """Return the env's actions."""
        names: Sequence[str] = self._env.actions()
        return names

    def act(self, action: str, **arguments: Any) -> Screen:
        """Act through the env."""
        screen: Screen = self._env.act(action, **arguments)
        return screen

    def screen(self) -> Screen:
        """Return the env's screen."""
        current: Screen = self._env.screen()
        return current

    def product_effect_verifier(self) -> ProductVerifier | None:
        """Return the all-surfaces verifier (``None`` on an env that has none)."""
        reader = getattr(self._env, "all_surfaces_verifier", None)
        return None if reader is None else reader()


class EffectVerifiedAll:
    """Act once; report success only if a readback of every REST surface confirms it."""

    name = "effect_verified_all"

    def __init__(self, pack: Any) -> None:
        self._policy = get_baseline("effect_verified", pack)

    def run(self, task: AgentTask, env: Any, params: Mapping[str, Any]) -> AgentReport:
        """Run the shared effect-verified policy with the all-surfaces verifier."""
        report = self._policy.run(task, _AllSurfacesView(env), params)
        assert isinstance(report, AgentReport)
        return report
