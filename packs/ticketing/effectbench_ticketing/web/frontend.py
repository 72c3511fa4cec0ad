"""The support desk's ``web`` front end: the web app in a fresh browser context, pixels only."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from effectbench.api import Screen, Substrate
from effectbench_ticketing.env import Client, all_surfaces_verifier, product_verifier
from effectbench_ticketing.frontends import FrontEndSession
from effectbench_ticketing.service import Channel
from effectbench_ticketing.tasks import TicketingTask
from effectbench_ticketing.web import layout, pixels, screen

VIEWPORT = screen.Display(layout.WIDTH, layout.HEIGHT)


class WebFrontEnd:
    """A fresh context and page per episode in this worker's shared Chromium."""

    substrate = Substrate.WEB

    def __init__(self) -> None:
        screen.require_chromium()  # a missing Chromium is one line before any episode

    @contextmanager
    def session(self, channel: Channel, request: Mapping[str, Any]) -> Iterator[FrontEndSession]:
        """Open the app in a fresh context; yield the pixel env.

        The context enters through the channel's entry link, which trades the episode's
        secret for an ``HttpOnly`` cookie (never drawn on the page: the agent sees pixels).
        """
        page = screen.open_page(VIEWPORT, channel.entry_url())
        client = Client(channel)
        env = screen.computer(
            page,
            VIEWPORT,
            {
                "product": lambda: product_verifier(client),
                "all": lambda: all_surfaces_verifier(client),
            },
        )
        try:
            yield FrontEndSession(env, page.health)
        finally:
            client.close()
            page.close()

    def attempt(self, env: Any, task: TicketingTask, params: Mapping[str, Any]) -> Screen:
        """Drive the pages by recorded coordinates and screen changes."""
        return pixels.attempt(env, task, params)

    def describe(self) -> dict[str, Any]:
        """The browser, viewport and font the pixels came from."""
        return {"browser": "chromium", "viewport": f"{VIEWPORT.width}x{VIEWPORT.height}",
                "font": layout.FONT}  # fmt: skip
