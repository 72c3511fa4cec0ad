"""End to end: ``effectbench submit`` -> ``effectbench sign`` -> ``effectbench verify``.

The verifier's ``signature`` family calls ``verify_bundle_signature``; these
tests check that a signed bundle is ranked with its verified signer and that
a tampered one is refused with the signature check ids, through the real
command line and the ``verifier.api`` entry point.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from sigstore_testroot import GOOGLE, SigstoreTestInstance, shared_instance
from sigstore_testroot.bundles import copy_bundle

from effectbench.cli import main
from effectbench.signatures import SIGNATURE_FILE
from verifier.api import VerifyOptions, verify_path

ALICE = "alice@example.org"


@pytest.fixture(scope="module")
def instance() -> SigstoreTestInstance:
    """The private Sigstore instance shared by the session."""
    return shared_instance()


@pytest.fixture(scope="module")
def signed_bundle_template(
    instance: SigstoreTestInstance, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """A bundle made and signed through the command line, as a submitter would."""
    out = tmp_path_factory.mktemp("submissions")
    readme = tmp_path_factory.mktemp("text") / "README.md"
    readme.write_text("# Signed demo\n\nThe screen-only baseline, signed for the tests.\n")
    assert (
        main(
            [
                "submit",
                "--baseline",
                "screen_only",
                "--trials",
                "3",
                "--name",
                "signed demo",
                "--signer-identity",
                ALICE,
                "--signer-issuer",
                GOOGLE,
                "--readme",
                str(readme),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    (bundle,) = out.iterdir()
    token = instance.email_token(ALICE)
    trust = str(instance.trust_config_path)
    assert main(["sign", str(bundle), "--identity-token", token, "--trust-config", trust]) == 0
    return bundle


@pytest.fixture
def bundle(signed_bundle_template: Path, tmp_path: Path) -> Path:
    """A private copy a test may tamper with."""
    return copy_bundle(signed_bundle_template, tmp_path / signed_bundle_template.name)


def _verify_json(
    bundle: Path, capsys: pytest.CaptureFixture[str], *flags: str
) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    status = main(["verify", str(bundle), "--json", *flags])
    (report,) = json.loads(capsys.readouterr().out)
    return status, report


def _signature_check(report: dict[str, Any]) -> dict[str, Any]:
    checks: list[dict[str, Any]] = [c for c in report["checks"] if c["id"] == "signature"]
    (check,) = checks
    return check


def test_signed_bundle_is_ranked_with_its_signer(
    bundle: Path, instance: SigstoreTestInstance, capsys: pytest.CaptureFixture[str]
) -> None:
    trust = str(instance.trust_config_path)
    status, report = _verify_json(bundle, capsys, "--trust-config", trust, "--no-reproduce")
    assert status == 0
    assert report["status"] == "ranked" and report["accepted"] is True
    assert report["signer"]["identity"] == ALICE
    assert report["signer"]["issuer"] == GOOGLE
    assert report["signer"]["signed_at"].endswith("Z")
    sig = _signature_check(report)
    assert sig["passed"] and not sig["skipped"] and sig["findings"] == []
    # Every other check passed too: the rank comes from the signature alone here.
    assert all(
        c["passed"]
        for c in report["checks"]
        if c["id"] not in ("signature", "reproduce", "ranking")
    )


def test_signed_bundle_reports_are_identical_across_runs(
    bundle: Path, instance: SigstoreTestInstance
) -> None:
    options = VerifyOptions(trust_config=instance.trust_config_path, reproduce=False)
    first = [r.to_json() for r in verify_path(bundle, options)]
    second = [r.to_json() for r in verify_path(bundle, options)]
    assert first == second
    assert first[0]["status"] == "ranked"


def test_tampered_bundle_is_refused_with_the_signature_check_ids(
    bundle: Path, instance: SigstoreTestInstance, capsys: pytest.CaptureFixture[str]
) -> None:
    # README.md is checked by nothing but the signature: the refusal is the signature's.
    (bundle / "README.md").write_text("# A different story, written after signing\n")
    (bundle / "NOTES.txt").write_text("smuggled in\n")
    trust = str(instance.trust_config_path)
    status, report = _verify_json(bundle, capsys, "--trust-config", trust, "--no-reproduce")
    assert status != 0
    assert report["status"] == "refused" and report["signer"] is None
    sig = _signature_check(report)
    assert not sig["passed"]
    assert [(f["check"], f["file"]) for f in sig["findings"]] == [
        ("signature.subject_added", "NOTES.txt"),
        ("signature.subject_changed", "README.md"),
    ]


def test_pinned_production_root_refuses_the_test_roots_signature(
    bundle: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, report = _verify_json(bundle, capsys, "--no-reproduce")
    assert status != 0 and report["status"] == "refused"
    assert [f["check"] for f in _signature_check(report)["findings"]] == ["signature.untrusted"]


def test_signature_for_another_declared_signer_is_refused(
    bundle: Path, instance: SigstoreTestInstance
) -> None:
    # Replace the signature by one from bob, made over the very same files.
    doc = json.loads((bundle / "submission.json").read_text())
    other = copy_bundle(bundle, bundle.parent / "bob")
    (other / SIGNATURE_FILE).unlink()
    doc["signer"]["identity"] = "bob@example.org"
    (other / "submission.json").write_text(json.dumps(doc, indent=2) + "\n")
    trust = str(instance.trust_config_path)
    token = instance.email_token("bob@example.org")
    assert main(["sign", str(other), "--identity-token", token, "--trust-config", trust]) == 0
    (bundle / SIGNATURE_FILE).write_bytes((other / SIGNATURE_FILE).read_bytes())
    options = VerifyOptions(trust_config=instance.trust_config_path, reproduce=False)
    (report,) = verify_path(bundle, options)
    data = report.to_json()
    assert data["status"] == "refused"
    assert [f["check"] for f in _signature_check(data)["findings"]] == ["signature.wrong_identity"]


def test_a_signed_format_1_bundle_is_an_unranked_preview_with_its_reason(
    instance: SigstoreTestInstance, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same run declared format 1 (its receipts and frames left out), then signed: MockMed
    records receipts, so the bundle is accepted as a preview, never ranked, and says why."""
    from support.bundles import read_submission, write_submission

    out = tmp_path / "submissions"
    args = ["submit", "--baseline", "screen_only", "--trials", "3", "--name", "rows only"]
    who = ["--signer-identity", ALICE, "--signer-issuer", GOOGLE]
    assert main([*args, *who, "--out", str(out)]) == 0
    (bundle,) = out.iterdir()
    (bundle / "receipts.jsonl").unlink()
    if (bundle / "frames").exists():
        shutil.rmtree(bundle / "frames")
    data = read_submission(bundle)
    data["effectbench_bundle_version"] = 1
    write_submission(bundle, data)
    token = instance.email_token(ALICE)
    trust = str(instance.trust_config_path)
    assert main(["sign", str(bundle), "--identity-token", token, "--trust-config", trust]) == 0
    status, report = _verify_json(bundle, capsys, "--trust-config", trust, "--no-reproduce")
    assert status == 0 and report["accepted"] is True
    assert report["status"] == "preview" and report["signer"]["identity"] == ALICE
    assert report["unranked"].startswith("format 1: made without receipts")
    assert "collateral writes are not measured" in report["unranked"]
    capsys.readouterr()
    assert main(["verify", str(bundle), "--trust-config", trust, "--no-reproduce"]) == 0
    assert "not ranked: format 1" in capsys.readouterr().out
