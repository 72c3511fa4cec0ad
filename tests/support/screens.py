"""The clinic's GTK app in a per-episode X session, read through AT-SPI (for the screen tests)."""

from __future__ import annotations

import os
from collections.abc import Collection

from effectbench.packs.clinic.desktop.frontend import app_command
from effectbench.packs.clinic.service import SECRET_HEADER, Channel
from effectbench.screens._supervisor import descendants
from effectbench.screens.xdisplay import A11yReader, AccessibleXEnv
from effectbench.screens.xsession import XSession

NO_SERVICE = Channel(9, "no service listens on the discard port", SECRET_HEADER)
"""A channel to nowhere, for tests of the app's screen alone."""


def start_app(session: XSession, channel: Channel = NO_SERVICE, name: str = "app") -> int:
    referral = {"patient_name": "Jonas Berg", "dob": "1975-02-11", "mrn": "M-0101"}
    argv, env = app_command(channel, referral)
    return session.spawn(argv, name=name, env=env, ready_fd=True, timeout=30).pid


def desktop_env(session: XSession, channel: Channel = NO_SERVICE) -> AccessibleXEnv:
    app = start_app(session, channel)
    reader = A11yReader(session, app, timeout=30)
    return AccessibleXEnv(session.display, reader, xauthority=session.xauthority)


def browsers_gone(timeout: float = 30.0, before: Collection[int] = ()) -> list[int]:
    """Wait until no Chromium this process launched is left but those of ``before`` (running
    before the test: an earlier test's shared browser lives until the session ends; a closed
    browser exits a moment after Playwright returns, longer on a loaded machine); return the
    ones still there."""
    import time

    from effectbench.screens.browser import chromium_pids

    def left() -> list[int]:
        return [pid for pid in chromium_pids() if pid not in before]

    deadline = time.monotonic() + timeout
    while (found := left()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def processes_now() -> set[int]:
    """Every live process below this test process (to compare with :func:`left_since`)."""
    return set(descendants(os.getpid()))


def left_since(before: Collection[int]) -> set[int]:
    """Return the processes below this one that were not in ``before``, but for those below a
    Chromium of ``before``: an earlier test's shared browser lives until the session ends and
    starts renderers when it likes, which belong to it and not to the test."""
    from effectbench.screens.browser import chromium_pids

    shared = [pid for pid in chromium_pids() if pid in before]
    return set(descendants(os.getpid(), beside=shared)) - set(before)
