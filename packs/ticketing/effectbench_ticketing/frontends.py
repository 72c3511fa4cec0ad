"""Front ends of the support desk: one per substrate, all over the same faulty service.

A front end is how an agent reaches the desk on one substrate: the JSON actions (``api``) or
the web app in a browser (``web``). Each task exists once per front end, as its own variant
(``ticketing::NAME`` on ``api``, ``ticketing::NAME@web``); the fault lives in the app's
persistence boundary and the one oracle judges every variant.

A front end implements :class:`FrontEnd` and is registered in :data:`FRONT_ENDS` (imported
only when used, so the ``api`` substrate never loads a browser):

* ``session(channel, request)``: a context manager yielding a :class:`FrontEndSession` (the
  agent's env and a ``health()`` the runner reads after the system ran; raise
  :class:`~effectbench.api.InfrastructureError` when setting up fails);
* ``attempt(env, task, params)``: the shipped baselines' scripted steps on this front end;
* ``describe()``: what goes into each row's ``env_fingerprint``.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from effectbench.api import FrontEnd as FrontEnd
from effectbench.api import FrontEndSession as FrontEndSession
from effectbench.api import Screen, Substrate
from effectbench_ticketing.env import TicketingEnv
from effectbench_ticketing.service import Channel
from effectbench_ticketing.tasks import TicketingTask, attempt


class ApiFrontEnd:
    """The desk's own JSON actions over HTTP: no screen (substrate ``api``)."""

    substrate = Substrate.API

    @contextmanager
    def session(self, channel: Channel, request: Mapping[str, Any]) -> Iterator[FrontEndSession]:
        """Open a keep-alive HTTP client on the service."""
        env = TicketingEnv(channel, dict(request))
        try:
            yield FrontEndSession(env)
        finally:
            env.close()

    def attempt(self, env: Any, task: TicketingTask, params: Mapping[str, Any]) -> Screen:
        """Find, open, save (or reassign) through the JSON actions."""
        return attempt(env, task, params)

    def describe(self) -> dict[str, Any]:
        """The API front end adds nothing to the fingerprint."""
        return {}


FRONT_ENDS: dict[Substrate, str] = {
    Substrate.API: "effectbench_ticketing.frontends:ApiFrontEnd",
    Substrate.WEB: "effectbench_ticketing.web.frontend:WebFrontEnd",
}
"""Every front end, in manifest order: substrate -> ``module:Class``."""


def variant_id(name: str, substrate: Substrate) -> str:
    """Return a variant's id: ``ticketing::NAME`` on ``api``, else ``ticketing::NAME@SUBSTRATE``."""
    base = f"ticketing::{name}"
    return substrate.variant_id(base)


def load(substrate: Substrate) -> FrontEnd:
    """Import and build the front end of ``substrate``."""
    module, _, cls = FRONT_ENDS[substrate].partition(":")
    front: FrontEnd = getattr(importlib.import_module(module), cls)()
    return front
