"""The episode rows of accepted bundles, flattened to Arrow and cached by content.

A bundle's ``episodes.jsonl`` is parsed with the engine's one row parser and
flattened (:func:`flat_rows`) once; the table is kept
under the cache folder in an Arrow file named after the bytes it was read from,
so a rebuild reads only new bundles' rows. Pool workers that verify a bundle
fill this cache on the way (:mod:`effectbench.site._reports`).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from effectbench.bundle import EPISODES_FILE, parse_episode_line
from effectbench.site._cache import CacheSeal, default_seal
from effectbench.site._digests import FileDigests

if TYPE_CHECKING:
    from effectbench.site._entries import Entry

ROWS_FORMAT = "site-rows-1"
"""Version of the per-bundle row tables kept in the cache (bump when ``flat_rows`` changes)."""


def _parse_rows(data: bytes, episodes: Path) -> list[dict[str, Any]]:
    lines = enumerate(data.split(b"\n"), start=1)
    return [parse_episode_line(line, str(episodes), n) for n, line in lines if line.strip()]


def rows_table(
    episodes: Path, rows_dir: Path | None, *, load: bool = True, digests: FileDigests | None = None
) -> pa.Table | None:
    """Return a bundle's rows flattened (:func:`flat_rows`), kept in ``rows_dir`` by content.

    The cache file is named after the sha256 of the bytes read (or, with ``digests``, of a
    file known unchanged since it was read: then it is not read again), so it always matches
    them, and is read only when this machine sealed it (:mod:`effectbench.site._cache`).
    With ``load`` false (a pool worker filling the cache) a valid entry is left alone
    and None is returned.
    """
    seal = default_seal()
    digests = digests if digests is not None else FileDigests()
    st = os.stat(episodes)
    known = digests.known(episodes, st)
    if known is not None and rows_dir is not None:
        table = _read_rows(seal, rows_dir / f"{_rows_key(known)}.arrow")
        if table is not None:
            return table if load else None
    data, digest = digests.read(episodes, st)
    target = None
    if rows_dir is not None:
        target = rows_dir / f"{_rows_key(digest)}.arrow"
        table = _read_rows(seal, target)
        if table is not None:
            return table if load else None
    table = flat_rows(_parse_rows(data, episodes))
    if target is not None:
        sink = pa.BufferOutputStream()
        with pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        seal.write(target.stem, target, sink.getvalue().to_pybytes())
    return table


def _rows_key(digest: str) -> str:
    """The cache name of the rows of an ``episodes.jsonl`` whose sha256 is ``digest``."""
    return hashlib.sha256(f"{ROWS_FORMAT}\0{digest}".encode()).hexdigest()


def _read_rows(seal: CacheSeal, target: Path) -> pa.Table | None:
    """Return the rows cached at ``target`` when this machine wrote them, else None."""
    data = seal.read(target.stem, target)
    if data is None:
        return None  # absent, damaged or planted: rebuilt from the bundle
    try:
        return pa.ipc.open_file(pa.BufferReader(data)).read_all()
    except (OSError, pa.ArrowInvalid):
        return None


def rows_tables(
    entries: Sequence[Entry], rows_dir: Path | None, digests: FileDigests | None = None
) -> dict[str, pa.Table]:
    """Return the flattened rows of every accepted entry, from the cache when kept there
    (``digests``: as :func:`rows_table`)."""
    out: dict[str, pa.Table] = {}
    for e in entries:
        if e.accepted:
            episodes = e.path / EPISODES_FILE
            table = rows_table(episodes, rows_dir, digests=digests) if episodes.is_file() else None
            out[e.slug] = table if table is not None else pa.table({})
    return out


def matrix(rows: pa.Table) -> tuple[list[int], list[tuple[str, list[str]]]]:
    """Return the task x trial outcome matrix of one bundle's flattened rows."""
    if rows.num_rows == 0:
        return [], []
    return outcome_matrix(
        rows.column("task_id").to_pylist(),
        rows.column("trial").to_pylist(),
        rows.column("outcome").to_pylist(),
    )


def outcome_matrix(
    task_ids: Sequence[str], trials: Sequence[int], outcomes: Sequence[str]
) -> tuple[list[int], list[tuple[str, list[str]]]]:
    """Return the task x trial outcome matrix: trial numbers, and per task its outcomes.

    The three sequences are the columns of one submission's rows. Tasks are
    sorted; a missing (task, trial) pair is an empty string.
    """
    numbers = sorted({int(t) for t in trials})
    column = {t: i for i, t in enumerate(numbers)}
    by_task: dict[str, list[str]] = {}
    for task, trial, outcome in zip(task_ids, trials, outcomes, strict=True):
        cells = by_task.setdefault(str(task), [""] * len(numbers))
        cells[column[int(trial)]] = str(outcome)
    return numbers, sorted(by_task.items())


AS_JSON_TEXT = ("model_calls", "env_fingerprint")
"""Row fields published as JSON text in the all-rows Parquet (their shape varies by system)."""


def flat_rows(rows: Sequence[dict[str, Any]]) -> pa.Table:
    """Return episode rows as an Arrow table, nested objects flattened to ``a.b`` columns.

    Columns follow the rows' key order (the union over all rows); the parts in
    :data:`AS_JSON_TEXT` become JSON text columns at the end.
    """
    import orjson

    if not rows:
        return pa.table({})
    plain = [{k: v for k, v in r.items() if k not in AS_JSON_TEXT} for r in rows]
    table = pa.Table.from_struct_array(pa.array(plain))
    while any(pa.types.is_struct(f.type) for f in table.schema):
        table = table.flatten()
    calls = [orjson.dumps(r.get("model_calls", [])).decode() for r in rows]
    env = [
        orjson.dumps(r.get("env_fingerprint", {}), option=orjson.OPT_SORT_KEYS).decode()
        for r in rows
    ]
    table = table.append_column("model_calls", pa.array(calls, pa.string()))
    return table.append_column("env_fingerprint", pa.array(env, pa.string()))
