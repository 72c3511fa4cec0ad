"""What bounds one line of the episode's wire, checked without the SDK and without recursion.

Both readers of the wire use it: the front (:mod:`effectbench.mcp.front`), which answers the
first requests before the SDK is imported, and the transport
(:mod:`effectbench.mcp.transport`), which answers every bad line with a JSON-RPC error. A
line over :data:`MAX_MESSAGE_BYTES` or nested deeper than :data:`MAX_DEPTH` is never given
to a recursive parser.
"""

from __future__ import annotations

import re

MAX_MESSAGE_BYTES = 1024 * 1024
"""Bytes of one incoming message (a line); a tool call's arguments are far smaller."""
MAX_DEPTH = 64
"""Deepest nesting of arrays and objects in one message (a tool call nests three or four);
deeper lines are answered before any parser sees them, so none recurses without bound."""
TOKEN = re.compile(rb'"(?:[^"\\]++|\\.)*+"|[][{}:,]')
"""A JSON string (escapes included) or one structural byte: the tokens that decide depth."""


def too_deep(line: bytes, limit: int = MAX_DEPTH) -> bool:
    """Return whether ``line`` nests arrays and objects deeper than ``limit`` (strings
    skipped; one pass, no recursion)."""
    depth = 0
    for match in TOKEN.finditer(line):
        token = match.group()
        if token in (b"{", b"["):
            depth += 1
            if depth > limit:
                return True
        elif token in (b"}", b"]"):
            depth -= 1
    return False
