"""What the checks read: one submission, bundle folder or upstream document, opened safely.

Files are opened without following symbolic links and never beyond their size
limit; what cannot be read as a submission at all raises
:class:`~effectbench.errors.DataError` (exit status 2), while whatever is wrong
inside a readable container becomes a ``structure`` finding. Either container
becomes one :class:`Submitted`, which the checks of :mod:`verifier.api` read
without knowing which container it was.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson

from effectbench.bundle import (
    BUNDLE_FILES,
    EPISODES_FILE,
    FRAMES_DIR,
    README_FILE,
    RECEIPTS_FILE,
    SIGNATURE_FILE,
    SUBMISSION_FILE,
    folder_problem,
    iter_episode_lines,
    submission_from_upstream,
)
from effectbench.errors import DataError
from effectbench.findings import CheckId, Family
from effectbench.hashing import content_hash, hash_file
from effectbench.receipts.model import FRAME_NAME
from effectbench.strictjson import StrictJSONError, load_document
from verifier.limits import Limits
from verifier.report import FindingSink
from verifier.rows import RowChecker
from verifier.scan import scan_episodes

BUNDLE_FIELDS = {
    "pack.name": "pack.name",
    "pack.fingerprint": "pack.fingerprint",
    "seeds": "seeds",
    "trials_per_task": "trials_per_task",
    "spec_version": "spec_version",
}
"""Where each header field a check names lives in ``submission.json``."""
UPSTREAM_FIELDS = {
    "pack.name": "reproducibility.pack",
    "pack.fingerprint": "reproducibility.pack_fingerprint",
    "seeds": "reproducibility.seeds",
    "trials_per_task": "reproducibility.trials_per_task",
    "spec_version": "reproducibility.effectbench_version",
}
"""Where each header field a check names lives in an upstream document."""

Rows = Iterable[tuple[int, dict[str, Any]]]
"""Rows with their 1-based line (or position) numbers."""


@dataclass(frozen=True)
class Submitted:
    """One submission, whatever its container, ready for the checks."""

    path: Path
    """The path as given."""
    kind: Literal["bundle", "upstream"]
    sub_file: str
    """The name findings about the declaration carry (``submission.json``, ``DOC.json``)."""
    rows_file: str
    """The name findings about a row carry (``episodes.jsonl``, ``DOC.json:episodes``)."""
    fields: Mapping[str, str]
    """:data:`BUNDLE_FIELDS` or :data:`UPSTREAM_FIELDS`."""
    doc: Mapping[str, Any] | None
    """The declaration as ``submission.json`` data (None when unreadable)."""
    feed_rows: Callable[[RowChecker], None] | None
    """Feed every row to a checker (None when the rows cannot be read at all)."""
    rows_again: Callable[[], Rows] | None
    """Read the rows a second time (for the re-run comparison)."""
    bundle_dir: Path | None
    """The folder whose files a signature covers (None for a document)."""
    signature_present: bool
    content_hash: str | None = None
    """:func:`effectbench.hashing.content_hash` of the bundle files a signature covers (or of
    the document); None when a file of the bundle could not be read within its limit."""
    has_readme: bool = False
    """The bundle holds a ``README.md``."""
    receipts_file: Path | None = None
    """The bundle's ``receipts.jsonl`` (None when it holds none)."""
    frames: Mapping[str, Path] | None = None
    """The files of the bundle's ``frames/`` by name, each a regular file within its limit
    and named as a frame (None when the bundle has no ``frames/``)."""


def _quoted(name: str) -> str:
    """Return a file name safe to print: escapes for anything that is not plain text."""
    return name if name.isprintable() else ascii(name)


def _read_nofollow(path: Path, limit: int) -> bytes:
    """Read a regular file without following a symlink; at most ``limit`` bytes."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as fh:
        return fh.read(limit + 1)


ALL_FILES = (*BUNDLE_FILES, RECEIPTS_FILE)
"""Every file a bundle may hold at its top (``frames/`` is its one folder)."""


def _inspect_frames(folder: Path, sink: FindingSink, limits: Limits) -> dict[str, Path]:
    """Check the files of ``frames/``: regular files named ``<sha256>.webp`` (or ``.png``)
    within the size limit; return them by name."""
    found: dict[str, Path] = {}
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        where = f"{FRAMES_DIR}/{_quoted(entry.name)}"
        info = entry.stat(follow_symlinks=False)
        if stat.S_ISLNK(info.st_mode):
            sink.emit(
                CheckId.STRUCTURE_SYMLINK,
                "a bundle holds regular files only; replace the symlink with the file itself",
                where,
            )
        elif not stat.S_ISREG(info.st_mode) or FRAME_NAME.fullmatch(entry.name) is None:
            kind = "a folder" if stat.S_ISDIR(info.st_mode) else "a file"
            sink.emit(
                CheckId.RECEIPT_FRAME_NAME,
                f"{kind} named {entry.name!r} in {FRAMES_DIR}/; it holds only frames named "
                "<sha256 of the file>.webp (or .png), no folder",
                where,
            )
        elif info.st_size > limits.max_frame_bytes:
            sink.emit(
                CheckId.RECEIPT_FRAME_IMAGE,
                f"{info.st_size} bytes exceed the limit of {limits.max_frame_bytes} for a frame",
                where,
            )
        elif info.st_nlink > 1:
            sink.emit(
                CheckId.STRUCTURE_HARD_LINK,
                f"the file has {info.st_nlink} hard links; submit a copy of its own",
                where,
            )
        else:
            found[entry.name] = Path(entry.path)
    return found


def _inspect_files(
    bundle: Path, sink: FindingSink, limits: Limits
) -> tuple[dict[str, Path], dict[str, Path] | None]:
    """Check the bundle's file list; return the allowed regular files present, and the
    frames (None when there is no ``frames/`` folder)."""
    found: dict[str, Path] = {}
    frames: dict[str, Path] | None = None
    caps = {
        SUBMISSION_FILE: limits.max_submission_bytes,
        EPISODES_FILE: limits.max_episodes_bytes,
        README_FILE: limits.max_readme_bytes,
        SIGNATURE_FILE: limits.max_signature_bytes,
        RECEIPTS_FILE: limits.max_receipts_bytes,
    }
    for entry in sorted(os.scandir(bundle), key=lambda e: e.name):
        info = entry.stat(follow_symlinks=False)
        if stat.S_ISLNK(info.st_mode):
            sink.emit(
                CheckId.STRUCTURE_SYMLINK,
                "a bundle holds regular files only; replace the symlink with the file itself",
                _quoted(entry.name),
            )
            continue
        if entry.name == FRAMES_DIR and stat.S_ISDIR(info.st_mode):
            frames = _inspect_frames(Path(entry.path), sink, limits)
            continue
        if entry.name not in ALL_FILES or not stat.S_ISREG(info.st_mode):
            kind = "folder" if stat.S_ISDIR(info.st_mode) else "file"
            sink.emit(
                CheckId.STRUCTURE_UNEXPECTED_FILE,
                f"unexpected {kind}; a bundle holds only {', '.join(ALL_FILES)} and a "
                f"{FRAMES_DIR}/ folder",
                _quoted(entry.name),
            )
            continue
        if info.st_size > caps[entry.name]:
            sink.emit(
                CheckId.STRUCTURE_FILE_SIZE,
                f"{info.st_size} bytes exceed the limit of {caps[entry.name]}",
                entry.name,
            )
            continue
        if info.st_nlink > 1:
            sink.emit(
                CheckId.STRUCTURE_HARD_LINK,
                f"the file has {info.st_nlink} hard links: another file shares its contents; "
                "submit a copy of its own",
                entry.name,
            )
            continue
        found[entry.name] = Path(entry.path)
    for name in (SUBMISSION_FILE, EPISODES_FILE):
        if name not in found and not any(f.file == name for f in sink.kept[Family.STRUCTURE]):
            sink.emit(CheckId.STRUCTURE_MISSING_FILE, "required file is missing", name)
    return found, frames


def _read_declaration(path: Path, sink: FindingSink, limits: Limits) -> Mapping[str, Any] | None:
    """Return ``submission.json`` as an object, or None (with its finding)."""
    try:
        parsed = load_document(_read_nofollow(path, limits.max_submission_bytes))
    except StrictJSONError as exc:
        sink.emit(exc.check, exc.message, SUBMISSION_FILE)
        return None
    if not isinstance(parsed, dict):
        sink.emit(
            CheckId.STRUCTURE_TYPE, f"{SUBMISSION_FILE} must hold a JSON object", SUBMISSION_FILE
        )
        return None
    return parsed


def _jsonl_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, data in iter_episode_lines(path):
        if data:
            yield number, orjson.loads(data)


def open_bundle(
    bundle: Path, sink: FindingSink, limits: Limits, *, folder_rule: bool = False
) -> Submitted:
    """Open a bundle folder: its file list, ``submission.json``, the README and the rows.

    With ``folder_rule`` (a bundle under ``submissions/``) the folder's own name must
    be ``YYYY-MM-DD_slug`` (:func:`effectbench.bundle.folder_problem`).
    """
    problem = folder_problem(bundle.name) if folder_rule else None
    if problem is not None:
        sink.emit(CheckId.STRUCTURE_FOLDER_NAME, problem, _quoted(bundle.name))
    if bundle.is_symlink():
        sink.emit(
            CheckId.STRUCTURE_SYMLINK,
            "the bundle folder is a symlink; submit a real folder",
            str(bundle),
        )
        files: dict[str, Path] = {}
        frames = None
    else:
        files, frames = _inspect_files(bundle, sink, limits)
    doc = None
    if SUBMISSION_FILE in files:
        doc = _read_declaration(files[SUBMISSION_FILE], sink, limits)
    if README_FILE in files:
        try:
            _read_nofollow(files[README_FILE], limits.max_readme_bytes).decode("utf-8")
        except UnicodeDecodeError:
            sink.emit(CheckId.STRUCTURE_README, f"{README_FILE} must be UTF-8 text", README_FILE)
    feed = again = None
    if EPISODES_FILE in files:
        episodes = files[EPISODES_FILE]

        def feed(checker: RowChecker) -> None:
            scan_episodes(checker, episodes, limits)

        def again() -> Rows:
            return _jsonl_rows(episodes)

    content = None
    if all(name in files for name in (SUBMISSION_FILE, EPISODES_FILE)):
        digests = {name: hash_file(path) for name, path in files.items() if name != SIGNATURE_FILE}
        for name, path in (frames or {}).items():
            digests[f"{FRAMES_DIR}/{name}"] = hash_file(path)
        content = content_hash(digests)
    return Submitted(
        path=bundle,
        kind="bundle",
        sub_file=SUBMISSION_FILE,
        rows_file=EPISODES_FILE,
        fields=BUNDLE_FIELDS,
        doc=doc,
        feed_rows=feed,
        rows_again=again,
        bundle_dir=bundle,
        signature_present=SIGNATURE_FILE in files,
        content_hash=content,
        has_readme=README_FILE in files,
        receipts_file=files.get(RECEIPTS_FILE),
        frames=frames,
    )


def _read_upstream(
    path: Path, sink: FindingSink, limits: Limits
) -> tuple[dict[str, Any] | None, list[Any] | None, str | None]:
    """Return the document as ``submission.json`` data, its rows and its content hash
    (None where unreadable)."""
    name = path.name
    if path.is_symlink():
        sink.emit(
            CheckId.STRUCTURE_SYMLINK, "the document is a symlink; submit the file itself", name
        )
        return None, None, None
    size = path.stat().st_size
    if size > limits.max_document_bytes:
        sink.emit(
            CheckId.STRUCTURE_FILE_SIZE,
            f"{size} bytes exceed the limit of {limits.max_document_bytes}",
            name,
        )
        return None, None, None
    data = _read_nofollow(path, limits.max_document_bytes)
    content = content_hash({name: hashlib.sha256(data).hexdigest()})
    if data.lstrip()[:1] != b"{":
        raise DataError(
            "not a submission document (a JSON object); verify takes a bundle folder, a "
            "folder of bundles, or an upstream submission document",
            file=str(path),
        )
    try:
        raw = load_document(data)
    except StrictJSONError as exc:
        sink.emit(exc.check, exc.message, name)
        return None, None, content
    try:
        doc, rows = submission_from_upstream(raw)
    except DataError as exc:
        sink.emit(CheckId.STRUCTURE_UPSTREAM, exc.message, name, None, exc.field)
        return None, None, content
    return doc, rows, content


def open_document(path: Path, sink: FindingSink, limits: Limits) -> Submitted:
    """Open an upstream single-document submission (the reference implementation's format).

    Raises :class:`DataError` when the file is not a JSON object at all (binary
    data, an array, some other file): there is no submission to judge.
    """
    rows_file = f"{path.name}:episodes"
    doc, rows, content = _read_upstream(path, sink, limits)
    if rows is not None and len(rows) > limits.max_rows:
        sink.emit(CheckId.STRUCTURE_ROW_COUNT, f"more than {limits.max_rows} rows", rows_file)
        rows = None
    feed = again = None
    if rows is not None:
        numbered = list(enumerate(rows, start=1))

        def feed(checker: RowChecker) -> None:
            for i, row in numbered:
                size = len(orjson.dumps(row))
                if size > limits.max_line_bytes:  # as a bundle's line would be refused
                    checker.reject(
                        i,
                        CheckId.STRUCTURE_LINE_LENGTH,
                        f"the row is {size} bytes as a line of a bundle's {EPISODES_FILE}, "
                        f"over the limit of {limits.max_line_bytes}",
                    )
                    continue
                checker.add(i, row)

        def again() -> Rows:
            return numbered

    return Submitted(
        path=path,
        kind="upstream",
        sub_file=path.name,
        rows_file=rows_file,
        fields=UPSTREAM_FIELDS,
        doc=doc,
        feed_rows=feed,
        rows_again=again,
        bundle_dir=None,
        signature_present=False,
        content_hash=content,
    )
