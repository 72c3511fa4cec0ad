"""Sign a submission bundle with Sigstore keyless signing, verifying the result before writing.

The identity comes from an OIDC token (given, ambient CI credentials, or the
browser flow); Fulcio certifies it, the DSSE envelope over the bundle's
in-toto Statement (:func:`~effectbench.signatures.subjects.build_statement`) is
logged, and the fresh signature must pass the same offline check the verifier
runs (:func:`~effectbench.signatures.verify.check_signature_bytes`) before
``submission.sigstore.json`` is written.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from pathlib import Path
from typing import Any

from sigstore import dsse
from sigstore.errors import Error
from sigstore.models import ClientTrustConfig
from sigstore.verify import Verifier

from effectbench.bundle import SIGNATURE_FILE, SUBMISSION_FILE
from effectbench.errors import DataError, SigningError
from effectbench.signatures._text import first_line
from effectbench.signatures.subjects import build_statement
from effectbench.signatures.trust import trusted_verifier
from effectbench.signatures.verify import SignatureCheck, check_signature_bytes

__all__ = [
    "GITHUB_ACTIONS_ISSUER",
    "certificate_identity",
    "sign_bundle",
    "sign_bundle_checked",
    "sign_statement",
]

GITHUB_ACTIONS_ISSUER = "https://token.actions.githubusercontent.com"
"""The OIDC issuer of GitHub Actions tokens (its identities are workflow URIs)."""


def _jwt_claims(raw_token: str) -> dict[str, Any]:
    """Return the (unverified) claims of a JWT; sigstore has already validated its shape."""
    try:
        body = raw_token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except (IndexError, ValueError, binascii.Error):
        return {}
    return claims if isinstance(claims, dict) else {}


def certificate_identity(raw_token: str) -> tuple[list[str], str]:
    """Return the identities Fulcio may certify for an OIDC token, and the issuer.

    Fulcio's rules: a GitHub Actions token yields the workflow URI
    ``https://github.com/<job_workflow_ref>``; an e-mail issuer yields the
    e-mail; other issuers the e-mail or the ``sub`` claim, as configured. The
    issuer is the federated issuer when the token came through Sigstore's own
    OIDC federation. The most likely identity comes first.
    """
    from sigstore.oidc import IdentityError, IdentityToken

    try:
        token = IdentityToken(raw_token)
    except IdentityError as exc:
        raise SigningError(f"the identity token is not usable: {exc}") from None
    claims = _jwt_claims(raw_token)
    candidates: list[str] = []
    if token.issuer == GITHUB_ACTIONS_ISSUER and claims.get("job_workflow_ref"):
        candidates.append(f"https://github.com/{claims['job_workflow_ref']}")
    elif isinstance(claims.get("email"), str):
        candidates.append(claims["email"])
    if token.identity not in candidates:
        candidates.append(token.identity)
    return candidates, token.federated_issuer


def _declared_signer(bundle_dir: Path) -> tuple[str, str, str]:
    """Return (identity, issuer, spec_version) declared in ``submission.json``."""
    path = bundle_dir / SUBMISSION_FILE
    name = str(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"missing: a bundle needs {SUBMISSION_FILE}", file=name) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read: {exc}", file=name) from None
    except json.JSONDecodeError as exc:
        raise DataError(f"invalid JSON: {exc.msg}", file=name, line=exc.lineno) from None
    if not isinstance(doc, dict):
        raise DataError("expected a JSON object", file=name)
    signer = doc.get("signer")
    if signer is None:
        raise SigningError(
            f"{name}: signer is null; declare the expected signer "
            '("signer": {"identity": ..., "issuer": ...}) before signing'
        )
    if not isinstance(signer, dict):
        raise DataError("expected an object {identity, issuer}", file=name, field="signer")
    for key in ("identity", "issuer"):
        if not isinstance(signer.get(key), str) or not signer[key]:
            raise DataError("expected a non-empty string", file=name, field=f"signer.{key}")
    spec_version = doc.get("spec_version")
    if not isinstance(spec_version, str) or not spec_version:
        raise DataError("expected a semver string", file=name, field="spec_version")
    return signer["identity"], signer["issuer"], spec_version


def _load_signing_config(trust_config: Path | None) -> tuple[ClientTrustConfig, Verifier]:
    if trust_config is None:
        try:
            config = ClientTrustConfig.production()
        except Error as exc:
            raise SigningError(
                f"cannot fetch the Sigstore production configuration: {exc.diagnostics()}"
            ) from None
        return config, trusted_verifier()
    try:
        config = ClientTrustConfig.from_json(trust_config.read_text(encoding="utf-8"))
        config.signing_config  # noqa: B018 (validates the signing services now)
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror}", file=str(trust_config)) from None
    except (Error, ValueError, TypeError) as exc:
        raise DataError(
            f"not a sigstore client trust config with a signing config ({first_line(exc)})",
            file=str(trust_config),
        ) from None
    return config, trusted_verifier(trust_config)


def _identity_token(identity_token: str | None, config: ClientTrustConfig) -> str:
    """Return a raw OIDC token: the given one, ambient CI credentials, or the browser flow."""
    if identity_token:
        return identity_token
    from sigstore.oidc import IdentityError, Issuer, detect_credential

    try:
        ambient = detect_credential()
        if ambient:
            return ambient
        issuer = Issuer(config.signing_config.get_oidc_url())
        return str(issuer.identity_token())
    except (IdentityError, Error) as exc:
        raise SigningError(f"cannot obtain an identity token: {first_line(exc)}") from None


def _sign_dsse(config: ClientTrustConfig, raw_token: str, statement: dsse.Statement) -> bytes:
    """Sign ``statement`` as a DSSE envelope (Fulcio certificate, Rekor entry); return the
    Sigstore bundle's JSON bytes."""
    from sigstore.oidc import ExpiredIdentity, IdentityToken
    from sigstore.sign import SigningContext

    try:
        context = SigningContext.from_trust_config(config)
        with context.signer(IdentityToken(raw_token), cache=True) as signer:
            return signer.sign_dsse(statement).to_json().encode()
    except ExpiredIdentity:
        raise SigningError("the identity token has expired; get a fresh one") from None
    except Exception as exc:  # network and service errors of Fulcio/Rekor clients
        if isinstance(exc, SigningError):
            raise
        raise SigningError(
            f"Sigstore signing failed ({type(exc).__name__}): {first_line(exc)}"
        ) from None


def sign_statement(
    statement: dsse.Statement,
    *,
    identity_token: str | None = None,
    trust_config: Path | None = None,
) -> tuple[bytes, list[str], str]:
    """Sign any in-toto ``statement`` keyless (the token, ambient CI credentials or the
    browser flow); return the Sigstore bundle's bytes and the certificate's identities and
    issuer (what a verifier's identity policy will see)."""
    config, _ = _load_signing_config(trust_config)
    raw_token = _identity_token(identity_token, config)
    identities, issuer = certificate_identity(raw_token)
    return _sign_dsse(config, raw_token, statement), identities, issuer


def sign_bundle_checked(
    bundle_dir: Path,
    *,
    identity_token: str | None = None,
    trust_config: Path | None = None,
) -> tuple[Path, SignatureCheck]:
    """Sign ``bundle_dir`` and verify the result before writing it; return path and check.

    Refuses (:class:`SigningError`) when the token's certificate identity or
    issuer differs from the signer declared in ``submission.json``, when the
    folder holds anything but regular files, or when the fresh signature does
    not verify offline (for production, against the pinned root). The
    leaderboard's issuer policy is not applied here; see
    :func:`effectbench.signatures.trust.load_policy`.
    """
    if not bundle_dir.is_dir():
        raise DataError("not a folder", file=str(bundle_dir))
    identity, issuer, spec_version = _declared_signer(bundle_dir)
    config, verifier = _load_signing_config(trust_config)
    raw_token = _identity_token(identity_token, config)
    token_identities, token_issuer = certificate_identity(raw_token)
    if identity not in token_identities or token_issuer != issuer:
        raise SigningError(
            f"refusing to sign {bundle_dir}: the identity token is for {token_identities[0]} "
            f"(issuer {token_issuer}), but {SUBMISSION_FILE} declares signer {identity} "
            f"(issuer {issuer}); sign as the declared signer or correct signer in "
            f"{SUBMISSION_FILE}"
        )
    tmp = bundle_dir / f".{SIGNATURE_FILE}.tmp"
    if tmp.is_file() and not tmp.is_symlink():
        tmp.unlink()  # left by an interrupted run of ours; it must not become a subject
    raw_bytes = _sign_dsse(
        config, raw_token, build_statement(bundle_dir, spec_version=spec_version)
    )
    check = check_signature_bytes(
        bundle_dir,
        raw_bytes,
        identity=identity,
        issuer=issuer,
        verifier=verifier,
        leaderboard=None,
    )
    if not check.verified:
        reasons = "; ".join(f"{f.check}: {f.message}" for f in check.findings)
        raise SigningError(f"the fresh signature does not verify, nothing written: {reasons}")
    out = bundle_dir / SIGNATURE_FILE
    tmp.write_bytes(raw_bytes)
    os.replace(tmp, out)
    return out, check


def sign_bundle(
    bundle_dir: Path,
    *,
    identity_token: str | None = None,
    trust_config: Path | None = None,
) -> Path:
    """Sign ``bundle_dir`` with Sigstore; write and return ``submission.sigstore.json``.

    The identity comes from ``identity_token``, else ambient CI credentials
    (GitHub Actions with ``id-token: write``), else the interactive browser
    flow. ``trust_config`` selects a private Sigstore instance; by default the
    public-good instance is used. See :func:`sign_bundle_checked`.
    """
    path, _ = sign_bundle_checked(
        bundle_dir, identity_token=identity_token, trust_config=trust_config
    )
    return path
