"""Certificates for a TLS Dask cluster on 127.0.0.1: a cluster CA and its members, or a stranger."""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from time_machine import escape_hatch


def _name(text: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])


def _system_now() -> datetime.datetime:
    """The system clock's time, which OpenSSL checks a certificate's validity window by.

    ``scripts/suite_on_dates.py`` moves only Python's clock (time-machine); its escape hatch
    reads the system clock then, and answers only while a move is on.
    """
    if escape_hatch.is_travelling():
        return datetime.datetime.fromtimestamp(escape_hatch.time.time(), datetime.UTC)
    return datetime.datetime.now(datetime.UTC)


def certificates(folder: Path, who: str) -> dict[str, Path]:
    """Write a CA and one member certificate it signed (for 127.0.0.1); return the three files.

    ``who`` names the CA: certificates of one ``who`` admit each other, no one else's.
    """
    folder.mkdir(mode=0o700, exist_ok=True)
    now = _system_now()
    until = now + datetime.timedelta(hours=1)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder(not_valid_before=now, not_valid_after=until)
        .subject_name(_name(f"{who} CA"))
        .issuer_name(_name(f"{who} CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    loopback = x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    member = (
        x509.CertificateBuilder(not_valid_before=now, not_valid_after=until)
        .subject_name(_name(f"{who} member"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .add_extension(loopback, critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    files = {
        "ca": folder / f"{who}-ca.pem",
        "cert": folder / f"{who}-member.pem",
        "key": folder / f"{who}-member.key",
    }
    files["ca"].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files["cert"].write_bytes(member.public_bytes(serialization.Encoding.PEM))
    files["key"].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return files
