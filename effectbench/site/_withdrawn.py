"""The maintainers' list of withdrawn bundles (``site/withdrawn.yml``).

A withdrawn bundle stays in ``submissions/`` (its history is public) but is
taken off every board; the refused page lists it with the reason given.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from effectbench.errors import DataError


@dataclass(frozen=True)
class Withdrawn:
    """A bundle the maintainers withdrew (listed in ``site/withdrawn.yml``)."""

    bundle: str
    """The bundle's folder name under ``submissions/``."""
    reason: str
    date: str = ""
    name: str = ""
    """The system's display name, when the bundle is still in ``submissions/``."""


def read_withdrawn(path: Path) -> list[Withdrawn]:
    """Read ``site/withdrawn.yml`` (a list of {bundle, reason, date}); absent means none."""
    if not path.is_file():
        return []
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise DataError(f"not valid YAML: {exc}", file=str(path), line=line) from None
    if not isinstance(data, list):
        raise DataError("expected a list of withdrawn bundles", file=str(path))
    out = []
    for i, item in enumerate(data):
        if not isinstance(item, dict) or not item.get("bundle") or not item.get("reason"):
            raise DataError(
                "each entry needs 'bundle' (folder name) and 'reason'",
                file=str(path),
                field=f"[{i}]",
            )
        out.append(
            Withdrawn(
                bundle=str(item["bundle"]),
                reason=str(item["reason"]),
                date=str(item.get("date", "")),
            )
        )
    return out


def name_withdrawn(withdrawn: list[Withdrawn], names: dict[str, str]) -> list[Withdrawn]:
    """Return ``withdrawn`` with each system's display name (``names``: folder -> name)."""
    return [
        Withdrawn(w.bundle, w.reason, w.date, names.get(w.bundle, "(not in submissions/)"))
        for w in withdrawn
    ]
