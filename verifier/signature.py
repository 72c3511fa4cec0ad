"""The ``signature`` family: whether the submission is signed by the signer it declares.

The cryptographic check is :func:`effectbench.signatures.verify_bundle_signature`
(shared with signing); this step decides what an unsigned submission means
(ranked by reproduction, a preview, or ``signature.missing``) and files the
signature's findings.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from effectbench.bundle import SIGNATURE_FILE, SUBMISSION_FILE, SubmissionHeader
from effectbench.findings import CheckId
from verifier.inputs import Submitted
from verifier.report import FindingSink, SignerView, Step


@dataclass(frozen=True)
class SignatureResult:
    """What the signature step established."""

    signer: SignerView | None
    """The verified signer (None unless verified)."""
    step: Step


def _unsigned(
    sub: Submitted, sink: FindingSink, *, reproduced: bool, allow_unsigned: bool
) -> SignatureResult:
    if reproduced:
        return SignatureResult(
            None, Step(True, "unsigned; ranked because it reproduced row for row")
        )
    if allow_unsigned:
        note = "unsigned: accepted as a local preview only, never ranked"
        return SignatureResult(None, Step(True, note))
    if sub.kind == "bundle":
        where, how = SIGNATURE_FILE, "sign the bundle (effectbench sign)"
    else:
        where, how = sub.sub_file, "import it into a bundle (effectbench import) and sign that"
    sink.emit(
        CheckId.SIGNATURE_MISSING,
        f"the submission is not signed; {how}, or pass --allow-unsigned for a local preview",
        where,
    )
    return SignatureResult(None, Step(True))


def check_signature(
    sub: Submitted,
    header: SubmissionHeader | None,
    sink: FindingSink,
    *,
    trust_config: Path | None,
    allow_unsigned: bool,
    reproduced: bool,
) -> SignatureResult:
    """Verify the signature against the declared signer, or judge the lack of one."""
    if not sub.signature_present:
        return _unsigned(sub, sink, reproduced=reproduced, allow_unsigned=allow_unsigned)
    if header is None or sub.bundle_dir is None:
        return SignatureResult(None, Step(note=f"not run: {sub.sub_file} unreadable"))
    if header.signer is None:
        sink.emit(
            CheckId.SIGNATURE_NO_SIGNER,
            f"a signature is present but {SUBMISSION_FILE} declares no signer "
            "(set signer.identity and signer.issuer)",
            SUBMISSION_FILE,
            None,
            "signer",
        )
        return SignatureResult(None, Step())
    try:
        from effectbench.signatures import verify_bundle_signature  # sigstore: heavy
    except ImportError as exc:
        sink.emit(
            CheckId.SIGNATURE_UNAVAILABLE,
            f"signature verification is unavailable: {exc}",
            SIGNATURE_FILE,
        )
        return SignatureResult(None, Step())
    result = verify_bundle_signature(
        sub.bundle_dir,
        identity=header.signer.identity,
        issuer=header.signer.issuer,
        trust_config=trust_config,
    )
    for finding in result.findings:
        sink.add(finding)
    if result.signer is None:
        if not result.findings:
            sink.emit(CheckId.SIGNATURE_INVALID, "the signature did not verify", SIGNATURE_FILE)
        return SignatureResult(None, Step())
    s = result.signer
    view = SignerView(identity=s.identity, issuer=s.issuer, signed_at=s.signed_at)
    return SignatureResult(view, Step(note=f"signed by {s.identity} ({s.issuer}) at {s.signed_at}"))
