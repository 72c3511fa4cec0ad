"""A private Fulcio-like certificate authority and CT log, built with ``cryptography``.

What sigstore-python 4.5.1 requires of a signing certificate (see
``../shared/notes/sigstore.md``): a P-384 root and a P-384 intermediate (path
length 0, EKU code signing), a P-256 leaf with an empty subject, a critical
SAN, KeyUsage digitalSignature, EKU code signing, the OIDC issuer in both the
raw ``.1.1`` and the DER ``.1.8`` extensions, and exactly one embedded SCT from
a CT log listed in the trusted root. The SCT signs the precertificate TBS,
which is the final TBS without the SCT extension, so the leaf is built twice.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID, ObjectIdentifier

SCT_LIST_OID = ObjectIdentifier("1.3.6.1.4.1.11129.2.4.2")
ISSUER_V1_OID = ObjectIdentifier("1.3.6.1.4.1.57264.1.1")
ISSUER_V2_OID = ObjectIdentifier("1.3.6.1.4.1.57264.1.8")
SOURCE_REPOSITORY_URI_OID = ObjectIdentifier("1.3.6.1.4.1.57264.1.12")

LEAF_LIFETIME = timedelta(minutes=10)
"""Fulcio's certificates live ten minutes; the log time must fall inside."""


def spki_der(key: ec.EllipticCurvePublicKey) -> bytes:
    """Return the DER SubjectPublicKeyInfo of ``key``."""
    return key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def key_id(key: ec.EllipticCurvePublicKey) -> bytes:
    """Return the RFC 6962 key id: sha256 over the DER SubjectPublicKeyInfo."""
    return hashlib.sha256(spki_der(key)).digest()


def der_utf8(text: str) -> bytes:
    """Return ``text`` as a DER UTF8String (short or long definite length)."""
    raw = text.encode("utf-8")
    return b"\x0c" + _der_length(len(raw)) + raw


def der_octet_string(raw: bytes) -> bytes:
    """Return ``raw`` wrapped in a DER OCTET STRING."""
    return b"\x04" + _der_length(len(raw)) + raw


def _der_length(n: int) -> bytes:
    if n < 0x80:
        return bytes([n])
    body = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(body)]) + body


def _tls_opaque16(raw: bytes) -> bytes:
    return struct.pack("!H", len(raw)) + raw


def _u24(n: int) -> bytes:
    return struct.pack("!I", n)[1:]


class CTLog:
    """A certificate transparency log that only signs SCTs (it keeps no tree)."""

    def __init__(self) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.log_id = key_id(self.key.public_key())

    def sct_list_extension(
        self, *, tbs_precert: bytes, issuer_key_hash: bytes, when: datetime
    ) -> x509.UnrecognizedExtension:
        """Return the SCT-list extension holding one precertificate SCT over ``tbs_precert``."""
        timestamp_ms = int(when.timestamp()) * 1000  # whole seconds: the verifier uses a float
        extensions = b""
        signed = (
            struct.pack("!BBQH", 0, 0, timestamp_ms, 1)  # v1, certificate_timestamp, precert
            + issuer_key_hash
            + _u24(len(tbs_precert))
            + tbs_precert
            + _tls_opaque16(extensions)
        )
        signature = self.key.sign(signed, ec.ECDSA(hashes.SHA256()))
        sct = (
            struct.pack("!B", 0)
            + self.log_id
            + struct.pack("!Q", timestamp_ms)
            + _tls_opaque16(extensions)
            + struct.pack("!BB", 4, 3)  # sha256, ecdsa
            + _tls_opaque16(signature)
        )
        sct_list = _tls_opaque16(_tls_opaque16(sct))
        return x509.UnrecognizedExtension(SCT_LIST_OID, der_octet_string(sct_list))

    def placeholder_extension(self) -> x509.UnrecognizedExtension:
        """Return a well-formed SCT-list extension with a dummy signature (first pass)."""
        sct = (
            b"\x00"
            + self.log_id
            + struct.pack("!Q", 0)
            + _tls_opaque16(b"")
            + struct.pack("!BB", 4, 3)
            + _tls_opaque16(b"\x00" * 8)
        )
        return x509.UnrecognizedExtension(
            SCT_LIST_OID, der_octet_string(_tls_opaque16(_tls_opaque16(sct)))
        )


@dataclass(frozen=True)
class LeafIdentity:
    """What the stand-in Fulcio puts in a certificate for one verified OIDC token."""

    san: x509.GeneralName
    issuer: str
    source_repository: str | None = None


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "effectbench-test"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


class CertificateAuthority:
    """A root and an intermediate, issuing short-lived code-signing leaves."""

    def __init__(self, *, label: str, not_before: datetime) -> None:
        self.root_key = ec.generate_private_key(ec.SECP384R1())
        self.intermediate_key = ec.generate_private_key(ec.SECP384R1())
        root_pub = self.root_key.public_key()
        inter_pub = self.intermediate_key.public_key()
        not_after = not_before + timedelta(days=3650)
        self.root = (
            x509.CertificateBuilder()
            .subject_name(_name(f"{label} root"))
            .issuer_name(_name(f"{label} root"))
            .public_key(root_pub)
            .serial_number(x509.random_serial_number())
            .not_valid_before(not_before)
            .not_valid_after(not_after)
            .add_extension(x509.BasicConstraints(ca=True, path_length=1), critical=True)
            .add_extension(_ca_key_usage(), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(root_pub), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(root_pub), critical=False
            )
            .sign(self.root_key, hashes.SHA384())
        )
        self.intermediate = (
            x509.CertificateBuilder()
            .subject_name(_name(f"{label} intermediate"))
            .issuer_name(self.root.subject)
            .public_key(inter_pub)
            .serial_number(x509.random_serial_number())
            .not_valid_before(not_before)
            .not_valid_after(not_after)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(_ca_key_usage(), critical=True)
            .add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), critical=False
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(inter_pub), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(root_pub), critical=False
            )
            .sign(self.root_key, hashes.SHA384())
        )

    def issue_leaf(
        self,
        public_key: ec.EllipticCurvePublicKey,
        identity: LeafIdentity,
        *,
        ct_log: CTLog,
        now: datetime | None = None,
    ) -> x509.Certificate:
        """Issue a Fulcio-profile leaf for ``public_key`` with one embedded SCT."""
        now = (now or datetime.now(UTC)).replace(microsecond=0)
        serial = x509.random_serial_number()
        issuer_key_hash = key_id(self.intermediate_key.public_key())

        def build(sct_ext: x509.UnrecognizedExtension) -> x509.Certificate:
            builder = (
                x509.CertificateBuilder()
                .subject_name(x509.Name([]))
                .issuer_name(self.intermediate.subject)
                .public_key(public_key)
                .serial_number(serial)
                .not_valid_before(now - timedelta(seconds=30))
                .not_valid_after(now + LEAF_LIFETIME)
                .add_extension(
                    x509.KeyUsage(
                        digital_signature=True,
                        content_commitment=False,
                        key_encipherment=False,
                        data_encipherment=False,
                        key_agreement=False,
                        key_cert_sign=False,
                        crl_sign=False,
                        encipher_only=False,
                        decipher_only=False,
                    ),
                    critical=True,
                )
                .add_extension(
                    x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), critical=False
                )
                .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), False)
                .add_extension(
                    x509.AuthorityKeyIdentifier.from_issuer_public_key(
                        self.intermediate_key.public_key()
                    ),
                    critical=False,
                )
                .add_extension(x509.SubjectAlternativeName([identity.san]), critical=True)
                .add_extension(
                    x509.UnrecognizedExtension(ISSUER_V1_OID, identity.issuer.encode()), False
                )
                .add_extension(
                    x509.UnrecognizedExtension(ISSUER_V2_OID, der_utf8(identity.issuer)), False
                )
            )
            if identity.source_repository is not None:
                builder = builder.add_extension(
                    x509.UnrecognizedExtension(
                        SOURCE_REPOSITORY_URI_OID, der_utf8(identity.source_repository)
                    ),
                    critical=False,
                )
            builder = builder.add_extension(sct_ext, critical=False)
            return builder.sign(self.intermediate_key, hashes.SHA384())

        draft = build(ct_log.placeholder_extension())
        tbs_precert = draft.tbs_precertificate_bytes
        leaf = build(
            ct_log.sct_list_extension(
                tbs_precert=tbs_precert, issuer_key_hash=issuer_key_hash, when=now
            )
        )
        # The SCT covers the TBS without its own extension; both passes must agree on it.
        assert leaf.tbs_precertificate_bytes == tbs_precert
        return leaf


def _ca_key_usage() -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=False,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=True,
        crl_sign=True,
        encipher_only=False,
        decipher_only=False,
    )


def pem(cert: x509.Certificate) -> str:
    """Return ``cert`` as PEM text."""
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def der(cert: x509.Certificate) -> bytes:
    """Return ``cert`` as DER bytes."""
    return cert.public_bytes(serialization.Encoding.DER)
