"""One-line text of an exception, for messages that must stay one line."""

from __future__ import annotations


def first_line(exc: BaseException) -> str:
    """Return the first line of ``exc``'s text (its type name when empty), at most 300 chars."""
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]
