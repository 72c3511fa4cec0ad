"""The system finder: a chunked index of the submission pages, queried from the search box.

The theme's search loads one index of every page it holds on every page with a search box;
at 10,000 submissions that index was 3.7 MB. Submission pages therefore stay out of it (the
theme's index keeps the site's own pages), and the build writes a finder index instead:

- ``search/systems-0.js`` registers ``window.EB_FIND["systems/0"]``: the word separator and,
  per bucket, how many parts it has. A bucket is keyed by the first two characters (code
  points) of a word of a system's name, lower-cased (the whole word when it is shorter), its
  file name the key's UTF-8 bytes in hex.
- ``search/systems/HEX-N.js`` (:func:`effectbench.site._scripts.part_scripts`) registers the
  bucket's N-th part: ``[name, slug, detail]`` of every submission with a word in that bucket,
  at most :data:`effectbench.site._prices.SHARD_BYTES` of JSON a part.

``site/assets/find.js`` loads the manifest on the first keystroke in the search box, then the
one bucket of the query's most selective word, and lists the systems whose words start with
every word of the query, beside the theme's own results. What a query fetches is that bucket,
never the whole index.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from effectbench.site._prices import chunked
from effectbench.site._scripts import part_scripts

SEPARATOR = r"""[\s\-_,:;!=\[\]()"'/<>.&]+"""
"""What splits a system's name into words: white space and punctuation (the theme's search
splits page text at the same characters, ``mkdocs.yml``). ``find.js`` reads it from the
manifest, so a query is split as the names were."""

KEY_CHARS = 2
"""A bucket's key: this many first characters of a word."""

FOLDER = "search/systems"


@dataclass(frozen=True)
class Findable:
    """A submission page the finder lists: the system's name, the page's slug and a line
    about it (pack, substrates, date)."""

    name: str
    slug: str
    detail: str


def words(text: str) -> list[str]:
    """Return the lower-cased words of ``text``, split at :data:`SEPARATOR`."""
    return [w for w in re.split(SEPARATOR, text.lower()) if w]


def bucket_key(word: str) -> str:
    """Return the bucket of a word: its first :data:`KEY_CHARS` characters, in hex of their
    UTF-8 bytes (a safe file name for any letters)."""
    return word[:KEY_CHARS].encode("utf-8").hex()


def find_scripts(pages: Iterable[Findable]) -> dict[str, str]:
    """Return the finder's scripts by site path: the manifest and every bucket's parts.

    A page is in the bucket of each distinct key among its name's words, once; the entries of
    a bucket are in name order, then slug order.
    """
    buckets: dict[str, list[Findable]] = {}
    for page in pages:
        for key in dict.fromkeys(bucket_key(w) for w in words(page.name)):
            buckets.setdefault(key, []).append(page)
    files: dict[str, str] = {}
    counts: dict[str, int] = {}
    for key in sorted(buckets):
        entries = [[p.name, p.slug, p.detail] for p in sorted(buckets[key], key=_order)]
        parts = chunked(entries)
        counts[key] = len(parts)
        files.update(part_scripts(FOLDER, "EB_FIND_PART", key, parts))
    manifest = {"separator": SEPARATOR, "key_chars": KEY_CHARS, "buckets": counts}
    files.update(part_scripts("search", "EB_FIND", "systems", [manifest]))
    return files


def _order(page: Findable) -> tuple[str, str]:
    return (page.name.lower(), page.slug)
