"""Read an ``episodes.jsonl`` through the per-row checks, on every core for large files.

:func:`check_lines` parses each line strictly (line length, blank lines, strict
JSON, a cut-short last line) and hands each row to a
:class:`~verifier.rows.RowChecker`. A large file is cut into byte ranges at line
boundaries; the first range is checked in this process and the others in
forked workers, each given the file's first arm (every row is held to it), whose
state (metric columns, findings, episode ids, trials seen) is merged back in file
order (:meth:`~verifier.rows.RowChecker.merge`), so the result equals a sequential
pass: the same findings, in the same order, with the same words and line numbers.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO

from effectbench.bundle import iter_episode_lines
from effectbench.findings import CheckId
from effectbench.strictjson import StrictJSONError, loads_strict
from verifier.limits import MIB, Limits
from verifier.pack import TaskFacts
from verifier.report import FindingSink
from verifier.rows import RowChecker
from verifier.rowschema import row_problems

PARALLEL_MIN_BYTES = 64 * MIB
"""Files smaller than this are read in one process (forking costs more than it saves)."""
MAX_WORKERS = 4


def check_lines(
    checker: RowChecker,
    lines: Iterable[tuple[int, bytes | None]],
    *,
    ends_with_newline: bool,
    max_rows: int,
    max_line_bytes: int,
) -> bool:
    """Parse and check each line of an ``episodes.jsonl``; return False if stopped early.

    A parse error on the last line of a file without a final newline is
    reported as ``structure.truncated`` (the upload was cut short).
    """
    file = checker.file
    sink = checker.sink
    pending: tuple[int, CheckId, str] | None = None
    add = checker.add
    count = 0
    for number, data in lines:
        checker.last_line = number
        if pending is not None:
            checker.reject(*pending)
            pending = None
        if data is None:
            checker.reject(
                number,
                CheckId.STRUCTURE_LINE_LENGTH,
                f"line is longer than the limit of {max_line_bytes} bytes "
                "(raise it with --max-line-bytes if the row is genuine)",
            )
            continue
        if not data or data.isspace():
            checker.reject(number, CheckId.STRUCTURE_BLANK_LINE, "blank line; one row per line")
            continue
        if data[-1:] == b"\r":
            checker.reject(
                number,
                CheckId.STRUCTURE_LINE_ENDING,
                "the line ends with a carriage return (CRLF); end each line with a newline "
                "alone (LF)",
            )
            continue
        count += 1
        if count > max_rows:
            sink.emit(
                CheckId.STRUCTURE_ROW_COUNT,
                f"more than {max_rows} rows (raise the limit with --max-rows); reading stopped",
                file,
                number,
            )
            checker.structure_failed = True
            return False
        try:
            row = loads_strict(data)
        except StrictJSONError as exc:
            pending = (number, exc.check, exc.message)
            continue
        add(number, row)
    if pending is not None:
        number, rule, message = pending
        if rule == CheckId.STRUCTURE_JSON and not ends_with_newline:
            rule = CheckId.STRUCTURE_TRUNCATED
            message = f"the last line is cut short ({message}); upload the whole file"
        checker.reject(number, rule, message)
    return True


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _next_line_start(fh: BinaryIO, at: int, size: int) -> int:
    """Return the offset after the first newline at or after ``at`` (``size`` when none).

    Read in bounded steps: a gigabyte without a newline never sits in memory.
    """
    fh.seek(at)
    while chunk := fh.read(MIB):
        found = chunk.find(b"\n")
        if found >= 0:
            return at + found + 1
        at += len(chunk)
    return size


def split_ranges(path: Path, parts: int) -> list[tuple[int, int]]:
    """Return ``parts`` byte ranges of ``path`` that each start at the beginning of a line."""
    size = path.stat().st_size
    cuts = [0]
    with path.open("rb") as fh:
        for i in range(1, parts):
            target = max(size * i // parts, cuts[-1])
            cut = _next_line_start(fh, target, size)
            if cut >= size:
                break
            if cut > cuts[-1]:
                cuts.append(cut)
    cuts.append(size)
    return list(zip(cuts[:-1], cuts[1:], strict=True))


def _check_span(
    checker: RowChecker,
    path: Path,
    limits: Limits,
    *,
    start: int = 0,
    end: int | None = None,
    ends_with_newline: bool,
) -> None:
    """Check the lines of ``path`` from byte ``start`` to ``end`` into ``checker``."""
    check_lines(
        checker,
        iter_episode_lines(path, limits.max_line_bytes, start=start, end=end),
        ends_with_newline=ends_with_newline,
        max_rows=limits.max_rows,
        max_line_bytes=limits.max_line_bytes,
    )


def _scan_range(
    path: Path,
    start: int,
    end: int,
    file: str,
    tasks: dict[str, TaskFacts] | None,
    trials: int | None,
    seeds: list[int] | None,
    limits: Limits,
    ends_with_newline: bool,
    arms: list[str],
    keep: int,
    instance: bool = False,
) -> dict[str, Any]:
    checker = RowChecker(
        FindingSink(keep),
        file,
        tasks=tasks,
        trials=trials,
        seeds=seeds,
        arms=arms,
        instance=instance,
    )
    _check_span(checker, path, limits, start=start, end=end, ends_with_newline=ends_with_newline)
    return checker.export()


def first_arm(path: Path, limits: Limits, end: int) -> str | None:
    """Return the arm of the first row of ``path`` (before byte ``end``) that passes the
    structure checks: the arm every other row is held to (None when there is none)."""
    for _, data in iter_episode_lines(path, limits.max_line_bytes, end=end):
        if not data or data[-1:] == b"\r":
            continue
        try:
            row = loads_strict(data)
        except StrictJSONError:
            continue
        if not row_problems(row):
            return str(row["arm"])
    return None


def scan_episodes(
    checker: RowChecker, path: Path, limits: Limits, *, workers: int | None = None
) -> None:
    """Feed every line of ``path`` to ``checker`` (in parallel for large files)."""
    size = path.stat().st_size
    ends = True
    if size:
        with path.open("rb") as fh:
            fh.seek(size - 1)
            ends = fh.read(1) == b"\n"
    n = workers if workers is not None else min(_cores(), MAX_WORKERS)
    if size < PARALLEL_MIN_BYTES and workers is None:
        n = 1
    ranges = split_ranges(path, n) if n > 1 else [(0, size)]
    if "fork" not in multiprocessing.get_all_start_methods():
        ranges = [(0, size)]  # pragma: no cover - the workers rely on fork
    tasks = dict(checker.tasks) if checker.tasks is not None else None
    seeds = list(checker.seeds) if checker.seeds is not None else None
    last = len(ranges) - 1
    arm = first_arm(path, limits, ranges[0][1]) if len(ranges) > 1 else None
    if arm is None:  # no row to judge the others' arm by before the first cut: one part
        _check_span(checker, path, limits, ends_with_newline=ends)
        return
    arms = [*checker.arms] if checker.arms else [arm]
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=len(ranges) - 1, mp_context=context) as pool:
        futures = [
            pool.submit(
                _scan_range,
                path,
                start,
                end,
                checker.file,
                tasks,
                checker.trials,
                seeds,
                limits,
                ends if i == last else True,
                arms,
                checker.sink.keep,
                checker.instance,
            )
            for i, (start, end) in enumerate(ranges)
            if i > 0
        ]
        start, end = ranges[0]
        _check_span(checker, path, limits, start=start, end=end, ends_with_newline=True)
        for future in futures:
            checker.merge(future.result(), checker.last_line)
    if checker.n_rows > limits.max_rows and not checker.sink.ids[CheckId.STRUCTURE_ROW_COUNT]:
        checker.sink.emit(
            CheckId.STRUCTURE_ROW_COUNT,
            f"more than {limits.max_rows} rows (raise the limit with --max-rows)",
            checker.file,
        )
        checker.structure_failed = True
