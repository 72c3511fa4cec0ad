"""The kit's desktop and remote-display front ends: a pack's declared screens on an X display.

Both run the kit's renderer (:mod:`.render`) as its own process on a fresh X session per
episode (:func:`effectbench.frontends.x_session`), given nothing of the pack but its
:class:`~effectbench.kit.forms.Screens` (as JSON) and the agent's opening line; it is a
client of the episode's record service, where the fault lives, and the one oracle judges
the record.

* :class:`DeclaredDesktop` (``desktop``): Xvfb, the episode's own D-Bus session and
  accessibility bus; the agent holds screenshots, XTest input and the app's AT-SPI tree.
* :class:`DeclaredRemoteDisplay` (``remote_display``): Xvnc, the app without an
  accessibility bridge; the agent holds one RFB connection.

Either env offers the product's own REST readbacks (over the pack env's surfaces), never
the oracle. A pack registers them with its env class, its screens and its scripted
attempts on each (:data:`~effectbench.kit.frontends.Script`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from effectbench.computer import Display
from effectbench.episode_http import Channel
from effectbench.frontends import FrontEndSession, require_substrate, x_session
from effectbench.kit.forms import Screens, as_json
from effectbench.kit.frontends import Script
from effectbench.kit.http import HttpEnv, ServiceClient
from effectbench.schema import Substrate
from effectbench.screens.xsession import HEIGHT, WIDTH, Server
from effectbench.seam import Screen

__all__ = ["APP_MODULE", "DeclaredDesktop", "DeclaredRemoteDisplay", "app_command"]

APP_MODULE = "effectbench.kit.desktop.render"
SECRET_ENV = "EFFECTBENCH_EPISODE_SECRET"
"""The app's environment variable that holds the episode's secret."""
APP_START_TIMEOUT_S = 20.0


def app_command(
    channel: Channel, screens: Screens, opening: str
) -> tuple[list[str], dict[str, str]]:
    """Return the renderer's command line and the environment it adds for ``channel``.

    The episode's secret goes in the app's environment (only its own user can read that),
    never on its command line (which every local user can).
    """
    argv = [sys.executable, "-E", "-m", APP_MODULE, "--port", str(channel.port)]
    argv += ["--secret-env", SECRET_ENV, "--secret-header", channel.header]
    argv += ["--screens", as_json(screens), "--opening", opening, "--size", f"{WIDTH}x{HEIGHT}"]
    return argv, {SECRET_ENV: channel.secret}


class _Declared:
    """What the two X front ends share: one session, one app, one env per episode."""

    substrate: Substrate
    server: Server
    display = Display(WIDTH, HEIGHT)
    """Every episode's X screen (the agent's coordinate space)."""

    def __init__(self, env: type[HttpEnv], screens: Screens, script: Script) -> None:
        require_substrate(self.substrate)  # a missing package: one line, before any episode
        self._env = env
        self._screens = screens
        self._script = script

    def describe(self) -> dict[str, Any]:
        """Return the front end's part of the env fingerprint."""
        return {
            "front_end": "gtk3-declared",
            "x_server": self.server,
            "screen": f"{WIDTH}x{HEIGHT}",
            "font": self._screens.font,
        }

    @contextmanager
    def session(self, channel: Channel, brief: Mapping[str, Any]) -> Iterator[FrontEndSession]:
        """Start the episode's X session and the app on it; yield the agent's env."""
        told = self._env(channel, dict(brief))  # its connection opens only when used
        opening = told.opening(brief)
        told.close()
        argv, app_env = app_command(channel, self._screens, opening)
        # The product's readbacks, on a connection apart from any action the agent could take.
        client = ServiceClient(channel, self._env.SERVICE)
        try:
            with x_session(
                self.substrate,
                argv,
                app_env=app_env,
                readbacks=self._env.readbacks(client),
                start_timeout=APP_START_TIMEOUT_S,
            ) as session:
                yield session
        finally:
            client.close()

    def attempt(self, env: Any, task: Any, params: Mapping[str, Any]) -> Screen:
        """The shipped baselines' scripted steps on this substrate."""
        return self._script(env, task, params)


class DeclaredDesktop(_Declared):
    """The declared app on Xvfb; the agent gets screenshots, XTest input and the AT-SPI tree."""

    substrate = Substrate.DESKTOP
    server: Server = "xvfb"


class DeclaredRemoteDisplay(_Declared):
    """The declared app on Xvnc; the agent holds one RFB connection to it."""

    substrate = Substrate.REMOTE_DISPLAY
    server: Server = "xvnc"
