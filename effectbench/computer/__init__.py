"""The computer-use interface: what an agent on a screen substrate holds.

On the ``web``, ``desktop`` and ``remote_display`` substrates a system under
test receives a :class:`ComputerEnv` instead of the API-level
:class:`~effectbench.seam.EnvHandle`: it sees screenshots and acts with the
pointer and the keyboard, nothing else. The desktop substrate adds the
accessibility tree (:class:`AccessibleComputerEnv`). Coordinates are in the
env's declared :class:`Display` size; vendors' action shapes are translated
onto this interface at the edge (:mod:`effectbench.computer.vendors`).

The modules: :mod:`.keys` (xdotool key names), :mod:`.checks` (what every
argument must be), :mod:`.base` (:class:`~.base.ComputerBase`: validation once,
so a new screen implements only the primitives), :mod:`.scaling` (a vendor's
declared display size), :mod:`.images` (PNG crop, resize, change detection) and
:mod:`.vendors` (Anthropic, OpenAI and OSWorld action shapes).

An action the harness refuses (a point off the screen, an unknown key name,
text with control characters) raises :class:`ActionError`: the agent's
mistake, reported to it as a tool error. A failure of the harness itself is
an :class:`~effectbench.errors.InfrastructureError` and never the agent's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from effectbench.errors import EffectBenchError
from effectbench.seam import ProductVerifier

MouseButton = Literal["left", "right", "middle"]


@dataclass(frozen=True)
class Display:
    """The screen size an env declares; every coordinate is in this space."""

    width: int
    height: int


class ActionError(EffectBenchError):
    """An action the harness refuses; the agent gets it as a tool error."""

    exit_code = 2


@runtime_checkable
class ComputerEnv(Protocol):
    """Screenshots in, pointer and keys out: an agent's whole handle on a screen."""

    display: Display

    def screenshot(self) -> bytes:
        """Return the screen now as PNG bytes of exactly ``display`` size."""
        ...

    def click(self, x: int, y: int, button: MouseButton = "left", count: int = 1) -> None:
        """Move to ``(x, y)`` and click ``button`` ``count`` times (2 = double click)."""
        ...

    def move(self, x: int, y: int) -> None:
        """Move the pointer to ``(x, y)``."""
        ...

    def drag(self, path: Sequence[tuple[int, int]], button: MouseButton = "left") -> None:
        """Press ``button`` at the first point, move through the rest, release at the last."""
        ...

    def mouse_down(self, button: MouseButton = "left") -> None:
        """Press ``button`` where the pointer is."""
        ...

    def mouse_up(self, button: MouseButton = "left") -> None:
        """Release ``button`` where the pointer is."""
        ...

    def cursor_position(self) -> tuple[int, int]:
        """Return where the pointer is."""
        ...

    def type(self, text: str) -> None:
        """Type ``text`` (printable characters, tabs and newlines only)."""
        ...

    def key(self, combo: str) -> None:
        """Press a key combination in xdotool syntax (``"ctrl+s"``, ``"Return"``)."""
        ...

    def key_down(self, key: str) -> None:
        """Hold one key down (an xdotool name, a modifier included) until :meth:`key_up`."""
        ...

    def key_up(self, key: str) -> None:
        """Release a key held with :meth:`key_down`."""
        ...

    def scroll(self, x: int, y: int, dx: int, dy: int) -> None:
        """Scroll at ``(x, y)`` by ``dx``/``dy`` wheel notches (positive: right/down)."""
        ...

    def wait(self, seconds: float) -> None:
        """Let ``seconds`` pass (bounded by the harness)."""
        ...

    def product_effect_verifier(self) -> ProductVerifier | None:
        """Return the product's own readback verifier (never the oracle), or ``None``."""
        ...


@dataclass(frozen=True)
class A11yNode:
    """One node of an accessibility tree, as a native-automation agent sees it."""

    id: str
    """Stable within the episode; what :meth:`AccessibleComputerEnv.a11y_action` takes."""
    role: str
    name: str
    states: tuple[str, ...]
    text: str
    extents: tuple[int, int, int, int]
    """``(x, y, width, height)`` in display coordinates."""
    actions: tuple[str, ...]
    children: tuple[A11yNode, ...] = ()
    description: str = ""
    """The accessible description (a status bar's status, a control's help text)."""


@dataclass(frozen=True)
class PageReading:
    """What a web page shows, as the harness reads it from the browser (never the agent).

    The blindness audit (:mod:`effectbench.conformance.blindness`) reads an episode's first
    page this way: everything a page could say about its task beyond its pixels.
    """

    title: str
    """The document's title (what a tab or a window list shows)."""
    route: str
    """The URL's path and query (the host and port are the episode's own)."""
    text: str
    """The body's rendered text (``innerText``)."""
    markup: tuple[str, ...]
    """What the markup says without drawing it, one token each: element ids (``#id``),
    classes (``.class``), hidden inputs (``hidden name=value``), form actions and link
    targets (``form /route``, ``link /route``) and meta tags, in document order."""
    a11y: A11yNode
    """The page's accessibility tree as Chromium computes it (ignored nodes left out)."""


@runtime_checkable
class PageReader(Protocol):
    """A harness-side handle on an episode's web page: :meth:`read_page` only.

    A front end's session carries one beside the agent's env (web only); the env an agent
    holds never reaches it.
    """

    def read_page(self) -> PageReading:
        """Read the page as it is now (after any navigation under way has loaded)."""
        ...


@runtime_checkable
class AccessibleComputerEnv(ComputerEnv, Protocol):
    """A :class:`ComputerEnv` that also exposes the application's accessibility tree."""

    def a11y_tree(self) -> A11yNode:
        """Return the application's accessibility tree now."""
        ...

    def a11y_action(self, node: str, action: str) -> None:
        """Perform the named accessibility action (``"click"``) on node ``node``."""
        ...

    def a11y_set_text(self, node: str, text: str) -> None:
        """Replace the text of an editable node."""
        ...


__all__ = [
    "A11yNode",
    "AccessibleComputerEnv",
    "ActionError",
    "ComputerEnv",
    "Display",
    "MouseButton",
    "PageReader",
    "PageReading",
]
