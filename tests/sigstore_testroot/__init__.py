"""A private Sigstore trust root for hermetic tests (never for production use).

``shared_instance()`` starts one :class:`SigstoreTestInstance` per process
(stand-in Fulcio and Rekor v1 on 127.0.0.1, a CT log, a test OIDC key) and
writes its ``trust_config.json`` (a sigstore ClientTrustConfig) and
``trusted_root.json`` to a temporary folder. Tests sign with sigstore's own
``Signer`` through that trust config and verify with sigstore's own
``Verifier`` under its trusted root.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

from ._instance import GITHUB_ACTIONS, GOOGLE, SIGSTORE_DEX, SigstoreTestInstance

__all__ = [
    "GITHUB_ACTIONS",
    "GOOGLE",
    "SIGSTORE_DEX",
    "SigstoreTestInstance",
    "new_instance",
    "shared_instance",
]


def new_instance(label: str = "effectbench-test") -> SigstoreTestInstance:
    """Start a fresh instance (its own keys) in a new temporary folder; removed at exit."""
    workdir = Path(tempfile.mkdtemp(prefix=f"{label}-"))
    atexit.register(shutil.rmtree, workdir, ignore_errors=True)  # runs after close (LIFO)
    instance = SigstoreTestInstance(workdir, label=label).start()
    atexit.register(instance.close)
    return instance


@functools.cache
def shared_instance() -> SigstoreTestInstance:
    """The process-wide instance most tests use (keys and servers made once)."""
    return new_instance()
