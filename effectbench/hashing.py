"""The canonical JSON encoding and the hashes built on it (one place for each).

Byte-compatible with the reference implementation of SPEC v1.0.0:
``"sha256:" + sha256(json.dumps(obj, sort_keys=True, separators=(",", ":")))``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(obj: Any) -> str:
    """Return the canonical JSON text of ``obj`` (sorted keys, no spaces)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def canonical_hash(obj: Any) -> str:
    """Return ``"sha256:<hex>"`` over the canonical JSON of ``obj``."""
    return "sha256:" + hashlib.sha256(canonical_json(obj).encode("utf-8")).hexdigest()


def trial_tag(task_id: str, trial: int) -> str:
    """Return the 12-hex-digit tag that makes trial ``trial`` of ``task_id`` unique."""
    return hashlib.sha256(f"{task_id}:{trial}".encode()).hexdigest()[:12]
