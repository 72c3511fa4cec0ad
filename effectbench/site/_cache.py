"""The site's caches are sealed by this machine's key (:mod:`effectbench.sealed`, where the
seal lives so the verifier's machine-local reproduction records share it), and keyed in part
by the versions of the libraries their content depends on (:func:`add_versions`)."""

from __future__ import annotations

from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from effectbench.sealed import CacheSeal, cache_home, default_seal


def add_versions(digest: Any, dists: Iterable[str]) -> None:
    """Feed ``digest`` (a hashlib object) each installed distribution's name and version,
    or that it is absent: a cache key that holds them is new whenever one changes."""
    for dist in dists:
        try:
            digest.update(f"{dist} {version(dist)}\0".encode())
        except PackageNotFoundError:
            digest.update(f"{dist} absent\0".encode())


__all__ = ["CacheSeal", "add_versions", "cache_home", "default_seal"]
