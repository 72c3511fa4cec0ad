"""The optional parts of EffectBench (pip extras) and the one line a missing one costs.

The core verifies bundles, builds the site and runs packs on the ``api`` substrate.
Everything else is an extra, installed with ``pip install 'effectbench[NAME]'`` (in a
checkout: ``pip install -e '.[NAME]'``; ``make setup`` installs them all):

========  ============================================================================
web       the web substrate: Playwright's client for the system's Chromium, Pillow
desktop   the desktop and remote-display substrates: python-xlib, PyGObject, Pillow
mcp       ``effectbench mcp``: one episode as an MCP server (the ``mcp`` SDK)
inspect   the inspect_ai tasks and ``import-inspect`` (and ``export --format inspect``)
export    ``export --format atif``: the ``atif`` models (ATIF v1.8)
dask      ``--executor dask``
agent     the example agent loops (the vendors' SDKs)
========  ============================================================================
"""

from __future__ import annotations

import importlib.util

from effectbench.errors import UsageError

EXTRAS = ("web", "desktop", "mcp", "inspect", "export", "dask", "agent")
"""Every extra ``pyproject.toml`` declares."""


def install_hint(extra: str) -> str:
    """Return how to install ``extra``, for a message."""
    return (
        f"pip install 'effectbench[{extra}]' (in a checkout: pip install -e '.[{extra}]'; "
        "make setup installs every extra)"
    )


def missing(extra: str, module: str, what: str) -> UsageError:
    """Return the one-line error for ``what`` needing ``module`` of ``extra``."""
    return UsageError(f"{what} needs the {extra} extra ({module} is not installed): "
                      f"{install_hint(extra)}")  # fmt: skip


def require(extra: str, *modules: str, what: str) -> None:
    """Raise a one-line :class:`UsageError` when a module of ``extra`` is not installed."""
    for module in modules:
        try:
            found = importlib.util.find_spec(module)
        except ImportError:  # an import hook that refuses it: as missing
            found = None
        if found is None:
            raise missing(extra, module, what)
