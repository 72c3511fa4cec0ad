"""Verify a bundle's Sigstore signature offline against the signer ``submission.json`` declares.

sigstore's own ``Verifier`` checks the DSSE envelope under an explicitly
loaded trusted root (:mod:`effectbench.signatures.trust`), with a policy of the
declared signer's exact identity and issuer, and the leaderboard's accepted
issuers. Then the payload type must be in-toto's, the statement ours, and its
subjects must equal the folder's files exactly (:mod:`effectbench.signatures.subjects`);
every difference is reported file by file. Problems of the submission are
findings (family ``signature``); an unusable trust root or policy file raises
:class:`~effectbench.errors.DataError`.
"""

from __future__ import annotations

import binascii
import json
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.x509.oid import ObjectIdentifier
from sigstore.errors import CertValidationError, Error, VerificationError
from sigstore.models import Bundle
from sigstore.verify import Verifier, policy

from effectbench.bundle import SIGNATURE_FILE, SUBMISSION_FILE
from effectbench.findings import CheckId, Finding
from effectbench.signatures._text import first_line
from effectbench.signatures.subjects import compare_subjects, parse_subjects, predicate_findings
from effectbench.signatures.trust import LeaderboardPolicy, load_policy, trusted_verifier

__all__ = [
    "MAX_SIGNATURE_BYTES",
    "PAYLOAD_TYPE",
    "SignatureCheck",
    "SignerInfo",
    "StatementProblem",
    "check_signature_bytes",
    "verify_bundle_signature",
    "verify_statement",
]

PAYLOAD_TYPE = "application/vnd.in-toto+json"
"""The DSSE payload type of an in-toto Statement."""
MAX_SIGNATURE_BYTES = 8 << 20
"""A Sigstore bundle for a submission is a few kilobytes; refuse anything absurd."""

_ISSUER_OID = ObjectIdentifier("1.3.6.1.4.1.57264.1.1")


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


class _SignerMismatch(VerificationError):
    """The certificate verifies but names another signer (raised from our policy)."""

    def __init__(self, check: CheckId, message: str) -> None:
        super().__init__(message)
        self.check = check
        self.message = message


def cert_issuer(cert: x509.Certificate) -> str | None:
    """Return the OIDC issuer Fulcio recorded in ``cert`` (None when absent)."""
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
                CheckId.SIGNATURE_WRONG_ISSUER,
                f"the signing certificate was issued for OIDC issuer {cert_issuer(cert)!r}, "
                f"but {SUBMISSION_FILE} declares signer.issuer {self._issuer!r}",
            ) from None
        try:
            self._identity_policy.verify(cert)
        except VerificationError:
            names = ", ".join(_cert_identities(cert)) or "none"
            raise _SignerMismatch(
                CheckId.SIGNATURE_WRONG_IDENTITY,
                f"the bundle was signed by {names}, "
                f"but {SUBMISSION_FILE} declares signer.identity {self._identity!r}",
            ) from None


_OUT_OF_VALIDITY = ("expired at time of signing", "not valid at", "is not yet valid", "expired")
"""How sigstore and cryptography say a certificate was not valid at the verified time."""
_UNTRUSTED = (
    "failed to verify SCT",
    "invalid log entry",
    "failed to build timestamp certificate",
    "not enough sources of verified time",
    "trusted root contains no transparency log",
    "Integrated time only supported",
)
"""Errors that mean: this bundle was made under another Sigstore instance (or log, or shard)."""
UNTRUSTED_HINT = (
    "a bundle from another Sigstore instance or log shard (a Rekor v2 bundle without a "
    "verified time source, for instance): update the pinned root, or pass --trust-config "
    "for a private instance"
)


def _classify_verification_error(exc: Exception) -> Finding:
    """Name the cause of a failed verification: the certificate's validity time, the trust
    root, or the signature itself (in that order of precedence)."""
    if isinstance(exc, _SignerMismatch):
        return Finding(exc.check, exc.message, file=SIGNATURE_FILE)
    text = first_line(exc)
    if any(marker in text for marker in _OUT_OF_VALIDITY):
        return Finding(
            CheckId.SIGNATURE_INVALID,
            "the signing certificate was not valid at the time the log recorded the signature "
            f"(a certificate lives ten minutes around it): {text}",
            file=SIGNATURE_FILE,
        )
    if isinstance(exc, CertValidationError) or any(m in text for m in _UNTRUSTED):
        return Finding(
            CheckId.SIGNATURE_UNTRUSTED,
            f"the signature does not chain to the trusted Sigstore root ({UNTRUSTED_HINT}): {text}",
            file=SIGNATURE_FILE,
        )
    return _invalid(text)


def _invalid(text: str) -> Finding:
    return Finding(
        CheckId.SIGNATURE_INVALID,
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
    return Finding(CheckId.SIGNATURE_MALFORMED, message, file=SIGNATURE_FILE)


def _refused(*findings: Finding) -> SignatureCheck:
    return SignatureCheck(present=True, findings=list(findings))


def _issuer_finding(issuer: str, leaderboard: LeaderboardPolicy | None) -> list[Finding]:
    if leaderboard is None or leaderboard.accepts(issuer):
        return []
    accepted = ", ".join(sorted(leaderboard.accepted_issuers))
    return [
        Finding(
            CheckId.SIGNATURE_ISSUER_NOT_ACCEPTED,
            f"OIDC issuer {issuer!r} is not accepted by the leaderboard policy "
            f"(accepted: {accepted})",
            file=SUBMISSION_FILE,
            field="signer.issuer",
        )
    ]


def _parse_bundle(raw_bytes: bytes) -> tuple[dict[str, Any], Bundle] | Finding:
    """Return the raw JSON and the sigstore bundle, or the ``signature.malformed`` finding."""
    try:
        raw = json.loads(raw_bytes)
        if not isinstance(raw, dict) or "dsseEnvelope" not in raw:
            return _malformed(
                "not a Sigstore DSSE bundle (expected a v0.3 bundle with a dsseEnvelope, "
                "as written by `effectbench sign`)"
            )
        return raw, Bundle.from_json(raw_bytes)
    except (Error, ValueError, TypeError, KeyError, binascii.Error) as exc:
        return _malformed(f"not a valid Sigstore bundle: {first_line(exc)}")


def check_signature_bytes(
    bundle_dir: Path,
    raw_bytes: bytes,
    *,
    identity: str,
    issuer: str,
    verifier: Verifier,
    leaderboard: LeaderboardPolicy | None,
    spec_version: str | None = None,
) -> SignatureCheck:
    """Check the Sigstore bundle ``raw_bytes`` as the signature of folder ``bundle_dir``.

    The steps, in order: a declared signer; the leaderboard's issuer policy (skipped
    when ``leaderboard`` is None); a well-formed DSSE bundle; sigstore's verification
    under ``verifier`` with the declared signer's policy; the in-toto payload type;
    the statement and its subjects against the folder's files.
    """
    if not identity or not issuer:
        return _refused(
            Finding(
                CheckId.SIGNATURE_NO_SIGNER,
                f"{SUBMISSION_FILE} declares no signer (signer.identity and signer.issuer); "
                "the signature cannot be attributed",
                file=SUBMISSION_FILE,
                field="signer",
            )
        )
    findings = _issuer_finding(issuer, leaderboard)
    parsed = _parse_bundle(raw_bytes)
    if isinstance(parsed, Finding):
        return _refused(*findings, parsed)
    raw, bundle = parsed
    try:
        payload_type, payload = verifier.verify_dsse(
            bundle, _DeclaredSignerPolicy(identity, issuer)
        )
    except VerificationError as exc:
        return _refused(*findings, _classify_verification_error(exc))
    except (Error, ValueError, TypeError, KeyError, x509.ExtensionNotFound) as exc:
        return _refused(*findings, _invalid(first_line(exc)))
    if payload_type != PAYLOAD_TYPE:
        wrong = Finding(
            CheckId.SIGNATURE_PAYLOAD_TYPE,
            f"the signed payload type is {payload_type!r}, expected {PAYLOAD_TYPE!r}",
            file=SIGNATURE_FILE,
        )
        return _refused(*findings, wrong)
    declared, problems = parse_subjects(payload)
    findings.extend(problems)
    if not problems:
        findings.extend(compare_subjects(bundle_dir, declared))
        if spec_version is not None:
            findings.extend(predicate_findings(payload, spec_version))
    if findings:
        return _refused(*findings)
    signer = SignerInfo(
        identity=identity,
        issuer=cert_issuer(bundle.signing_certificate) or issuer,
        signed_at=_signing_time(raw, bundle),
    )
    return SignatureCheck(present=True, findings=[], signer=signer)


def _read_signature(path: Path) -> bytes | SignatureCheck:
    """Return the signature file's bytes, or the check that refuses or misses it."""
    if path.is_symlink():
        return _refused(_malformed(f"{SIGNATURE_FILE} is a symbolic link, not a regular file"))
    if not path.exists():
        missing = Finding(
            CheckId.SIGNATURE_MISSING,
            f"the bundle is not signed (no {SIGNATURE_FILE}); sign it with "
            "`effectbench sign`, or pass --allow-unsigned for a local preview",
            file=SIGNATURE_FILE,
        )
        return SignatureCheck(present=False, findings=[missing])
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            return _refused(_malformed("not a regular file"))
        if info.st_size > MAX_SIGNATURE_BYTES:
            return _refused(_malformed(f"larger than {MAX_SIGNATURE_BYTES} bytes"))
        return path.read_bytes()
    except OSError as exc:
        return _refused(_malformed(f"cannot read: {exc.strerror}"))


def verify_bundle_signature(
    bundle_dir: Path,
    *,
    identity: str,
    issuer: str,
    trust_config: Path | None = None,
    policy_file: Path | None = None,
    spec_version: str | None = None,
) -> SignatureCheck:
    """Verify ``bundle_dir/submission.sigstore.json`` offline against the declared signer.

    ``identity`` and ``issuer`` are the signer declared in ``submission.json``.
    The trust root is the pinned production root unless ``trust_config`` names
    another (a ClientTrustConfig or TrustedRoot file); the accepted issuers come
    from the pinned leaderboard policy unless ``policy_file`` is given. With
    ``spec_version`` (the declared one), the signed predicate must name it. Problems
    with the submission are returned as findings (family ``signature``); an
    unreadable trust root or policy file raises :class:`DataError`.
    """
    verifier = trusted_verifier(trust_config)
    leaderboard = load_policy(policy_file)
    raw = _read_signature(bundle_dir / SIGNATURE_FILE)
    if isinstance(raw, SignatureCheck):
        return raw
    return check_signature_bytes(
        bundle_dir,
        raw,
        identity=identity,
        issuer=issuer,
        verifier=verifier,
        leaderboard=leaderboard,
        spec_version=spec_version,
    )


class StatementProblem(Exception):
    """Why a signed statement (not a bundle's signature) was not accepted."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        """``malformed`` (not a Sigstore DSSE bundle), ``untrusted`` (another Sigstore
        instance), ``invalid`` (the signature does not verify: forged or altered) or
        ``identity`` (signed by an identity the policy does not list)."""
        self.message = message


class _AnySigner:
    """``policy.AnyOf`` over exact (identity, issuer) pairs, naming the signer it refuses."""

    def __init__(self, signers: Sequence[tuple[str, str]]) -> None:
        self._signers = list(signers)

    def verify(self, cert: x509.Certificate) -> None:
        issuer = cert_issuer(cert)
        for identity, wanted in self._signers:
            try:
                policy.Identity(identity=identity, issuer=wanted).verify(cert)
                return
            except VerificationError:
                continue
        names = ", ".join(_cert_identities(cert)) or "no identity"
        raise _SignerMismatch(
            CheckId.SIGNATURE_WRONG_IDENTITY, f"signed by {names} (issuer {issuer!r})"
        )


def verify_statement(
    raw_bytes: bytes, signers: Sequence[tuple[str, str]], trust_config: Path | None = None
) -> tuple[dict[str, Any], SignerInfo]:
    """Verify a Sigstore DSSE bundle over an in-toto Statement signed by one of ``signers``
    ((identity, issuer) pairs) under the pinned root or ``trust_config``; return the
    statement and who signed it when. Raises :class:`StatementProblem` saying why not."""
    parsed = _parse_bundle(raw_bytes)
    if isinstance(parsed, Finding):
        raise StatementProblem("malformed", parsed.message)
    raw, bundle = parsed
    if not signers:
        raise StatementProblem("identity", "the policy lists no signer")
    try:
        payload_type, payload = trusted_verifier(trust_config).verify_dsse(
            bundle, _AnySigner(signers)
        )
    except VerificationError as exc:
        if isinstance(exc, _SignerMismatch):
            raise StatementProblem("identity", exc.message) from None
        finding = _classify_verification_error(exc)
        kind = "untrusted" if finding.check is CheckId.SIGNATURE_UNTRUSTED else "invalid"
        raise StatementProblem(kind, finding.message) from None
    except (Error, ValueError, TypeError, KeyError, x509.ExtensionNotFound) as exc:
        raise StatementProblem("invalid", first_line(exc)) from None
    if payload_type != PAYLOAD_TYPE:
        raise StatementProblem("malformed", f"the signed payload type is {payload_type!r}")
    try:
        statement = json.loads(payload)
    except ValueError:
        raise StatementProblem("malformed", "the signed payload is not JSON") from None
    if not isinstance(statement, dict):
        raise StatementProblem("malformed", "the signed payload is not a JSON object")
    cert = bundle.signing_certificate
    signer = SignerInfo(
        identity=(_cert_identities(cert) or [""])[0],
        issuer=cert_issuer(cert) or "",
        signed_at=_signing_time(raw, bundle),
    )
    return statement, signer
