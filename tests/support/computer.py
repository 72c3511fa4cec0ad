"""A real :class:`ComputerBase` whose primitives record what reached the screen."""

from __future__ import annotations

import io
from typing import Any

from PIL import Image

from effectbench.computer import Display, MouseButton
from effectbench.computer.base import ComputerBase
from effectbench.computer.keys import KeyCombo


def pattern_png(width: int, height: int) -> bytes:
    image = Image.new("RGB", (width, height), (240, 240, 240))
    for x in range(0, width, 16):  # a pattern, so crops and resizes are real work
        image.putpixel((x, (x * 7) % height), (200, 30, 30))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


class RecordingScreen(ComputerBase):
    """A screen whose primitives record what reached them; screenshots are real PNGs."""

    def __init__(self, display: Display) -> None:
        super().__init__(display)
        self.calls: list[list[Any]] = []
        self._frame: bytes | None = None

    def _screenshot(self) -> bytes:
        if self._frame is None:
            self._frame = pattern_png(self.display.width, self.display.height)
        return self._frame

    def _move(self, x: int, y: int) -> None:
        self.calls.append(["move", x, y])

    def _button(self, button: MouseButton, down: bool) -> None:
        self.calls.append(["button", button, down])

    def _click(self, x: int, y: int, button: MouseButton, count: int) -> None:
        self.calls.append(["click", x, y, button, count])

    def _type(self, text: str) -> None:
        self.calls.append(["type", text])

    def _key(self, combo: KeyCombo, down: bool | None) -> None:
        step = {None: "key", True: "key_down", False: "key_up"}[down]
        self.calls.append([step, combo.xdotool()])

    def _scroll(self, x: int, y: int, dx: int, dy: int) -> None:
        self.calls.append(["scroll", x, y, dx, dy])

    def _wait(self, seconds: float) -> None:
        self.calls.append(["wait", seconds])
