"""The clinic's desktop and remote-display front ends (see :mod:`..frontends`).

Both run the GTK 3 app (:mod:`.app`) as its own process on a fresh X session
per episode (:class:`~effectbench.screens.xsession.XSession`), a client of the
episode's record service; the fault lives in the service, so the app paints
what the service answers and the one oracle judges the record.

* ``desktop``: Xvfb, the episode's own D-Bus session and accessibility bus;
  the agent holds an :class:`~effectbench.screens.xdisplay.AccessibleXEnv`
  (XTest pointer and keys, screenshots, and the app's AT-SPI tree). The
  shipped baselines drive it through accessibility (:mod:`.a11y_driver`), as
  native RPA tools do.
* ``remote_display``: ``Xvnc`` (RFB on a Unix socket only the session's user
  reaches), the app started without an accessibility bridge; the agent holds a
  :class:`~effectbench.screens.rfb.RemoteDisplayEnv`: one RFB connection,
  nothing else. The baselines drive it by pixels (:mod:`.pixel_driver`).

Either env offers the product's own REST readback (never the oracle), so the
``effect_verified`` arms work as on every substrate. The health check names
what died (the X server, the bus, the app, the accessibility reader, the RFB
connection); the runner then retries and drops the episode as
``infrastructure``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from effectbench.computer import Display
from effectbench.frontends import FrontEndSession, require_substrate, x_session
from effectbench.kit.http import ServiceClient
from effectbench.packs.clinic.desktop import layout as L
from effectbench.packs.clinic.env import ClinicEnv
from effectbench.packs.clinic.service import SECRET_HEADER, Channel
from effectbench.packs.clinic.tasks import ClinicTask
from effectbench.schema import Substrate
from effectbench.screens.xsession import HEIGHT, WIDTH, Server
from effectbench.seam import Screen

APP = Path(__file__).with_name("app.py")
SECRET_ENV = "CLINIC_EPISODE_SECRET"
"""The app's environment variable that holds the episode's secret."""
APP_START_TIMEOUT_S = 20.0


def app_command(channel: Channel, referral: Mapping[str, Any]) -> tuple[list[str], dict[str, str]]:
    """Return the app's command line and the environment it adds for ``channel``.

    The episode's secret goes in the app's environment (only its own user can read
    that), never on its command line (which every local user can).
    """
    argv = [sys.executable, "-E", str(APP), "--port", str(channel.port)]
    argv += ["--secret-env", SECRET_ENV, "--secret-header", SECRET_HEADER]
    return [*argv, "--referral", json.dumps(referral)], {SECRET_ENV: channel.secret}


class _ScreenFrontEnd:
    """What the two X front ends share: one session, one app, one env per episode."""

    substrate: Substrate
    server: Server
    display = Display(WIDTH, HEIGHT)
    """Every episode's X screen (the agent's coordinate space)."""
    choices: Mapping[str, tuple[str, ...]] = {"encounters.type": L.TYPES}
    """What the app's closed controls can enter: a radio per encounter type (the charge code
    and the claim reference are text entries)."""

    def __init__(self) -> None:
        self.check()

    def describe(self) -> dict[str, Any]:
        """Return the front end's part of the env fingerprint."""
        return {
            "front_end": "gtk3",
            "x_server": self.server,
            "screen": f"{WIDTH}x{HEIGHT}",
            "font": f"{L.FONT} {L.FONT_PX}px",
        }

    def check(self) -> None:
        """Fail with one line naming the missing extra or Debian package, before any episode."""
        require_substrate(self.substrate)

    @contextmanager
    def session(self, channel: Channel, referral: Mapping[str, Any]) -> Iterator[FrontEndSession]:
        """Start the episode's X session and the app on it; yield the agent's env."""
        argv, app_env = app_command(channel, referral)
        # The product's readbacks, on a connection apart from any action the agent could take.
        client = ServiceClient(channel, ClinicEnv.SERVICE)
        readbacks = ClinicEnv.readbacks(client)
        try:
            with x_session(
                self.substrate,
                argv,
                app_env=app_env,
                readbacks=readbacks,
                start_timeout=APP_START_TIMEOUT_S,
            ) as session:
                yield session
        finally:
            client.close()


class DesktopFrontEnd(_ScreenFrontEnd):
    """The GTK app on Xvfb; the agent gets screenshots, XTest input and the AT-SPI tree."""

    substrate = Substrate.DESKTOP
    server: Server = "xvfb"

    def attempt(self, env: Any, task: ClinicTask, params: Mapping[str, Any]) -> Screen:
        """The baselines' steps through the accessibility tree."""
        from effectbench.packs.clinic.desktop import a11y_driver

        return a11y_driver.attempt(env, task, params)


class RemoteDisplayFrontEnd(_ScreenFrontEnd):
    """The GTK app on Xvnc; the agent holds one RFB connection to it."""

    substrate = Substrate.REMOTE_DISPLAY
    server: Server = "xvnc"

    def attempt(self, env: Any, task: ClinicTask, params: Mapping[str, Any]) -> Screen:
        """The baselines' steps by pixels: recorded coordinates and text anchors."""
        from effectbench.packs.clinic.desktop import pixel_driver

        return pixel_driver.attempt(env, task, params)
