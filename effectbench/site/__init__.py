"""The leaderboard site: verified bundles rendered into an offline mkdocs-material site.

``build_site`` is the whole pipeline (verify, tables, charts, pages, mkdocs,
swap); the command line in :mod:`effectbench.site.cli` is a thin wrapper.
"""

from __future__ import annotations

from effectbench.site._charts import ChartCache, ChartRenderer, VlConvertRenderer, normalise_svg
from effectbench.site._entries import Entry, entry_from_report
from effectbench.site._tables import boards, rank_ranges
from effectbench.site.build import BuildSummary, build_site

__all__ = [
    "BuildSummary",
    "ChartCache",
    "ChartRenderer",
    "Entry",
    "VlConvertRenderer",
    "boards",
    "build_site",
    "entry_from_report",
    "normalise_svg",
    "rank_ranges",
]
