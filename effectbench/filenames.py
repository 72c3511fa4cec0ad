"""The names of a bundle's files (and its line limit): one place, importable without the models.

:mod:`effectbench.bundle` re-exports them; the command line reads them here so
that its help costs no pydantic import.
"""

from __future__ import annotations

import os
from pathlib import Path

SUBMISSION_FILE = "submission.json"
"""The declaration and the claims (a :class:`~effectbench.bundle.Submission`)."""
EPISODES_FILE = "episodes.jsonl"
"""The scored episode rows, one JSON object per line."""
README_FILE = "README.md"
"""The submitter's optional notes (shown as plain text)."""
SIGNATURE_FILE = "submission.sigstore.json"
"""The optional Sigstore bundle; the one file the signature does not cover."""
BUNDLE_FILES = (SUBMISSION_FILE, EPISODES_FILE, README_FILE, SIGNATURE_FILE)
"""Every file a bundle of format 1 may hold; the first two are required."""
RECEIPTS_FILE = "receipts.jsonl"
"""Format 2: one receipt per line, line *i* the receipt of the row on line *i*."""
FRAMES_DIR = "frames"
"""Format 2: the folder of key frames (``<sha256>.webp``), each stored once."""
MAX_LINE_BYTES = 64 * 1024
"""Bytes of one ``episodes.jsonl`` line the verifier reads by default (a row is 1-2 KiB);
``effectbench import`` refuses a document row that would be longer."""


def cache_home() -> Path:
    """Return this user's EffectBench cache home (``$XDG_CACHE_HOME`` or ``~/.cache``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "effectbench"


def site_cache_home() -> Path:
    """Return the default folder of the site build's content caches."""
    return cache_home() / "site"
