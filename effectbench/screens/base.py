"""What every X-backed :class:`~effectbench.computer.ComputerEnv` shares.

:class:`ScreenEnv` validates each agent action once (a point off the screen,
an unknown button or key, a control character, a negative wait: an
:class:`~effectbench.computer.ActionError`) and turns it into four primitives
a backend implements: move the pointer, press or release a button, press or
release a keysym, grab the screen as RGB pixels. The XTest env
(:mod:`.xdisplay`) and the RFB env (:mod:`.rfb`) are such backends, so both
substrates interpret an action identically.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from effectbench.computer import ActionError, Display, MouseButton
from effectbench.screens import keys, png
from effectbench.seam import ProductVerifier

BUTTONS: dict[str, int] = {"left": 1, "middle": 2, "right": 3}
WHEEL = {"up": 4, "down": 5, "left": 6, "right": 7}
MAX_CLICKS = 3
MAX_SCROLL = 50
MAX_WAIT_S = 10.0
MAX_TEXT = 4096
MAX_PATH = 256


class ScreenEnv(ABC):
    """A ComputerEnv over four primitives; subclasses talk to a real screen."""

    display: Display

    def __init__(self, display: Display, readback: Callable[[], ProductVerifier] | None) -> None:
        self.display = display
        self._readback = readback
        self._pointer = (0, 0)

    # -- primitives a backend implements -------------------------------------------------

    @abstractmethod
    def _move(self, x: int, y: int) -> None: ...

    @abstractmethod
    def _button(self, number: int, down: bool) -> None: ...

    @abstractmethod
    def _key(self, keysym: int, down: bool) -> None: ...

    def _type_keysym(self, keysym: int) -> None:
        """Type one character's keysym (a backend may add shift)."""
        self._key(keysym, True)
        self._key(keysym, False)

    @abstractmethod
    def _grab(self) -> NDArray[np.uint8]:
        """Return the screen now, height x width x 3 RGB."""

    def _flush(self) -> None:
        """Make sure every event sent so far reached the server."""

    # -- validation ----------------------------------------------------------------------

    def _point(self, x: object, y: object) -> tuple[int, int]:
        if isinstance(x, bool) or isinstance(y, bool):
            raise ActionError("coordinates must be integers")
        if not isinstance(x, int) or not isinstance(y, int):
            raise ActionError("coordinates must be integers")
        if not (0 <= x < self.display.width and 0 <= y < self.display.height):
            raise ActionError(
                f"({x}, {y}) is outside the screen "
                f"({self.display.width}x{self.display.height})"
            )
        return x, y

    @staticmethod
    def _button_number(button: object) -> int:
        if button not in BUTTONS:
            raise ActionError(f"unknown mouse button {button!r} (left, middle or right)")
        return BUTTONS[str(button)]

    # -- the ComputerEnv protocol ----------------------------------------------------------

    def screenshot(self) -> bytes:
        """Return the screen now as PNG bytes of the declared size."""
        return png.encode(self._grab())

    def move(self, x: int, y: int) -> None:
        """Move the pointer to ``(x, y)``."""
        self._pointer = self._point(x, y)
        self._move(*self._pointer)
        self._flush()

    def click(self, x: int, y: int, button: MouseButton = "left", count: int = 1) -> None:
        """Move to ``(x, y)`` and click ``button`` ``count`` times."""
        number = self._button_number(button)
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_CLICKS:
            raise ActionError(f"click count must be 1 to {MAX_CLICKS}")
        self._pointer = self._point(x, y)
        self._move(*self._pointer)
        for _ in range(count):
            self._button(number, True)
            self._button(number, False)
        self._flush()

    def drag(self, path: Sequence[tuple[int, int]], button: MouseButton = "left") -> None:
        """Press at the first point, move through the rest, release at the last."""
        number = self._button_number(button)
        if not isinstance(path, Sequence) or not 2 <= len(path) <= MAX_PATH:
            raise ActionError(f"a drag path has 2 to {MAX_PATH} points")
        points = []
        for point in path:
            if not isinstance(point, Sequence) or len(point) != 2:
                raise ActionError("each drag point is [x, y]")
            points.append(self._point(point[0], point[1]))
        self._move(*points[0])
        self._button(number, True)
        for point in points[1:]:
            self._move(*point)
        self._button(number, False)
        self._pointer = points[-1]
        self._flush()

    def mouse_down(self, button: MouseButton = "left") -> None:
        """Press ``button`` where the pointer is."""
        self._button(self._button_number(button), True)
        self._flush()

    def mouse_up(self, button: MouseButton = "left") -> None:
        """Release ``button`` where the pointer is."""
        self._button(self._button_number(button), False)
        self._flush()

    def cursor_position(self) -> tuple[int, int]:
        """Return where the pointer is."""
        return self._pointer

    def type(self, text: str) -> None:
        """Type ``text``: printable characters, tabs and newlines."""
        if isinstance(text, str) and len(text) > MAX_TEXT:
            raise ActionError(f"at most {MAX_TEXT} characters per type action")
        for keysym in keys.text_keysyms(text):
            self._type_keysym(keysym)
        self._flush()

    def key(self, combo: str) -> None:
        """Press a combo in xdotool syntax, modifiers first, released in reverse."""
        syms = keys.combo(combo)
        for keysym in syms:
            self._key(keysym, True)
        for keysym in reversed(syms):
            self._key(keysym, False)
        self._flush()

    def scroll(self, x: int, y: int, dx: int, dy: int) -> None:
        """Scroll at ``(x, y)``: ``dx``/``dy`` wheel notches (positive: right/down)."""
        for amount in (dx, dy):
            if isinstance(amount, bool) or not isinstance(amount, int):
                raise ActionError("scroll amounts must be integers")
            if abs(amount) > MAX_SCROLL:
                raise ActionError(f"at most {MAX_SCROLL} wheel notches per scroll")
        self._pointer = self._point(x, y)
        self._move(*self._pointer)
        for amount, negative, positive in ((dy, "up", "down"), (dx, "left", "right")):
            wheel = WHEEL[positive if amount > 0 else negative]
            for _ in range(abs(amount)):
                self._button(wheel, True)
                self._button(wheel, False)
        self._flush()

    def wait(self, seconds: float) -> None:
        """Let ``seconds`` pass (at most ``MAX_WAIT_S``)."""
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            raise ActionError("wait takes a number of seconds")
        if not 0 <= seconds <= MAX_WAIT_S:
            raise ActionError(f"wait between 0 and {MAX_WAIT_S} seconds")
        time.sleep(float(seconds))

    def product_effect_verifier(self) -> ProductVerifier | None:
        """Return the product's own readback (never the oracle), if the episode offers one."""
        return None if self._readback is None else self._readback()
