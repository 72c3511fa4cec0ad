"""The engine's versions, in a leaf every floor may import (it imports nothing of the project).

``SPEC_VERSION`` is the SPEC this engine implements (the VERSION file at the repository root);
:func:`engine_version` is the installed distribution's version, the SPEC version from a bare
checkout.
"""

from __future__ import annotations

SPEC_VERSION = "1.4.0"
"""The SPEC this engine implements (the VERSION file at the repository root)."""


def engine_version() -> str:
    """Return the installed ``effectbench`` distribution's version (SPEC's in a bare checkout)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("effectbench")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return SPEC_VERSION
