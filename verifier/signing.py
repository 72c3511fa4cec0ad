"""Sign and verify submission bundles with Sigstore: one DSSE in-toto Statement per bundle.

What is signed: an in-toto Statement v1 whose subjects are every regular file
of the bundle folder except ``submission.sigstore.json`` (sorted POSIX
relative path and sha256), with our predicate type :data:`PREDICATE_TYPE`
naming the benchmark, the bundle's spec version and the tool version. The
Sigstore bundle (v0.3 JSON) is written to ``submission.sigstore.json``.

How it is verified, offline: sigstore's own ``Verifier`` under a trusted root
loaded explicitly (the pinned production root in :mod:`verifier.trust`, or a
``--trust-config`` file for a private instance), with a policy of the declared
signer's exact identity and issuer, plus the leaderboard's accepted issuers.
Then the payload type and predicate type must be ours and the subjects must
equal the folder's files exactly; every difference is reported file by file.
Each file is hashed once, streamed.

The bundle's files themselves (the walk, hashing, the Statement and the
subject comparison) live in :mod:`verifier.subjects`; ``SIGNATURE_FILE``,
``PREDICATE_TYPE`` and ``hash_file`` are re-exported here for existing callers.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import os
import stat
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.x509.oid import ObjectIdentifier
from sigstore.errors import CertValidationError, Error, VerificationError
from sigstore.models import Bundle, ClientTrustConfig, TrustedRoot
from sigstore.verify import Verifier, policy

from effectbench.errors import DataError, SigningError
from verifier.findings import Finding
from verifier.subjects import (
    PREDICATE_TYPE,
    SIGNATURE_FILE,
    build_statement,
    compare_subjects,
    hash_file,
    parse_subjects,
)
from verifier.trust import LEADERBOARD_POLICY, PINNED_TRUSTED_ROOT

__all__ = [
    "PAYLOAD_TYPE",
    "PREDICATE_TYPE",
    "SIGNATURE_FILE",
    "LeaderboardPolicy",
    "SignatureCheck",
    "SignerInfo",
    "certificate_identity",
    "hash_file",
    "load_policy",
    "load_trusted_root",
    "sign_bundle",
    "sign_bundle_checked",
    "verify_bundle_signature",
]

PAYLOAD_TYPE = "application/vnd.in-toto+json"
"""The DSSE payload type of an in-toto Statement."""
MAX_SIGNATURE_BYTES = 8 << 20
"""A Sigstore bundle for a submission is a few kilobytes; refuse anything absurd."""

GITHUB_ACTIONS_ISSUER = "https://token.actions.githubusercontent.com"
_ISSUER_OID = ObjectIdentifier("1.3.6.1.4.1.57264.1.1")


# -- results -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SignerInfo:
    """Who signed a bundle, as verified from the Sigstore certificate and log."""

    identity: str
    """The signer identity found in the certificate (an e-mail or a workflow URI)."""
    issuer: str
    """The OIDC issuer recorded in the certificate."""
    signed_at: str
    """The verified signing time, ISO 8601 UTC (``2025-01-31T12:00:00Z``)."""


@dataclass(frozen=True)
class SignatureCheck:
    """The outcome of checking one bundle's signature."""

    present: bool
    """``submission.sigstore.json`` exists in the folder."""
    findings: list[Finding] = field(default_factory=list)
    """Every reason the signature is not accepted; empty when verified."""
    signer: SignerInfo | None = None
    """The verified signer; set only when ``findings`` is empty."""

    @property
    def verified(self) -> bool:
        """The signature is present and every check passed."""
        return self.present and not self.findings and self.signer is not None


@dataclass(frozen=True)
class LeaderboardPolicy:
    """The OIDC issuers whose signatures the leaderboard ranks."""

    accepted_issuers: dict[str, str]
    """Issuer URL to a display name."""
    source: str

    def accepts(self, issuer: str) -> bool:
        """Return whether ``issuer`` is one the leaderboard accepts."""
        return issuer in self.accepted_issuers


# -- trust material ----------------------------------------------------------------------------


def _file_key(path: Path) -> tuple[str, int, int]:
    try:
        st = path.stat()
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror}", file=str(path)) from None
    return str(path.resolve()), st.st_mtime_ns, st.st_size


def load_trusted_root(trust_config: Path | None = None) -> TrustedRoot:
    """Load the trusted root: the pinned production root, or ``trust_config``.

    ``trust_config`` is either a sigstore ClientTrustConfig (``trustedRoot`` plus
    ``signingConfig``) or a bare TrustedRoot document. Nothing is read from a
    user cache or the network.
    """
    return _trusted_root_for(*_file_key(_trust_path(trust_config)))


def _trust_path(trust_config: Path | None) -> Path:
    return PINNED_TRUSTED_ROOT if trust_config is None else trust_config


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
            f"({type(exc).__name__}: {_first_line(exc)})",
            file=path,
        ) from None


@functools.lru_cache(maxsize=8)
def _verifier_for(path: str, mtime_ns: int, size: int) -> Verifier:
    """Build (once per file version) a sigstore Verifier over the trust file at ``path``."""
    root = _trusted_root_for(path, mtime_ns, size)
    try:
        return Verifier(trusted_root=root)
    except Error as exc:
        raise DataError(f"unusable trusted root: {_first_line(exc)}", file=path) from None


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


# -- verification ------------------------------------------------------------------------------


class _SignerMismatch(VerificationError):
    """The certificate verifies but names another signer (raised from our policy)."""

    def __init__(self, check: str, message: str) -> None:
        super().__init__(message)
        self.check = check
        self.message = message


def _cert_issuer(cert: x509.Certificate) -> str | None:
    try:
        value = cert.extensions.get_extension_for_oid(_ISSUER_OID).value
    except x509.ExtensionNotFound:
        return None
    raw = getattr(value, "value", b"")
    return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else None


def _cert_identities(cert: x509.Certificate) -> list[str]:
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return []
    found = [str(v) for v in san.get_values_for_type(x509.RFC822Name)]
    found += [str(v) for v in san.get_values_for_type(x509.UniformResourceIdentifier)]
    return sorted(found)


class _DeclaredSignerPolicy:
    """Exactly ``policy.Identity(identity, issuer)``, split so a mismatch names its cause."""

    def __init__(self, identity: str, issuer: str) -> None:
        self._identity = identity
        self._issuer = issuer
        self._issuer_policy = policy.OIDCIssuer(issuer)
        self._identity_policy = policy.Identity(identity=identity)

    def verify(self, cert: x509.Certificate) -> None:
        """Raise :class:`_SignerMismatch` unless ``cert`` names the declared signer."""
        try:
            self._issuer_policy.verify(cert)
        except VerificationError:
            raise _SignerMismatch(
                "signature.wrong_issuer",
                f"the signing certificate was issued for OIDC issuer {_cert_issuer(cert)!r}, "
                f"but submission.json declares signer.issuer {self._issuer!r}",
            ) from None
        try:
            self._identity_policy.verify(cert)
        except VerificationError:
            names = ", ".join(_cert_identities(cert)) or "none"
            raise _SignerMismatch(
                "signature.wrong_identity",
                f"the bundle was signed by {names}, "
                f"but submission.json declares signer.identity {self._identity!r}",
            ) from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]


def _classify_verification_error(exc: Exception) -> Finding:
    if isinstance(exc, _SignerMismatch):
        return Finding(exc.check, exc.message, file=SIGNATURE_FILE)
    text = _first_line(exc)
    untrusted = isinstance(exc, CertValidationError) or text.startswith(
        ("failed to verify SCT", "invalid log entry", "failed to build timestamp certificate")
    )
    if untrusted:
        return Finding(
            "signature.untrusted",
            "the signature does not chain to the trusted Sigstore root (a bundle from another "
            f"Sigstore instance, or a pinned root that needs updating): {text}",
            file=SIGNATURE_FILE,
        )
    return Finding(
        "signature.invalid",
        f"the Sigstore bundle does not verify: {text}",
        file=SIGNATURE_FILE,
    )


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _signing_time(raw: dict[str, Any], bundle: Bundle) -> str:
    """Return the time sigstore verified: the log's integrated time or the TSA time."""
    entry = raw["verificationMaterial"]["tlogEntries"][0]
    integrated = int(entry.get("integratedTime") or 0)
    if integrated and entry.get("inclusionPromise"):
        return _iso(datetime.fromtimestamp(integrated, UTC))
    data = bundle.verification_material.timestamp_verification_data
    times = [ts.tst_info.gen_time for ts in data.rfc3161_timestamps] if data else []
    return _iso(min(times)) if times else ""


def _malformed(message: str) -> Finding:
    return Finding("signature.malformed", message, file=SIGNATURE_FILE)


def _check_bundle(
    bundle_dir: Path,
    raw_bytes: bytes,
    *,
    identity: str,
    issuer: str,
    verifier: Verifier,
    leaderboard: LeaderboardPolicy | None,
) -> SignatureCheck:
    findings: list[Finding] = []
    if not identity or not issuer:
        return SignatureCheck(
            present=True,
            findings=[
                Finding(
                    "signature.no_signer",
                    "submission.json declares no signer (signer.identity and signer.issuer); "
                    "the signature cannot be attributed",
                    file="submission.json",
                    field="signer",
                )
            ],
        )
    if leaderboard is not None and not leaderboard.accepts(issuer):
        accepted = ", ".join(sorted(leaderboard.accepted_issuers))
        findings.append(
            Finding(
                "signature.issuer_not_accepted",
                f"OIDC issuer {issuer!r} is not accepted by the leaderboard policy "
                f"(accepted: {accepted})",
                file="submission.json",
                field="signer.issuer",
            )
        )
    try:
        raw = json.loads(raw_bytes)
        if not isinstance(raw, dict) or "dsseEnvelope" not in raw:
            return SignatureCheck(
                present=True,
                findings=[
                    *findings,
                    _malformed(
                        "not a Sigstore DSSE bundle (expected a v0.3 bundle with a dsseEnvelope, "
                        "as written by `effectbench sign`)"
                    ),
                ],
            )
        bundle = Bundle.from_json(raw_bytes)
    except (Error, ValueError, TypeError, KeyError, binascii.Error) as exc:
        return SignatureCheck(
            present=True,
            findings=[*findings, _malformed(f"not a valid Sigstore bundle: {_first_line(exc)}")],
        )
    try:
        payload_type, payload = verifier.verify_dsse(
            bundle, _DeclaredSignerPolicy(identity, issuer)
        )
    except VerificationError as exc:
        return SignatureCheck(present=True, findings=[*findings, _classify_verification_error(exc)])
    except (Error, ValueError, TypeError, KeyError, x509.ExtensionNotFound) as exc:
        return SignatureCheck(
            present=True,
            findings=[
                *findings,
                Finding(
                    "signature.invalid",
                    f"the Sigstore bundle does not verify: {_first_line(exc)}",
                    file=SIGNATURE_FILE,
                ),
            ],
        )
    if payload_type != PAYLOAD_TYPE:
        findings.append(
            Finding(
                "signature.payload_type",
                f"the signed payload type is {payload_type!r}, expected {PAYLOAD_TYPE!r}",
                file=SIGNATURE_FILE,
            )
        )
        return SignatureCheck(present=True, findings=findings)
    declared, problems = parse_subjects(payload)
    findings.extend(problems)
    if not problems:
        findings.extend(compare_subjects(bundle_dir, declared))
    if findings:
        return SignatureCheck(present=True, findings=findings)
    signer = SignerInfo(
        identity=identity,
        issuer=_cert_issuer(bundle.signing_certificate) or issuer,
        signed_at=_signing_time(raw, bundle),
    )
    return SignatureCheck(present=True, findings=[], signer=signer)


def verify_bundle_signature(
    bundle_dir: Path,
    *,
    identity: str,
    issuer: str,
    trust_config: Path | None = None,
    policy_file: Path | None = None,
) -> SignatureCheck:
    """Verify ``bundle_dir/submission.sigstore.json`` offline against the declared signer.

    ``identity`` and ``issuer`` are the signer declared in ``submission.json``.
    The trust root is the pinned production root unless ``trust_config`` names
    another (a ClientTrustConfig or TrustedRoot file); the accepted issuers come
    from the pinned leaderboard policy unless ``policy_file`` is given. Problems
    with the submission are returned as findings (family ``signature``); an
    unreadable trust root or policy file raises :class:`DataError`.
    """
    verifier = _verifier_for(*_file_key(_trust_path(trust_config)))
    leaderboard = load_policy(policy_file)
    path = bundle_dir / SIGNATURE_FILE
    if path.is_symlink():
        return SignatureCheck(
            present=True,
            findings=[_malformed(f"{SIGNATURE_FILE} is a symbolic link, not a regular file")],
        )
    if not path.exists():
        return SignatureCheck(
            present=False,
            findings=[
                Finding(
                    "signature.missing",
                    f"the bundle is not signed (no {SIGNATURE_FILE}); sign it with "
                    "`effectbench sign`, or pass --allow-unsigned for a local preview",
                    file=SIGNATURE_FILE,
                )
            ],
        )
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return SignatureCheck(present=True, findings=[_malformed("not a regular file")])
        if path.stat().st_size > MAX_SIGNATURE_BYTES:
            return SignatureCheck(
                present=True,
                findings=[_malformed(f"larger than {MAX_SIGNATURE_BYTES} bytes")],
            )
        raw_bytes = path.read_bytes()
    except OSError as exc:
        return SignatureCheck(present=True, findings=[_malformed(f"cannot read: {exc.strerror}")])
    return _check_bundle(
        bundle_dir,
        raw_bytes,
        identity=identity,
        issuer=issuer,
        verifier=verifier,
        leaderboard=leaderboard,
    )


# -- signing -----------------------------------------------------------------------------------


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
    path = bundle_dir / "submission.json"
    name = str(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError("missing: a bundle needs submission.json", file=name) from None
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
        return config, _verifier_for(*_file_key(PINNED_TRUSTED_ROOT))
    try:
        config = ClientTrustConfig.from_json(trust_config.read_text(encoding="utf-8"))
        config.signing_config  # noqa: B018 (validates the signing services now)
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror}", file=str(trust_config)) from None
    except (Error, ValueError, TypeError) as exc:
        raise DataError(
            f"not a sigstore client trust config with a signing config ({_first_line(exc)})",
            file=str(trust_config),
        ) from None
    return config, _verifier_for(*_file_key(trust_config))


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
        raise SigningError(f"cannot obtain an identity token: {_first_line(exc)}") from None


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
    leaderboard's issuer policy is not applied here; see :func:`load_policy`.
    """
    from sigstore.oidc import ExpiredIdentity, IdentityToken
    from sigstore.sign import SigningContext

    if not bundle_dir.is_dir():
        raise DataError("not a folder", file=str(bundle_dir))
    identity, issuer, spec_version = _declared_signer(bundle_dir)
    config, verifier = _load_signing_config(trust_config)
    raw_token = _identity_token(identity_token, config)
    token_identities, token_issuer = certificate_identity(raw_token)
    if identity not in token_identities or token_issuer != issuer:
        raise SigningError(
            f"refusing to sign {bundle_dir}: the identity token is for {token_identities[0]} "
            f"(issuer {token_issuer}), but submission.json declares signer {identity} "
            f"(issuer {issuer}); sign as the declared signer or correct signer in submission.json"
        )
    tmp = bundle_dir / f".{SIGNATURE_FILE}.tmp"
    if tmp.is_file() and not tmp.is_symlink():
        tmp.unlink()  # left by an interrupted run of ours; it must not become a subject
    statement = build_statement(bundle_dir, spec_version=spec_version)
    try:
        context = SigningContext.from_trust_config(config)
        with context.signer(IdentityToken(raw_token), cache=True) as signer:
            bundle = signer.sign_dsse(statement)
    except ExpiredIdentity:
        raise SigningError("the identity token has expired; get a fresh one") from None
    except Exception as exc:  # network and service errors of Fulcio/Rekor clients
        if isinstance(exc, SigningError):
            raise
        raise SigningError(
            f"Sigstore signing failed ({type(exc).__name__}): {_first_line(exc)}"
        ) from None
    raw_bytes = bundle.to_json().encode()
    check = _check_bundle(
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
