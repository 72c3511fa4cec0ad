"""The canonical JSON encoding and the hashes built on it (one place for each).

Byte-compatible with the reference implementation of SPEC v1.0.0:
``"sha256:" + sha256(json.dumps(obj, sort_keys=True, separators=(",", ":")))``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from pathlib import Path
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


def episode_handle(key: bytes, task_id: str, trial: int | None) -> str:
    """Return the opaque handle a system under test knows an episode by (SPEC 5.3).

    ``ep-`` and 20 hex digits of HMAC-SHA256 under the harness's secret ``key``: distinct
    per (task, trial), and without the key it names no task, template or category. With
    ``trial`` ``None``, the handle of the task's every trial (an inspect sample), ``s-``.
    """
    part = "*" if trial is None else str(trial)
    mac = hmac.new(key, f"{task_id}\x00{part}".encode(), hashlib.sha256).hexdigest()
    return ("s-" if trial is None else "ep-") + mac[:20]


def hash_file(path: Path | str) -> str:
    """Return the sha256 hex digest of ``path``, read in chunks (never the whole file) by
    :func:`hashlib.file_digest`, which allocates no large buffer per file: a bundle's many
    small files (its frames) hash at the speed of the digest."""
    with Path(path).open("rb", buffering=0) as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def content_hash(file_digests: Mapping[str, str]) -> str:
    """Return the content hash of a bundle: the canonical hash of its files' sha256 by name.

    ``file_digests`` maps each relative file name to its sha256 hex digest (the
    signature file left out, as the signature leaves it out). Two folders with
    byte-identical files have the same content hash wherever they are and
    whatever they are called: the maintainers' reference and withdrawn lists
    name bundles by it.
    """
    return canonical_hash({"files": dict(sorted(file_digests.items()))})


def instance_mark(seed: str) -> str:
    """Return the 64-hex-digit mark every payload drawn from submission seed ``seed`` carries.

    The one rule for "which parts of a fresh instance come from its seed": a generated pack
    drawn from a submission seed writes parts of this mark into its names, identifiers, notes
    and amounts, so two seeds' payloads differ whatever the random draws give (the public dev
    split carries no mark, so no fresh payload ever equals a public one).
    """
    return canonical_hash({"effectbench_instance_mark": seed})[len("sha256:") :]


def submission_seed(commitment: Mapping[str, Any], beacon: Mapping[str, Any]) -> str:
    """Return the instance seed of a committed submission: the canonical hash of the
    commitment's transparency-log entry and the beacon value published after it.

    ``commitment`` holds the entry's ``log_id``, ``log_index``, ``integrated_time`` and
    ``body_hash`` (sha256 hex of its canonicalized body); ``beacon`` holds the beacon's
    ``chain``, ``round`` and ``randomness``. Nothing else goes into the seed.
    """
    return canonical_hash(
        {
            "commitment": {
                k: commitment[k] for k in ("log_id", "log_index", "integrated_time", "body_hash")
            },
            "beacon": {k: beacon[k] for k in ("chain", "round", "randomness")},
        }
    )
