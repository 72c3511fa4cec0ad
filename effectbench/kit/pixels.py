"""The pack kit's pixel bot: the shipped baselines on a kit-built web app, the way RPA does it.

The bot knows the fixed frame (:mod:`effectbench.kit.pages`) and the pack's recorded
coordinates, and sees only screenshots. It clicks, types, and after each click that submits
a form it waits for the screen to change and hold still (polling screenshots, never sleeping
a fixed time). It reads two things off the pixels: whether the first result row is there (its
background colour at a probe point) and the colour of the status banner. It never touches
the DOM. A pack's own script (which fields, in what order) calls these.

Screenshots are read with the ``web`` extra (imported when the bot first reads one).
"""

from __future__ import annotations

import time
from typing import Any

from effectbench.kit.pages import BANNER, BANNER_RGB, RESULT_PROBE, RESULT_RGB, Box
from effectbench.seam import Screen

__all__ = [
    "SETTLE_TIMEOUT_S",
    "banner_status",
    "choose",
    "fill",
    "has_result",
    "screen_of",
    "settle",
    "submit",
]

SETTLE_TIMEOUT_S = 10.0
"""How long the bot waits for a page to change before it reads what is there."""
_WORDS = {"success": "green banner", "error": "red banner", "idle": "grey banner"}


def settle(env: Any, before: bytes, timeout: float = SETTLE_TIMEOUT_S) -> bytes:
    """Poll screenshots until the screen differs from ``before`` and holds still for a frame."""
    deadline = time.monotonic() + timeout
    last = before
    while time.monotonic() < deadline:
        shot: bytes = env.screenshot()
        if shot != before and shot == last:
            return shot
        last = shot
    return last


def banner_status(png: bytes) -> str:
    """Return ``success``, ``error`` or ``idle``: the status colour nearest the banner's."""
    from effectbench.computer import images

    colour = images.dominant(images.pixels(png), BANNER.region())
    return min(
        BANNER_RGB,
        key=lambda s: sum((a - b) ** 2 for a, b in zip(colour, BANNER_RGB[s], strict=True)),
    )


def screen_of(png: bytes) -> Screen:
    """What the bot concludes from a screenshot: the banner's colour."""
    status = banner_status(png)
    return Screen(status=status, banner=_WORDS[status])


def has_result(png: bytes) -> bool:
    """Say whether the first result row is on the screen."""
    from effectbench.computer import images

    x, y = RESULT_PROBE
    return tuple(int(v) for v in images.pixels(png)[y, x][:3]) == RESULT_RGB


def submit(env: Any, box: Box) -> bytes:
    """Click ``box`` (a button, a result row) and return the screen once it has settled."""
    before: bytes = env.screenshot()
    env.click(*box.centre)
    return settle(env, before)


def fill(env: Any, box: Box, text: str) -> None:
    """Replace the text of the field at ``box`` with ``text``."""
    env.click(*box.centre)
    env.key("ctrl+a")
    if text:
        env.type(text)
    else:
        env.key("Delete")


def choose(env: Any, options: dict[str, Box], value: str) -> None:
    """Click the option of ``value`` (nothing when the layout has none)."""
    box = options.get(value)
    if box is not None:
        env.click(*box.centre)
