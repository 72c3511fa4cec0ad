"""Cache entries this machine wrote, and only those: every entry carries a keyed MAC.

A cache entry (a verifier report, a bundle's flattened rows, a rendered chart, a
reproduction record of this machine's own re-run, :mod:`verifier.records`)
is trusted as if the build had just made it, so an entry planted by someone
else (a ``.cache`` folder committed to the repository, a cache restored from
another machine) must never be read. Each entry is written with an
HMAC-SHA256 over its cache key and its bytes, under a secret key that lives in
this user's cache home (``$XDG_CACHE_HOME/effectbench/cache.key``, never in the
repository or the cache folder itself) and is made on first use. An entry
whose MAC does not verify is ignored (and rebuilt), so the cache is never
trusted across machines: a fresh CI machine starts with a fresh key.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson

from effectbench.filenames import cache_home

__all__ = ["CacheSeal", "cache_home", "default_seal", "machine_key"]

_MAC_BYTES = 32


def machine_key(path: Path) -> bytes:
    """Return the secret of ``path``, made (0600, exclusively) when it does not exist yet.

    When the cache home cannot be written a key for this process only is used:
    nothing cached survives the build, and nothing planted is trusted.
    """
    try:
        data = path.read_bytes()
        if len(data) >= _MAC_BYTES:
            return data
    except OSError:
        pass
    secret = secrets.token_bytes(_MAC_BYTES)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(secret)
        return secret
    except FileExistsError:
        return machine_key(path) if path.stat().st_size >= _MAC_BYTES else secret
    except OSError:
        return secret


class CacheSeal:
    """Seals cache entries with a MAC under a secret key, and checks the seal on read."""

    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    def mac(self, key: str, data: bytes) -> bytes:
        """Return the MAC of entry ``key`` holding ``data``."""
        message = hashlib.sha256(data).digest()
        return hmac.new(self._secret, key.encode() + b"\0" + message, hashlib.sha256).digest()

    def seal(self, key: str, data: bytes) -> bytes:
        """Return the bytes to store for entry ``key``: the MAC, then ``data``."""
        return self.mac(key, data) + data

    def open(self, key: str, stored: bytes) -> bytes | None:
        """Return the data of a stored entry, or None when its MAC does not verify."""
        mac, data = stored[:_MAC_BYTES], stored[_MAC_BYTES:]
        if len(mac) != _MAC_BYTES or not hmac.compare_digest(mac, self.mac(key, data)):
            return None
        return data

    def read(self, key: str, path: Path) -> bytes | None:
        """Return the data of the entry stored at ``path``, or None (absent, or not ours)."""
        try:
            stored = path.read_bytes()
        except OSError:
            return None
        return self.open(key, stored)

    def read_object(self, key: str, path: Path) -> dict[str, Any] | None:
        """Return the entry stored at ``path`` as a JSON object, or None (absent, not ours,
        or not a JSON object)."""
        data = self.read(key, path)
        if data is None:
            return None
        try:
            found = orjson.loads(data)
        except orjson.JSONDecodeError:
            return None
        return found if isinstance(found, dict) else None

    def write(self, key: str, path: Path, data: bytes) -> None:
        """Store ``data`` as entry ``key`` at ``path`` (written whole, then renamed; on an
        ``OSError`` nothing is left behind and the error is raised)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_bytes(self.seal(key, data))
            tmp.replace(path)
        except OSError:
            tmp.unlink(missing_ok=True)  # a full disk leaves no partial file behind
            raise


@lru_cache(maxsize=1)
def default_seal() -> CacheSeal:
    """Return the seal of this user's machine key (made on first use)."""
    return CacheSeal(machine_key(cache_home() / "cache.key"))
