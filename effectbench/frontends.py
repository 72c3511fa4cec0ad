"""Front ends: how an agent reaches any pack's system on one substrate.

A pack whose tasks run on several substrates offers one *front end* per substrate
(:class:`FrontEnd`): it opens an episode's session on the pack's own system and says
how the shipped baselines drive it. On the screen substrates the harness does the
part no pack should write twice; a pack supplies only what is its own:

* ``web``: the URL of its web app (and the headers its episodes carry, such as a
  secret); :func:`web_session` opens it in a fresh context of this thread's shared
  headless Chromium and hands the agent a pixel-only env (screenshots in, pointer and
  keys out, never the page);
* ``desktop`` and ``remote_display``: the command line of its native app;
  :func:`x_session` starts it on the episode's own X server, D-Bus and
  accessibility bus (desktop: XTest, screenshots and the app's AT-SPI tree) or on
  its own Xvnc seen through one RFB connection (remote display: pixels only).

Either way the env may offer the product's own readbacks (:data:`PRODUCT`, and
:data:`ALL_SURFACES` for an arm that reads every surface), never the oracle, and the
session's ``health`` names what died so the runner retries and then drops the
episode as ``infrastructure``. :func:`require_substrate` is the one-line check of
what a substrate needs (an extra, a Debian package), made before any episode.

Which substrates are screens, and how a task variant is named on each, is said once
on :class:`~effectbench.schema.Substrate` (``is_screen``, ``variant_id``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from effectbench.computer import Display, PageReader
from effectbench.computer.base import ALL_SURFACES as ALL_SURFACES
from effectbench.computer.base import PRODUCT as PRODUCT
from effectbench.computer.base import Readbacks
from effectbench.extras import require
from effectbench.schema import Substrate
from effectbench.seam import Screen

APP_START_TIMEOUT_S = 20.0
"""How long a native app may take to appear on its display."""


def _healthy() -> str | None:
    return None


@dataclass
class FrontEndSession:
    """One episode on one front end: the agent's env and the harness's health check."""

    env: Any
    health: Callable[[], str | None] = field(default=_healthy)
    """What failed in the front end (``None`` when it held); read after the system ran."""
    page: PageReader | None = None
    """The harness's handle on a web session's page (:func:`web_session`): what the
    blindness audit reads of the first page. Never part of ``env``."""


class FrontEnd(Protocol):
    """How agents reach a pack's system on one substrate (one per substrate a pack offers).

    ``session`` takes whatever the pack's episodes are reached by (a service's channel,
    a URL) and the episode's agent-facing request; ``attempt`` is the shipped baselines'
    scripted steps on this front end; ``describe`` goes into each row's fingerprint.
    """

    substrate: Substrate

    def session(self, target: Any, request: Mapping[str, Any]) -> AbstractContextManager[Any]:
        """Open one episode; yield a :class:`FrontEndSession`."""
        ...

    def attempt(self, env: Any, task: Any, params: Mapping[str, Any]) -> Screen:
        """The baselines' scripted steps on this front end."""
        ...

    def describe(self) -> dict[str, Any]:
        """Return the front end's part of the env fingerprint."""
        ...


@runtime_checkable
class ShowsDisplay(Protocol):
    """A front end whose every session shows one display size, known before one opens.

    An agent can then be told its coordinate space at once (``effectbench mcp``
    answers ``task`` while the episode is still being provisioned); an episode whose
    screen turns out otherwise is the harness's failure, never scored.
    """

    @property
    def display(self) -> Display:
        """The size of every session's screen."""
        ...


def require_substrate(substrate: Substrate) -> None:
    """Raise one line naming the extra or Debian package ``substrate`` needs and lacks."""
    if substrate is Substrate.WEB:
        from effectbench.screens.chromium import chromium_executable

        require("web", "playwright", "PIL", what="the web substrate")
        chromium_executable()
    elif substrate in (Substrate.DESKTOP, Substrate.REMOTE_DISPLAY):
        from effectbench.screens.xsession import TYPELIBS, programs_for
        from effectbench.screens.xsession import require as require_programs

        require("desktop", "Xlib", "PIL", what=f"the {substrate.value} substrate")
        require_programs(
            programs_for("xvfb" if substrate is Substrate.DESKTOP else "xvnc"), tuple(TYPELIBS)
        )


@contextmanager
def web_session(
    url: str,
    viewport: Display,
    *,
    headers: Mapping[str, str] | None = None,
    readbacks: Readbacks | None = None,
) -> Iterator[FrontEndSession]:
    """Open ``url`` in a fresh context of this thread's Chromium; yield the pixel-only env.

    ``headers`` go with every request of the episode's context (never drawn on the page).
    """
    from effectbench.screens.browser import BrowserComputer, shared_browser

    session = shared_browser().open(viewport, url, headers=headers)
    try:
        env = BrowserComputer(session, viewport, dict(readbacks or {}))
        yield FrontEndSession(env, session.health, page=session)
    finally:
        session.close()


@contextmanager
def x_session(
    substrate: Substrate,
    app: Sequence[str],
    *,
    app_env: Mapping[str, str] | None = None,
    readbacks: Readbacks | None = None,
    start_timeout: float = APP_START_TIMEOUT_S,
) -> Iterator[FrontEndSession]:
    """Start the native ``app`` on the episode's own display; yield the agent's env.

    ``desktop``: Xvfb, the episode's D-Bus session and accessibility bus, an env with
    XTest input, screenshots and the app's AT-SPI tree. ``remote_display``: Xvnc (RFB on
    a socket only this user reaches) and the app without an accessibility bridge, an env
    holding one RFB connection. ``app_env`` is added to the app's environment (a secret
    goes there, never on its command line, which every local user can read); the app
    signals it is ready on the file descriptor ``--ready-fd`` names (see
    :meth:`~effectbench.screens.xsession.XSession.spawn`).
    """
    from effectbench.screens.xsession import XSession

    desktop = substrate is Substrate.DESKTOP
    if not desktop and substrate is not Substrate.REMOTE_DISPLAY:
        raise ValueError(f"{substrate.value} is not an X substrate")
    with ExitStack() as stack:
        session = XSession(server="xvfb" if desktop else "xvnc", accessibility=desktop)
        stack.callback(session.close)
        spawned = session.spawn(
            list(app), name="app", env=dict(app_env or {}), ready_fd=True, wait=False
        )
        env: Any
        if desktop:
            from effectbench.screens.xdisplay import A11yReader, AccessibleXEnv

            reader = A11yReader(session, spawned.pid, timeout=start_timeout)  # starts meanwhile
            stack.callback(reader.close)
            session.supervisor.ready(spawned.pid, start_timeout)
            env = AccessibleXEnv(session.display, reader, readbacks, xauthority=session.xauthority)
            stack.callback(env.close)
            yield FrontEndSession(env=env, health=session.health)
        else:
            from effectbench.screens.rfb import RemoteDisplayEnv

            env = RemoteDisplayEnv(session.rfb_path, readbacks)  # connects while it starts
            stack.callback(env.close)
            session.supervisor.ready(spawned.pid, start_timeout)

            def health() -> str | None:
                failed = session.health()
                if failed is None and not env.connected():
                    failed = "the RFB connection to Xvnc broke"
                return failed

            yield FrontEndSession(env=env, health=health)


def close_browser() -> None:
    """Close this thread's shared Chromium, if it launched one (a worker's last step)."""
    from effectbench.screens.browser import close_shared_browser

    close_shared_browser()


def browser_pids() -> list[int]:
    """Return the Chromium processes this process launched (for a pack's own tests)."""
    from effectbench.screens.browser import chromium_pids

    return chromium_pids()


def screenshot_size(png: bytes) -> tuple[int, int]:
    """Return a screenshot's ``(width, height)`` (pixel bots read PNG bytes, nothing else)."""
    from effectbench.computer import images

    return images.size(png)


def screenshot_colour(png: bytes, x: int, y: int) -> tuple[int, int, int]:
    """Return the RGB colour of one pixel of a screenshot."""
    from effectbench.computer import images

    r, g, b = (int(v) for v in images.pixels(png)[y, x][:3])
    return r, g, b


def dominant_colour(png: bytes, box: tuple[int, int, int, int]) -> tuple[int, int, int]:
    """Return the most common RGB colour of ``box`` (x0, y0, x1, y1) in a screenshot."""
    from effectbench.computer import images

    return images.dominant(images.pixels(png), box)
