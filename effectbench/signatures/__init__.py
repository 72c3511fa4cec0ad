"""Sigstore signatures of submission bundles: one DSSE in-toto Statement per bundle.

What is signed: an in-toto Statement v1 whose subjects are every regular file
of the bundle folder except ``submission.sigstore.json`` (sorted POSIX relative
path and sha256), with our predicate type :data:`PREDICATE_TYPE` naming the
benchmark, the bundle's spec version and the tool version. The Sigstore bundle
(v0.3 JSON) is written to ``submission.sigstore.json``.

The package, one concern per module:

* :mod:`~effectbench.signatures.trust`: the pinned trusted root and the
  leaderboard's issuer policy (or a private ``trust_config``);
* :mod:`~effectbench.signatures.subjects`: the bundle's files (walk, hash,
  the Statement, comparing a signed Statement with the folder);
* :mod:`~effectbench.signatures.verify`: the offline check the verifier runs;
* :mod:`~effectbench.signatures.sign`: keyless signing (OIDC, Fulcio, Rekor),
  which runs the same check on the fresh signature before writing it.

Signing and verifying share the check, so this package sits on the engine side;
the verifier (``verifier/``) only calls :func:`verify_bundle_signature`.
"""

from __future__ import annotations

from effectbench.bundle import SIGNATURE_FILE
from effectbench.signatures.sign import certificate_identity, sign_bundle, sign_bundle_checked
from effectbench.signatures.subjects import PREDICATE_TYPE, build_statement, hash_file
from effectbench.signatures.trust import (
    PINNED_TRUSTED_ROOT,
    LeaderboardPolicy,
    load_policy,
    load_trusted_root,
)
from effectbench.signatures.verify import (
    PAYLOAD_TYPE,
    SignatureCheck,
    SignerInfo,
    verify_bundle_signature,
)

__all__ = [
    "PAYLOAD_TYPE",
    "PINNED_TRUSTED_ROOT",
    "PREDICATE_TYPE",
    "SIGNATURE_FILE",
    "LeaderboardPolicy",
    "SignatureCheck",
    "SignerInfo",
    "build_statement",
    "certificate_identity",
    "hash_file",
    "load_policy",
    "load_trusted_root",
    "sign_bundle",
    "sign_bundle_checked",
    "verify_bundle_signature",
]
