"""Copies are detected by what was measured, not by bytes.

A copy of a run changed in one field that no measurement depends on (a key of one
row's ``env_fingerprint``, one space in a reason, every seed shifted by 100) keeps its
measured hash: the outcome and the readings of every (task, trial). A signed copy of a
maintainers' reference is refused whatever its date, a copy of another signed entry is
flagged on the board, a copy of a withdrawn bundle is withdrawn with it, and a re-made
reference list keeps each reference's first listing date. Real bundles, real Sigstore
signatures under the private test root, real builds."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sigstore_testroot import GOOGLE, SigstoreTestInstance, shared_instance
from support.bundles import edit_rows, make_bundle, read_submission, write_submission
from support.site import site_root

from effectbench.signatures import sign_bundle
from effectbench.site import build_site
from verifier.api import VerifyOptions, verify_bundle, verify_path
from verifier.ranking import Withdrawal, rank_across
from verifier.references import bundle_measured_hash, load_references
from verifier.references import main as references_main
from verifier.report import BundleReport, Status

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = "2026-12-01_screen-only"
MALLORY = "mallory@example.org"
ALICE = "alice@example.org"


@pytest.fixture(scope="module")
def instance() -> SigstoreTestInstance:
    return shared_instance()


def _fingerprint_key(rows: list[dict[str, Any]]) -> None:
    rows[3]["env_fingerprint"] = {**rows[3]["env_fingerprint"], "host": "elsewhere"}


def _space_in_a_reason(rows: list[dict[str, Any]]) -> None:
    rows[5]["reason"] = rows[5]["reason"] + " "


def _seeds_plus_100(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        row["seed"] = row["seed"] + 100


CHANGES: dict[str, Callable[[list[dict[str, Any]]], None]] = {
    "an env_fingerprint key": _fingerprint_key,
    "a space in a reason": _space_in_a_reason,
    "seeds shifted by 100": _seeds_plus_100,
}


def _signed_copy(
    source: Path,
    folder: Path,
    change: str | None,
    instance: SigstoreTestInstance,
    who: str = MALLORY,
) -> Path:
    """``source`` copied, changed, renamed to the copier's own system and signed by them."""
    shutil.copytree(source, folder)
    (folder / "submission.sigstore.json").unlink(missing_ok=True)
    if change is not None:
        edit_rows(folder, CHANGES[change], claims=False)
    data = read_submission(folder)
    receipts = folder / "receipts.jsonl"
    if change == "seeds shifted by 100":
        data["seeds"] = [s + 100 for s in data["seeds"]]
    if change == "seeds shifted by 100" and receipts.is_file():  # a thorough copier's
        lines = [json.loads(x) for x in receipts.read_text(encoding="utf-8").splitlines()]
        for receipt in lines:
            receipt["seed"] += 100
        receipts.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    data["system"] = {"name": f"{who.split('@')[0]}'s agent", "description": "", "url": ""}
    data["signer"] = {"identity": who, "issuer": GOOGLE}
    write_submission(folder, data)
    sign_bundle(
        folder, identity_token=instance.email_token(who), trust_config=instance.trust_config_path
    )
    return folder


def _options(instance: SigstoreTestInstance, references: Path | None = None) -> VerifyOptions:
    return VerifyOptions(trust_config=instance.trust_config_path, references=references)


def _by_name(reports: list[BundleReport]) -> dict[str, BundleReport]:
    return {Path(r.path).name: r for r in reports}


@pytest.mark.parametrize("change", CHANGES)
def test_a_signed_copy_of_a_reference_with_one_changed_field_is_refused(
    instance: SigstoreTestInstance, tmp_path: Path, change: str
) -> None:
    subs = tmp_path / "submissions"
    shutil.copytree(ROOT / "submissions" / REFERENCE, subs / REFERENCE)
    copy = _signed_copy(subs / REFERENCE, subs / "2026-12-05_mallory", change, instance)
    alone = verify_bundle(copy, _options(instance))
    if change == "seeds shifted by 100":
        # Each receipt holds its trial's contract, drawn from the seed: shifted seeds no longer
        # match what the receipts say was expected, so the copy is refused on its own.
        assert alone.status is Status.REFUSED
        assert "receipt.evidence" in alone.finding_ids()
        return
    assert alone.status is Status.RANKED  # signed and consistent: only a comparison can tell
    reference = verify_bundle(subs / REFERENCE, _options(instance))
    assert alone.rows_hash != reference.rows_hash  # the old byte and row rules miss it
    assert alone.measured_hash == reference.measured_hash
    reports = _by_name(verify_path(subs, _options(instance)))
    assert reports[REFERENCE].status is Status.RANKED
    assert reports[copy.name].status is Status.REFUSED
    assert reports[copy.name].finding_ids() == {"ranking.reference_copy"}


def test_the_reference_copy_is_refused_even_with_no_reference_folder_beside_it(
    instance: SigstoreTestInstance, tmp_path: Path
) -> None:
    """The list holds each reference's measured hash: a pull request alone is judged too."""
    source = ROOT / "submissions" / REFERENCE
    copy = _signed_copy(source, tmp_path / "2026-12-05_mallory", "a space in a reason", instance)
    (report,) = rank_across([verify_bundle(copy, _options(instance))])
    assert report.finding_ids() == {"ranking.reference_copy"}
    listed = {r.folder: r for r in load_references().values()}
    assert listed[REFERENCE].measured_hash == bundle_measured_hash(source)
    assert listed[REFERENCE].measured_hash == verify_bundle(source).measured_hash


def test_a_remake_keeps_the_first_listing_date_so_the_reference_stays_ranked(
    instance: SigstoreTestInstance, tmp_path: Path
) -> None:
    """A copy signed between two remakes never becomes "first": the list keeps the date
    each reference was first listed, and the copy is a reference copy anyway."""
    subs = tmp_path / "submissions"
    shutil.copytree(ROOT / "submissions", subs)
    listing = tmp_path / "reference_bundles.json"
    shutil.copy(ROOT / "verifier" / "reference_bundles.json", listing)
    copy = _signed_copy(subs / REFERENCE, tmp_path / "2026-12-05_mallory", None, instance)
    before = json.loads(listing.read_text())["bundles"]
    mockmed = [b["folder"].split("_", 1)[1] for b in before if b["pack"] == "mockmed"]
    args = ["--submissions", str(subs), "--list", str(listing), "--remake", "--date", "2099-01-01"]
    for slug in mockmed:  # MockMed's are re-made (the screen ones take minutes)
        args += ["--only", slug]
    assert references_main(args) == 0
    after = json.loads(listing.read_text())["bundles"]
    assert [b["date"] for b in after] == [b["date"] for b in before]  # first listing kept
    assert [b["measured_hash"] for b in after] == [b["measured_hash"] for b in before]
    remade_folders = [b["folder"] for b in after if b["pack"] == "mockmed"]
    assert remade_folders == [f"2099-01-01_{slug}" for slug in mockmed]
    assert [b["folder"] for b in after if b["pack"] != "mockmed"] == [
        b["folder"] for b in before if b["pack"] != "mockmed"
    ]
    # the re-made list is what --check expects
    assert references_main(["--submissions", str(subs), "--list", str(listing), "--check"]) == 0
    judged = tmp_path / "judged"  # the re-made reference and the copy, side by side
    judged.mkdir()
    shutil.move(subs / "2099-01-01_screen-only", judged / "2099-01-01_screen-only")
    shutil.move(copy, judged / copy.name)
    reports = _by_name(verify_path(judged, _options(instance, listing)))
    remade = reports["2099-01-01_screen-only"]
    assert remade.status is Status.RANKED, [(c.id, c.note, c.findings) for c in remade.checks]
    assert remade.verified_at == before[3]["date"]
    assert reports[copy.name].finding_ids() == {"ranking.reference_copy"}


@pytest.fixture(scope="module")
def alice(instance: SigstoreTestInstance, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A custom system's signed bundle (not a reference: 4 trials), rows only (format 1): a
    copier who shifts seeds in a bundle with receipts is refused by them (test_receipts). On
    MockMed, which records receipts, a format 1 bundle is an accepted preview, never ranked
    (``unranked``); the rules across bundles judge it all the same."""
    base = tmp_path_factory.mktemp("alice")
    made = make_bundle(
        base / "made", "retry_on_error", trials=4, declare_baseline=False, receipts=False
    )
    return _signed_copy(made, base / "2026-12-01_alice", None, instance, who=ALICE)


def _beside_alice(
    alice: Path, tmp_path: Path, change: str, instance: SigstoreTestInstance
) -> tuple[Path, Path]:
    """A submissions folder holding Alice's bundle and Mallory's changed, re-signed copy."""
    subs = tmp_path / "submissions"
    shutil.copytree(alice, subs / alice.name)
    return subs, _signed_copy(alice, subs / "2026-12-06_mallory", change, instance)


@pytest.mark.parametrize("change", CHANGES)
def test_a_re_signed_copy_of_another_entry_is_flagged_on_the_board(
    instance: SigstoreTestInstance, alice: Path, tmp_path: Path, change: str
) -> None:
    subs, copy = _beside_alice(alice, tmp_path, change, instance)
    reports = _by_name(verify_path(subs, _options(instance)))
    first, second = reports[alice.name], reports[copy.name]
    assert first.status is Status.PREVIEW and first.same_measurements_as is None
    assert first.unranked.startswith("format 1")  # signed, but rows only
    assert second.status is Status.PREVIEW  # not row-identical: flagged, not refused
    assert second.same_measurements_as == str(subs / alice.name)
    assert "measured the same as" in second.check("ranking").note


def test_a_measured_copy_of_a_withdrawn_bundle_is_withdrawn_with_it(
    instance: SigstoreTestInstance, alice: Path, tmp_path: Path
) -> None:
    subs, copy = _beside_alice(alice, tmp_path, "seeds shifted by 100", instance)
    reports = verify_path(subs, _options(instance))
    original = _by_name(reports)[alice.name]
    gone = [Withdrawal(original.content_hash or "", "asked by the submitter")]
    after = _by_name(rank_across(reports, gone))
    assert after[alice.name].finding_ids() == {"ranking.withdrawn"}
    assert after[copy.name].finding_ids() == {"ranking.withdrawn"}


def test_a_different_run_is_neither_refused_nor_flagged(
    instance: SigstoreTestInstance, alice: Path, tmp_path: Path
) -> None:
    subs = tmp_path / "submissions"
    shutil.copytree(alice, subs / alice.name)
    other = make_bundle(
        tmp_path / "made", "effect_verified", trials=4, declare_baseline=False, receipts=False
    )
    mine = _signed_copy(other, subs / "2026-12-07_bob", None, instance, who="bob@example.org")
    reports = _by_name(verify_path(subs, _options(instance)))
    assert reports[mine.name].status is Status.PREVIEW and reports[mine.name].accepted
    assert reports[mine.name].same_measurements_as is None


def test_the_board_flags_the_later_of_two_entries_that_measured_alike(
    instance: SigstoreTestInstance, alice: Path, tmp_path: Path
) -> None:
    subs, copy = _beside_alice(alice, tmp_path, "a space in a reason", instance)
    out = tmp_path / "public"
    summary = build_site(
        subs,
        out,
        root=site_root(tmp_path, []),
        cache_dir=tmp_path / "cache",
        trust_config=instance.trust_config_path,
    )
    assert (summary.n_ranked, summary.n_preview) == (0, 2)  # signed, but format 1 (rows only)
    index = (out / "index.html").read_text(encoding="utf-8")
    row = index[index.index(f'data-slug="{copy.name}"') :]
    row = row[: row.index("</tr>")]
    assert "same readings as" in row and alice.name in row
    first = index[index.index(f'data-slug="{alice.name}"') :]
    assert "same readings as" not in first[: first.index("</tr>")]
