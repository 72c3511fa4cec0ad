"""The pinned trust material: the Sigstore trusted root and the leaderboard's issuer policy.

The files beside this module are data (see ``README.md`` here). They are loaded
by explicit path, never from a user cache, the network or a submission; a
``trust_config`` file (a sigstore ClientTrustConfig or a bare TrustedRoot)
selects a private Sigstore instance instead. Each file is parsed once per
version (path, modification time, size).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

from sigstore.errors import Error
from sigstore.models import ClientTrustConfig, TrustedRoot
from sigstore.verify import Verifier

from effectbench.errors import DataError
from effectbench.signatures._text import first_line

__all__ = [
    "LEADERBOARD_POLICY",
    "PINNED_TRUSTED_ROOT",
    "TRUST_DIR",
    "LeaderboardPolicy",
    "load_policy",
    "load_trusted_root",
    "trusted_verifier",
]

TRUST_DIR = Path(__file__).resolve().parent
PINNED_TRUSTED_ROOT = TRUST_DIR / "trusted_root.json"
"""Sigstore public-good trusted root, as embedded in sigstore-python 4.5.1."""
LEADERBOARD_POLICY = TRUST_DIR / "leaderboard_policy.json"
"""The OIDC issuers the leaderboard accepts for a ranked signature."""


@dataclass(frozen=True)
class LeaderboardPolicy:
    """The OIDC issuers whose signatures the leaderboard ranks."""

    accepted_issuers: dict[str, str]
    """Issuer URL to a display name."""
    source: str
    """The policy file it was read from."""

    def accepts(self, issuer: str) -> bool:
        """Return whether ``issuer`` is one the leaderboard accepts."""
        return issuer in self.accepted_issuers


def _file_key(path: Path) -> tuple[str, int, int]:
    try:
        st = path.stat()
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror}", file=str(path)) from None
    return str(path.resolve()), st.st_mtime_ns, st.st_size


def _trust_path(trust_config: Path | None) -> Path:
    return PINNED_TRUSTED_ROOT if trust_config is None else trust_config


def load_trusted_root(trust_config: Path | None = None) -> TrustedRoot:
    """Load the trusted root: the pinned production root, or ``trust_config``.

    ``trust_config`` is either a sigstore ClientTrustConfig (``trustedRoot`` plus
    ``signingConfig``) or a bare TrustedRoot document. Nothing is read from a
    user cache or the network.
    """
    return _trusted_root_for(*_file_key(_trust_path(trust_config)))


def trusted_verifier(trust_config: Path | None = None) -> Verifier:
    """Return a sigstore ``Verifier`` over the pinned root or ``trust_config`` (built once)."""
    return _verifier_for(*_file_key(_trust_path(trust_config)))


@functools.lru_cache(maxsize=8)
def _trusted_root_for(path: str, mtime_ns: int, size: int) -> TrustedRoot:
    """Parse (once per file version) the trust file at ``path``."""
    del mtime_ns, size  # cache key only
    try:
        text = Path(path).read_text(encoding="utf-8")
        media_type = json.loads(text).get("mediaType", "")
        if str(media_type).startswith("application/vnd.dev.sigstore.clienttrustconfig"):
            return ClientTrustConfig.from_json(text).trusted_root
        return TrustedRoot.from_file(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read the trust root: {exc}", file=path) from None
    except (Error, ValueError, TypeError, AttributeError) as exc:
        raise DataError(
            "not a Sigstore trusted root or client trust config "
            f"({type(exc).__name__}: {first_line(exc)})",
            file=path,
        ) from None


@functools.lru_cache(maxsize=8)
def _verifier_for(path: str, mtime_ns: int, size: int) -> Verifier:
    """Build (once per file version) a sigstore Verifier over the trust file at ``path``."""
    root = _trusted_root_for(path, mtime_ns, size)
    try:
        return Verifier(trusted_root=root)
    except Error as exc:
        raise DataError(f"unusable trusted root: {first_line(exc)}", file=path) from None


def load_policy(policy_file: Path | None = None) -> LeaderboardPolicy:
    """Load the leaderboard's accepted-issuer policy (default: the pinned policy file)."""
    path = LEADERBOARD_POLICY if policy_file is None else policy_file
    return _policy_for(*_file_key(path))


@functools.lru_cache(maxsize=8)
def _policy_for(path: str, mtime_ns: int, size: int) -> LeaderboardPolicy:
    del mtime_ns, size
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read the leaderboard policy: {exc}", file=path) from None
    except json.JSONDecodeError as exc:
        raise DataError(f"invalid JSON: {exc.msg}", file=path, line=exc.lineno) from None
    if not isinstance(doc, dict) or doc.get("policy_version") != 1:
        raise DataError("expected an object with policy_version 1", file=path)
    entries = doc.get("accepted_issuers")
    if not isinstance(entries, list) or not entries:
        raise DataError("expected a non-empty list", file=path, field="accepted_issuers")
    accepted: dict[str, str] = {}
    for i, entry in enumerate(entries):
        where = f"accepted_issuers[{i}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("issuer"), str):
            raise DataError("expected {issuer, name}", file=path, field=where)
        issuer = entry["issuer"]
        if not issuer.startswith("https://"):
            raise DataError(f"issuer must be an https URL, got {issuer!r}", file=path, field=where)
        accepted[issuer] = str(entry.get("name", issuer))
    return LeaderboardPolicy(accepted_issuers=accepted, source=path)
