"""The one module of this pack that reaches EffectBench's screen machinery.

EffectBench's public API (:mod:`effectbench.api`) does not yet export its pack-agnostic
screen front ends; until it does, everything the web substrate needs from the browser and
computer-use layers is imported here and nowhere else, so the switch is one file:

* :func:`open_page`: a fresh context and page at a viewport in this thread's shared headless
  Chromium (Debian's ``/usr/bin/chromium``, or ``EFFECTBENCH_CHROMIUM``), with its health;
* :func:`computer`: the pixel-only computer env an agent holds (screenshots in,
  pointer and keys out, plus the product's readbacks it is given, never the page);
* :func:`require_chromium`: a missing browser is one line, before any episode;
* the PNG helpers the pixel bots read banners with.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from effectbench.computer import ComputerEnv, Display, images
from effectbench.screens.browser import (
    BrowserComputer,
    BrowserSession,
    chromium_pids,
    close_shared_browser,
    shared_browser,
)
from effectbench.screens.chromium import chromium_executable

__all__ = [
    "BrowserSession",
    "ComputerEnv",
    "Display",
    "browser_pids",
    "close_browser",
    "computer",
    "dominant",
    "open_page",
    "pixel_at",
    "png_size",
    "require_chromium",
]


def require_chromium() -> None:
    """Raise a one-line error when Chromium is missing."""
    chromium_executable()


def open_page(viewport: Display, url: str) -> BrowserSession:
    """Open a fresh context and page in this thread's browser and load ``url``."""
    return shared_browser().open(viewport, url)


def computer(
    session: BrowserSession, viewport: Display, verifiers: dict[str, Callable[[], Any]]
) -> ComputerEnv:
    """Return the pixel-only env on ``session``'s page, offering ``verifiers`` by name."""
    return BrowserComputer(session.page, viewport, verifiers)


def browser_pids() -> list[int]:
    """Return the Chromium processes this process launched (for tests and health)."""
    return chromium_pids()


def close_browser() -> None:
    """Close this thread's shared browser."""
    close_shared_browser()


def dominant(png: bytes, box: tuple[int, int, int, int]) -> tuple[int, int, int]:
    """Return the most common colour of ``box`` in the screenshot ``png``."""
    return images.dominant(images.pixels(png), box)


def pixel_at(png: bytes, x: int, y: int) -> tuple[int, int, int]:
    """Return the colour of one pixel of the screenshot ``png``."""
    r, g, b = (int(v) for v in images.pixels(png)[y, x][:3])
    return r, g, b


def png_size(png: bytes) -> tuple[int, int]:
    """Return the screenshot's width and height."""
    return images.size(png)
