"""Every shipped pack's env describes each of its actions' arguments (typed tools for agents)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import get_args

import pytest
from effectbench_ticketing.env import ACTIONS as TICKETING_ACTIONS
from effectbench_ticketing.env import PARAMETERS as TICKETING_PARAMETERS

from effectbench.packs import get_pack
from effectbench.seam import ActionParam, Closable, DescribesActions, ParamType

TYPES = set(get_args(ParamType))


def _well_formed(described: Mapping[str, Sequence[ActionParam]], actions: set[str]) -> None:
    assert set(described) == actions
    for action, params in described.items():
        names = [p.name for p in params]
        assert len(names) == len(set(names)), action
        for p in params:
            kinds = p.type if isinstance(p.type, tuple) else (p.type,)
            assert set(kinds) <= TYPES and p.description, (action, p)


@pytest.mark.parametrize("name", ["mockmed", "clinic"])
def test_an_episode_env_describes_every_action_it_accepts(name: str) -> None:
    pack = get_pack(name)
    task = next(t for t in pack.tasks() if name == "mockmed" or t.substrate.value == "api")
    try:
        with pack.provision(task, 0, pack.trial_params(task, 0)) as episode:
            env = episode.env
            assert isinstance(env, DescribesActions)
            _well_formed(env.action_parameters(), set(episode.env.actions()))
    finally:
        if isinstance(pack, Closable):
            pack.close()


def test_the_ticketing_env_describes_every_action_it_accepts() -> None:
    """Its episodes need PostgreSQL (the postgres group); its table is checked here."""
    _well_formed(TICKETING_PARAMETERS, set(TICKETING_ACTIONS))
