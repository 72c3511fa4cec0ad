"""The episode's stdio wire: bounded messages, and a JSON-RPC error for every bad one.

The ``mcp`` SDK's stdio transport reads lines of any length and drops a line that is
not a JSON-RPC message without a word to the client. Here each line is read with a
bound (:data:`MAX_MESSAGE_BYTES`): a longer one is skipped to its end and answered
with an *Invalid Request* error, a line that is not JSON with a *Parse error*, and
JSON that is not a JSON-RPC 2.0 message with an *Invalid Request* (echoing its id
when it has a usable one), as JSON-RPC 2.0 (section 5.1) asks. Valid lines go on to
the SDK's transport unchanged.

While the episode is served, file descriptors 0 and 1 point at the null device and
at standard error (as the SDK's own transport does), so nothing the episode's
children print can reach the wire.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, BinaryIO, cast

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.stdio import stdio_server
from pydantic import ValidationError

MAX_MESSAGE_BYTES = 1024 * 1024
"""Bytes of one incoming message (a line); a tool call's arguments are far smaller."""
PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def error_line(ident: str | int | None, code: int, message: str) -> str:
    """Return one JSON-RPC 2.0 error response as a line of the wire."""
    return json.dumps({"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}})


def _usable_id(data: Any) -> str | int | None:
    ident = data.get("id") if isinstance(data, dict) else None
    ok = isinstance(ident, str | int) and not isinstance(ident, bool)
    return ident if ok else None


def judge_line(line: bytes) -> str | None:
    """Return the error line that answers ``line``, or None when it is a JSON-RPC message."""
    try:
        data = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return error_line(None, PARSE_ERROR, "Parse error: the message is not JSON text")
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
                await self.out.write(error_line(None, INVALID_REQUEST, message) + "\n")
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
