"""Signature verification of submission bundles, end to end under a private Sigstore root.

Bundles are signed by sigstore's own Signer against loopback Fulcio and Rekor
(``tests/sigstore_testroot``) and verified by sigstore's own Verifier; nothing
of sigstore is mocked. One rule per test: each way a bundle must be refused.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sigstore
from sigstore import dsse
from sigstore.errors import VerificationError
from sigstore.models import ClientTrustConfig
from sigstore.oidc import IdentityToken
from sigstore.sign import SigningContext
from sigstore_testroot import (
    GITHUB_ACTIONS,
    GOOGLE,
    SigstoreTestInstance,
    new_instance,
    shared_instance,
)
from sigstore_testroot.bundles import copy_bundle, write_bundle

from effectbench import SPEC_VERSION
from effectbench.errors import DataError
from effectbench.signatures import (
    PREDICATE_TYPE,
    SIGNATURE_FILE,
    SignatureCheck,
    hash_file,
    sign_bundle,
    verify_bundle_signature,
)
from effectbench.signatures.trust import PINNED_TRUSTED_ROOT

ALICE = "alice@example.org"
WORKFLOW = "effectbench-org/submissions/.github/workflows/submit.yml@refs/heads/main"
OUTSIDE_ISSUER = "https://oidc.example.test"


@pytest.fixture(scope="session")
def instance() -> SigstoreTestInstance:
    """The private Sigstore instance (keys and loopback servers made once per session)."""
    inst = shared_instance()
    inst.trusted_issuers.add(OUTSIDE_ISSUER)
    return inst


@pytest.fixture(scope="session")
def signed_template(
    instance: SigstoreTestInstance, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """A real bundle of a shipped baseline, signed once by alice (Google)."""
    bundle = write_bundle(tmp_path_factory.mktemp("tpl") / "bundle", identity=ALICE, issuer=GOOGLE)
    sign_bundle(
        bundle,
        identity_token=instance.email_token(ALICE),
        trust_config=instance.trust_config_path,
    )
    return bundle


@pytest.fixture
def bundle(signed_template: Path, tmp_path: Path) -> Path:
    """A private copy of the signed bundle that a test may tamper with."""
    return copy_bundle(signed_template, tmp_path / "bundle")


def verify(
    bundle: Path,
    instance: SigstoreTestInstance,
    *,
    identity: str = ALICE,
    issuer: str = GOOGLE,
    **kwargs: object,
) -> SignatureCheck:
    kwargs.setdefault("trust_config", instance.trust_config_path)
    return verify_bundle_signature(bundle, identity=identity, issuer=issuer, **kwargs)  # type: ignore[arg-type]


def checks(result: SignatureCheck) -> list[tuple[str, str | None]]:
    return [(f.check, f.file) for f in result.findings]


def test_sigstore_is_the_version_the_test_root_was_built_for() -> None:
    # The private root reproduces what sigstore 4.5.x checks; a new release may check more.
    assert sigstore.__version__.startswith("4.5.")


def test_good_bundle_is_accepted_repeatedly_with_identical_results(
    bundle: Path, instance: SigstoreTestInstance
) -> None:
    results = [verify(bundle, instance) for _ in range(3)]
    assert results[0] == results[1] == results[2]
    first = results[0]
    assert first.present and first.verified and first.findings == []
    assert first.signer is not None
    assert (first.signer.identity, first.signer.issuer) == (ALICE, GOOGLE)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", first.signer.signed_at)
    signed_at = datetime.strptime(first.signer.signed_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert abs(datetime.now(UTC) - signed_at) < timedelta(minutes=10)


def test_verification_is_offline(bundle: Path, instance: SigstoreTestInstance) -> None:
    before = list(instance.requests)
    assert verify(bundle, instance).verified
    assert instance.requests == before  # no call to the stand-in Fulcio or Rekor


def test_verification_never_reads_a_user_cache(
    bundle: Path, instance: SigstoreTestInstance, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", "/proc/nonexistent-home")
    monkeypatch.setenv("XDG_CACHE_HOME", "/proc/nonexistent-cache")
    monkeypatch.setenv("XDG_DATA_HOME", "/proc/nonexistent-data")
    assert verify(bundle, instance).verified
    assert checks(verify(bundle, instance, trust_config=None)) == [
        ("signature.untrusted", SIGNATURE_FILE)
    ]


def test_statement_subjects_are_every_file_sorted_with_sha256(
    bundle: Path,
) -> None:
    raw = json.loads((bundle / SIGNATURE_FILE).read_text())
    envelope = raw["dsseEnvelope"]
    assert envelope["payloadType"] == "application/vnd.in-toto+json"
    statement = json.loads(base64.b64decode(envelope["payload"]))
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    assert statement["predicateType"] == PREDICATE_TYPE
    names = [s["name"] for s in statement["subject"]]
    assert names == ["README.md", "episodes.jsonl", "receipts.jsonl", "submission.json"]
    for subject in statement["subject"]:
        data = (bundle / subject["name"]).read_bytes()
        assert subject["digest"] == {"sha256": hashlib.sha256(data).hexdigest()}
    predicate = statement["predicate"]
    assert predicate["benchmark"] == {"name": "effectbench", "spec_version": SPEC_VERSION}
    assert predicate["tool"]["name"] == "effectbench" and predicate["tool"]["version"]
    assert predicate["files"] == 4 and predicate["excluded"] == [SIGNATURE_FILE]


def test_github_actions_workflow_identity_is_accepted(
    instance: SigstoreTestInstance, tmp_path: Path
) -> None:
    identity = f"https://github.com/{WORKFLOW}"
    bundle = write_bundle(tmp_path / "gha", identity=identity, issuer=GITHUB_ACTIONS)
    sign_bundle(
        bundle,
        identity_token=instance.github_actions_token(WORKFLOW),
        trust_config=instance.trust_config_path,
    )
    result = verify(bundle, instance, identity=identity, issuer=GITHUB_ACTIONS)
    assert result.verified and result.signer is not None
    assert result.signer.identity == identity and result.signer.issuer == GITHUB_ACTIONS


def test_missing_signature_is_reported_as_missing(
    instance: SigstoreTestInstance, tmp_path: Path
) -> None:
    bundle = write_bundle(tmp_path / "unsigned", identity=ALICE, issuer=GOOGLE)
    result = verify(bundle, instance)
    assert not result.present and result.signer is None
    assert checks(result) == [("signature.missing", SIGNATURE_FILE)]
    assert "effectbench sign" in result.findings[0].message


def test_changed_file_is_refused(bundle: Path, instance: SigstoreTestInstance) -> None:
    path = bundle / "episodes.jsonl"
    original = path.read_bytes()
    path.write_bytes(original.replace(b'"effect_correct":true', b'"effect_correct":false', 1))
    assert path.read_bytes() != original
    result = verify(bundle, instance)
    assert checks(result) == [("signature.subject_changed", "episodes.jsonl")]
    assert "changed after signing" in result.findings[0].message
    assert result.signer is None


def test_added_file_is_refused(bundle: Path, instance: SigstoreTestInstance) -> None:
    (bundle / "notes.txt").write_text("added after signing\n")
    (bundle / "extra").mkdir()
    (bundle / "extra" / "more.json").write_text("{}\n")
    result = verify(bundle, instance)
    assert checks(result) == [
        ("signature.subject_added", "extra/more.json"),
        ("signature.subject_added", "notes.txt"),
    ]
    assert "not covered by the signature" in result.findings[0].message


def test_removed_file_is_refused(bundle: Path, instance: SigstoreTestInstance) -> None:
    (bundle / "README.md").unlink()
    result = verify(bundle, instance)
    assert checks(result) == [("signature.subject_removed", "README.md")]
    assert "missing from the bundle" in result.findings[0].message


def test_symlinked_file_is_refused_even_with_identical_content(
    bundle: Path, instance: SigstoreTestInstance, tmp_path: Path
) -> None:
    outside = tmp_path / "episodes-elsewhere.jsonl"
    outside.write_bytes((bundle / "episodes.jsonl").read_bytes())
    (bundle / "episodes.jsonl").unlink()
    (bundle / "episodes.jsonl").symlink_to(outside)
    result = verify(bundle, instance)
    assert checks(result) == [("signature.subject_symlink", "episodes.jsonl")]
    assert "symbolic link" in result.findings[0].message


def test_several_differences_are_each_reported_file_by_file(
    bundle: Path, instance: SigstoreTestInstance
) -> None:
    (bundle / "README.md").write_text("# edited\n")
    (bundle / "submission.json").unlink()
    (bundle / "zz.txt").write_text("new\n")
    assert checks(verify(bundle, instance)) == [
        ("signature.subject_changed", "README.md"),
        ("signature.subject_removed", "submission.json"),
        ("signature.subject_added", "zz.txt"),
    ]


def test_wrong_identity_is_refused(bundle: Path, instance: SigstoreTestInstance) -> None:
    result = verify(bundle, instance, identity="mallory@example.org")
    assert checks(result) == [("signature.wrong_identity", SIGNATURE_FILE)]
    assert ALICE in result.findings[0].message
    assert "mallory@example.org" in result.findings[0].message


def test_wrong_issuer_is_refused(bundle: Path, instance: SigstoreTestInstance) -> None:
    result = verify(bundle, instance, issuer="https://github.com/login/oauth")
    assert checks(result) == [("signature.wrong_issuer", SIGNATURE_FILE)]
    assert GOOGLE in result.findings[0].message


def test_issuer_outside_the_leaderboard_policy_is_refused(
    instance: SigstoreTestInstance, tmp_path: Path
) -> None:
    bundle = write_bundle(tmp_path / "outside", identity=ALICE, issuer=OUTSIDE_ISSUER)
    sign_bundle(
        bundle,
        identity_token=instance.email_token(ALICE, issuer=OUTSIDE_ISSUER),
        trust_config=instance.trust_config_path,
    )
    result = verify(bundle, instance, issuer=OUTSIDE_ISSUER)
    assert checks(result) == [("signature.issuer_not_accepted", "submission.json")]
    assert result.findings[0].field == "signer.issuer"
    assert "https://token.actions.githubusercontent.com" in result.findings[0].message
    # The same bundle passes under a policy that lists the issuer: the policy is what refused.
    policy = tmp_path / "policy.json"
    policy.write_text(
        json.dumps({"policy_version": 1, "accepted_issuers": [{"issuer": OUTSIDE_ISSUER}]})
    )
    assert verify(bundle, instance, issuer=OUTSIDE_ISSUER, policy_file=policy).verified


def test_bundle_from_another_root_is_refused(bundle: Path, instance: SigstoreTestInstance) -> None:
    other = new_instance("other-root")
    foreign = copy_bundle(bundle, bundle.parent / "foreign")
    (foreign / SIGNATURE_FILE).unlink()
    sign_bundle(
        foreign, identity_token=other.email_token(ALICE), trust_config=other.trust_config_path
    )
    assert verify(foreign, other, trust_config=other.trust_config_path).verified
    result = verify(foreign, instance)
    assert checks(result) == [("signature.untrusted", SIGNATURE_FILE)]
    assert "another Sigstore instance" in result.findings[0].message


def test_production_pinned_root_rejects_a_bundle_of_the_test_root(bundle: Path) -> None:
    result = verify_bundle_signature(bundle, identity=ALICE, issuer=GOOGLE)  # pinned default
    assert checks(result) == [("signature.untrusted", SIGNATURE_FILE)]
    assert json.loads(PINNED_TRUSTED_ROOT.read_text())["tlogs"][0]["baseUrl"] == (
        "https://rekor.sigstore.dev"
    )


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"this is not json", "signature.malformed"),
        (b'{"mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json"}', "signature.malformed"),
        (b"[]", "signature.malformed"),
    ],
)
def test_malformed_bundle_is_refused(
    bundle: Path, instance: SigstoreTestInstance, content: bytes, expected: str
) -> None:
    (bundle / SIGNATURE_FILE).write_bytes(content)
    result = verify(bundle, instance)
    assert checks(result) == [(expected, SIGNATURE_FILE)]
    assert result.present and result.signer is None


def test_truncated_bundle_is_refused_as_malformed(
    bundle: Path, instance: SigstoreTestInstance
) -> None:
    raw = json.loads((bundle / SIGNATURE_FILE).read_text())
    del raw["verificationMaterial"]["tlogEntries"][0]["inclusionProof"]
    (bundle / SIGNATURE_FILE).write_text(json.dumps(raw))
    assert checks(verify(bundle, instance)) == [("signature.malformed", SIGNATURE_FILE)]


def test_statement_edited_to_match_changed_files_fails_the_signature(
    bundle: Path, instance: SigstoreTestInstance
) -> None:
    # An attacker changes a file and rewrites the subject digest to match: the DSSE
    # signature (and the log entry's payload hash) no longer verify.
    path = bundle / "README.md"
    path.write_text("# rewritten\n")
    raw = json.loads((bundle / SIGNATURE_FILE).read_text())
    statement = json.loads(base64.b64decode(raw["dsseEnvelope"]["payload"]))
    for subject in statement["subject"]:
        if subject["name"] == "README.md":
            subject["digest"]["sha256"] = hash_file(path)
    payload = json.dumps(statement, separators=(",", ":")).encode()
    raw["dsseEnvelope"]["payload"] = base64.b64encode(payload).decode()
    (bundle / SIGNATURE_FILE).write_text(json.dumps(raw))
    result = verify(bundle, instance)
    assert checks(result) == [("signature.invalid", SIGNATURE_FILE)]


def test_signature_over_another_bundles_statement_is_refused(
    bundle: Path, instance: SigstoreTestInstance, tmp_path: Path
) -> None:
    # Same signer, valid signature, but over a different bundle (another baseline's rows).
    other = write_bundle(
        tmp_path / "other", identity=ALICE, issuer=GOOGLE, baseline="effect_verified"
    )
    sign_bundle(
        other, identity_token=instance.email_token(ALICE), trust_config=instance.trust_config_path
    )
    (bundle / SIGNATURE_FILE).write_bytes((other / SIGNATURE_FILE).read_bytes())
    result = verify(bundle, instance)
    assert checks(result) == [
        ("signature.subject_changed", "episodes.jsonl"),
        ("signature.subject_changed", "receipts.jsonl"),
        ("signature.subject_changed", "submission.json"),
    ]


def _subjects(bundle: Path) -> list[dsse.Subject]:
    return [
        dsse.Subject(name=name, digest=dsse.DigestSet(root={"sha256": hash_file(bundle / name)}))
        for name in ("README.md", "episodes.jsonl", "receipts.jsonl", "submission.json")
    ]


def _sign_statement(instance: SigstoreTestInstance, statement: dsse.Statement) -> str:
    config = ClientTrustConfig.from_json(instance.trust_config_path.read_text())
    context = SigningContext.from_trust_config(config)
    with context.signer(IdentityToken(instance.email_token(ALICE))) as signer:
        return signer.sign_dsse(statement).to_json()


def test_wrong_predicate_type_is_refused(bundle: Path, instance: SigstoreTestInstance) -> None:
    subjects = _subjects(bundle)
    statement = (
        dsse.StatementBuilder()
        .subjects(subjects)
        .predicate_type("https://slsa.dev/provenance/v1")
        .predicate({"buildDefinition": {}})
        .build()
    )
    (bundle / SIGNATURE_FILE).write_text(_sign_statement(instance, statement))
    result = verify(bundle, instance)
    assert checks(result) == [("signature.predicate_type", SIGNATURE_FILE)]
    assert "https://slsa.dev/provenance/v1" in result.findings[0].message


def test_statement_with_an_unsafe_subject_path_is_refused(
    bundle: Path, instance: SigstoreTestInstance
) -> None:
    statement = (
        dsse.StatementBuilder()
        .subjects(
            [dsse.Subject(name="../escape", digest=dsse.DigestSet(root={"sha256": "0" * 64}))]
        )
        .predicate_type(PREDICATE_TYPE)
        .predicate({"benchmark": {"name": "effectbench", "spec_version": "1.0.0"}})
        .build()
    )
    (bundle / SIGNATURE_FILE).write_text(_sign_statement(instance, statement))
    result = verify(bundle, instance)
    assert checks(result) == [("signature.statement", SIGNATURE_FILE)]
    assert "../escape" in result.findings[0].message


def test_signature_file_that_is_a_symlink_is_refused(
    bundle: Path, instance: SigstoreTestInstance, tmp_path: Path
) -> None:
    target = tmp_path / "sig.json"
    target.write_bytes((bundle / SIGNATURE_FILE).read_bytes())
    (bundle / SIGNATURE_FILE).unlink()
    (bundle / SIGNATURE_FILE).symlink_to(target)
    assert checks(verify(bundle, instance)) == [("signature.malformed", SIGNATURE_FILE)]


def test_no_declared_signer_is_refused(bundle: Path, instance: SigstoreTestInstance) -> None:
    result = verify(bundle, instance, identity="", issuer="")
    assert checks(result) == [("signature.no_signer", "submission.json")]


def test_unreadable_trust_config_is_a_data_error(bundle: Path, tmp_path: Path) -> None:
    bad = tmp_path / "trust.json"
    bad.write_text('{"mediaType": "nonsense"}')
    with pytest.raises(DataError) as err:
        verify_bundle_signature(bundle, identity=ALICE, issuer=GOOGLE, trust_config=bad)
    assert err.value.file == str(bad.resolve())
    with pytest.raises(DataError):
        verify_bundle_signature(
            bundle, identity=ALICE, issuer=GOOGLE, trust_config=tmp_path / "absent.json"
        )


def test_bad_policy_file_is_a_data_error(bundle: Path, tmp_path: Path) -> None:
    bad = tmp_path / "policy.json"
    bad.write_text('{"policy_version": 1, "accepted_issuers": [{"issuer": "http://plain"}]}')
    with pytest.raises(DataError) as err:
        verify_bundle_signature(bundle, identity=ALICE, issuer=GOOGLE, policy_file=bad)
    assert err.value.field == "accepted_issuers[0]"


def test_bare_trusted_root_file_is_accepted_as_trust_config(
    bundle: Path, instance: SigstoreTestInstance
) -> None:
    assert verify(bundle, instance, trust_config=instance.trusted_root_path).verified


@pytest.mark.parametrize("size", [0, 1, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, 3 << 20])
def test_hash_file_streams_to_the_same_digest(tmp_path: Path, size: int) -> None:
    data = bytes(i % 251 for i in range(size))
    path = tmp_path / "f"
    path.write_bytes(data)
    assert hash_file(path) == hashlib.sha256(data).hexdigest()


def test_a_predicate_for_another_spec_version_is_refused(
    bundle: Path, instance: SigstoreTestInstance
) -> None:
    subjects = _subjects(bundle)
    statement = (
        dsse.StatementBuilder()
        .subjects(subjects)
        .predicate_type(PREDICATE_TYPE)
        .predicate(
            {
                "benchmark": {"name": "effectbench", "spec_version": "0.9.0"},
                "tool": {"name": "someone-else", "version": "1"},
                "files": 4,
                "excluded": [SIGNATURE_FILE],
            }
        )
        .build()
    )
    (bundle / SIGNATURE_FILE).write_text(_sign_statement(instance, statement))
    declared = json.loads((bundle / "submission.json").read_text())["spec_version"]
    result = verify(bundle, instance, spec_version=declared)
    assert checks(result) == [("signature.predicate", SIGNATURE_FILE)] * 2
    assert "0.9.0" in result.findings[0].message
    assert verify(bundle, instance).findings == []  # without a declaration to compare: valid


@pytest.mark.parametrize(
    ("error", "check", "starts"),
    [
        (VerificationError("not enough sources of verified time"), "signature.untrusted", ""),
        (VerificationError("invalid log entry: bad proof"), "signature.untrusted", ""),
        (
            VerificationError("invalid signing cert: expired at time of signing, time via x"),
            "signature.invalid",
            "the signing certificate was not valid at the time",
        ),
        (VerificationError("Signature is invalid for input"), "signature.invalid", ""),
    ],
)
def test_verification_errors_are_classified_by_cause(
    error: Exception, check: str, starts: str
) -> None:
    from effectbench.signatures.verify import _classify_verification_error

    finding = _classify_verification_error(error)
    assert finding.check == check and finding.message.startswith(starts)
    if check == "signature.untrusted":
        assert "--trust-config" in finding.message and "pinned root" in finding.message
