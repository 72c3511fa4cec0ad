"""The verifier's signature family, end to end under the private Sigstore test root."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sigstore_testroot import GOOGLE, SigstoreTestInstance, shared_instance
from support.bundles import copy_bundle, edit_receipts, edit_rows, make_bundle

from effectbench.findings import Family
from effectbench.signatures import sign_bundle
from verifier.api import VerifyOptions, verify_bundle
from verifier.report import Status

NOT_RUN_ALONE = (Family.SIGNATURE, Family.REPRODUCE, Family.RANKING)
"""Steps that do not pass for an unsigned bundle verified alone (nothing to re-run, no folder)."""

ALICE = "alice@example.org"


@pytest.fixture(scope="module")
def instance() -> SigstoreTestInstance:
    return shared_instance()


@pytest.fixture(scope="module")
def signed(instance: SigstoreTestInstance, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A custom (non-baseline) system's bundle, signed by the declared signer."""
    bundle = make_bundle(
        tmp_path_factory.mktemp("signed") / "b", declare_baseline=False, signer=(ALICE, GOOGLE)
    )
    sign_bundle(
        bundle, identity_token=instance.email_token(ALICE), trust_config=instance.trust_config_path
    )
    return bundle


def _options(instance: SigstoreTestInstance) -> VerifyOptions:
    return VerifyOptions(trust_config=instance.trust_config_path)


def test_signed_bundle_is_ranked_with_its_signer(
    signed: Path, instance: SigstoreTestInstance
) -> None:
    report = verify_bundle(signed, _options(instance))
    assert report.status is Status.RANKED, report.finding_ids()
    assert report.reproduced is None
    assert report.signer is not None and report.signer.identity == ALICE
    assert report.signer.issuer == GOOGLE
    assert report.check(Family.SIGNATURE).passed


def test_row_edited_after_signing_is_refused_by_the_signature(
    signed: Path, instance: SigstoreTestInstance, tmp_path: Path
) -> None:
    bundle = copy_bundle(signed, tmp_path / "b")

    def edit(rows: list[dict[str, Any]]) -> None:
        rows[0]["agent"]["message"] = "edited after signing"

    def quote(receipts: list[dict[str, Any]]) -> None:  # a consistent edit: the receipt too
        receipts[0]["claim"]["message"] = "edited after signing"

    edit_rows(bundle, edit, claims=False)
    edit_receipts(bundle, quote)
    report = verify_bundle(bundle, _options(instance))
    assert report.status is Status.REFUSED
    assert report.check(Family.SIGNATURE).n_findings
    assert all(c.passed for c in report.checks if c.id not in NOT_RUN_ALONE)
