"""The clinic's ``web`` front end: the web app in a fresh browser context, pixels only."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from effectbench.extras import require
from effectbench.packs.clinic.db import SURFACES
from effectbench.packs.clinic.env import RestVerifier, _Client
from effectbench.packs.clinic.frontends import FrontEndSession
from effectbench.packs.clinic.service import Channel
from effectbench.packs.clinic.tasks import ClinicTask
from effectbench.packs.clinic.web import layout
from effectbench.schema import Substrate
from effectbench.screens.browser import BrowserComputer, shared_browser
from effectbench.screens.chromium import chromium_executable
from effectbench.seam import Screen


class WebFrontEnd:
    """A fresh context and page per episode in this worker's shared Chromium."""

    substrate = Substrate.WEB

    def __init__(self) -> None:
        require("web", "playwright", "PIL", what="the web substrate")
        chromium_executable()  # a missing Chromium is one line before any episode

    @contextmanager
    def session(self, channel: Channel, referral: Mapping[str, Any]) -> Iterator[FrontEndSession]:
        """Health-check the browser, open the app's start page, yield the pixel env.

        The episode's context sends the channel's secret with every request it
        makes (a header, never on the page: the agent sees pixels only).
        """
        browser = shared_browser()
        browser_session = browser.open(layout.VIEWPORT, channel.url, headers=channel.headers())
        client = _Client(channel)
        env = BrowserComputer(
            browser_session,
            layout.VIEWPORT,
            {
                "product": lambda: RestVerifier(client, ("encounters",), "rest:encounters"),
                "all": lambda: RestVerifier(client, SURFACES, "rest:all-surfaces"),
            },
        )
        try:
            yield FrontEndSession(env, browser_session.health)
        finally:
            client.close()
            browser_session.close()

    def attempt(self, env: Any, task: ClinicTask, params: Mapping[str, Any]) -> Screen:
        """Drive the pages by recorded coordinates and screen changes."""
        from effectbench.packs.clinic.web import pixels  # reads screenshots: the web extra

        return pixels.attempt(env, task, params)

    def describe(self) -> dict[str, Any]:
        """The browser, viewport and font the pixels came from."""
        return {
            "browser": "chromium",
            "viewport": f"{layout.VIEWPORT.width}x{layout.VIEWPORT.height}",
            "font": layout.FONT,
        }
