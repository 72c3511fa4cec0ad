"""What every argument of a computer action must be; a violation is an ActionError.

These are the harness's refusals, the same on every screen: a point off the
declared display, text with control characters, a button or click count that
does not exist, a wait longer than the harness grants. Each function returns
the argument normalised (JSON numbers like ``12.0`` become ints) so callers use
what it returns.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from effectbench.computer import ActionError, Display, MouseButton
from effectbench.showable import first_unshowable

BUTTONS: tuple[MouseButton, ...] = ("left", "right", "middle")
MAX_CLICKS = 3
"""Single, double and triple clicks."""
MAX_WAIT_S = 10.0
"""The longest single wait an agent may ask for."""
MAX_TEXT = 4000
"""The most characters one ``type`` action may carry."""
MAX_NOTCHES = 50
"""The most wheel notches one scroll may carry in each direction."""
PIXELS_PER_NOTCH = 100
"""How far one wheel notch scrolls, for vendors that speak in pixels."""
MAX_PATH = 64
"""The most points one drag may pass through."""
TEXT_CONTROLS = "\t\n"
"""The only control characters text may carry (Tab and newline are keys a form uses)."""


def integer(value: object, what: str) -> int:
    """Return ``value`` as an int; a bool, a fraction or a non-number is refused."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ActionError(f"{what} must be a whole number, got {value!r}")
    if isinstance(value, float) and (not math.isfinite(value) or not value.is_integer()):
        raise ActionError(f"{what} must be a whole number, got {value!r}")
    return int(value)


def point(display: Display, x: object, y: object) -> tuple[int, int]:
    """Return ``(x, y)`` if it lies on the ``display``; off the screen is refused."""
    px, py = integer(x, "x"), integer(y, "y")
    if not (0 <= px < display.width and 0 <= py < display.height):
        raise ActionError(
            f"point ({px}, {py}) is off the screen "
            f"(0..{display.width - 1} x 0..{display.height - 1})"
        )
    return px, py


def path(display: Display, points: object) -> list[tuple[int, int]]:
    """Return a drag path of 2 to :data:`MAX_PATH` on-screen points."""
    if not isinstance(points, Sequence) or isinstance(points, str):
        raise ActionError(f"a drag path must be a list of points, got {points!r}")
    if not 2 <= len(points) <= MAX_PATH:
        raise ActionError(f"a drag path needs 2 to {MAX_PATH} points, got {len(points)}")
    checked = []
    for p in points:
        if not isinstance(p, Sequence) or isinstance(p, str) or len(p) != 2:
            raise ActionError(f"a point is [x, y], got {p!r}")
        checked.append(point(display, p[0], p[1]))
    return checked


def text(value: object) -> str:
    """Return ``value`` if every character may be shown (:mod:`effectbench.showable`), or is a
    tab or a newline."""
    if not isinstance(value, str):
        raise ActionError(f"text must be a string, got {value!r}")
    if len(value) > MAX_TEXT:
        raise ActionError(f"text is {len(value)} characters; at most {MAX_TEXT} per action")
    at = first_unshowable(value, also=TEXT_CONTROLS)
    if at is not None:
        code = ord(value[at])
        what = (
            "the control character"
            if code < 0x20 or 0x7F <= code <= 0x9F
            else "a format, private-use, unassigned or invisible character,"
        )
        raise ActionError(
            f"text contains {what} U+{code:04X} at position {at}, which cannot be typed "
            "(letters, marks, numbers, punctuation, symbols, spaces, tab and newline can)"
        )
    return value


def button(value: object) -> MouseButton:
    """Return a mouse button name (``left``, ``right``, ``middle``)."""
    if value not in BUTTONS:
        raise ActionError(f"unknown mouse button {value!r}; known: {', '.join(BUTTONS)}")
    return value


def clicks(value: object) -> int:
    """Return a click count from 1 to :data:`MAX_CLICKS`."""
    n = integer(value, "click count")
    if not 1 <= n <= MAX_CLICKS:
        raise ActionError(f"click count must be 1 to {MAX_CLICKS}, got {n}")
    return n


def notches(value: object, what: str) -> int:
    """Return a wheel amount within +-:data:`MAX_NOTCHES`."""
    n = integer(value, what)
    if abs(n) > MAX_NOTCHES:
        raise ActionError(f"{what} must be within +-{MAX_NOTCHES} notches, got {n}")
    return n


def seconds(value: object) -> float:
    """Return a wait from 0 to :data:`MAX_WAIT_S` seconds."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ActionError(f"a duration must be a number of seconds, got {value!r}")
    if not 0 <= value <= MAX_WAIT_S:
        raise ActionError(f"a duration must be 0 to {MAX_WAIT_S:g} seconds, got {value!r}")
    return float(value)


__all__ = [
    "BUTTONS",
    "MAX_CLICKS",
    "MAX_NOTCHES",
    "MAX_PATH",
    "MAX_TEXT",
    "MAX_WAIT_S",
    "button",
    "clicks",
    "integer",
    "notches",
    "path",
    "point",
    "seconds",
    "text",
]
