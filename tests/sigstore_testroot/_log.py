"""A Rekor-v1-like transparency log: RFC 6962 Merkle tree, signed checkpoint, SET.

Each accepted ``dsse/0.0.1`` proposal becomes a canonicalized body stored the
way Rekor v1 stores it (envelope hash, payload hash, signatures with the
PEM verifier); the response carries the inclusion proof with a signed
checkpoint and a signed entry timestamp over the RFC 8785 form of
``{body, integratedTime, logID, logIndex}``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

from ._pki import key_id

FILLER_LEAVES = 5
"""Entries logged before any real one, so proofs have both inner and border parts."""


def _leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def _node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """Return the largest power of two strictly below ``n`` (RFC 6962 section 2.1)."""
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def tree_hash(leaves: list[bytes]) -> bytes:
    """Return MTH(D[n]) over leaf hashes ``leaves``."""
    if len(leaves) == 1:
        return leaves[0]
    k = _split(len(leaves))
    return _node_hash(tree_hash(leaves[:k]), tree_hash(leaves[k:]))


def audit_path(m: int, leaves: list[bytes]) -> list[bytes]:
    """Return PATH(m, D[n]), the inclusion proof of leaf ``m``, bottom first."""
    if len(leaves) == 1:
        return []
    k = _split(len(leaves))
    if m < k:
        return audit_path(m, leaves[:k]) + [tree_hash(leaves[k:])]
    return audit_path(m - k, leaves[k:]) + [tree_hash(leaves[:k])]


def dsse_body(proposal: dict[str, Any]) -> bytes:
    """Return the canonicalized Rekor body for a ``dsse/0.0.1`` proposal."""
    content = proposal["spec"]["proposedContent"]
    envelope_text: str = content["envelope"]
    envelope = json.loads(envelope_text)
    payload = base64.b64decode(envelope["payload"])
    verifiers: list[str] = content["verifiers"]
    if len(verifiers) != 1 or len(envelope["signatures"]) != 1:
        raise ValueError("expected exactly one verifier and one signature")
    body = {
        "apiVersion": "0.0.1",
        "kind": "dsse",
        "spec": {
            "envelopeHash": {
                "algorithm": "sha256",
                "value": hashlib.sha256(envelope_text.encode()).hexdigest(),
            },
            "payloadHash": {"algorithm": "sha256", "value": hashlib.sha256(payload).hexdigest()},
            "signatures": [
                {"signature": envelope["signatures"][0]["sig"], "verifier": verifiers[0]}
            ],
        },
    }
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode()


class TransparencyLog:
    """An append-only log that answers like ``POST /api/v1/log/entries``."""

    def __init__(self, *, name: str = "rekor.effectbench.test") -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.log_id = key_id(self.key.public_key())
        self.name = name
        self.origin = f"{name} - 4242"
        self._leaves = [_leaf_hash(f"filler {i}".encode()) for i in range(FILLER_LEAVES)]
        self._lock = threading.Lock()

    def _sign(self, data: bytes) -> bytes:
        return self.key.sign(data, ec.ECDSA(hashes.SHA256()))

    def checkpoint(self, size: int, root: bytes) -> str:
        """Return the signed note for a tree of ``size`` leaves with root ``root``."""
        note = f"{self.origin}\n{size}\n{base64.b64encode(root).decode()}\n"
        sig = base64.b64encode(self.log_id[:4] + self._sign(note.encode())).decode()
        return f"{note}\n\u2014 {self.name} {sig}\n"

    def append(self, body: bytes, *, integrated_time: int | None = None) -> dict[str, Any]:
        """Log ``body``; return the Rekor v1 response ``{uuid: entry}``."""
        when = int(time.time()) if integrated_time is None else integrated_time
        with self._lock:
            index = len(self._leaves)
            self._leaves.append(_leaf_hash(body))
            leaves = list(self._leaves)
        size = len(leaves)
        root = tree_hash(leaves)
        body_b64 = base64.b64encode(body).decode()
        promise = {
            "body": body_b64,
            "integratedTime": when,
            "logID": self.log_id.hex(),
            "logIndex": index,
        }
        canonical = json.dumps(promise, sort_keys=True, separators=(",", ":")).encode()
        entry = {
            "body": body_b64,
            "integratedTime": when,
            "logID": self.log_id.hex(),
            "logIndex": index,
            "verification": {
                "inclusionProof": {
                    "checkpoint": self.checkpoint(size, root),
                    "hashes": [h.hex() for h in audit_path(index, leaves)],
                    "logIndex": index,
                    "rootHash": root.hex(),
                    "treeSize": size,
                },
                "signedEntryTimestamp": base64.b64encode(self._sign(canonical)).decode(),
            },
        }
        return {_leaf_hash(body).hex(): entry}
