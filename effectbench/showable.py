"""What may be shown: one allow-list of characters, pinned to one Unicode version.

Every text the leaderboard shows (a system's name, description and URL, versions,
environment entries, any string that reaches the chart renderer or a page) may hold
only letters, marks, numbers, punctuation, symbols and space separators, less the
characters that draw nothing (Hangul fillers, variation selectors, the combining
grapheme joiner, the blank Braille pattern...). Everything else is refused:
controls, format characters (bidi controls, zero-width characters, tags),
surrogates, private use, unassigned code points and noncharacters (U+FFFE, U+FFFF,
U+FDD0...), line and paragraph separators. A paragraph may also hold line breaks.

The allowed characters are a table of code point ranges
(:mod:`effectbench._showable_table`), generated from the Unicode Character
Database of the version :data:`UNICODE_VERSION` by ``make generate``
(it reads ``unicodedata2``, pinned in the dev extras, never the running Python's
``unicodedata``), so the verdict on a text is the same on every Python. The
verifier's schema (:data:`SHOWN_TEXT`, :data:`SHOWN_PARAGRAPH`), the published JSON
Schema, the site and the computer actions' text check all read this one table.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from effectbench._showable_table import RANGES, UNICODE_VERSION

__all__ = [
    "LAYOUT",
    "RANGES",
    "SHOWN_PARAGRAPH",
    "SHOWN_TEXT",
    "UNICODE_VERSION",
    "UNSHOWN_CHAR",
    "UNSHOWN_PARAGRAPH_CHAR",
    "describe_unshowable",
    "first_unshowable",
    "make_showable",
    "table_text",
]

SHOWN_CATEGORIES = frozenset(
    ("Lu", "Ll", "Lt", "Lm", "Lo")  # letters
    + ("Mn", "Mc", "Me")  # marks
    + ("Nd", "Nl", "No")  # numbers
    + ("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po")  # punctuation
    + ("Sm", "Sc", "Sk", "So")  # symbols
    + ("Zs",)  # space separators
)
"""The general categories a shown character may have (Cc, Cf, Cs, Co, Cn, Zl, Zp may not)."""

INVISIBLE: tuple[tuple[int, int, str], ...] = (
    (0x034F, 0x034F, "combining grapheme joiner"),
    (0x115F, 0x1160, "Hangul choseong and jungseong fillers"),
    (0x17B4, 0x17B5, "Khmer inherent vowels"),
    (0x180B, 0x180F, "Mongolian free variation selectors"),
    (0x2800, 0x2800, "blank Braille pattern"),
    (0x3164, 0x3164, "Hangul filler"),
    (0xFE00, 0xFE0F, "variation selectors"),
    (0xFFA0, 0xFFA0, "halfwidth Hangul filler"),
    (0xE0100, 0xE01EF, "variation selectors supplement"),
)
"""Characters of an allowed category that draw nothing, refused all the same: the
default-ignorable code points outside the refused categories, and the blank Braille
pattern."""

PINNED_PACKAGE = "unicodedata2"
"""The package the table is generated from (its version is pinned in the dev extras)."""
GENERATE_COMMAND = "make generate"


def _escape(code: int) -> str:
    """One code point in a character class every regex dialect the project meets reads.

    Python's ``re``, Rust's ``regex`` (pydantic) and ECMA-262 with the ``u`` flag (JSON
    Schema) all read ``\\uXXXX``; none of the three shares an escape beyond the BMP, so
    those code points are written as themselves (never a regex metacharacter).
    """
    return f"\\u{code:04x}" if code <= 0xFFFF else chr(code)


def _class_body(ranges: Sequence[tuple[int, int]]) -> str:
    return "".join(_escape(lo) if lo == hi else f"{_escape(lo)}-{_escape(hi)}" for lo, hi in ranges)


_BODY = _class_body(RANGES)
SHOWN_TEXT = f"^[{_BODY}]*$"
"""The pattern of a one-line shown text (names, URLs, versions): every character allowed."""
SHOWN_PARAGRAPH = f"^[\\n{_BODY}]*$"
"""The pattern of a shown paragraph: like :data:`SHOWN_TEXT`, line breaks allowed."""
UNSHOWN_CHAR = f"[^{_BODY}]"
"""Matches one character a one-line shown text may not hold (the JSON Schema refuses a
text where it is found, which reads the same in every dialect, unlike ``$``)."""
UNSHOWN_PARAGRAPH_CHAR = f"[^\\n{_BODY}]"
"""Matches one character a shown paragraph may not hold."""

LAYOUT = "\t\n\r"
"""The control characters a caller may allow besides the table: tab, newline, return."""


@lru_cache(maxsize=8)
def _finder(also: str) -> re.Pattern[str]:
    if not set(also) <= set(LAYOUT):
        raise ValueError(f"only {LAYOUT!r} may be allowed besides the table, not {also!r}")
    escaped = "".join(f"\\u{ord(c):04x}" for c in sorted(set(also)))
    return re.compile(f"[^{escaped}{_BODY}]")


def first_unshowable(text: str, *, also: str = "") -> int | None:
    """Return the index of the first character of ``text`` that may not be shown, or None.

    ``also`` names layout characters allowed as well (``"\\n"`` for a paragraph).
    """
    found = _finder(also).search(text)
    return None if found is None else found.start()


def describe_unshowable(text: str, *, also: str = "") -> str | None:
    """Say which character of ``text`` may not be shown and where (None when all may)."""
    at = first_unshowable(text, also=also)
    if at is None:
        return None
    return (
        f"holds U+{ord(text[at]):04X} at position {at}: only letters, marks, numbers, "
        "punctuation, symbols and spaces can be shown (no control, format, private-use, "
        "unassigned, noncharacter or invisible character)"
    )


def make_showable(text: str, *, also: str = "") -> str:
    """Return ``text`` with every character that may not be shown replaced by U+FFFD.

    ``also`` names layout characters kept as they are (``"\\t\\n\\r"`` in a page's markup).
    """
    return _finder(also).sub("\ufffd", text)


def ranges_from(category: Any) -> list[tuple[int, int]]:
    """Return the allowed ranges under ``category`` (a code point's general category).

    The one definition of the rule in terms of the Unicode Character Database: a
    character is allowed when its category is in :data:`SHOWN_CATEGORIES` and it is
    not in :data:`INVISIBLE`.
    """
    invisible = {c for lo, hi, _ in INVISIBLE for c in range(lo, hi + 1)}
    out: list[tuple[int, int]] = []
    for code in range(0x110000):
        if code in invisible or category(chr(code)) not in SHOWN_CATEGORIES:
            continue
        if out and out[-1][1] == code - 1:
            out[-1] = (out[-1][0], code)
        else:
            out.append((code, code))
    return out


def table_text(version: str, ranges: Sequence[tuple[int, int]]) -> str:
    """Return the text of :mod:`effectbench._showable_table` for ``ranges`` of ``version``."""
    lines = [
        f'"""The characters that may be shown, as code point ranges, from Unicode {version}.',
        "",
        f"Generated by ``{GENERATE_COMMAND}``; do not edit. The rule is",
        ":func:`effectbench.showable.ranges_from`.",
        '"""',
        "",
        f'UNICODE_VERSION = "{version}"',
        '"""The Unicode version the table was generated from."""',
        "RANGES: tuple[tuple[int, int], ...] = (",
        *(f"    (0x{lo:04X}, 0x{hi:04X})," for lo, hi in ranges),
        ")",
        '"""The allowed code points: inclusive ranges, sorted, disjoint, not adjacent."""',
        "",
    ]
    return "\n".join(lines)


def generated_table() -> str:
    """Return the table as the pinned Unicode database makes it (the dev extras' package)."""
    try:
        ucd = importlib.import_module(PINNED_PACKAGE)
    except ImportError:
        raise SystemExit(
            f"{GENERATE_COMMAND}: needs {PINNED_PACKAGE} (the dev extras: make setup)"
        ) from None
    version = str(ucd.unidata_version)
    return table_text(version, ranges_from(ucd.category))
