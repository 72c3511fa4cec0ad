"""Recording what an agent does: its env wrapped, harness-side, in one place; and key frames.

:func:`recorded` wraps the env a system under test is handed, whatever its substrate: an
API env (:class:`~effectbench.seam.EnvHandle`), a screen (:class:`~effectbench.computer.
ComputerEnv`) or a screen with an accessibility tree. Every action goes through to the
real env unchanged and is logged (what, its arguments or coordinates and keys, when, what
an API action's screen said, or why the harness refused it); looking (screenshots,
screens, trees) is only counted. The wrapper holds the env and the log, nothing else:
nothing the harness keeps (the oracle, the frames) is reachable from it.

:func:`frame` turns a screenshot (PNG) into a key frame: lossless WebP, named by the
sha256 of its bytes, so an identical screen is stored once.
"""

from __future__ import annotations

import hashlib
import io
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from effectbench.changes import Table, plain_value
from effectbench.computer import A11yNode, AccessibleComputerEnv, ActionError, ComputerEnv
from effectbench.computer import MouseButton as _Button
from effectbench.receipts.model import Action, ActionKind, Shown
from effectbench.seam import ProductVerifier, ReadsAllSurfaces, ReadsSurfaces, Screen

MAX_TEXT = 2000
"""Characters of typed text or an argument a receipt keeps (the rest is cut, marked)."""
WEBP_METHOD = 2
"""libwebp's effort (0-6): 2 gives nearly the smallest lossless files at a fraction of the time."""


def _text(value: str) -> str:
    return value if len(value) <= MAX_TEXT else f"{value[:MAX_TEXT]}… ({len(value)} characters)"


def _plain(value: Any) -> Any:
    plain = plain_value(value)
    return _text(plain) if isinstance(plain, str) else plain


class ActionLog:
    """The actions of one episode, in order, timed from the moment the agent got its env."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self._clock = clock
        self._start = clock()
        self.actions: list[Action] = []
        self.observations = 0

    def since_start(self) -> float:
        """Return the seconds since the agent was handed the env."""
        return round(max(0.0, self._clock() - self._start), 4)

    def add(self, kind: ActionKind, error: str | None = None, **fields: Any) -> None:
        """Log one action (``error``: why the harness refused it)."""
        self.actions.append(Action(t=self.since_start(), kind=kind, error=error, **fields))

    def observe(self) -> None:
        """Count one look at the screen (a screenshot, a screen, a tree)."""
        self.observations += 1


def _logged(log: ActionLog, kind: ActionKind, call: Callable[[], Any], **fields: Any) -> Any:
    """Perform ``call`` and log it; a refused action is logged with the reason and re-raised."""
    try:
        result = call()
    except ActionError as exc:
        log.add(kind, error=_text(str(exc)), **fields)
        raise
    log.add(kind, **fields)
    return result


class _Readback:
    """The product's verifier, logged when the agent reads back through it."""

    def __init__(self, inner: ProductVerifier, log: ActionLog) -> None:
        self.name = inner.name
        self.__inner = inner
        self.__log = log

    def verify(self, effect: Any) -> Any:
        """Read back through the product's own verifier (logged)."""
        return _logged(self.__log, "readback", lambda: self.__inner.verify(effect), name=self.name)

    def read(self) -> Mapping[str, Table] | None:
        """Read the surfaces as they are now (logged); None where the verifier cannot."""
        inner = self.__inner
        if not isinstance(inner, ReadsSurfaces):
            return None
        tables: Mapping[str, Table] | None = _logged(
            self.__log, "readback", inner.read, name=self.name
        )
        return tables


def _verifier(inner: ProductVerifier | None, log: ActionLog) -> ProductVerifier | None:
    return None if inner is None else _Readback(inner, log)


def _beyond_the_seam(wrapper: object, owner: str, name: str) -> Any:
    """What a particular env offers beyond the seam (another read-back): passed through; a
    read-back verifier it hands out is logged like the product's own."""
    if name.startswith("_Recorded"):  # not set yet (a copy being made): no recursion
        raise AttributeError(name)
    inner, log = vars(wrapper)[f"{owner}__inner"], vars(wrapper)[f"{owner}__log"]
    value = getattr(inner, name)
    if name.endswith("_verifier") and callable(value):
        return lambda: _verifier(value(), log)
    return value


def _all_surfaces(inner: Any, log: ActionLog) -> ProductVerifier | None:
    """``inner``'s all-surfaces readback, logged; None when it offers none. The recorders
    define this method themselves (:class:`~effectbench.seam.ReadsAllSurfaces` is checked
    statically on Python 3.12 and later, where ``__getattr__`` is not consulted)."""
    if not isinstance(inner, ReadsAllSurfaces):
        return None
    return _verifier(inner.all_surfaces_verifier(), log)


class RecordedEnv:
    """An API env (:class:`~effectbench.seam.EnvHandle`) whose actions are logged."""

    def __init__(self, inner: Any, log: ActionLog) -> None:
        self.__inner = inner
        self.__log = log

    def actions(self) -> Sequence[str]:
        """The actions the env accepts."""
        names: Sequence[str] = self.__inner.actions()
        return names

    def act(self, action: str, **arguments: Any) -> Screen:
        """Perform an action (logged with its arguments and what the screen said)."""
        screen: Screen = self.__inner.act(action, **arguments)
        self.__log.add(
            "api",
            name=_text(str(action)),
            arguments={str(k): _plain(v) for k, v in arguments.items()},
            shown=Shown(status=_text(str(screen.status)), banner=_text(str(screen.banner))),
        )
        return screen

    def screen(self) -> Screen:
        """The current screen (counted as a look)."""
        self.__log.observe()
        shown: Screen = self.__inner.screen()
        return shown

    def product_effect_verifier(self) -> ProductVerifier | None:
        """The product's own verifier; reading back through it is logged."""
        return _verifier(self.__inner.product_effect_verifier(), self.__log)

    def all_surfaces_verifier(self) -> ProductVerifier | None:
        """The product's readback over every surface, when the env has one (logged)."""
        return _all_surfaces(self.__inner, self.__log)

    def __getattr__(self, name: str) -> Any:
        return _beyond_the_seam(self, "_RecordedEnv", name)


class RecordedComputer:
    """A screen env (:class:`~effectbench.computer.ComputerEnv`) whose actions are logged."""

    def __init__(self, inner: ComputerEnv, log: ActionLog) -> None:
        self.__inner = inner
        self.__log = log
        self.display = inner.display

    def screenshot(self) -> bytes:
        """The screen now (counted as a look)."""
        self.__log.observe()
        return self.__inner.screenshot()

    def click(self, x: int, y: int, button: _Button = "left", count: int = 1) -> None:
        """Click (logged with its point, button and count)."""
        call = lambda: self.__inner.click(x, y, button, count)  # noqa: E731
        _logged(self.__log, "click", call, x=x, y=y, button=button, count=count)

    def move(self, x: int, y: int) -> None:
        """Move the pointer (logged)."""
        _logged(self.__log, "move", lambda: self.__inner.move(x, y), x=x, y=y)

    def drag(self, path: Sequence[tuple[int, int]], button: _Button = "left") -> None:
        """Drag along ``path`` (logged with its points)."""
        points = [(int(p[0]), int(p[1])) for p in path] if _points(path) else None
        call = lambda: self.__inner.drag(path, button)  # noqa: E731
        _logged(self.__log, "drag", call, path=points, button=button)

    def mouse_down(self, button: _Button = "left") -> None:
        """Press a button (logged)."""
        _logged(self.__log, "mouse_down", lambda: self.__inner.mouse_down(button), button=button)

    def mouse_up(self, button: _Button = "left") -> None:
        """Release a button (logged)."""
        _logged(self.__log, "mouse_up", lambda: self.__inner.mouse_up(button), button=button)

    def cursor_position(self) -> tuple[int, int]:
        """Where the pointer is (a look)."""
        self.__log.observe()
        return self.__inner.cursor_position()

    def type(self, text: str) -> None:
        """Type text (logged with the text)."""
        _logged(self.__log, "type", lambda: self.__inner.type(text), text=_text(str(text)))

    def key(self, combo: str) -> None:
        """Press a key combination (logged)."""
        _logged(self.__log, "key", lambda: self.__inner.key(combo), keys=_text(str(combo)))

    def key_down(self, key: str) -> None:
        """Hold a key (logged)."""
        _logged(self.__log, "key_down", lambda: self.__inner.key_down(key), keys=_text(str(key)))

    def key_up(self, key: str) -> None:
        """Release a key (logged)."""
        _logged(self.__log, "key_up", lambda: self.__inner.key_up(key), keys=_text(str(key)))

    def scroll(self, x: int, y: int, dx: int, dy: int) -> None:
        """Scroll (logged with its point and notches)."""
        call = lambda: self.__inner.scroll(x, y, dx, dy)  # noqa: E731
        _logged(self.__log, "scroll", call, x=x, y=y, dx=dx, dy=dy)

    def wait(self, seconds: float) -> None:
        """Let time pass (logged)."""
        _logged(self.__log, "wait", lambda: self.__inner.wait(seconds), seconds=_number(seconds))

    def product_effect_verifier(self) -> ProductVerifier | None:
        """The product's own verifier; reading back through it is logged."""
        return _verifier(self.__inner.product_effect_verifier(), self.__log)

    def all_surfaces_verifier(self) -> ProductVerifier | None:
        """The product's readback over every surface, when the env has one (logged)."""
        return _all_surfaces(self.__inner, self.__log)

    def __getattr__(self, name: str) -> Any:
        return _beyond_the_seam(self, "_RecordedComputer", name)


class RecordedAccessibleComputer(RecordedComputer):
    """A screen env with an accessibility tree, whose actions (both kinds) are logged."""

    def __init__(self, inner: AccessibleComputerEnv, log: ActionLog) -> None:
        super().__init__(inner, log)
        self.__tree: AccessibleComputerEnv = inner

    def a11y_tree(self) -> A11yNode:
        """The application's accessibility tree (a look)."""
        self._RecordedComputer__log.observe()
        return self.__tree.a11y_tree()

    def a11y_action(self, node: str, action: str) -> None:
        """Perform a node's accessibility action (logged)."""
        call = lambda: self.__tree.a11y_action(node, action)  # noqa: E731
        _logged(self._RecordedComputer__log, "a11y_action", call, node=str(node), name=str(action))

    def a11y_set_text(self, node: str, text: str) -> None:
        """Replace an editable node's text (logged with the text)."""
        call = lambda: self.__tree.a11y_set_text(node, text)  # noqa: E731
        log = self._RecordedComputer__log
        _logged(log, "a11y_set_text", call, node=str(node), text=_text(str(text)))


def _points(path: object) -> bool:
    return isinstance(path, list | tuple) and all(
        isinstance(p, list | tuple) and len(p) == 2 and all(type(v) is int for v in p) for p in path
    )


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def recorded(env: Any, log: ActionLog) -> Any:
    """Return ``env`` wrapped so that every action through it is logged in ``log``."""
    if isinstance(env, AccessibleComputerEnv):
        return RecordedAccessibleComputer(env, log)
    if isinstance(env, ComputerEnv):
        return RecordedComputer(env, log)
    return RecordedEnv(env, log)


def is_screen(env: Any) -> bool:
    """Say whether ``env`` shows pixels (its episode's receipt carries key frames)."""
    return isinstance(env, ComputerEnv)


def frame(png: bytes) -> tuple[str, bytes]:
    """Return a screenshot as a key frame: ``(name, bytes)``, lossless WebP named by its sha256.

    Pillow comes with the screen substrates' extras (a screen episode needs one of them).
    """
    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        image.load()
        rgb = image.convert("RGB")
    out = io.BytesIO()
    rgb.save(out, format="WEBP", lossless=True, quality=50, method=WEBP_METHOD)
    data = out.getvalue()
    return f"{hashlib.sha256(data).hexdigest()}.webp", data
