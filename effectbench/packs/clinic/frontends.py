"""Front ends of the clinic: one per substrate, all over the same faulty record service.

A front end is how an agent reaches the clinic on one substrate: the JSON
actions (``api``), the web app in a browser (``web``), and (added by the
desktop work) a GTK app (``desktop``) or that app over VNC (``remote_display``).
Each task of the pack exists once per registered front end, as its own variant
(``clinic::NAME`` on ``api``, ``clinic::NAME@web``, ...); the fault lives in the
record service and the one oracle judges every variant.

Adding a front end is one entry in :data:`FRONT_ENDS` (the substrate and the
``module:Class`` that implements :class:`FrontEnd`, imported only when used):

* ``session(channel, referral)``: a context manager yielding a :class:`FrontEndSession`
  (the agent's env, and a ``health()`` the runner reads after the system ran;
  raise :class:`~effectbench.errors.InfrastructureError` when setting up fails);
  ``channel`` is the record service's port and the episode's secret, which the
  front end's own clients carry and never show the agent;
* ``attempt(env, task, params)``: the shipped baselines' scripted steps on this
  front end, returning the :class:`~effectbench.seam.Screen` they end on;
* ``describe()``: what goes into each row's ``env_fingerprint``.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from effectbench.frontends import FrontEnd as FrontEnd
from effectbench.frontends import FrontEndSession as FrontEndSession
from effectbench.packs.clinic.env import ClinicEnv
from effectbench.packs.clinic.service import Channel
from effectbench.packs.clinic.tasks import ClinicTask, attempt
from effectbench.schema import Substrate
from effectbench.seam import Screen


class ApiFrontEnd:
    """The clinic's own JSON actions over HTTP: no screen (substrate ``api``)."""

    substrate = Substrate.API

    @contextmanager
    def session(self, channel: Channel, referral: Mapping[str, Any]) -> Iterator[FrontEndSession]:
        """Open a keep-alive HTTP client on the service."""
        env = ClinicEnv(channel, dict(referral))
        try:
            yield FrontEndSession(env)
        finally:
            env.close()

    def attempt(self, env: Any, task: ClinicTask, params: Mapping[str, Any]) -> Screen:
        """Find, open, save (or edit) through the JSON actions."""
        return attempt(env, task, params)

    def describe(self) -> dict[str, Any]:
        """The API front end adds nothing to the fingerprint."""
        return {}


FRONT_ENDS: dict[Substrate, str] = {
    Substrate.API: "effectbench.packs.clinic.frontends:ApiFrontEnd",
    Substrate.WEB: "effectbench.packs.clinic.web.frontend:WebFrontEnd",
    Substrate.DESKTOP: "effectbench.packs.clinic.desktop.frontend:DesktopFrontEnd",
    Substrate.REMOTE_DISPLAY: "effectbench.packs.clinic.desktop.frontend:RemoteDisplayFrontEnd",
}
"""Every front end of the clinic, in manifest order: substrate -> ``module:Class``."""


def variant_id(name: str, substrate: Substrate) -> str:
    """Return a task variant's id: ``clinic::NAME`` on ``api``, else ``clinic::NAME@SUBSTRATE``."""
    return substrate.variant_id(f"clinic::{name}")


def load(substrate: Substrate) -> FrontEnd:
    """Import and build the front end of ``substrate``."""
    module, _, cls = FRONT_ENDS[substrate].partition(":")
    front: FrontEnd = getattr(importlib.import_module(module), cls)()
    return front
