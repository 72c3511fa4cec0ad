"""The leaderboard site: verified bundles rendered into an offline mkdocs-material site.

``build_site`` is the whole pipeline (verify, tables, charts, pages, mkdocs,
swap), written as a list of named steps in :mod:`effectbench.site.build`; the
command line (``effectbench site``) is a thin wrapper.
"""

from __future__ import annotations

from effectbench.site._entries import Entry, entry_from_report
from effectbench.site._render import ChartCache, ChartRenderer, VlConvertRenderer, normalise_svg
from effectbench.site._reports import verify_submissions
from effectbench.site._tables import boards
from effectbench.site._withdrawn import Withdrawn, read_withdrawn
from effectbench.site.build import BuildSummary, build_site

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
