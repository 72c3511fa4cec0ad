"""Pinned trust material of the verifier: the Sigstore trusted root and the leaderboard policy.

The files are data (see ``README.md`` here); :mod:`verifier.signing` loads them
explicitly by path, never from a user cache and never from a submission.
"""

from __future__ import annotations

from pathlib import Path

TRUST_DIR = Path(__file__).resolve().parent
PINNED_TRUSTED_ROOT = TRUST_DIR / "trusted_root.json"
"""Sigstore public-good trusted root, as embedded in sigstore-python 4.5.1."""
LEADERBOARD_POLICY = TRUST_DIR / "leaderboard_policy.json"
"""The OIDC issuers the leaderboard accepts for a ranked signature."""
