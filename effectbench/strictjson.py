"""Strict JSON: no NaN or Infinity, no duplicate keys, fast for well-formed rows.

Used wherever a submitted document is read: by the verifier (``submission.json``,
every row) and by ``effectbench import`` (an upstream document), so both refuse the same text.

orjson already refuses NaN and Infinity but keeps the last of duplicate keys.
A line that orjson re-serialises to exactly its own bytes cannot hold a
duplicate key (the re-serialisation has each key once), so only lines that
are not in orjson's compact form (hand-written, pretty-printed, other float
spellings) pay for the slower duplicate-key scan with the standard library.
"""

from __future__ import annotations

import json
import math
from typing import Any

import orjson

from effectbench.findings import CheckId

MAX_DEPTH = 255
"""Deepest nesting of arrays and objects accepted (orjson's own limit when writing)."""


class StrictJSONError(ValueError):
    """Text that is not strict JSON: ``structure.json``, ``.non_finite`` or ``.duplicate_key``."""

    def __init__(self, check: CheckId, message: str) -> None:
        super().__init__(message)
        self.check = check
        """The check id a verifier reports this error under."""
        self.message = message

    @property
    def rule(self) -> str:
        """The rule part of :attr:`check` (``json``, ``non_finite`` or ``duplicate_key``)."""
        return self.check.partition(".")[2]


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise StrictJSONError(
                CheckId.STRUCTURE_DUPLICATE_KEY, f"duplicate key {key!r} in one object"
            )
        out[key] = value
    return out


def _non_finite(token: str) -> Any:
    raise StrictJSONError(
        CheckId.STRUCTURE_NON_FINITE, f"{token} is not allowed (numbers must be finite)"
    )


def _float(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):
        raise StrictJSONError(CheckId.STRUCTURE_NON_FINITE, f"{token} overflows to infinity")
    return value


def _stdlib_strict(data: bytes | str) -> Any:
    return json.loads(
        data, object_pairs_hook=_no_duplicates, parse_constant=_non_finite, parse_float=_float
    )


BOM = b"\xef\xbb\xbf"
"""The UTF-8 byte order mark: JSON text never starts with one (RFC 8259, section 8.1)."""


def _no_bom(data: bytes) -> None:
    if data.startswith(BOM):
        raise StrictJSONError(
            CheckId.STRUCTURE_BOM,
            "starts with a byte order mark (U+FEFF); save it as UTF-8 without a BOM",
        )


def loads_strict(data: bytes) -> Any:
    """Parse one JSON text strictly; raise :class:`StrictJSONError` saying what is wrong."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        _no_bom(data)
        _require_utf8(data)
        if "depth limit" in str(exc):
            raise _too_deep() from None
        try:
            _stdlib_strict(data)
        except StrictJSONError:
            raise
        except (ValueError, RecursionError):
            pass
        raise StrictJSONError(CheckId.STRUCTURE_JSON, f"not valid JSON: {exc}") from None
    if _dumps(value) != data:
        _no_bom(data)
        try:
            _stdlib_strict(data)
        except StrictJSONError:
            raise
        except (ValueError, RecursionError) as exc:  # pragma: no cover - orjson accepted it
            raise StrictJSONError(CheckId.STRUCTURE_JSON, f"not valid JSON: {exc}") from None
    return value


def _require_utf8(data: bytes) -> None:
    """Raise a :class:`StrictJSONError` naming the first byte that is not UTF-8 text."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StrictJSONError(
            CheckId.STRUCTURE_JSON,
            f"not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start} "
            "(JSON is UTF-8; is this a binary file?)",
        ) from None


def load_document(data: bytes) -> Any:
    """Parse a whole JSON document strictly (standard library; for small documents)."""
    _no_bom(data)
    _require_utf8(data)
    try:
        value = _stdlib_strict(data)
    except StrictJSONError:
        raise
    except RecursionError:
        raise _too_deep() from None
    except ValueError as exc:
        raise StrictJSONError(CheckId.STRUCTURE_JSON, f"not valid JSON: {exc}") from None
    _dumps(value)  # what the standard library reads but no later step can hold
    return value


def _too_deep() -> StrictJSONError:
    return StrictJSONError(
        CheckId.STRUCTURE_NESTING,
        f"arrays and objects nested deeper than {MAX_DEPTH} levels",
    )


def _dumps(value: Any) -> bytes:
    """Return orjson's compact form of a parsed value, refusing what it cannot represent.

    The standard library's parser reads integers of any size, lone surrogates
    (``"\\ud800"``) and deep nesting, none of which the later steps (orjson,
    pydantic, the site) can hold; each becomes a :class:`StrictJSONError`.
    """
    try:
        return orjson.dumps(value)
    except TypeError as exc:  # orjson.JSONEncodeError
        text = str(exc)
        if "64-bit" in text:
            raise StrictJSONError(
                CheckId.STRUCTURE_NON_FINITE,
                "an integer beyond the 64-bit range (-2**63 .. 2**64-1)",
            ) from None
        if "ecursion" in text:
            raise _too_deep() from None
        if "surrogate" in text:
            raise StrictJSONError(
                CheckId.STRUCTURE_JSON,
                "a string holds a lone surrogate escape (\\ud800-\\udfff); not valid text",
            ) from None
        raise StrictJSONError(CheckId.STRUCTURE_JSON, f"not representable: {text}") from None


_TYPE_NAMES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer"}
_TYPE_NAMES.update({float: "number", type(None): "null"})


def json_type(value: Any) -> str:
    """Return the JSON type name of a parsed value (``object``, ``integer``...), for messages."""
    return _TYPE_NAMES.get(type(value), type(value).__name__)
