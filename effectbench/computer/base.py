"""A base for screens: every argument checked once, so a screen implements primitives only.

:class:`ComputerBase` implements the whole :class:`~effectbench.computer.ComputerEnv`
surface: it checks each argument (:mod:`.checks`, :mod:`.keys`), tracks the
pointer, and calls one ``_primitive`` per action with values already known to be
good. A screen (a browser page, an X display, a VNC framebuffer) subclasses it
and implements the primitives; a refusal never reaches the screen.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence

from effectbench.computer import Display, MouseButton, checks
from effectbench.computer.keys import KeyCombo, parse_combo
from effectbench.seam import ProductVerifier

PRODUCT = "product"
"""The readback of the product's own verifier (:meth:`ComputerBase.product_effect_verifier`)."""
ALL_SURFACES = "all"
"""A readback over every surface the product shows (:meth:`ComputerBase.all_surfaces_verifier`)."""
Readbacks = Mapping[str, Callable[[], ProductVerifier]]
"""The product's readbacks an env offers, by name, each made when first asked for."""


class ComputerBase(ABC):
    """Checks arguments, tracks the pointer and delegates to the screen's primitives."""

    display: Display

    def __init__(self, display: Display, readbacks: Readbacks | None = None) -> None:
        self.display = display
        self._pointer = (0, 0)
        self._readbacks = dict(readbacks or {})

    # -- what a screen implements ----------------------------------------------------

    @abstractmethod
    def _screenshot(self) -> bytes:
        """Return the screen as PNG bytes of ``display`` size."""

    @abstractmethod
    def _move(self, x: int, y: int) -> None:
        """Move the pointer."""

    @abstractmethod
    def _button(self, button: MouseButton, down: bool) -> None:
        """Press (``down``) or release ``button`` where the pointer is."""

    @abstractmethod
    def _click(self, x: int, y: int, button: MouseButton, count: int) -> None:
        """Click ``count`` times at ``(x, y)`` (the pointer is moved there)."""

    @abstractmethod
    def _type(self, text: str) -> None:
        """Type checked text."""

    @abstractmethod
    def _key(self, combo: KeyCombo, down: bool | None) -> None:
        """Press and release ``combo`` (``down`` is ``None``), or only hold/release it."""

    @abstractmethod
    def _scroll(self, x: int, y: int, dx: int, dy: int) -> None:
        """Scroll at ``(x, y)`` by wheel notches."""

    def _wait(self, seconds: float) -> None:
        """Let time pass (a screen with its own clock may override this)."""
        time.sleep(seconds)

    # -- the ComputerEnv surface ---------------------------------------------------------

    def screenshot(self) -> bytes:
        """Return the screen now as PNG bytes of exactly ``display`` size."""
        return self._screenshot()

    def click(self, x: int, y: int, button: MouseButton = "left", count: int = 1) -> None:
        """Move to ``(x, y)`` and click ``button`` ``count`` times."""
        px, py = checks.point(self.display, x, y)
        b, n = checks.button(button), checks.clicks(count)
        self._click(px, py, b, n)
        self._pointer = (px, py)

    def move(self, x: int, y: int) -> None:
        """Move the pointer to ``(x, y)``."""
        self._pointer = checks.point(self.display, x, y)
        self._move(*self._pointer)

    def drag(self, path: Sequence[tuple[int, int]], button: MouseButton = "left") -> None:
        """Press at the first point, move through the rest, release at the last."""
        points = checks.path(self.display, path)
        b = checks.button(button)
        self._move(*points[0])
        self._button(b, True)
        for p in points[1:]:
            self._move(*p)
        self._button(b, False)
        self._pointer = points[-1]

    def mouse_down(self, button: MouseButton = "left") -> None:
        """Press ``button`` where the pointer is."""
        self._button(checks.button(button), True)

    def mouse_up(self, button: MouseButton = "left") -> None:
        """Release ``button`` where the pointer is."""
        self._button(checks.button(button), False)

    def cursor_position(self) -> tuple[int, int]:
        """Return where the pointer is."""
        return self._pointer

    def type(self, text: str) -> None:
        """Type printable text (Tab and newline allowed)."""
        self._type(checks.text(text))

    def key(self, combo: str) -> None:
        """Press one key combination in xdotool syntax."""
        self._key(parse_combo(combo), None)

    def key_down(self, key: str) -> None:
        """Hold a key (or a combo's keys) down."""
        self._key(parse_combo(key), True)

    def key_up(self, key: str) -> None:
        """Release a held key (or a combo's keys)."""
        self._key(parse_combo(key), False)

    def scroll(self, x: int, y: int, dx: int, dy: int) -> None:
        """Scroll at ``(x, y)`` by ``dx``/``dy`` notches (positive: right/down)."""
        px, py = checks.point(self.display, x, y)
        ndx, ndy = checks.notches(dx, "dx"), checks.notches(dy, "dy")
        self._scroll(px, py, ndx, ndy)
        self._pointer = (px, py)

    def wait(self, seconds: float) -> None:
        """Let ``seconds`` pass (at most :data:`~.checks.MAX_WAIT_S`)."""
        self._wait(checks.seconds(seconds))

    def product_effect_verifier(self) -> ProductVerifier | None:
        """Return the product's own readback verifier (never the oracle), if it offers one."""
        make = self._readbacks.get(PRODUCT)
        return None if make is None else make()

    def all_surfaces_verifier(self) -> ProductVerifier | None:
        """Return the product's readback over every surface it shows, if it offers one."""
        make = self._readbacks.get(ALL_SURFACES)
        return None if make is None else make()
