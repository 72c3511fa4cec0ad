"""One headless Chromium per worker thread, a fresh context per episode, and the pixel env.

:class:`SharedBrowser` launches Debian's Chromium (``/usr/bin/chromium``) through
Playwright's Python client once per worker (process, or thread for the MCP
server) and hands each episode a fresh :class:`BrowserSession`: a new context
(no storage, cookies or cache carried over), one page at a fixed viewport,
fixed font rendering. The pages carry no script; JavaScript stays enabled in the
browser only because captures stalled more often with it off. The browser is recycled after
:data:`RECYCLE_EVERY` episodes and whenever it has died; a session whose page
crashed or whose browser disconnected says so in :meth:`BrowserSession.health`,
which the runner turns into a retry and then an ``infrastructure`` drop.

:class:`BrowserComputer` is what an agent holds: a
:class:`~effectbench.computer.base.ComputerBase` whose primitives are mouse,
keyboard and screenshot calls on the page. Nothing it returns is a page, a
handle, the DOM or the oracle: PNG bytes, ints, ``None``, or the product's own
REST verifier it was given.
"""

from __future__ import annotations

import multiprocessing.util
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from effectbench.computer import Display, MouseButton
from effectbench.computer.base import ComputerBase
from effectbench.computer.checks import PIXELS_PER_NOTCH
from effectbench.computer.keys import KeyCombo
from effectbench.errors import InfrastructureError
from effectbench.seam import ProductVerifier

CHROMIUM = "/usr/bin/chromium"
RECYCLE_EVERY = 200
"""Episodes one browser serves before it is replaced (bounds any slow leak)."""
NAVIGATION_TIMEOUT_MS = 10_000
ACTION_TIMEOUT_MS = 10_000
SCREENSHOT_TRIES = 3
SCREENSHOT_TIMEOUT_MS = 1_000
"""A capture that never completes is abandoned after this long and asked for again (a safety
net: see ``RenderDocument`` in :data:`LAUNCH_ARGS` for why captures used to stall)."""
LAUNCH_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--font-render-hinting=none",
    "--disable-lcd-text",
    "--force-color-profile=srgb",
    "--hide-scrollbars",
    "--disable-extensions",
    "--mute-audio",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    # RenderDocument gives every cross-document navigation a new frame host; a capture asked
    # for just before a form post commits was lost with the old one and stalled until its
    # timeout (measured at a load of 10-12: 13 stalls of 1 s in 40 web episodes; 0 in 40
    # with it off). Pages keep one frame host per tab, as before that feature.
    "--disable-features=PaintHolding,RenderDocument",
)


def _descendants(root: int) -> list[int]:
    """Return the process ids below ``root`` (from /proc; empty where there is none)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def chromium_pids() -> list[int]:
    """Return the main Chromium processes this process launched (for health and tests)."""
    pids = []
    for pid in _descendants(os.getpid()):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if cmd and cmd[0].endswith(b"chromium") and not any(a.startswith(b"--type=") for a in cmd):
            pids.append(pid)
    return pids


@dataclass
class BrowserSession:
    """One episode's context and page; what failed, if anything, is in :meth:`health`."""

    context: Any
    page: Any
    _failure: list[str]
    _connected: Callable[[], bool]

    def health(self) -> str | None:
        """Say what failed in this episode's browser (``None`` when it held)."""
        if self._failure:
            return self._failure[0]
        if not self._connected():
            return "the browser disconnected"
        try:
            if self.page.is_closed():
                return "the episode's page was closed"
        except Exception as exc:  # noqa: BLE001 - any driver error is the harness's failure
            return f"the browser is unreachable ({type(exc).__name__})"
        return None

    def close(self) -> None:
        """Close the context (its page, storage and cookies go with it)."""
        try:
            self.context.close()
        except Exception:  # noqa: BLE001, S110 - a dead browser has nothing left to close
            pass


class SharedBrowser:
    """A Chromium for one worker thread, launched lazily and recycled when needed."""

    def __init__(self) -> None:
        self._playwright: Any = None
        self._browser: Any = None
        self._served = 0
        self._thread = threading.get_ident()
        self.version = ""

    def _alive(self) -> bool:
        try:
            return self._browser is not None and bool(self._browser.is_connected())
        except Exception:  # noqa: BLE001
            return False

    def _launch(self) -> None:
        from playwright.sync_api import sync_playwright

        self.close()
        try:
            self._playwright = sync_playwright().start()
            self._browser = self._playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=list(LAUNCH_ARGS)
            )
        except Exception as exc:
            self.close()
            raise InfrastructureError(f"Chromium did not start: {exc}".splitlines()[0]) from exc
        self.version = str(self._browser.version)
        self._served = 0

    def open(self, viewport: Display, url: str) -> BrowserSession:
        """Health-check the browser, open a fresh context and page, load ``url``."""
        if threading.get_ident() != self._thread:
            raise RuntimeError("a SharedBrowser is used only by the thread that made it")
        if not self._alive() or self._served >= RECYCLE_EVERY:
            self._launch()
        self._served += 1
        failure: list[str] = []
        try:
            context = self._browser.new_context(
                viewport={"width": viewport.width, "height": viewport.height},
                device_scale_factor=1,
                java_script_enabled=True,  # the pages carry no script; see module doc
                locale="en-US",
                timezone_id="UTC",
                color_scheme="light",
                reduced_motion="reduce",
            )
            context.set_default_timeout(ACTION_TIMEOUT_MS)
            context.set_default_navigation_timeout(NAVIGATION_TIMEOUT_MS)
            page = context.new_page()
            page.on("crash", lambda _page: failure.append("the episode's page crashed"))
            response = page.goto(url)
        except Exception as exc:
            self.close()  # recycle: the next episode launches a fresh browser
            message = f"the browser failed a health check: {exc}".splitlines()[0]
            raise InfrastructureError(message) from exc
        if response is None or response.status != 200:
            context.close()
            status = None if response is None else response.status
            raise InfrastructureError(f"the app's start page answered {status}")
        return BrowserSession(context, page, failure, self._alive)

    def close(self) -> None:
        """Close the browser and stop Playwright's driver (no process outlives it)."""
        browser, playwright = self._browser, self._playwright
        self._browser = self._playwright = None
        for step in (getattr(browser, "close", None), getattr(playwright, "stop", None)):
            if step is not None:
                try:
                    step()
                except Exception:  # noqa: BLE001, S110 - already gone
                    pass


_local = threading.local()


def shared_browser() -> SharedBrowser:
    """Return this thread's browser (closed when the process exits)."""
    browser: SharedBrowser | None = getattr(_local, "browser", None)
    if browser is None:
        browser = SharedBrowser()
        _local.browser = browser
        if threading.current_thread() is threading.main_thread():
            multiprocessing.util.Finalize(browser, browser.close, exitpriority=10)
    return browser


def close_shared_browser() -> None:
    """Close this thread's browser, if it launched one (a worker thread's last step)."""
    browser: SharedBrowser | None = getattr(_local, "browser", None)
    if browser is not None:
        browser.close()
        _local.browser = None


class BrowserComputer(ComputerBase):
    """Pixels out, pointer and keys in, on one episode's page; nothing else reachable."""

    def __init__(
        self,
        page: Any,
        display: Display,
        verifiers: dict[str, Callable[[], ProductVerifier]] | None = None,
    ) -> None:
        super().__init__(display)
        self.__page = page
        self.__verifiers = dict(verifiers or {})

    def _screenshot(self) -> bytes:
        """Capture the viewport; a capture that a committing navigation stalls is asked again."""
        failure = ""
        for _ in range(SCREENSHOT_TRIES):
            try:
                data: bytes = self.__page.screenshot(
                    type="png", animations="disabled", caret="hide", timeout=SCREENSHOT_TIMEOUT_MS
                )
                return data
            except Exception as exc:  # noqa: BLE001 - retried, then the harness's failure
                failure = str(exc).splitlines()[0]
        raise InfrastructureError(f"the browser gave no screenshot: {failure}")

    def _move(self, x: int, y: int) -> None:
        self.__page.mouse.move(x, y)

    def _button(self, button: MouseButton, down: bool) -> None:
        if down:
            self.__page.mouse.down(button=button)
        else:
            self.__page.mouse.up(button=button)

    def _click(self, x: int, y: int, button: MouseButton, count: int) -> None:
        self.__page.mouse.click(x, y, button=button, click_count=count)

    def _type(self, text: str) -> None:
        """Insert the text; a newline or a tab is the Enter or Tab key, as typed."""
        keyboard = self.__page.keyboard
        chunk = ""
        for ch in text:
            if ch in "\n\t":
                if chunk:
                    keyboard.insert_text(chunk)
                chunk = ""
                keyboard.press("Enter" if ch == "\n" else "Tab")
            else:
                chunk += ch
        if chunk:
            keyboard.insert_text(chunk)

    def _key(self, combo: KeyCombo, down: bool | None) -> None:
        keyboard = self.__page.keyboard
        if down is None:
            keyboard.press(combo.playwright())
            return
        names = combo.playwright().split("+") if combo.playwright() != "+" else ["+"]
        for name in names if down else reversed(names):
            (keyboard.down if down else keyboard.up)(name)

    def _scroll(self, x: int, y: int, dx: int, dy: int) -> None:
        self.__page.mouse.move(x, y)
        self.__page.mouse.wheel(dx * PIXELS_PER_NOTCH, dy * PIXELS_PER_NOTCH)

    def product_effect_verifier(self) -> ProductVerifier | None:
        """Return the product's own REST readback (never the oracle)."""
        make = self.__verifiers.get("product")
        return None if make is None else make()

    def all_surfaces_verifier(self) -> ProductVerifier | None:
        """Return the product's readback over every REST surface, if it offers one."""
        make = self.__verifiers.get("all")
        return None if make is None else make()
