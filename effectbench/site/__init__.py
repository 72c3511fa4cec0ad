"""The leaderboard site: verified bundles rendered into an offline mkdocs-material site.

``build_site`` is the whole pipeline (verify, tables, charts, pages, mkdocs,
swap), written as a list of named steps in :mod:`effectbench.site.build`; the
command line (``effectbench site``) is a thin wrapper.

The names below are imported when first used, so a pool worker that only verifies
bundles (:mod:`effectbench.site._reports`) does not load the page, chart and mkdocs
stack.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from effectbench.site._entries import Entry, entry_from_report
    from effectbench.site._render import (
        ChartCache,
        ChartRenderer,
        VlConvertRenderer,
        normalise_svg,
    )
    from effectbench.site._reports import verify_submissions
    from effectbench.site._tables import boards
    from effectbench.site._withdrawn import Withdrawn, read_withdrawn
    from effectbench.site.build import BuildSummary, build_site

_HOME = {
    "BuildSummary": "effectbench.site.build",
    "ChartCache": "effectbench.site._render",
    "ChartRenderer": "effectbench.site._render",
    "Entry": "effectbench.site._entries",
    "VlConvertRenderer": "effectbench.site._render",
    "Withdrawn": "effectbench.site._withdrawn",
    "boards": "effectbench.site._tables",
    "build_site": "effectbench.site.build",
    "entry_from_report": "effectbench.site._entries",
    "normalise_svg": "effectbench.site._render",
    "read_withdrawn": "effectbench.site._withdrawn",
    "verify_submissions": "effectbench.site._reports",
}
"""Where each public name lives."""


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'effectbench.site' has no attribute {name!r}")
    return getattr(import_module(home), name)


__all__ = [
    "BuildSummary",
    "ChartCache",
    "ChartRenderer",
    "Entry",
    "VlConvertRenderer",
    "Withdrawn",
    "boards",
    "build_site",
    "entry_from_report",
    "normalise_svg",
    "read_withdrawn",
    "verify_submissions",
]
