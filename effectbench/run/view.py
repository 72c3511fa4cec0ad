"""Building what a system under test is told: one :class:`~effectbench.seam.AgentTask` per
episode, the same through every door.

The harness keeps the task's identity; the agent gets an opaque handle made by
:func:`~effectbench.hashing.episode_handle` under this user's secret (:func:`harness_key`,
kept in the cache home beside the cache's sealing key), so nothing it is told can be
mapped to a manifest entry, a template or a category. :func:`agent_view` reads the
display and the action vocabulary off the provisioned environment.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from effectbench.computer import AccessibleComputerEnv, ComputerEnv
from effectbench.filenames import cache_home
from effectbench.hashing import episode_handle
from effectbench.schema import Substrate, TaskSpec
from effectbench.sealed import machine_key
from effectbench.seam import AgentDisplay, AgentTask


def _methods(protocol: type, leave_out: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The public methods ``protocol`` itself declares, in declaration order."""
    return tuple(
        name
        for name, value in vars(protocol).items()
        if not name.startswith("_") and callable(value) and name not in leave_out
    )


SCREEN_ACTIONS = _methods(ComputerEnv, leave_out=("product_effect_verifier",))
"""The methods of :class:`~effectbench.computer.ComputerEnv` an in-process agent acts and
looks with (its product readback is offered apart, by the env)."""
A11Y_ACTIONS = _methods(AccessibleComputerEnv)
"""What an :class:`~effectbench.computer.AccessibleComputerEnv` adds."""


@cache
def harness_key() -> bytes:
    """Return this user's secret for handles (``handle.key`` in the cache home, 0600; a key
    for this process only when the cache home cannot be written).

    Stable on one machine, so a sample's handle survives an ``inspect eval-retry``.
    """
    return machine_key(cache_home() / "handle.key")


def handle_for(task_id: str, trial: int | None, key: bytes | None = None) -> str:
    """Return the opaque handle of ``task_id``'s trial ``trial`` (``None``: of its sample,
    every trial) under ``key`` (:func:`harness_key` by default)."""
    return episode_handle(key if key is not None else harness_key(), task_id, trial)


def vocabulary_of(env: Any) -> tuple[str, ...]:
    """Return the names of the actions ``env`` accepts (a screen's methods, or its actions)."""
    if isinstance(env, AccessibleComputerEnv):
        return SCREEN_ACTIONS + A11Y_ACTIONS
    if isinstance(env, ComputerEnv):
        return SCREEN_ACTIONS
    return tuple(str(name) for name in env.actions())


def display_of(env: Any, substrate: Substrate) -> AgentDisplay:
    """Return the display of ``env``: its size on a screen, none on the API."""
    display = getattr(env, "display", None) if substrate is not Substrate.API else None
    if display is None:
        return AgentDisplay(substrate.value)
    return AgentDisplay(substrate.value, int(display.width), int(display.height))


def agent_view(
    spec: TaskSpec,
    params: Mapping[str, Any],
    trial: int,
    env: Any,
    *,
    key: bytes | None = None,
    vocabulary: Sequence[str] | None = None,
) -> AgentTask:
    """Return what the system under test is told about ``spec``'s trial on ``env``.

    ``vocabulary`` overrides the env's own names (a door that serves another vendor's
    action names says so).
    """
    return AgentTask.of_episode(
        spec,
        params,
        handle_for(spec.task_id, trial, key),
        display=display_of(env, spec.substrate),
        vocabulary=vocabulary_of(env) if vocabulary is None else tuple(vocabulary),
    )
