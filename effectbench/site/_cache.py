"""The site's caches are sealed by this machine's key (:mod:`effectbench.sealed`, where the
seal lives so the verifier's machine-local reproduction records share it)."""

from __future__ import annotations

from effectbench.sealed import CacheSeal, cache_home, default_seal

__all__ = ["CacheSeal", "cache_home", "default_seal"]
