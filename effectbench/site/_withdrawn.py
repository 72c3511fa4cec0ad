"""The maintainers' list of withdrawn bundles (``site/withdrawn.yml``), by content hash.

A withdrawn bundle stays in ``submissions/`` (its history is public) but is
taken off every board; the refused page lists it with the reason given. An
entry names the bundle by its content hash (``effectbench verify --json``
reports it as ``content_hash``), never by its folder name, so a copy in another
folder is withdrawn with it; with its ``rows_hash`` too, so is a copy whose
rows were re-typed. The rule itself is :mod:`verifier.ranking`'s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from effectbench.errors import DataError
from verifier.ranking import Withdrawal

HASH = re.compile(r"sha256:[0-9a-f]{64}")


@dataclass(frozen=True)
class Withdrawn:
    """A bundle the maintainers withdrew (listed in ``site/withdrawn.yml``), as shown."""

    rule: Withdrawal
    """The entry as the verifier's ranking rule reads it (hashes, reason, date)."""
    bundle: str = ""
    """The folders under ``submissions/`` that hold it (filled in by :func:`name_withdrawn`)."""
    name: str = ""
    """The system's display name, when the bundle is still in ``submissions/``."""

    @property
    def reason(self) -> str:
        """Why it was withdrawn."""
        return self.rule.reason

    @property
    def date(self) -> str:
        """When it was withdrawn (as listed)."""
        return self.rule.date


KEYS = ("content_hash", "reason", "date", "rows_hash")
"""The keys an entry of ``site/withdrawn.yml`` may have (the first two are required)."""


def read_withdrawn(path: Path) -> list[Withdrawn]:
    """Read ``site/withdrawn.yml`` (a list of {content_hash, reason, date, rows_hash});
    absent means none."""
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
        ok = isinstance(item, dict) and item.get("reason")
        hashes = [str(item.get(k) or "") for k in ("content_hash", "rows_hash")] if ok else []
        if not ok or not HASH.fullmatch(hashes[0]) or hashes[1] and not HASH.fullmatch(hashes[1]):
            raise DataError(
                "each entry needs 'content_hash' (sha256:<64 hex>, as effectbench verify --json "
                "reports it; a folder name is not enough) and 'reason'",
                file=str(path),
                field=f"[{i}]",
            )
        rule = Withdrawal(hashes[0], str(item["reason"]), hashes[1], str(item.get("date", "")))
        out.append(Withdrawn(rule))
    return out


def name_withdrawn(
    withdrawn: list[Withdrawn], bundles: list[tuple[str, str, str, str, str]]
) -> list[Withdrawn]:
    """Return ``withdrawn`` with the folders and names of the bundles each entry takes away.

    ``bundles`` are ``(content hash, rows hash, measured hash, folder, system name)`` of
    every bundle read; an entry takes the bundles with its content hash, and every bundle
    whose rows are identical to one of those (or to its listed rows hash) or that measured
    the same as one of those (as :func:`verifier.ranking.rank_across` withdraws them).
    """
    out = []
    for w in withdrawn:
        found = _taken(w.rule.content_hash, w.rule.rows_hash, bundles)
        folders = ", ".join(sorted({f for f, _ in found})) or w.rule.content_hash
        names = ", ".join(sorted({n for _, n in found})) or "(not in submissions/)"
        out.append(replace(w, bundle=folders, name=names))
    return out


def _taken(
    content: str, rows_hash: str, bundles: list[tuple[str, str, str, str, str]]
) -> list[tuple[str, str]]:
    """(folder, system name) of each bundle an entry of ``content`` (and ``rows_hash``)
    takes away: of that content, of the same rows, or measured the same as one of those."""
    taken = [b for b in bundles if b[0] == content]
    rows = {b[1] for b in taken if b[1]} | {rows_hash} - {""}
    rows |= {b[1] for b in bundles if b[1] in rows}
    measured = {b[2] for b in bundles if b[2] and (b[0] == content or b[1] in rows)}
    return [(f, n) for c, r, m, f, n in bundles if c == content or r in rows or m in measured]
