"""The desktop substrate's envs: XTest input and XGetImage screenshots, plus AT-SPI.

:class:`XTestEnv` is a :class:`~effectbench.computer.ComputerEnv` on one
episode's X display, through its own X connection (``python-xlib``: the X
protocol in Python, XTEST for input, ``GetImage`` for pixels), authorized by
the session's cookie file.
:class:`AccessibleXEnv` adds the application's accessibility tree, read and
acted on through the episode's accessibility reader (:mod:`._a11y_helper`, a
process on the episode's own AT-SPI bus) over a Unix socket: ``a11y_tree``,
``a11y_action`` and ``a11y_set_text``. A node that vanished, or that belongs to
another application, is an :class:`~effectbench.computer.ActionError`.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from Xlib import XK, X, error
from Xlib import display as xdisplay
from Xlib.ext import xtest

from effectbench.computer import A11yNode, ActionError, Display
from effectbench.computer.base import Readbacks
from effectbench.environment import variable
from effectbench.errors import InfrastructureError
from effectbench.screens.xbase import XScreen
from effectbench.screens.xsession import XSession

HELPER = Path(__file__).with_name("_a11y_helper.py")
SHIFT = int(XK.string_to_keysym("Shift_L"))
_xauthority_lock = threading.Lock()


def open_display(name: str, xauthority: Path | None) -> xdisplay.Display:
    """Connect to X display ``name``, presenting the cookie in file ``xauthority``.

    python-xlib reads its cookie file from ``$XAUTHORITY`` while it connects, and
    only then: the variable names ``xauthority`` for that moment alone (one
    connection at a time in this process). ``None`` keeps the process's own.
    """
    if xauthority is None:
        return xdisplay.Display(name)
    with _xauthority_lock, variable("XAUTHORITY", str(xauthority)):
        return xdisplay.Display(name)


class XTestEnv(XScreen):
    """Pointer and keys through XTEST, screenshots through GetImage, on one display."""

    def __init__(
        self,
        display_name: str,
        readbacks: Readbacks | None = None,
        *,
        xauthority: Path | None = None,
    ) -> None:
        try:
            self._x = open_display(display_name, xauthority)
        except (error.DisplayError, OSError) as exc:
            raise InfrastructureError(f"cannot open X display {display_name} ({exc})") from exc
        if not self._x.query_extension("XTEST").present:
            raise InfrastructureError(f"X display {display_name} has no XTEST extension")
        screen = self._x.screen()
        self._root = screen.root
        super().__init__(Display(screen.width_in_pixels, screen.height_in_pixels), readbacks)
        self._codes: dict[int, tuple[int, bool]] = {}
        self._spare: list[int] = []

    def close(self) -> None:
        """Close the X connection."""
        try:
            self._x.close()
        except (error.ConnectionClosedError, OSError):
            pass

    def _io(self, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except (error.ConnectionClosedError, OSError) as exc:
            raise InfrastructureError(f"the X display went away ({exc})") from exc

    def _pointer_to(self, x: int, y: int) -> None:
        self._io(lambda: xtest.fake_input(self._x, X.MotionNotify, x=x, y=y))

    def _button_event(self, number: int, down: bool) -> None:
        kind = X.ButtonPress if down else X.ButtonRelease
        self._io(lambda: xtest.fake_input(self._x, kind, detail=number))

    def _keycode(self, keysym: int) -> tuple[int, bool]:
        """Return the keycode typing ``keysym`` and whether it needs shift (maps it if absent)."""
        if keysym in self._codes:
            return self._codes[keysym]
        found = sorted(self._x.keysym_to_keycodes(keysym), key=lambda c: c[1])
        if found and found[0][1] in (0, 1):
            code, index = found[0]
            entry = (code, index == 1)
        else:  # not on the keyboard map: bind it to a spare keycode
            if not self._spare:
                first = self._x.display.info.min_keycode
                count = self._x.display.info.max_keycode - first + 1
                mapping = self._x.get_keyboard_mapping(first, count)
                self._spare = [first + i for i, syms in enumerate(mapping) if not any(syms)]
            if not self._spare:
                raise ActionError(f"no free keycode to type keysym {keysym:#x}")
            code = self._spare.pop()
            self._io(lambda: self._x.change_keyboard_mapping(code, [(keysym, keysym)]))
            self._io(self._x.sync)
            entry = (code, False)
        self._codes[keysym] = entry
        return entry

    def _keysym_event(self, keysym: int, down: bool) -> None:
        code, _ = self._keycode(keysym)
        kind = X.KeyPress if down else X.KeyRelease
        self._io(lambda: xtest.fake_input(self._x, kind, detail=code))

    def _type_keysym(self, keysym: int) -> None:
        code, shifted = self._keycode(keysym)
        if shifted:
            self._keysym_event(SHIFT, True)
        self._io(lambda: xtest.fake_input(self._x, X.KeyPress, detail=code))
        self._io(lambda: xtest.fake_input(self._x, X.KeyRelease, detail=code))
        if shifted:
            self._keysym_event(SHIFT, False)

    def _flush(self) -> None:
        self._io(self._x.sync)

    def _grab(self) -> NDArray[np.uint8]:
        width, height = self.display.width, self.display.height
        image = self._io(lambda: self._root.get_image(0, 0, width, height, X.ZPixmap, 0xFFFFFFFF))
        raw = np.frombuffer(image.data, dtype=np.uint8).reshape(height, width, 4)
        return np.ascontiguousarray(raw[:, :, 2::-1])


def _node(data: dict[str, Any]) -> A11yNode:
    return A11yNode(
        id=str(data["id"]),
        role=str(data["role"]),
        name=str(data["name"]),
        states=tuple(data["states"]),
        text=str(data["text"]),
        extents=tuple(int(v) for v in data["extents"]),  # type: ignore[arg-type]
        actions=tuple(data["actions"]),
        children=tuple(_node(c) for c in data["children"]),
        description=str(data.get("description", "")),
    )


class A11yReader:
    """The harness's connection to an episode's accessibility reader process."""

    def __init__(self, session: XSession, app_pid: int, timeout: float = 10.0) -> None:
        path = session.root / "run" / "a11y-reader.sock"
        session.spawn(
            [sys.executable, "-E", str(HELPER), str(path), str(app_pid)],
            name="a11y-reader",
            env={"AT_SPI_BUS_ADDRESS": session.a11y_address, "DISPLAY": ""},
            ready_fd=True,
            timeout=timeout,
        )
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(timeout)
        try:
            self._sock.connect(str(path))
        except OSError as exc:
            raise InfrastructureError(f"the accessibility reader is unreachable ({exc})") from exc
        self._stream = self._sock.makefile("rwb")
        reply = self.request(op="wait_app", timeout=timeout)
        if "error" in reply:
            raise InfrastructureError(str(reply["error"]))

    def request(self, **request: Any) -> dict[str, Any]:
        """Send one request; a dead reader is the harness's failure, not the agent's."""
        try:
            self._stream.write(json.dumps(request).encode("utf-8") + b"\n")
            self._stream.flush()
            line = self._stream.readline()
        except OSError as exc:
            raise InfrastructureError(f"the accessibility reader failed ({exc})") from exc
        if not line:
            raise InfrastructureError("the accessibility reader stopped")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def tool(self, **request: Any) -> dict[str, Any]:
        """Send a request on the agent's behalf: an error answer is the agent's tool error."""
        reply = self.request(**request)
        if "error" in reply:
            raise ActionError(str(reply["error"]))
        return reply

    def close(self) -> None:
        """Close the connection (the reader process ends with the session)."""
        for closer in (self._stream.close, self._sock.close):
            try:
                closer()
            except OSError:
                pass


class AccessibleXEnv(XTestEnv):
    """:class:`XTestEnv` plus the application's AT-SPI tree (an AccessibleComputerEnv)."""

    def __init__(
        self,
        display_name: str,
        reader: A11yReader,
        readbacks: Readbacks | None = None,
        *,
        xauthority: Path | None = None,
    ) -> None:
        super().__init__(display_name, readbacks, xauthority=xauthority)
        self._reader = reader

    def a11y_tree(self) -> A11yNode:
        """Return the application's accessibility tree now."""
        return _node(self._reader.tool(op="tree")["tree"])

    def a11y_action(self, node: str, action: str) -> None:
        """Perform accessibility action ``action`` (``"click"``) on node ``node``."""
        if not isinstance(node, str) or not isinstance(action, str):
            raise ActionError("a11y_action takes a node id and an action name")
        self._reader.tool(op="action", node=node, action=action)

    def a11y_set_text(self, node: str, text: str) -> None:
        """Replace the text of an editable node."""
        if not isinstance(node, str) or not isinstance(text, str):
            raise ActionError("a11y_set_text takes a node id and a string")
        self._reader.tool(op="set_text", node=node, text=text)
