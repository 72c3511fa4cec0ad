"""What the web substrate takes from EffectBench's public screen seam (:mod:`effectbench.api`).

The browser, the pixel-only env and the screenshot readers are the harness's, for any pack:
:func:`effectbench.api.web_session` opens the desk in a fresh context of this thread's
shared Chromium and hands the agent screenshots in, pointer and keys out, plus the
product's readbacks, never the page. This module only names them for the pack's own use.
"""

from __future__ import annotations

from effectbench.api import (
    ComputerEnv,
    Display,
    browser_pids,
    close_browser,
    dominant_colour,
    screenshot_colour,
    screenshot_size,
)

__all__ = [
    "ComputerEnv",
    "Display",
    "browser_pids",
    "close_browser",
    "dominant",
    "pixel_at",
    "png_size",
]


def dominant(png: bytes, box: tuple[int, int, int, int]) -> tuple[int, int, int]:
    """Return the most common colour of ``box`` in the screenshot ``png``."""
    return dominant_colour(png, box)


def pixel_at(png: bytes, x: int, y: int) -> tuple[int, int, int]:
    """Return the colour of one pixel of the screenshot ``png``."""
    return screenshot_colour(png, x, y)


def png_size(png: bytes) -> tuple[int, int]:
    """Return the screenshot's width and height."""
    return screenshot_size(png)
