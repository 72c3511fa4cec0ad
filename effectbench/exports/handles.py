"""The handles an export names tasks and episodes by: the same on every machine.

A run-time handle (what a system under test is told, SPEC 5.3) is an HMAC of the task id under
the harness's secret key (``handle.key`` in the cache home, :func:`effectbench.run.view.
handle_for`): it must not map to a task, so it differs from machine to machine, and an export
named by it would differ too. An export is published (the site offers every accepted bundle's),
so it is named by a *published handle* instead, made by a separate derivation that shares
nothing with the run-time one:

* a task of a split whose task ids the pack's public manifest lists (``dev``): HMAC-SHA256 of
  the task id and trial under a key derived from the pack's fingerprint and the
  domain :data:`DOMAIN`. Every bundle of one pack names a task by the same handle, so a reader
  pairs two systems task by task. Anyone holding the manifest can compute it, so it maps to a
  task id: it reveals what the site already publishes of every accepted bundle (its rows, with
  their task ids, outcomes and the tasks' titles, on the submission page, in its
  ``episodes.jsonl.gz`` and ``receipts.jsonl.gz`` and in ``downloads/episodes.parquet``), and
  nothing of a run-time handle, whose key never leaves the harness;
* a task of the sequestered ``test`` split: its task id is not hashed at all (a handle that
  is a public function of the id would let anyone confirm a guessed id). The tasks are
  numbered in the order the bundle's ``episodes.jsonl`` first names them, and the number is
  hashed under a key derived from the fingerprint, the split and the bundle's content hash:
  deterministic for the bundle's bytes, and naming a task of that bundle only.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Iterable

from effectbench.schema import Split

DOMAIN = b"effectbench published export handle v1"
"""What a published handle's key is derived under (never the run-time handles' domain)."""

Handles = Callable[[str, int | None], str]
"""A task's handle (``trial`` None: every trial's, ``s-``) or an episode's (``ep-``)."""


def _mac(key: bytes, message: str, trial: int | None) -> str:
    part = "*" if trial is None else str(trial)
    mac = hmac.new(key, f"{message}\x00{part}".encode(), hashlib.sha256).hexdigest()
    return ("s-" if trial is None else "ep-") + mac[:20]


def pack_key(fingerprint: str) -> bytes:
    """The key of a public split's published handles: one per pack fingerprint."""
    return hashlib.sha256(DOMAIN + b"\x00pack\x00" + fingerprint.encode()).digest()


def published_handles(
    fingerprint: str, split: str, bundle_hash: str, task_ids: Iterable[str]
) -> Handles:
    """Return the published handles of one bundle's tasks (module docstring).

    ``task_ids`` are the bundle's rows' task ids in file order (a ``test`` split numbers its
    tasks by their first appearance there); ``bundle_hash`` is its content hash.
    """
    if not fingerprint:
        raise ValueError("a published handle needs the pack's fingerprint; the bundle has none")
    if split != Split.TEST.value:
        key = pack_key(fingerprint)
        return lambda task_id, trial: _mac(key, task_id, trial)
    if not bundle_hash:
        raise ValueError("a test split's published handles need the bundle's content hash")
    numbers: dict[str, int] = {}
    for task_id in task_ids:
        numbers.setdefault(task_id, len(numbers))
    key = hashlib.sha256(
        DOMAIN + b"\x00sequestered\x00" + f"{fingerprint}\x00{bundle_hash}".encode()
    ).digest()

    def handle(task_id: str, trial: int | None) -> str:
        if task_id not in numbers:
            raise KeyError("a task the bundle's rows do not name")
        return _mac(key, f"#{numbers[task_id]}", trial)

    return handle


__all__ = ["DOMAIN", "Handles", "pack_key", "published_handles"]
