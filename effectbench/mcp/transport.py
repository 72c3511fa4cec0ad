"""The episode's stdio wire: bounded messages, and a JSON-RPC error for every bad one.

The ``mcp`` SDK's stdio transport reads lines of any length and drops a line that is
not a JSON-RPC message without a word to the client. Here each line is read with a
bound (:data:`MAX_MESSAGE_BYTES`): a longer one is skipped to its end and answered
with an *Invalid Request* error, a line nested deeper than :data:`MAX_DEPTH` with an
*Invalid Request* before any parser recurses into it, a line that is not JSON with a
*Parse error*, and JSON that is not a JSON-RPC 2.0 message with an *Invalid Request*,
as JSON-RPC 2.0 (section 5.1) asks. Valid lines go on to the SDK's transport unchanged.

Every error answer carries the request's id when it can be recovered, so the client's
call is answered instead of waiting until the episode's time runs out. A line too long
or too deep to parse still has its id found (:func:`recover_id`) by one pass of a
regular expression over its tokens, never a recursive parse: the top-level object's
``"id"`` member, among the first :data:`MAX_MESSAGE_BYTES` bytes, when it is a string
or an integer.

While the episode is served, file descriptors 0 and 1 point at the null device and
at standard error (as the SDK's own transport does), so nothing the episode's
children print can reach the wire.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, BinaryIO, cast

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.stdio import stdio_server
from pydantic import ValidationError

from effectbench.mcp.shape import MAX_DEPTH, MAX_MESSAGE_BYTES, TOKEN, too_deep

MAX_ID_CHARS = 256
"""Characters of a string id that :func:`recover_id` echoes (a longer one is not echoed)."""
PARSE_ERROR = -32700
INVALID_REQUEST = -32600

_INTEGER = re.compile(rb"\s*(-?(?:0|[1-9][0-9]{0,17}))\s*")
"""An id written as an integer of at most 18 digits (what JSON-RPC clients send)."""


def error_line(ident: str | int | None, code: int, message: str) -> str:
    """Return one JSON-RPC 2.0 error response as a line of the wire."""
    return json.dumps({"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}})


def _usable_id(data: Any) -> str | int | None:
    ident = data.get("id") if isinstance(data, dict) else None
    ok = isinstance(ident, str | int) and not isinstance(ident, bool)
    return ident if ok else None


def _id_value(line: bytes, start: int) -> str | int | None:
    """Return the member value starting at ``start`` of ``line`` when it is a usable id."""
    number = _INTEGER.match(line, start)
    if number is not None:
        after = line[number.end() : number.end() + 1]
        return int(number.group(1)) if after in (b",", b"}") else None
    while line[start : start + 1].isspace():
        start += 1
    token = TOKEN.match(line, start)
    if token is None or not token.group().startswith(b'"'):
        return None
    try:
        text = json.loads(token.group())
    except (ValueError, UnicodeDecodeError):
        return None
    return text if len(text) <= MAX_ID_CHARS else None


def _is_id_name(token: bytes) -> bool:
    if token == b'"id"':
        return True
    if len(token) > 32 or b"\\" not in token:  # an escaped spelling, e.g. "\u0069d"
        return False
    try:
        return bool(json.loads(token) == "id")
    except (ValueError, UnicodeDecodeError):
        return False


def recover_id(line: bytes) -> str | int | None:
    """Return the top-level ``"id"`` of a JSON-RPC line without parsing it recursively.

    One left-to-right pass over the line's tokens (strings and structural bytes),
    keeping only the depth: a string at depth 1 right after ``{`` or ``,`` is a
    member's name; the first one that reads ``"id"`` and is followed by ``:`` gives the
    id, when its value is a string (of at most :data:`MAX_ID_CHARS` characters) or an
    integer. Anything else (no object, no id, an id that is an object, a line cut off
    before it) gives None. Work is linear in the line's length; memory is constant.
    """
    depth = 0
    expect_name = named_id = False
    for match in TOKEN.finditer(line):
        token = match.group()
        if token in (b"{", b"["):
            if depth == 0 and token == b"[":
                return None  # a batch or an array: no single id
            depth += 1
            expect_name, named_id = depth == 1, False
        elif token in (b"}", b"]"):
            depth -= 1
            if depth <= 0:
                return None
            expect_name = named_id = False
        elif token == b",":
            expect_name, named_id = depth == 1, False
        elif token == b":":
            if named_id:
                return _id_value(line, match.end())
            expect_name = False
        else:
            named_id = expect_name and _is_id_name(token)
            expect_name = False
    return None


def judge_line(line: bytes) -> str | None:
    """Return the error line that answers ``line``, or None when it is a JSON-RPC message."""
    if too_deep(line):
        message = f"Invalid Request: arrays and objects nested deeper than {MAX_DEPTH} levels"
        return error_line(recover_id(line), INVALID_REQUEST, message)
    try:
        data = json.loads(line)
    except (ValueError, UnicodeDecodeError, RecursionError):
        message = "Parse error: the message is not JSON text"
        return error_line(recover_id(line), PARSE_ERROR, message)
    try:
        types.jsonrpc_message_adapter.validate_python(data, by_name=False)
    except ValidationError:
        return error_line(
            _usable_id(data),
            INVALID_REQUEST,
            "Invalid Request: not a JSON-RPC 2.0 request, notification or response",
        )
    return None


class _Out:
    """The wire's writing end: one whole line per write, never two writers at once."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.lock = anyio.Lock()

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]

    async def write(self, text: str) -> None:
        async with self.lock:
            await anyio.to_thread.run_sync(self._write_all, text.encode("utf-8"))

    async def flush(self) -> None:
        return None


class _In:
    """The wire's reading end: the lines that are JSON-RPC messages, each at most
    ``max_bytes``; every other line is answered on ``out`` and never passed on."""

    def __init__(self, fd: int, out: _Out, max_bytes: int) -> None:
        self.file: BinaryIO = os.fdopen(fd, "rb", closefd=False)
        self.out = out
        self.max_bytes = max_bytes

    async def _readline(self) -> bytes:
        return await anyio.to_thread.run_sync(
            self.file.readline, self.max_bytes + 1, abandon_on_cancel=True
        )

    async def __aiter__(self) -> AsyncIterator[str]:
        while line := await self._readline():
            if len(line) > self.max_bytes and not line.endswith(b"\n"):
                while (rest := await self._readline()) and not rest.endswith(b"\n"):
                    pass
                message = f"Invalid Request: the message is longer than {self.max_bytes} bytes"
                ident = recover_id(line[: self.max_bytes])
                await self.out.write(error_line(ident, INVALID_REQUEST, message) + "\n")
                continue
            if not line.strip():
                continue
            answer = judge_line(line)
            if answer is not None:
                await self.out.write(answer + "\n")
                continue
            yield line.decode("utf-8")


@contextmanager
def _diverted() -> Iterator[tuple[int, int]]:
    """Move the wire off fds 0 and 1 (to private duplicates) for the block's length."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
        yield wire_in, wire_out
    finally:
        os.close(null)
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
        os.close(wire_in)
        os.close(wire_out)


@asynccontextmanager
async def bounded_stdio(
    max_bytes: int = MAX_MESSAGE_BYTES,
) -> AsyncIterator[tuple[Any, Any]]:
    """Like ``mcp.server.stdio.stdio_server``, with bounded, answered messages."""
    with _diverted() as (wire_in, wire_out):
        out = _Out(wire_out)
        lines = _In(wire_in, out, max_bytes)
        async with stdio_server(stdin=cast(Any, lines), stdout=cast(Any, out)) as streams:
            yield streams
