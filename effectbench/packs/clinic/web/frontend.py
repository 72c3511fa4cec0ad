"""The clinic's ``web`` front end: the web app in a fresh browser context, pixels only."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from effectbench.frontends import (
    ALL_SURFACES,
    PRODUCT,
    FrontEndSession,
    require_substrate,
    web_session,
)
from effectbench.packs.clinic.db import SURFACES
from effectbench.packs.clinic.env import RestVerifier, _Client
from effectbench.packs.clinic.service import Channel
from effectbench.packs.clinic.tasks import ClinicTask
from effectbench.packs.clinic.web import layout
from effectbench.schema import Substrate
from effectbench.seam import Screen


class WebFrontEnd:
    """A fresh context and page per episode in this worker's shared Chromium."""

    substrate = Substrate.WEB
    display = layout.VIEWPORT
    """Every episode's browser viewport (the agent's coordinate space)."""

    def __init__(self) -> None:
        require_substrate(Substrate.WEB)  # a missing extra or Chromium: one line, no episode

    @contextmanager
    def session(self, channel: Channel, referral: Mapping[str, Any]) -> Iterator[FrontEndSession]:
        """Open the app's start page in a fresh context of this worker's browser; yield the
        pixel env. The context sends the channel's secret with every request it makes (a
        header, never on the page: the agent sees pixels only)."""
        client = _Client(channel)
        readbacks = {
            PRODUCT: lambda: RestVerifier(client, ("encounters",), "rest:encounters"),
            ALL_SURFACES: lambda: RestVerifier(client, SURFACES, "rest:all-surfaces"),
        }
        try:
            with web_session(
                channel.url, self.display, headers=channel.headers(), readbacks=readbacks
            ) as session:
                yield session
        finally:
            client.close()

    def attempt(self, env: Any, task: ClinicTask, params: Mapping[str, Any]) -> Screen:
        """Drive the pages by recorded coordinates and screen changes."""
        from effectbench.packs.clinic.web import pixels  # reads screenshots: the web extra

        return pixels.attempt(env, task, params)

    def describe(self) -> dict[str, Any]:
        """The browser, viewport and font the pixels came from."""
        return {
            "browser": "chromium",
            "viewport": f"{self.display.width}x{self.display.height}",
            "font": layout.FONT,
        }
