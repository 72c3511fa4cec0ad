"""The pack kit's front ends: a pack's registry of them, and the two every HTTP pack has.

A kit-built pack offers each task once per front end, as its own variant (``PACK::NAME`` on
``api``, ``PACK::NAME@web``, ...); the fault lives in the pack's service and one oracle judges
every variant. :class:`FrontEnds` is the pack's registry: substrate -> ``module:factory`` of
the :class:`~effectbench.frontends.FrontEnd`, imported only when that substrate is used (so an
``api`` run never loads a browser), in manifest order.

Two front ends need nothing of a pack but its env class and its scripted attempts:

* :class:`ApiFrontEnd`, the pack's JSON actions over HTTP (its :class:`~effectbench.kit.http.
  HttpEnv`), no screen;
* :class:`WebFrontEnd`, the pack's web app in a fresh context of this worker's shared
  Chromium, pixels only; the context carries the episode's secret as a header, or enters by
  the channel's entry link when the service names a cookie. Either way the env offers the
  product's readbacks (over the env class's surfaces), never the oracle.

The desktop substrates' front ends are the kit's too (:mod:`effectbench.kit.desktop.frontend`:
the pack's declared screens rendered as a GTK 3 app on Xvfb or Xvnc, through
:func:`effectbench.frontends.x_session`); a pack with its own native app starts it the same way.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from effectbench.computer import Display
from effectbench.episode_http import Channel
from effectbench.frontends import FrontEnd, FrontEndSession, require_substrate, web_session
from effectbench.kit.http import HttpEnv, ServiceClient
from effectbench.kit.pages import FONT, VIEWPORT
from effectbench.schema import Substrate
from effectbench.seam import AgentTask, Look, Screen

if TYPE_CHECKING:
    from effectbench.kit.audit import Choices

__all__ = ["ApiFrontEnd", "Careful", "FrontEnds", "Script", "WebFrontEnd"]

Script = Callable[[Any, Any, Mapping[str, Any]], Screen]
"""The shipped baselines' scripted steps on one front end: ``(env, task, params)`` -> the
screen they end on (``task`` is the pack's own task definition)."""
Careful = Callable[[Any, AgentTask], Look]
"""A front end's careful script: what reading the record before writing means on it, from the
agent's view and what the application shows (``look_before_write``), never the definition."""


class FrontEnds:
    """A pack's front ends: substrate -> ``module:factory``, in manifest order."""

    def __init__(self, pack: str, entries: Mapping[Substrate, str]) -> None:
        self.pack = pack
        self.entries = dict(entries)

    @property
    def substrates(self) -> tuple[Substrate, ...]:
        """Every substrate with a front end, in manifest order."""
        return tuple(self.entries)

    def variant_id(self, name: str, substrate: Substrate) -> str:
        """Return a variant's id: ``PACK::NAME`` on ``api``, else ``PACK::NAME@SUBSTRATE``."""
        return substrate.variant_id(f"{self.pack}::{name}")

    def load(self, substrate: Substrate) -> FrontEnd:
        """Import and build the front end of ``substrate``."""
        module, _, attribute = self.entries[substrate].partition(":")
        front: FrontEnd = getattr(importlib.import_module(module), attribute)()
        return front


class ApiFrontEnd:
    """A pack's own JSON actions over HTTP: no screen (substrate ``api``)."""

    substrate = Substrate.API

    def __init__(self, env: type[HttpEnv], script: Script, careful: Careful | None = None) -> None:
        self._env = env
        self._script = script
        self.careful = careful
        """What reading before writing means on these actions (``None``: not offered)."""

    @contextmanager
    def session(self, channel: Channel, brief: Mapping[str, Any]) -> Iterator[FrontEndSession]:
        """Open a keep-alive HTTP client on the service."""
        env = self._env(channel, dict(brief))
        try:
            yield FrontEndSession(env)
        finally:
            env.close()

    def attempt(self, env: Any, task: Any, params: Mapping[str, Any]) -> Screen:
        """The scripted steps through the JSON actions."""
        return self._script(env, task, params)

    def describe(self) -> dict[str, Any]:
        """The API front end adds nothing to the fingerprint."""
        return {}


class WebFrontEnd:
    """A pack's web app in a fresh context and page per episode of this worker's Chromium.

    ``choices`` says what the pages' closed controls offer (a radio per value); every
    episode's page is ``viewport`` in size, stated before a session opens as its
    ``display`` (:class:`~effectbench.frontends.ShowsDisplay`: ``effectbench mcp`` tells the
    agent its coordinate space while the episode is still being provisioned).
    """

    substrate = Substrate.WEB
    display: Display
    """Every episode's browser viewport (the agent's coordinate space)."""

    def __init__(
        self,
        env: type[HttpEnv],
        script: Script,
        *,
        viewport: Display = VIEWPORT,
        font: str = FONT,
        choices: Choices | None = None,
    ) -> None:
        require_substrate(Substrate.WEB)  # a missing extra or Chromium: one line, no episode
        self._env = env
        self._script = script
        self.display = viewport
        self.font = font
        self.choices: Choices = dict(choices or {})
        """What the pages' closed controls can enter (``"surface.field"`` -> the values of
        its radios): the doability audit of ``pack check`` holds every task's required
        values to it (:func:`effectbench.kit.audit.unenterable`)."""

    @contextmanager
    def session(self, channel: Channel, brief: Mapping[str, Any]) -> Iterator[FrontEndSession]:
        """Open the app's start page in a fresh context; yield the pixel env.

        The context sends the episode's secret with every request (a header), or trades it
        for an ``HttpOnly`` cookie at the entry link; it is never drawn on the page.
        """
        client = ServiceClient(channel, self._env.SERVICE)
        readbacks = self._env.readbacks(client)
        if channel.cookie is not None:
            opened = web_session(channel.entry_url(), self.display, readbacks=readbacks)
        else:
            opened = web_session(
                channel.url, self.display, headers=channel.headers(), readbacks=readbacks
            )
        try:
            with opened as session:
                yield session
        finally:
            client.close()

    def attempt(self, env: Any, task: Any, params: Mapping[str, Any]) -> Screen:
        """Drive the pages by recorded coordinates and screen changes."""
        return self._script(env, task, params)

    def describe(self) -> dict[str, Any]:
        """The browser, viewport and font the pixels came from."""
        size = f"{self.display.width}x{self.display.height}"
        return {"browser": "chromium", "viewport": size, "font": self.font}
