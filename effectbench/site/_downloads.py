"""The site's downloads: each accepted bundle's files and the whole-leaderboard tables.

Bundle files are published under ``submissions/<slug>/`` (a submitter's
README as plain text, never as a page; the submission document and the episode
rows gzip-compressed, since they were two thirds of a site's bytes and shrink
9- and 25-fold); ``downloads/`` holds
the boards as CSV and Parquet, every entry's (category x substrate) cells and every accepted
row as Parquet files.
"""

from __future__ import annotations

import gzip
import io
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pyarrow as pa

from effectbench.bundle import (
    EPISODES_FILE,
    README_FILE,
    RECEIPTS_FILE,
    SIGNATURE_FILE,
    SUBMISSION_FILE,
)
from effectbench.site._digests import FileDigests
from effectbench.site._entries import Entry
from effectbench.site._tables import (
    Board,
    CellsOf,
    all_rows,
    board_cells,
    cells_download,
    leaderboard_download,
)

DOWNLOAD_NAMES = {
    SUBMISSION_FILE: f"{SUBMISSION_FILE}.gz",
    EPISODES_FILE: f"{EPISODES_FILE}.gz",
    RECEIPTS_FILE: f"{RECEIPTS_FILE}.gz",
    SIGNATURE_FILE: SIGNATURE_FILE,
    README_FILE: "README.txt",
}
"""Bundle file -> published name (a README is published as text, never as a page; the
rows gzipped: ``gunzip`` gives back the signed bytes)."""
GZIPPED = frozenset({EPISODES_FILE, SUBMISSION_FILE, RECEIPTS_FILE})
GZIP_LEVEL = 6


def gzipped(source: Path, cache: Path, digests: FileDigests | None = None) -> Path:
    """Return a gzip copy of ``source``, kept in ``cache`` under the hash of its bytes
    (``digests``: the bundle files' kept digests; a file known unchanged is not read).

    The copy is byte-stable (no name, no time stamp), so two builds publish the same bytes.
    """
    digests = digests if digests is not None else FileDigests()
    st = os.stat(source)
    known = digests.known(source, st)
    if known is not None and (cache / f"{known}.gz").is_file():
        return cache / f"{known}.gz"
    data, digest = digests.read(source, st)
    target = cache / f"{digest}.gz"
    if not target.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        tmp.write_bytes(gzip.compress(data, compresslevel=GZIP_LEVEL, mtime=0))
        tmp.replace(target)
    return target


def bundle_downloads(
    entry: Entry, cache: Path, digests: FileDigests | None = None
) -> tuple[dict[str, Path], list[tuple[str, str]]]:
    """Return the files of ``entry`` to publish (site path -> source) and its page's links.

    Each link is ``(published name, href relative to the submissions folder)``;
    ``cache`` keeps the gzip copies (``digests``: as :func:`gzipped`).
    """
    copies: dict[str, Path] = {}
    links = []
    for name in entry.files:
        published = DOWNLOAD_NAMES[name]
        source = entry.path / name
        if name in GZIPPED:
            source = gzipped(source, cache, digests)
        copies[f"submissions/{entry.slug}/{published}"] = source
        links.append((published, f"{entry.slug}/{published}"))
    return copies, links


@dataclass
class Tables:
    """The whole-leaderboard downloads, by site path, and their row counts."""

    files: dict[str, str | bytes] = field(default_factory=dict)
    n_board_rows: int = 0
    n_cell_rows: int = 0
    n_episode_rows: int = 0


def leaderboard_tables(
    boards: Sequence[Board],
    rows_of: dict[str, pa.Table],
    entries: dict[str, Entry],
    cells_of: CellsOf = board_cells,
) -> Tables:
    """Return ``downloads/leaderboard.{csv,parquet}``, ``downloads/cells.parquet`` (every
    entry's cells on every board; ``cells_of``: how one entry's are had) and
    ``downloads/episodes.parquet``."""
    board_table = leaderboard_download(boards)
    cells = cells_download(boards, entries, cells_of)
    episodes = all_rows(list(rows_of.items()))
    out = Tables(
        n_board_rows=len(board_table), n_cell_rows=cells.num_rows, n_episode_rows=episodes.num_rows
    )
    out.files["downloads/leaderboard.csv"] = csv_safe(board_table).to_csv(
        index=False, lineterminator="\n", float_format="%.6f"
    )
    out.files["downloads/leaderboard.parquet"] = _parquet(board_table)
    out.files["downloads/cells.parquet"] = _parquet_table(cells)
    out.files["downloads/episodes.parquet"] = _parquet_table(episodes)
    return out


FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet reads as the start of a formula in a text cell."""


def _neutral(value: object) -> object:
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def csv_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """Return ``frame`` with every text cell that a spreadsheet would run as a formula
    (``=``, ``+``, ``-``, ``@``, tab, carriage return first) prefixed with ``'``.

    Numbers stay numbers (a negative gap is a number column, untouched); only
    text columns (names, signers, versions) are neutralised, as OWASP advises for
    CSV downloads.
    """
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object or pd.api.types.is_string_dtype(out[column]):
            out[column] = out[column].map(_neutral)
    return out


def _parquet_table(table: pa.Table) -> bytes:
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    return buf.getvalue()


def _parquet(frame: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    frame.to_parquet(buf, index=False, compression="zstd")
    return buf.getvalue()
