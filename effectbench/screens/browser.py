"""One headless Chromium per worker thread, a fresh context per episode, and the pixel env.

:class:`SharedBrowser` launches the system's Chromium
(:func:`~effectbench.screens.chromium.chromium_executable`) through Playwright's Python client
once per worker (process, or thread for the MCP server) and hands each episode a fresh
:class:`BrowserSession`: a new context (no storage, cookies or cache carried over), one page at
a fixed viewport, fixed font rendering. Playwright runs on the browser's own loop thread, so
every call the harness makes is bounded in time, and the next episode's context and page are
made there while the current episode runs (never navigated before their own episode: as fresh
as one made on demand). The pages carry no script; JavaScript stays enabled in the browser only
because captures stalled more often with it off. The browser is recycled after
:data:`RECYCLE_EVERY` episodes and whenever it has died; a session whose page crashed or whose
browser disconnected says so in :meth:`BrowserSession.health`, which the runner turns into a
retry and then an ``infrastructure`` drop.

:class:`BrowserComputer` is what an agent holds: a
:class:`~effectbench.computer.base.ComputerBase` whose primitives are mouse,
keyboard and screenshot calls on the page. Nothing it returns is a page, a
handle, the DOM or the oracle: PNG bytes, ints, ``None``, or the product's own
REST verifier it was given.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import multiprocessing.util
import threading
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from effectbench.computer import A11yNode, Display, MouseButton, PageReading
from effectbench.computer.base import ComputerBase, Readbacks
from effectbench.computer.checks import PIXELS_PER_NOTCH
from effectbench.computer.keys import KeyCombo
from effectbench.errors import InfrastructureError
from effectbench.screens._supervisor import command_line, descendants
from effectbench.screens.chromium import chromium_executable

T = TypeVar("T")
RECYCLE_EVERY = 200
"""Episodes one browser serves before it is replaced (bounds any slow leak)."""
NAVIGATION_TIMEOUT_MS = 10_000
ACTION_TIMEOUT_MS = 10_000
NAVIGATION_S = NAVIGATION_TIMEOUT_MS / 1000
ACTION_S = ACTION_TIMEOUT_MS / 1000
"""How long one input action or a context's close may take before the harness gives up."""
LAUNCH_S = 60.0
LOOP_STOP_S = 5.0
SCREENSHOT_TRIES = 3
SCREENSHOT_S = 1.0
"""A capture that never completes is abandoned after this long and asked for again (a safety
net: see ``RenderDocument`` in :data:`LAUNCH_ARGS` for why captures used to stall)."""
CAPTURE = {"format": "png", "optimizeForSpeed": True}
"""DevTools capture options: lossless PNG, compressed for speed (same pixels, more bytes)."""
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


PAGE_SCRIPT = """() => {
  const markup = [];
  for (const el of document.querySelectorAll("*")) {
    if (el.id) markup.push("#" + el.id);
    for (const name of el.classList) markup.push("." + name);
    const tag = el.tagName;
    if (tag === "INPUT" && el.type === "hidden") markup.push("hidden " + el.name + "=" + el.value);
    else if (tag === "FORM") markup.push("form " + (el.getAttribute("action") || ""));
    else if (tag === "A" && el.hasAttribute("href")) markup.push("link " + el.getAttribute("href"));
    else if (tag === "META" && el.name) markup.push("meta " + el.name + "=" + el.content);
  }
  return {
    title: document.title,
    route: location.pathname + location.search,
    text: document.body ? document.body.innerText : "",
    markup: markup,
  };
}"""
"""What :meth:`BrowserSession.read_page` evaluates in the page (the harness's, never the
agent's): its title, route, rendered text and the tokens of its markup."""


def _ax_value(node: dict[str, Any], key: str) -> str:
    value = node.get(key) or {}
    return str(value.get("value", "")) if isinstance(value, dict) else ""


def ax_tree(nodes: list[dict[str, Any]]) -> A11yNode:
    """Return DevTools' full accessibility tree (``Accessibility.getFullAXTree``'s nodes) as
    one :class:`~effectbench.computer.A11yNode`: ignored nodes are left out, their children
    lifted to the nearest kept ancestor."""
    by_id = {str(n["nodeId"]): n for n in nodes}

    def kept(node_id: str) -> list[A11yNode]:
        node = by_id.get(node_id)
        if node is None:
            return []
        children = [c for child in node.get("childIds", ()) for c in kept(str(child))]
        if node.get("ignored"):
            return children
        return [
            A11yNode(
                id=node_id,
                role=_ax_value(node, "role"),
                name=_ax_value(node, "name"),
                states=(),
                text=_ax_value(node, "value"),
                extents=(0, 0, 0, 0),
                actions=(),
                children=tuple(children),
                description=_ax_value(node, "description"),
            )
        ]

    roots = [n for n in nodes if not n.get("parentId")]
    found = kept(str(roots[0]["nodeId"])) if roots else []
    if len(found) == 1:
        return found[0]
    return A11yNode("root", "RootWebArea", "", (), "", (0, 0, 0, 0), (), tuple(found))


def chromium_pids() -> list[int]:
    """Return the main Chromium processes this process launched (for health and tests)."""
    pids = []
    for pid in descendants():
        cmd = command_line(pid).split(b"\0")
        if cmd and cmd[0].endswith(b"chromium") and not any(a.startswith(b"--type=") for a in cmd):
            pids.append(pid)
    return pids


class _Loop:
    """A private asyncio loop on a daemon thread: where one browser's Playwright runs.

    Calls from any thread wait for their result with a bound (:meth:`run`); a call
    may also be started and collected later (:meth:`start`), which is how the next
    episode's context is prepared while the current episode runs.
    """

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="effectbench-browser", daemon=True
        )
        self._thread.start()

    def start(self, work: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Start ``work`` on the loop; its future is collected later."""
        return asyncio.run_coroutine_threadsafe(work, self.loop)

    def run(self, work: Coroutine[Any, Any, T], timeout: float, what: str) -> T:
        """Run ``work`` on the loop and return its result; past ``timeout`` it is abandoned."""
        future = self.start(work)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise InfrastructureError(f"the browser did not {what} within {timeout:g} s") from None

    def stop(self) -> None:
        """Stop the loop and its thread (after every call on it has ended)."""
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(LOOP_STOP_S)
        if not self._thread.is_alive():
            self.loop.close()


class _Loading:
    """Whether the page is between a navigation's request and its load (DevTools events).

    The harness's own view, never the agent's: a capture waits until a navigation an
    action started has loaded, so no screenshot shows a page half-way through a form
    post (the old page with its focus already moved). Lives on the browser's loop.
    """

    def __init__(self, main_frame: str) -> None:
        self.main_frame = main_frame
        self.idle = asyncio.Event()
        self.idle.set()
        self.acted = False
        """An input action was sent since the last capture."""

    def requested(self, event: dict[str, Any]) -> None:
        if event.get("frameId") == self.main_frame:
            self.idle.clear()

    def stopped(self, event: dict[str, Any]) -> None:
        if event.get("frameId", self.main_frame) == self.main_frame:
            self.idle.set()

    async def settle(self, cdp: Any) -> None:
        """Return once a navigation the last actions started (if any) has loaded."""
        if self.acted:
            self.acted = False
            # A round trip through the renderer: a navigation an action scheduled has been
            # requested (and its event received) before this answer arrives.
            await cdp.send("Runtime.evaluate", {"expression": "0", "returnByValue": True})
        if not self.idle.is_set():
            try:
                await asyncio.wait_for(self.idle.wait(), NAVIGATION_S)
            except TimeoutError:
                self.idle.set()  # never loaded: capture what is drawn


@dataclass
class _Tab:
    """A fresh context, its one page and a DevTools session on it (not yet navigated)."""

    context: Any
    page: Any
    cdp: Any
    loading: _Loading
    failure: list[str]
    viewport: Display


@dataclass
class BrowserSession:
    """One episode's context and page; what failed, if anything, is in :meth:`health`."""

    tab: _Tab
    _loop: _Loop
    _connected: Callable[[], bool]

    @property
    def page(self) -> Any:
        """The episode's page (Playwright's async API: use it through :meth:`call`)."""
        return self.tab.page

    def call(self, action: Callable[[Any], Awaitable[T]], timeout: float = ACTION_S) -> T:
        """Run ``action(page)`` on the browser's loop and return its result (harness only)."""
        return self._loop.run(_apply(action, self.tab.page), timeout, "answer")

    def act(self, action: Callable[[Any], Awaitable[None]]) -> None:
        """Send an input action (the next capture waits for a navigation it starts)."""
        self.tab.loading.acted = True
        self.call(action)

    def capture(self) -> bytes:
        """Capture the viewport as PNG once no navigation is under way (bounded)."""
        tab = self.tab
        self._loop.run(tab.loading.settle(tab.cdp), NAVIGATION_S + ACTION_S, "finish loading")
        answer: dict[str, Any] = self._loop.run(
            tab.cdp.send("Page.captureScreenshot", CAPTURE), SCREENSHOT_S, "capture"
        )
        return base64.b64decode(answer["data"])

    def read_page(self) -> PageReading:
        """Read the page once no navigation is under way (harness only; see
        :class:`~effectbench.computer.PageReading`): its title, route, text, markup tokens
        and Chromium's accessibility tree."""
        tab = self.tab
        self._loop.run(tab.loading.settle(tab.cdp), NAVIGATION_S + ACTION_S, "finish loading")
        seen: dict[str, Any] = self.call(lambda page: page.evaluate(PAGE_SCRIPT))
        tree: dict[str, Any] = self._loop.run(
            tab.cdp.send("Accessibility.getFullAXTree"), ACTION_S, "give its accessibility tree"
        )
        return PageReading(
            title=str(seen["title"]),
            route=str(seen["route"]),
            text=str(seen["text"]),
            markup=tuple(str(t) for t in seen["markup"]),
            a11y=ax_tree(list(tree.get("nodes", ()))),
        )

    def health(self) -> str | None:
        """Say what failed in this episode's browser (``None`` when it held)."""
        if self.tab.failure:
            return self.tab.failure[0]
        if not self._connected():
            return "the browser disconnected"
        try:
            if self.tab.page.is_closed():
                return "the episode's page was closed"
        except Exception as exc:  # noqa: BLE001 - any driver error is the harness's failure
            return f"the browser is unreachable ({type(exc).__name__})"
        return None

    def close(self) -> None:
        """Close the context (its page, storage and cookies go with it)."""
        try:
            self._loop.run(self.tab.context.close(), ACTION_S, "close a context")
        except Exception:  # noqa: BLE001, S110 - a dead browser has nothing left to close
            pass


async def _apply(action: Callable[[Any], Awaitable[T]], page: Any) -> T:
    return await action(page)


class SharedBrowser:
    """A Chromium for one worker thread, launched lazily and recycled when needed.

    Playwright runs on the browser's own loop thread (:class:`_Loop`). While an
    episode runs, the next episode's context and page are made on that loop
    (a fresh context each, never navigated before its episode opens it), so
    starting an episode costs its page load, not a renderer's start.
    """

    def __init__(self) -> None:
        self._loop: _Loop | None = None
        self._playwright: Any = None
        self._browser: Any = None
        self._spare: concurrent.futures.Future[_Tab] | None = None
        self._served = 0
        self._thread = threading.get_ident()
        self.version = ""

    def _alive(self) -> bool:
        try:
            return self._browser is not None and bool(self._browser.is_connected())
        except Exception:  # noqa: BLE001
            return False

    def _launch(self) -> None:
        from playwright.async_api import async_playwright

        self.close()
        executable = chromium_executable()  # a missing binary is one line, not a drop
        self._loop = loop = _Loop()
        try:
            self._playwright = loop.run(async_playwright().start(), LAUNCH_S, "start Playwright")
            self._browser = loop.run(
                self._playwright.chromium.launch(
                    executable_path=str(executable), headless=True, args=list(LAUNCH_ARGS)
                ),
                LAUNCH_S,
                "start",
            )
        except Exception as exc:
            self.close()
            raise InfrastructureError(f"Chromium did not start: {exc}".splitlines()[0]) from exc
        self.version = str(self._browser.version)
        self._served = 0

    async def _fresh(self, viewport: Display) -> _Tab:
        context = await self._browser.new_context(
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
        page = await context.new_page()
        failure: list[str] = []
        page.on("crash", lambda _page: failure.append("the episode's page crashed"))
        cdp = await context.new_cdp_session(page)
        tree = await cdp.send("Page.getFrameTree")
        loading = _Loading(str(tree["frameTree"]["frame"]["id"]))
        cdp.on("Page.frameRequestedNavigation", loading.requested)
        cdp.on("Page.frameStoppedLoading", loading.stopped)
        cdp.on("Page.loadEventFired", loading.stopped)
        await cdp.send("Page.enable")
        return _Tab(context, page, cdp, loading, failure, viewport)

    def _take_spare(self, viewport: Display) -> _Tab | None:
        """The context prepared for this episode, if it is ready and fits ``viewport``."""
        spare, self._spare = self._spare, None
        if spare is None:
            return None
        try:
            tab = spare.result(NAVIGATION_S)
        except Exception:  # noqa: BLE001 - made afresh below, where a failure is reported
            return None
        if tab.viewport != viewport:
            self._close_tab(tab)
            return None
        return tab

    def _close_tab(self, tab: _Tab) -> None:
        if self._loop is not None:
            try:
                self._loop.run(tab.context.close(), ACTION_S, "close a context")
            except Exception:  # noqa: BLE001, S110 - a dead browser has nothing left to close
                pass

    def open(
        self, viewport: Display, url: str, headers: Mapping[str, str] | None = None
    ) -> BrowserSession:
        """Health-check the browser, take a fresh context and page, load ``url``.

        ``headers`` go with every request of the context (an episode's secret); they are
        set on the context made ahead for this episode before it loads anything.
        """
        if threading.get_ident() != self._thread:
            raise RuntimeError("a SharedBrowser is used only by the thread that made it")
        if not self._alive() or self._served >= RECYCLE_EVERY:
            self._launch()
        assert self._loop is not None
        loop = self._loop
        self._served += 1
        tab = self._take_spare(viewport)
        try:
            if tab is None:
                tab = loop.run(self._fresh(viewport), NAVIGATION_S, "open a context")
            if headers:
                extra = tab.context.set_extra_http_headers(dict(headers))
                loop.run(extra, ACTION_S, "set the episode's headers")
            response = loop.run(tab.page.goto(url), NAVIGATION_S + ACTION_S, "load the page")
        except Exception as exc:
            self.close()  # recycle: the next episode launches a fresh browser
            message = f"the browser failed a health check: {exc}".splitlines()[0]
            raise InfrastructureError(message) from exc
        if response is None or response.status != 200:
            self._close_tab(tab)
            status = None if response is None else response.status
            raise InfrastructureError(f"the app's start page answered {status}")
        if self._served < RECYCLE_EVERY:
            self._spare = loop.start(self._fresh(viewport))  # the next episode's, made meanwhile
        return BrowserSession(tab, loop, self._alive)

    def close(self) -> None:
        """Close the browser and stop Playwright's driver (no process outlives it)."""
        loop, spare = self._loop, self._spare
        browser, playwright = self._browser, self._playwright
        self._browser = self._playwright = self._loop = self._spare = None
        if loop is None:
            return
        if spare is not None:
            spare.cancel()
        for step in (getattr(browser, "close", None), getattr(playwright, "stop", None)):
            if step is not None:
                try:
                    loop.run(step(), LAUNCH_S, "stop")
                except Exception:  # noqa: BLE001, S110 - already gone
                    pass
        loop.stop()


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
    """Pixels out, pointer and keys in, on one episode's page; nothing else reachable.

    A screenshot is the viewport as Chromium composited it (DevTools
    ``Page.captureScreenshot``, lossless PNG), taken once a navigation the
    agent's last actions started has loaded (the harness watches the page's
    loading; the agent only ever gets the pixels). A page under test hides its
    own text caret and has no animations (the clinic's style sheet does both), so
    a still page gives the same bytes twice.
    """

    def __init__(
        self,
        session: BrowserSession,
        display: Display,
        readbacks: Readbacks | None = None,
    ) -> None:
        super().__init__(display, readbacks)
        self.__session = session

    def __act(self, action: Callable[[Any], Awaitable[None]]) -> None:
        self.__session.act(action)

    def _screenshot(self) -> bytes:
        """Capture the viewport; a capture that does not come is asked for again."""
        failure = ""
        for _ in range(SCREENSHOT_TRIES):
            try:
                return self.__session.capture()
            except Exception as exc:  # noqa: BLE001 - retried, then the harness's failure
                failure = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InfrastructureError(f"the browser gave no screenshot: {failure}")

    def _move(self, x: int, y: int) -> None:
        self.__act(lambda page: page.mouse.move(x, y))

    def _button(self, button: MouseButton, down: bool) -> None:
        if down:
            self.__act(lambda page: page.mouse.down(button=button))
        else:
            self.__act(lambda page: page.mouse.up(button=button))

    def _click(self, x: int, y: int, button: MouseButton, count: int) -> None:
        self.__act(lambda page: page.mouse.click(x, y, button=button, click_count=count))

    def _type(self, text: str) -> None:
        """Insert the text; a newline or a tab is the Enter or Tab key, as typed."""
        self.__act(lambda page: _type(page.keyboard, text))

    def _key(self, combo: KeyCombo, down: bool | None) -> None:
        self.__act(lambda page: _key(page.keyboard, combo, down))

    def _scroll(self, x: int, y: int, dx: int, dy: int) -> None:
        self.__act(lambda page: _scroll(page.mouse, x, y, dx, dy))


async def _type(keyboard: Any, text: str) -> None:
    chunk = ""
    for ch in text:
        if ch in "\n\t":
            if chunk:
                await keyboard.insert_text(chunk)
            chunk = ""
            await keyboard.press("Enter" if ch == "\n" else "Tab")
        else:
            chunk += ch
    if chunk:
        await keyboard.insert_text(chunk)


async def _key(keyboard: Any, combo: KeyCombo, down: bool | None) -> None:
    if down is None:
        await keyboard.press(combo.playwright())
        return
    names = combo.playwright().split("+") if combo.playwright() != "+" else ["+"]
    for name in names if down else reversed(names):
        await (keyboard.down if down else keyboard.up)(name)


async def _scroll(mouse: Any, x: int, y: int, dx: int, dy: int) -> None:
    await mouse.move(x, y)
    await mouse.wheel(dx * PIXELS_PER_NOTCH, dy * PIXELS_PER_NOTCH)
