"""Receipts and frames on disk: in a bundle, beside a run journal, in an MCP record folder.

A bundle of format 2 holds ``receipts.jsonl`` (line *i* is the receipt of the row on line
*i* of ``episodes.jsonl``) and a folder ``frames/`` with every key frame once, named
``<sha256 of its bytes>.webp``. A run journal keeps each finished episode's receipt in a
folder beside it (``JOURNAL.receipts/``) before its row's line is written, so a resumed
run's bundle has every receipt; an MCP episode writes its receipt into its record file and
its frames into the record folder's ``frames/``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from effectbench.errors import DataError
from effectbench.filenames import FRAMES_DIR, RECEIPTS_FILE
from effectbench.receipts.collect import Evidence, evidence_of
from effectbench.receipts.model import FRAME_NAME, Receipt

__all__ = [
    "FRAMES_DIR",
    "RECEIPTS_FILE",
    "all_carry_receipts",
    "evidence_from_inline",
    "evidence_from_json",
    "evidence_inline",
    "evidence_json",
    "load_beside",
    "read_frames",
    "store_beside",
    "write_frames",
    "write_receipts",
]


def all_carry_receipts(rows: Iterable[Any]) -> bool:
    """Say whether every row carries a receipt (and there is at least one row)."""
    rows = list(rows)
    return bool(rows) and all(evidence_of(r) is not None for r in rows)


def _write_file(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tmp.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(path)


def write_frames(folder: Path, frames: Mapping[str, bytes]) -> None:
    """Write frames into ``folder`` (made when needed), each once, durably."""
    if not frames:
        return
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in frames.items():
        if FRAME_NAME.fullmatch(name) is None:
            raise ValueError(f"not a frame name: {name!r}")
        target = folder / name
        if not target.exists():
            _write_file(target, data)


def read_frames(folder: Path, names: Iterable[str]) -> dict[str, bytes]:
    """Read the frames ``names`` from ``folder`` (a :class:`DataError` names a missing one)."""
    out = {}
    for name in names:
        if FRAME_NAME.fullmatch(name) is None:
            raise DataError(f"not a frame name: {name!r}", file=str(folder))
        try:
            out[name] = (folder / name).read_bytes()
        except OSError as exc:
            raise DataError(f"cannot read frame: {exc.strerror}", file=str(folder / name)) from None
    return out


def write_receipts(bundle: Path, rows: Iterable[Any]) -> None:
    """Write every row's receipt (``receipts.jsonl``, in row order) and frames into ``bundle``."""
    frames: dict[str, bytes] = {}
    with (bundle / RECEIPTS_FILE).open("wb") as fh:
        for row in rows:
            evidence = evidence_of(row)
            if evidence is None:
                raise ValueError(f"row {getattr(row, 'episode_id', '?')!r} carries no receipt")
            fh.write(orjson.dumps(evidence.receipt.to_json()) + b"\n")
            frames.update(evidence.frames)
    write_frames(bundle / FRAMES_DIR, frames)


def evidence_json(evidence: Evidence) -> dict[str, Any]:
    """Return a receipt as JSON data (its frames are stored apart, by name)."""
    return evidence.receipt.to_json()


def evidence_from_json(data: Any, frames_dir: Path, where: str) -> Evidence:
    """Return the evidence of a stored receipt, its frames read from ``frames_dir``."""
    try:
        receipt = Receipt.model_validate_json(orjson.dumps(data), strict=True)
    except (ValidationError, TypeError) as exc:
        raise DataError(f"not a receipt: {str(exc).splitlines()[0]}", file=where) from None
    return Evidence(receipt, read_frames(frames_dir, [f.name for f in receipt.frames]))


def evidence_inline(evidence: Evidence) -> dict[str, Any]:
    """Return a receipt with its frames inline (base64), as one JSON object: what travels
    where files cannot (a worker's answer, an inspect score)."""
    frames = {n: base64.b64encode(b).decode("ascii") for n, b in evidence.frames.items()}
    return {"receipt": evidence.receipt.to_json(), "frames": frames}


def evidence_from_inline(data: Any) -> Evidence:
    """Return the evidence of :func:`evidence_inline` data; a ``ValueError`` says what is wrong
    (not a receipt, a frame name that is not one, a frame it names missing, not base64)."""
    if not isinstance(data, dict) or set(data) != {"receipt", "frames"}:
        raise ValueError("inline evidence is {receipt, frames}")
    frames = data["frames"]
    if not isinstance(frames, dict):
        raise ValueError("frames are an object of base64 texts by name")
    try:
        receipt = Receipt.model_validate_json(orjson.dumps(data["receipt"]), strict=True)
        decoded = {str(n): base64.b64decode(str(v), validate=True) for n, v in frames.items()}
    except (ValidationError, TypeError, binascii.Error) as exc:
        raise ValueError(f"not a receipt with its frames: {str(exc).splitlines()[0]}") from None
    if not all(FRAME_NAME.fullmatch(n) for n in decoded):
        raise ValueError("a frame name that is not <sha256>.webp or .png")
    if {f.name for f in receipt.frames} - set(decoded):
        raise ValueError("the receipt names a frame it does not carry")
    return Evidence(receipt, decoded)


def _stem(task_id: str, trial: int) -> str:
    return f"{hashlib.sha256(task_id.encode('utf-8', 'surrogatepass')).hexdigest()[:20]}__t{trial}"


def store_beside(folder: Path, task_id: str, trial: int, evidence: Evidence) -> None:
    """Keep one episode's receipt and frames in ``folder`` (a journal's side folder), durably."""
    folder.mkdir(parents=True, exist_ok=True)
    write_frames(folder / FRAMES_DIR, evidence.frames)
    _write_file(folder / f"{_stem(task_id, trial)}.json", orjson.dumps(evidence_json(evidence)))


def load_beside(folder: Path, task_id: str, trial: int) -> Evidence | None:
    """Return the receipt :func:`store_beside` kept for an episode (None when there is none)."""
    path = folder / f"{_stem(task_id, trial)}.json"
    try:
        data = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, orjson.JSONDecodeError) as exc:
        raise DataError(f"not a receipt: {exc}", file=str(path)) from None
    return evidence_from_json(data, folder / FRAMES_DIR, str(path))


def iter_lines(path: Path) -> Iterator[bytes]:
    """Yield the lines of a JSON-lines file (without their newline)."""
    with path.open("rb") as fh:
        for line in fh:
            yield line.rstrip(b"\n")
