"""The support desk's ``web`` front end: the web app in a fresh browser context, pixels only."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from effectbench.api import (
    ALL_SURFACES,
    PRODUCT,
    Display,
    Screen,
    Substrate,
    require_substrate,
    web_session,
)
from effectbench_ticketing.env import Client, all_surfaces_verifier, product_verifier
from effectbench_ticketing.frontends import FrontEndSession
from effectbench_ticketing.service import Channel
from effectbench_ticketing.tasks import TicketingTask
from effectbench_ticketing.web import layout, pixels

VIEWPORT = Display(layout.WIDTH, layout.HEIGHT)


class WebFrontEnd:
    """A fresh context and page per episode in this worker's shared Chromium."""

    substrate = Substrate.WEB

    def __init__(self) -> None:
        require_substrate(Substrate.WEB)  # a missing extra or Chromium: one line, no episode

    @contextmanager
    def session(self, channel: Channel, request: Mapping[str, Any]) -> Iterator[FrontEndSession]:
        """Open the app in a fresh context; yield the pixel env.

        The context enters through the channel's entry link, which trades the episode's
        secret for an ``HttpOnly`` cookie (never drawn on the page: the agent sees pixels).
        """
        client = Client(channel)
        readbacks = {
            PRODUCT: lambda: product_verifier(client),
            ALL_SURFACES: lambda: all_surfaces_verifier(client),
        }
        try:
            with web_session(channel.entry_url(), VIEWPORT, readbacks=readbacks) as session:
                yield FrontEndSession(session.env, session.health)
        finally:
            client.close()

    def attempt(self, env: Any, task: TicketingTask, params: Mapping[str, Any]) -> Screen:
        """Drive the pages by recorded coordinates and screen changes."""
        return pixels.attempt(env, task, params)

    def describe(self) -> dict[str, Any]:
        """The browser, viewport and font the pixels came from."""
        return {"browser": "chromium", "viewport": f"{VIEWPORT.width}x{VIEWPORT.height}",
                "font": layout.FONT}  # fmt: skip
