"""Where Chromium is: one answer for the web substrate, the benchmarks and the tests.

``EFFECTBENCH_CHROMIUM`` names the binary; without it, Debian's ``/usr/bin/chromium``.
A binary that is not there is one line naming what to install or set (never a
browser download: the project drives the system's Chromium only).
"""

from __future__ import annotations

import os
from pathlib import Path

from effectbench.screens.xsession import INSTALL_HINT, MissingComponentError

CHROMIUM_ENV = "EFFECTBENCH_CHROMIUM"
"""Environment variable naming the Chromium binary to drive."""
DEFAULT_CHROMIUM = "/usr/bin/chromium"
"""Debian's ``chromium`` package puts its binary here."""


def chromium_executable() -> Path:
    """Return the Chromium binary to drive, or raise a one-line :class:`MissingComponentError`."""
    named = os.environ.get(CHROMIUM_ENV, "")
    path = Path(named or DEFAULT_CHROMIUM)
    if path.is_file() and os.access(path, os.X_OK):
        return path
    if named:
        raise MissingComponentError(
            f"Chromium is missing: {CHROMIUM_ENV}={named} is not an executable file "
            f"(point it at a Chromium binary, or unset it to use {DEFAULT_CHROMIUM})"
        )
    raise MissingComponentError(
        f"Chromium is missing: {DEFAULT_CHROMIUM} not found: install the Debian package "
        f"chromium ({INSTALL_HINT}) or set {CHROMIUM_ENV} to a Chromium binary"
    )
