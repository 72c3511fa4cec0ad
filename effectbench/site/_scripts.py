"""The site's data scripts: JSON a page loads with a script tag (so it works from ``file://``
as well as over http), registered as ``window.VARIABLE[KEY]``.

A script that a page loads on request (a board's further rows, a compare board's systems, a
part of the system finder, a submission's receipts) carries its JSON gzip-compressed in
base64 (:func:`packed`): HTML and JSON of many like rows compress four- to sevenfold, and the
page inflates it with ``DecompressionStream`` (``site/assets/leaderboard.js``'s ``EB_INFLATE``,
which its ``EB_PARTS`` and the episode view use).
"""

from __future__ import annotations

import base64
import gzip
from collections.abc import Sequence
from typing import Any

import orjson

PARTS_LEVEL = 6
"""gzip level of the parts written on every build (a board's rows move with every new entry);
the receipts, kept between builds, take level 9."""


def registering(variable: str, key: str, data: Any) -> str:
    """Return a script that registers ``data`` as ``window.VARIABLE[key]``."""
    body = orjson.dumps(data).decode()
    name = orjson.dumps(key).decode()
    return f"window.{variable} = window.{variable} || {{}};\nwindow.{variable}[{name}] = {body};\n"


def packed(raw: bytes, level: int = 9) -> str:
    """Return the JSON ``raw`` gzip-compressed in base64, as a data script carries it (no name
    or time in the gzip header: the same JSON is the same script)."""
    return base64.b64encode(gzip.compress(raw, compresslevel=level, mtime=0)).decode("ascii")


def part_scripts(folder: str, variable: str, key: str, parts: Sequence[Any]) -> dict[str, str]:
    """Return the scripts of ``key``'s parts by site path: ``FOLDER/KEY-N.js``, each registering
    ``window.VARIABLE["KEY/N"]`` as the part's JSON :func:`packed` (what
    ``site/assets/leaderboard.js``'s ``EB_PARTS`` loads and inflates)."""
    return {
        f"{folder}/{key}-{i}.js": registering(
            variable, f"{key}/{i}", packed(orjson.dumps(part), PARTS_LEVEL)
        )
        for i, part in enumerate(parts)
    }
