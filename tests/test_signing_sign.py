"""``effectbench sign`` and ``sign_bundle``: what it signs, and when it refuses to sign."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from sigstore_testroot import GITHUB_ACTIONS, GOOGLE, SigstoreTestInstance, shared_instance
from sigstore_testroot.bundles import write_bundle

from effectbench.cli import main
from effectbench.errors import DataError, SigningError
from effectbench.signatures import (
    SIGNATURE_FILE,
    certificate_identity,
    sign_bundle,
    sign_bundle_checked,
    verify_bundle_signature,
)

ALICE = "alice@example.org"


@pytest.fixture(scope="session")
def instance() -> SigstoreTestInstance:
    """The private Sigstore instance shared by the whole session."""
    return shared_instance()


@pytest.fixture
def unsigned(tmp_path: Path) -> Path:
    """A fresh unsigned bundle declaring alice (Google) as its signer."""
    return write_bundle(tmp_path / "bundle", identity=ALICE, issuer=GOOGLE)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_sign_writes_a_bundle_that_verifies_and_leaves_the_files_alone(
    unsigned: Path, instance: SigstoreTestInstance
) -> None:
    before = _snapshot(unsigned)
    path, check = sign_bundle_checked(
        unsigned,
        identity_token=instance.email_token(ALICE),
        trust_config=instance.trust_config_path,
    )
    assert path == unsigned / SIGNATURE_FILE
    assert check.verified and check.signer is not None and check.signer.identity == ALICE
    after = _snapshot(unsigned)
    assert set(after) == set(before) | {SIGNATURE_FILE}  # no temporary file left behind
    assert {k: after[k] for k in before} == before
    again = verify_bundle_signature(
        unsigned, identity=ALICE, issuer=GOOGLE, trust_config=instance.trust_config_path
    )
    assert again == check


def test_signing_again_replaces_the_signature(
    unsigned: Path, instance: SigstoreTestInstance
) -> None:
    token = instance.email_token(ALICE)
    first = sign_bundle(unsigned, identity_token=token, trust_config=instance.trust_config_path)
    old = first.read_bytes()
    (unsigned / "README.md").write_text("# revised after the first signature\n")
    sign_bundle(unsigned, identity_token=token, trust_config=instance.trust_config_path)
    assert first.read_bytes() != old
    result = verify_bundle_signature(
        unsigned, identity=ALICE, issuer=GOOGLE, trust_config=instance.trust_config_path
    )
    assert result.verified


def test_sign_refuses_a_token_for_another_identity(
    unsigned: Path, instance: SigstoreTestInstance
) -> None:
    with pytest.raises(SigningError) as err:
        sign_bundle(
            unsigned,
            identity_token=instance.email_token("mallory@example.org"),
            trust_config=instance.trust_config_path,
        )
    assert "mallory@example.org" in str(err.value) and ALICE in str(err.value)
    assert not (unsigned / SIGNATURE_FILE).exists()


def test_sign_refuses_a_token_from_another_issuer(
    unsigned: Path, instance: SigstoreTestInstance
) -> None:
    token = instance.github_actions_token("org/repo/.github/workflows/s.yml@refs/heads/main")
    with pytest.raises(SigningError) as err:
        sign_bundle(unsigned, identity_token=token, trust_config=instance.trust_config_path)
    assert GITHUB_ACTIONS in str(err.value)
    assert not (unsigned / SIGNATURE_FILE).exists()


def test_sign_refuses_a_bundle_without_a_declared_signer(
    instance: SigstoreTestInstance, tmp_path: Path
) -> None:
    bundle = write_bundle(tmp_path / "nosigner", identity=None, issuer=None)
    with pytest.raises(SigningError, match="signer is null"):
        sign_bundle(
            bundle,
            identity_token=instance.email_token(ALICE),
            trust_config=instance.trust_config_path,
        )


def test_sign_refuses_a_bundle_holding_a_symlink(
    unsigned: Path, instance: SigstoreTestInstance, tmp_path: Path
) -> None:
    (tmp_path / "elsewhere.md").write_text("outside\n")
    (unsigned / "linked.md").symlink_to(tmp_path / "elsewhere.md")
    with pytest.raises(SigningError, match=r"linked\.md \(symbolic link\)"):
        sign_bundle(
            unsigned,
            identity_token=instance.email_token(ALICE),
            trust_config=instance.trust_config_path,
        )
    assert not (unsigned / SIGNATURE_FILE).exists()


def test_sign_reports_a_malformed_submission_json_with_its_location(
    unsigned: Path, instance: SigstoreTestInstance
) -> None:
    (unsigned / "submission.json").write_text('{"spec_version": "1.0.0",\n "signer": }\n')
    with pytest.raises(DataError) as err:
        sign_bundle(
            unsigned,
            identity_token=instance.email_token(ALICE),
            trust_config=instance.trust_config_path,
        )
    assert err.value.file is not None and err.value.file.endswith("submission.json")
    assert err.value.line == 2


def test_sign_refuses_an_expired_token(unsigned: Path, instance: SigstoreTestInstance) -> None:
    token = instance.mint_token(
        issuer=GOOGLE, subject="uid", email=ALICE, lifetime=timedelta(seconds=-60)
    )
    with pytest.raises(SigningError, match="not usable"):
        sign_bundle(unsigned, identity_token=token, trust_config=instance.trust_config_path)


def test_stand_in_fulcio_refuses_a_token_it_cannot_verify(
    unsigned: Path, instance: SigstoreTestInstance
) -> None:
    forged = instance.mint_token(
        issuer=GOOGLE,
        subject="uid",
        email=ALICE,
        signing_key=ec.generate_private_key(ec.SECP256R1()),
    )
    with pytest.raises(SigningError, match="Sigstore signing failed"):
        sign_bundle(unsigned, identity_token=forged, trust_config=instance.trust_config_path)
    assert not (unsigned / SIGNATURE_FILE).exists()


def test_certificate_identity_follows_fulcio_rules(instance: SigstoreTestInstance) -> None:
    ref = "org/repo/.github/workflows/submit.yml@refs/tags/v1"
    identities, issuer = certificate_identity(instance.github_actions_token(ref))
    assert identities[0] == f"https://github.com/{ref}" and issuer == GITHUB_ACTIONS
    identities, issuer = certificate_identity(instance.email_token(ALICE))
    assert identities[0] == ALICE and issuer == GOOGLE


def test_trust_config_without_signing_services_is_a_data_error(
    unsigned: Path, instance: SigstoreTestInstance
) -> None:
    with pytest.raises(DataError) as err:
        sign_bundle(
            unsigned,
            identity_token=instance.email_token(ALICE),
            trust_config=instance.trusted_root_path,  # a bare root cannot sign
        )
    assert err.value.file == str(instance.trusted_root_path)


def test_cli_sign_prints_the_signer_and_writes_the_bundle(
    unsigned: Path, instance: SigstoreTestInstance, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(
        [
            "sign",
            str(unsigned),
            "--identity-token",
            instance.email_token(ALICE),
            "--trust-config",
            str(instance.trust_config_path),
        ]
    )
    out, err = capsys.readouterr()
    assert status == 0, err
    assert f"as {ALICE} (issuer {GOOGLE})" in out
    assert str(unsigned / SIGNATURE_FILE) in out
    assert err == ""  # Google is an issuer the leaderboard accepts: no warning
    assert json.loads((unsigned / SIGNATURE_FILE).read_text())["dsseEnvelope"]


def test_cli_sign_reads_the_token_from_the_environment(
    unsigned: Path,
    instance: SigstoreTestInstance,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SIGSTORE_IDENTITY_TOKEN", instance.email_token(ALICE))
    assert main(["sign", str(unsigned), "--trust-config", str(instance.trust_config_path)]) == 0
    assert (unsigned / SIGNATURE_FILE).is_file()


def test_cli_sign_refusal_is_a_message_not_a_traceback(
    unsigned: Path, instance: SigstoreTestInstance, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(
        [
            "sign",
            str(unsigned),
            "--identity-token",
            instance.email_token("mallory@example.org"),
            "--trust-config",
            str(instance.trust_config_path),
        ]
    )
    out, err = capsys.readouterr()
    assert status == 1
    assert err.startswith("effectbench: refusing to sign") and "Traceback" not in err
    assert not (unsigned / SIGNATURE_FILE).exists()


def test_cli_sign_warns_when_the_leaderboard_would_not_rank_the_issuer(
    instance: SigstoreTestInstance, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    issuer = "https://oidc.example.test"
    instance.trusted_issuers.add(issuer)
    bundle = write_bundle(tmp_path / "b", identity=ALICE, issuer=issuer)
    token = instance.email_token(ALICE, issuer=issuer)
    status = main(
        [
            "sign",
            str(bundle),
            "--identity-token",
            token,
            "--trust-config",
            str(instance.trust_config_path),
        ]
    )
    _, err = capsys.readouterr()
    assert status == 0
    assert "warning: the leaderboard does not rank signatures from issuer" in err


def test_sign_refuses_a_file_name_that_is_not_nfc(
    unsigned: Path, instance: SigstoreTestInstance
) -> None:
    (unsigned / "cafe\u0301.txt").write_text("decomposed e-acute\n")  # NFD, not NFC
    with pytest.raises(SigningError, match="not a clean NFC UTF-8 relative path"):
        sign_bundle(
            unsigned,
            identity_token=instance.email_token(ALICE),
            trust_config=instance.trust_config_path,
        )


def test_a_leftover_temporary_file_does_not_become_a_subject(
    unsigned: Path, instance: SigstoreTestInstance
) -> None:
    (unsigned / f".{SIGNATURE_FILE}.tmp").write_text("left by an interrupted run\n")
    sign_bundle(
        unsigned,
        identity_token=instance.email_token(ALICE),
        trust_config=instance.trust_config_path,
    )
    assert not (unsigned / f".{SIGNATURE_FILE}.tmp").exists()
    result = verify_bundle_signature(
        unsigned, identity=ALICE, issuer=GOOGLE, trust_config=instance.trust_config_path
    )
    assert result.verified
