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

from effectbench.kit.forms import Button, Check, Choice, Entry
from effectbench.kit.pages import BANNER, BANNER_RGB, RESULT_PROBE, RESULT_RGB, RESULT_ROW, Box
from effectbench.seam import Screen

__all__ = [
    "PixelForms",
    "SETTLE_TIMEOUT_S",
    "banner_status",
    "choose",
    "fill",
    "has_result",
    "screen_of",
    "settle",
    "still",
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


def still(env: Any, frames: int, timeout: float = SETTLE_TIMEOUT_S) -> bytes:
    """Poll screenshots until ``frames`` in a row are the same (input the app had not yet
    painted has landed, as over a remote display, whose input calls return at once)."""
    deadline = time.monotonic() + timeout
    last: bytes = env.screenshot()
    same = 1
    while same < frames and time.monotonic() < deadline:
        shot: bytes = env.screenshot()
        same = same + 1 if shot == last else 1
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


def submit(env: Any, box: Box, drain: int = 0) -> bytes:
    """Click ``box`` (a button, a result row) and return the screen once it has settled.

    With ``drain``, the pointer goes to the box first and ``drain`` frames in a row must
    agree before the click (:func:`still`): a screen whose input lands after the call
    returns, or that draws the pointer into its pixels, has then painted all but the click.
    """
    if drain:
        env.move(*box.centre)
        before = still(env, drain)
    else:
        before = env.screenshot()
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


class PixelForms:
    """Fill declared forms by their boxes, with the pixel bot (screenshots only); ``drain``
    as :func:`submit`'s (for a screen whose input lands after the call returns)."""

    def __init__(self, env: Any, first_row: Box = RESULT_ROW, drain: int = 0) -> None:
        self.env = env
        self._row = Button("", first_row)
        self._drain = drain
        self._shot: bytes | None = None

    def fill(self, field: Entry, text: str) -> None:
        """Click into ``field``, select what is there, type ``text`` over it."""
        fill(self.env, field.box, text)

    def choose(self, choice: Choice, value: str) -> None:
        """Click the option of ``value``."""
        choose(self.env, choice.boxes(), value)

    def tick(self, check: Check) -> None:
        """Click ``check``."""
        self.env.click(*check.box.centre)

    def submit(self, button: Button) -> None:
        """Click ``button``; keep the screen once it has settled."""
        self._shot = submit(self.env, button.box, self._drain)

    def has_result(self) -> bool:
        """Say whether the first result row is on the last settled screen."""
        return self._shot is not None and has_result(self._shot)

    def open_result(self) -> None:
        """Click the first result row."""
        self.submit(self._row)

    def screen(self) -> Screen:
        """The banner's colour on the last settled screen (a fresh one before any)."""
        return screen_of(self._shot if self._shot is not None else self.env.screenshot())
