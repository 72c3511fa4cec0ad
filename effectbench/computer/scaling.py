"""A vendor's declared display size over a screen of another size, scaled consistently.

Agents are told a display size when their tool is declared (Anthropic's
``display_width_px``; OpenAI's ``display_width``) and answer in that space. When
it differs from the screen's own size, every coordinate must be mapped in and
every screenshot and pointer position mapped out with the *same* factors, or
clicks drift (the commonest cause of misses in other harnesses).
:class:`ScaledComputer` is that one mapping: points in the declared space are
checked against the declared display, then mapped to the screen's pixel whose
area contains the declared pixel's centre; screenshots are resampled to the
declared size; the pointer is reported back in declared coordinates.
"""

from __future__ import annotations

from collections.abc import Sequence

from effectbench.computer import ActionError, ComputerEnv, Display, MouseButton, checks, images
from effectbench.seam import ProductVerifier


class ScaledComputer:
    """A :class:`~effectbench.computer.ComputerEnv` in ``declared`` coordinates over ``env``."""

    def __init__(self, env: ComputerEnv, declared: Display) -> None:
        if declared.width < 1 or declared.height < 1:
            raise ValueError(f"a display is at least 1x1, got {declared}")
        self.env = env
        self.display = declared

    def to_screen(self, x: object, y: object) -> tuple[int, int]:
        """Map a declared point (checked against the declared display) onto the screen."""
        px, py = checks.point(self.display, x, y)
        screen = self.env.display
        return (
            min(screen.width - 1, (2 * px + 1) * screen.width // (2 * self.display.width)),
            min(screen.height - 1, (2 * py + 1) * screen.height // (2 * self.display.height)),
        )

    def to_declared(self, x: int, y: int) -> tuple[int, int]:
        """Map a screen point back into the declared space (the inverse of :meth:`to_screen`)."""
        screen = self.env.display
        return (
            min(self.display.width - 1, (2 * x + 1) * self.display.width // (2 * screen.width)),
            min(self.display.height - 1, (2 * y + 1) * self.display.height // (2 * screen.height)),
        )

    def screenshot(self) -> bytes:
        """Return the screen resampled to the declared size."""
        return images.resize(self.env.screenshot(), self.display.width, self.display.height)

    def zoom(self, box: tuple[int, int, int, int]) -> bytes:
        """Return a declared region ``(x0, y0, x1, y1)`` at the screen's full resolution."""
        x0, y0, x1, y1 = (checks.integer(v, "region") for v in box)
        if not (0 <= x0 < x1 <= self.display.width and 0 <= y0 < y1 <= self.display.height):
            raise ActionError(f"region {[x0, y0, x1, y1]} is not on the declared screen")
        screen = self.env.display
        sx0 = x0 * screen.width // self.display.width
        sy0 = y0 * screen.height // self.display.height
        sx1 = max(sx0 + 1, -(-x1 * screen.width // self.display.width))
        sy1 = max(sy0 + 1, -(-y1 * screen.height // self.display.height))
        return images.crop(self.env.screenshot(), (sx0, sy0, sx1, sy1))

    def click(self, x: int, y: int, button: MouseButton = "left", count: int = 1) -> None:
        """Click at a declared point."""
        self.env.click(*self.to_screen(x, y), button=button, count=count)

    def move(self, x: int, y: int) -> None:
        """Move to a declared point."""
        self.env.move(*self.to_screen(x, y))

    def drag(self, path: Sequence[tuple[int, int]], button: MouseButton = "left") -> None:
        """Drag through declared points."""
        points = checks.path(self.display, path)
        self.env.drag([self.to_screen(x, y) for x, y in points], button=button)

    def mouse_down(self, button: MouseButton = "left") -> None:
        """Press a button."""
        self.env.mouse_down(button)

    def mouse_up(self, button: MouseButton = "left") -> None:
        """Release a button."""
        self.env.mouse_up(button)

    def cursor_position(self) -> tuple[int, int]:
        """Return the pointer in declared coordinates."""
        return self.to_declared(*self.env.cursor_position())

    def type(self, text: str) -> None:
        """Type text."""
        self.env.type(text)

    def key(self, combo: str) -> None:
        """Press a key combination."""
        self.env.key(combo)

    def key_down(self, key: str) -> None:
        """Hold a key."""
        self.env.key_down(key)

    def key_up(self, key: str) -> None:
        """Release a key."""
        self.env.key_up(key)

    def scroll(self, x: int, y: int, dx: int, dy: int) -> None:
        """Scroll at a declared point."""
        self.env.scroll(*self.to_screen(x, y), dx, dy)

    def wait(self, seconds: float) -> None:
        """Wait."""
        self.env.wait(seconds)

    def product_effect_verifier(self) -> ProductVerifier | None:
        """Return the screen's product verifier."""
        return self.env.product_effect_verifier()


def fit(env: ComputerEnv, declared: Display | None) -> ComputerEnv:
    """Return ``env`` itself when ``declared`` is its size (or ``None``), else a scaled view."""
    if declared is None or declared == env.display:
        return env
    return ScaledComputer(env, declared)
