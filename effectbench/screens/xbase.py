"""What the X-backed envs share: buttons, wheel notches and keys as X keysyms.

The desktop env (XTest on the episode's display, :mod:`.xdisplay`) and the
remote-display env (RFB events, :mod:`.rfb`) both speak X keysyms and X button
numbers. :class:`XScreen` turns the checked actions of
:class:`~effectbench.computer.base.ComputerBase` into four transport
primitives: pointer position, button, keysym, grab. So both substrates
interpret every action identically.
"""

from __future__ import annotations

from abc import abstractmethod

import numpy as np
from numpy.typing import NDArray
from Xlib import XK

from effectbench.computer import ActionError, Display, MouseButton, images
from effectbench.computer.base import ComputerBase, Readbacks
from effectbench.computer.keys import KeyCombo

BUTTONS: dict[str, int] = {"left": 1, "middle": 2, "right": 3}
WHEEL = {"up": 4, "down": 5, "left": 6, "right": 7}


def keysym_code(name: str) -> int:
    """Return the X keysym of a keysym name or of one character."""
    code = int(XK.string_to_keysym(name))
    if code:
        return code
    if len(name) == 1:
        return char_keysym(name)
    raise ActionError(f"no X keysym for key {name!r}")


def char_keysym(char: str) -> int:
    """Return the keysym that types one (already checked) character."""
    if char == "\n":
        return int(XK.string_to_keysym("Return"))
    if char == "\t":
        return int(XK.string_to_keysym("Tab"))
    code = ord(char)
    return code if code < 0x100 else 0x01000000 | code


class XScreen(ComputerBase):
    """A ComputerEnv whose transport takes X pointer, button and keysym events."""

    def __init__(self, display: Display, readbacks: Readbacks | None) -> None:
        super().__init__(display, readbacks)
        self._last: tuple[NDArray[np.uint8], bytes] | None = None
        """The last grab and its PNG: a still screen is grabbed again, not encoded again."""

    # -- what a transport implements ---------------------------------------------------

    @abstractmethod
    def _pointer_to(self, x: int, y: int) -> None: ...

    @abstractmethod
    def _button_event(self, number: int, down: bool) -> None: ...

    @abstractmethod
    def _keysym_event(self, keysym: int, down: bool) -> None: ...

    def _type_keysym(self, keysym: int) -> None:
        """Type one character (a transport may add shift)."""
        self._keysym_event(keysym, True)
        self._keysym_event(keysym, False)

    @abstractmethod
    def _grab(self) -> NDArray[np.uint8]:
        """Return the screen now as height x width x 3 RGB."""

    def _flush(self) -> None:
        """Make sure every event sent so far reached the server."""

    # -- ComputerBase primitives ---------------------------------------------------------

    def _screenshot(self) -> bytes:
        frame = self._grab()
        if self._last is not None and np.array_equal(self._last[0], frame):
            return self._last[1]
        png = images.encode(frame)
        self._last = (frame, png)
        return png

    def _move(self, x: int, y: int) -> None:
        self._pointer_to(x, y)
        self._flush()

    def _button(self, button: MouseButton, down: bool) -> None:
        self._button_event(BUTTONS[button], down)
        self._flush()

    def _click(self, x: int, y: int, button: MouseButton, count: int) -> None:
        self._pointer_to(x, y)
        for _ in range(count):
            self._button_event(BUTTONS[button], True)
            self._button_event(BUTTONS[button], False)
        self._flush()

    def _type(self, text: str) -> None:
        for char in text:
            self._type_keysym(char_keysym(char))
        self._flush()

    def _key(self, combo: KeyCombo, down: bool | None) -> None:
        syms = [keysym_code(name) for name in combo.keysyms]
        if down is None or down:
            for keysym in syms:
                self._keysym_event(keysym, True)
        if down is None or not down:
            for keysym in reversed(syms):
                self._keysym_event(keysym, False)
        self._flush()

    def _scroll(self, x: int, y: int, dx: int, dy: int) -> None:
        self._pointer_to(x, y)
        for amount, negative, positive in ((dy, "up", "down"), (dx, "left", "right")):
            wheel = WHEEL[positive if amount > 0 else negative]
            for _ in range(abs(amount)):
                self._button_event(wheel, True)
                self._button_event(wheel, False)
        self._flush()
