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
from effectbench.findings import CheckId, Family
from verifier.inputs import Submitted
from verifier.references import identity_problem, listed_reference
from verifier.report import FindingSink, SignerView, Step


@dataclass(frozen=True)
class SignatureResult:
    """What the signature step established."""

    signer: SignerView | None
    """The verified signer (None unless verified)."""
    step: Step
    ranked_unsigned: bool = False
    """Unsigned, yet ranked: a listed reference bundle that re-ran row for row."""
    verified_at: str = ""
    """The signature's log time, or a listed reference bundle's date (else empty)."""


def _reproduced(
    sub: Submitted, header: SubmissionHeader, sink: FindingSink, references: Path | None
) -> SignatureResult | None:
    """Rank a re-run bundle unsigned only when it is a listed reference bundle.

    Returns None (with its finding) when it is not one, so the unsigned rule applies.
    """
    problem = identity_problem(header.system, sub.has_readme)
    if problem is not None:
        sink.emit(
            CheckId.SIGNATURE_REPRODUCED_IDENTITY,
            f"the rows re-ran row for row, but a re-run proves numbers, not a name: {problem}; "
            "sign the bundle (effectbench sign) to show your own name, URL and README",
            SUBMISSION_FILE,
            None,
            "system",
        )
        return None
    entry, where = listed_reference(sub.content_hash, sub.path.name, references)
    if entry is None:
        sink.emit(
            CheckId.SIGNATURE_REPRODUCED_UNLISTED,
            f"the rows re-ran row for row, but content hash {sub.content_hash} is not one of "
            f"the maintainers' reference bundles{where}; sign the bundle (effectbench sign)",
            SIGNATURE_FILE,
        )
        return None
    note = "unsigned; ranked as a listed reference bundle whose re-run matched its rows"
    return SignatureResult(None, Step(True, note), ranked_unsigned=True, verified_at=entry.date)


def _unsigned(
    sub: Submitted,
    header: SubmissionHeader | None,
    sink: FindingSink,
    *,
    reproduced: bool,
    allow_unsigned: bool,
    references: Path | None,
) -> SignatureResult:
    if reproduced and header is not None:
        scratch = FindingSink()
        ranked = _reproduced(sub, header, scratch, references)
        if ranked is not None:
            return ranked
        if not allow_unsigned:
            for finding in scratch.kept[Family.SIGNATURE]:
                sink.add(finding)
            return SignatureResult(None, Step(True))
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
    references: Path | None = None,
) -> SignatureResult:
    """Verify the signature against the declared signer, or judge the lack of one.

    ``references`` is the reference list (default: the verifier's
    :data:`~verifier.references.REFERENCE_FILE`).
    """
    if not sub.signature_present:
        return _unsigned(
            sub,
            header,
            sink,
            reproduced=reproduced,
            allow_unsigned=allow_unsigned,
            references=references,
        )
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
        spec_version=header.spec_version,
    )
    for finding in result.findings:
        sink.add(finding)
    if result.signer is None:
        if not result.findings:
            sink.emit(CheckId.SIGNATURE_INVALID, "the signature did not verify", SIGNATURE_FILE)
        return SignatureResult(None, Step())
    s = result.signer
    view = SignerView(identity=s.identity, issuer=s.issuer, signed_at=s.signed_at)
    note = f"signed by {s.identity} ({s.issuer}) at {s.signed_at}"
    return SignatureResult(view, Step(note=note), verified_at=s.signed_at)
