"""The verification ledger: the board CI's verdicts in a signed Merkle tree, and the build's
use of them.

The Merkle hashing is held to RFC 6962's recursive definition and its consistency proofs to
every pair of sizes. The build's verify stage (:func:`verify_submissions` with a
:class:`LedgerCheck`) runs against ledgers signed by the private Sigstore test instance:
a bundle that hashes to its signed summary takes the ledger's report, a sample drawn from
the checkpoint is verified in full, and each tamper case (an altered bundle, a forked or
rolled-back ledger, an expired checkpoint, a planted or edited summary, a summary of
another verifier version, another signer) is refused by name while the others go on.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sigstore_testroot import GITHUB_ACTIONS, SigstoreTestInstance, shared_instance
from support.bundles import make_bundle

from effectbench.cli import main
from effectbench.hashing import canonical_json
from effectbench.site._ledger import (
    LedgerCheck,
    VerifySetup,
    append_summaries,
    sign_checkpoint,
)
from effectbench.site._reports import verify_submissions
from verifier.ledger import (
    CHECKPOINT_FILE,
    ENTRIES_FILE,
    REPORTS_DIR,
    Ledger,
    _node,
    _split,
    consistency_proof,
    leaf_hash,
    open_ledger,
    sample,
    summary_statement,
    tree_root,
    verify_consistency,
)

CI = "https://github.com/board/effectbench/.github/workflows/deploy-site.yml@refs/heads/main"
OTHER = "https://github.com/someone/fork/.github/workflows/deploy-site.yml@refs/heads/main"
NAMES = ("2026-01-01_alpha", "2026-01-02_beta", "2026-01-03_gamma", "2026-01-04_delta")
BASELINES = ("retry_on_error", "effect_verified", "always_halt", "screen_only")


def _mth(leaves: list[bytes]) -> bytes:
    """RFC 6962's Merkle tree hash, by its recursive definition."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return leaves[0]
    k = _split(len(leaves))
    return _node(_mth(leaves[:k]), _mth(leaves[k:]))


def test_the_tree_hash_and_consistency_proofs_follow_rfc_6962() -> None:
    leaves = [leaf_hash(f"entry {i}".encode()) for i in range(34)]
    assert tree_root([]) == hashlib.sha256(b"").digest()
    for n in range(len(leaves) + 1):
        new = tree_root(leaves[:n])
        assert new == _mth(leaves[:n])
        for m in range(n + 1):
            old = tree_root(leaves[:m])
            proof = consistency_proof(leaves[:n], m)
            assert verify_consistency(m, n, old, new, proof), (m, n)
            if 0 < m < n:
                forked = [*leaves[: m - 1], leaf_hash(b"forked"), *leaves[m:n]]
                assert not verify_consistency(m, n, tree_root(forked[:m]), new, proof)
                assert not verify_consistency(m, n, old, tree_root(forked), proof)
                assert not verify_consistency(n, m, new, old, proof)  # backwards
                if proof:
                    assert not verify_consistency(m, n, old, new, proof[:-1])


@pytest.fixture(scope="module")
def instance() -> SigstoreTestInstance:
    return shared_instance()


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory, instance: SigstoreTestInstance) -> Path:
    """Four unsigned bundles, and a ledger of their summaries with a signed checkpoint."""
    base = tmp_path_factory.mktemp("ledger-board")
    subs = base / "submissions"
    for name, baseline in zip(NAMES, BASELINES, strict=True):
        make_bundle(subs / name, baseline, declare_baseline=False)
    assert append_summaries(base / "ledger", _bundles(subs), _setup(instance), tell=_quiet) == 4
    _sign(base / "ledger", instance)
    return base


def _quiet(_: str) -> None:
    pass


def _bundles(subs: Path) -> list[Path]:
    return sorted(p for p in subs.iterdir() if p.is_dir())


def _setup(instance: SigstoreTestInstance) -> VerifySetup:
    return VerifySetup(allow_unsigned=True, trust_config=instance.trust_config_path)


def _sign(ledger: Path, instance: SigstoreTestInstance, who: str = CI, days: int = 30) -> None:
    token = instance.github_actions_token(who.removeprefix("https://github.com/"))
    sign_checkpoint(
        ledger,
        signers=((who, GITHUB_ACTIONS),),
        identity_token=token,
        trust_config=instance.trust_config_path,
        lifetime=timedelta(days=days),
    )


def _copy(board: Path, tmp_path: Path) -> Path:
    shutil.copytree(board, tmp_path / "board", symlinks=True)
    return tmp_path / "board"


def _check(base: Path, instance: SigstoreTestInstance, **kw: Any) -> LedgerCheck:
    kw.setdefault("sample_size", 1)
    kw.setdefault("cache_root", base / "cache")
    return LedgerCheck(
        folder=base / "ledger",
        signers=((CI, GITHUB_ACTIONS),),
        trust_config=instance.trust_config_path,
        **kw,
    )


def _verify(base: Path, instance: SigstoreTestInstance, check: LedgerCheck | None) -> list[Any]:
    return verify_submissions(
        base / "submissions",
        allow_unsigned=True,
        trust_config=instance.trust_config_path,
        ledger=check,
    )


def _forge_report(base: Path, name: str, **changes: Any) -> None:
    """Rewrite ``name``'s latest summary to point at a report with ``changes`` (an entry the
    board CI then signs: a lying ledger)."""
    ledger = base / "ledger"
    lines = (ledger / ENTRIES_FILE).read_bytes().splitlines()
    out = []
    for line in lines:
        doc = json.loads(line)
        if doc["subject"][0]["name"] == name:
            old = doc["predicate"]["report"]["digest"]["sha256"]
            report = json.loads((ledger / REPORTS_DIR / f"{old}.json").read_bytes())
            raw = json.dumps({**report, **changes}).encode()
            new = hashlib.sha256(raw).hexdigest()
            (ledger / REPORTS_DIR / f"{new}.json").write_bytes(raw)
            doc["predicate"]["report"] = {"uri": f"reports/{new}.json", "digest": {"sha256": new}}
        out.append(canonical_json(doc).encode())
    (ledger / ENTRIES_FILE).write_bytes(b"\n".join(out) + b"\n")


def test_a_ledgered_bundle_takes_the_ledgers_report_but_a_sample_is_verified_in_full(
    board: Path, instance: SigstoreTestInstance, tmp_path: Path
) -> None:
    base = _copy(board, tmp_path)
    full = {Path(r.path).name: r for r in _verify(base, instance, None)}
    check = _check(base, instance)
    reports = _verify(base, instance, check)
    assert [Path(r.path).name for r in reports] == list(NAMES)
    assert str(reports[0].path) == str(base / "submissions" / NAMES[0])  # as this build spells it
    for r in reports:
        got, want = r.to_json(), full[Path(r.path).name].to_json()
        assert got == want
    assert check.trusted_count == 3
    assert any("3 bundle(s) taken from it" in note for note in check.notes), check.notes
    # A lying ledger (signed) is believed outside the sample: the sample is what catches it.
    liar = tmp_path / "liar"
    shutil.copytree(board, liar)
    _forge_report(liar, NAMES[2], unranked="believed from the ledger")
    _sign(liar / "ledger", instance)
    check = _check(liar, instance, sample_size=0)
    by_name = {Path(r.path).name: r for r in _verify(liar, instance, check)}
    assert by_name[NAMES[2]].unranked == "believed from the ledger"


def _sampled(base: Path, instance: SigstoreTestInstance) -> str:
    """The one bundle a sample of 1 draws from the ledger's checkpoint."""
    ledger = open_ledger(
        base / "ledger", signers=((CI, GITHUB_ACTIONS),), trust_config=instance.trust_config_path
    )
    assert isinstance(ledger, Ledger)
    digests = {name: s.digest for name, s in ledger.latest.items()}
    (name,) = sample(ledger.checkpoint.root, digests, 1)
    return name


def test_a_sampled_bundle_that_disagrees_refuses_the_whole_ledger(
    board: Path, instance: SigstoreTestInstance, tmp_path: Path
) -> None:
    base = _copy(board, tmp_path)
    for name in NAMES:
        _forge_report(base, name, unranked="forged")
    _sign(base / "ledger", instance)
    sampled = _sampled(base, instance)
    check = _check(base, instance)
    reports = _verify(base, instance, check)
    assert all(r.unranked != "forged" for r in reports)  # every bundle verified in full
    (note,) = [n for n in check.notes if n.startswith("ledger.sample")]
    assert sampled in note and "every bundle verified in full" in note


def _codes(check: LedgerCheck) -> list[str]:
    return [note.split(":")[0] for note in check.notes]


def test_an_altered_bundle_is_refused_by_name_and_verified_in_full(
    board: Path, instance: SigstoreTestInstance, tmp_path: Path
) -> None:
    base = _copy(board, tmp_path)
    episodes = base / "submissions" / NAMES[1] / "episodes.jsonl"
    episodes.write_bytes(episodes.read_bytes() + b"\n")
    check = _check(base, instance, sample_size=0)
    reports = _verify(base, instance, check)
    assert len(reports) == 4
    (note,) = [n for n in check.notes if n.startswith("ledger.bundle_changed")]
    assert NAMES[1] in note and "verified in full" in note
    assert check.trusted_count == 3  # the others still taken from the ledger


def test_a_planted_summary_is_refused_and_an_edited_one_refuses_the_ledger(
    board: Path, instance: SigstoreTestInstance, tmp_path: Path
) -> None:
    base = _copy(board, tmp_path)
    new = make_bundle(base / "submissions" / "2026-01-05_new", "effect_verified")
    append_summaries(base / "ledger", [new], _setup(instance), tell=_quiet)  # never signed
    check = _check(base, instance, sample_size=0)
    reports = _verify(base, instance, check)
    assert len(reports) == 5
    (note,) = [n for n in check.notes if n.startswith("ledger.planted")]
    assert "2026-01-05_new" in note
    assert check.trusted_count == 4

    edited = _copy(board, tmp_path / "edited")
    entries = edited / "ledger" / ENTRIES_FILE
    text = entries.read_text(encoding="utf-8")
    entries.write_text(text.replace('"PASSED"', '"FAILED"', 1), encoding="utf-8")
    check = _check(edited, instance)
    assert len(_verify(edited, instance, check)) == 4
    assert _codes(check) == ["ledger.root"] and "every bundle verified in full" in check.notes[0]


def test_a_summary_for_another_verifier_version_is_refused(
    board: Path, instance: SigstoreTestInstance, tmp_path: Path
) -> None:
    base = _copy(board, tmp_path)
    ledger = base / "ledger"
    third = json.loads((ledger / ENTRIES_FILE).read_bytes().splitlines()[2])
    pred = third["predicate"]
    doc = summary_statement(
        folder=NAMES[2],
        digest=third["subject"][0]["digest"]["sha256"],
        verifier_version={"effectbench": "0.9.0", "code": "0" * 64},
        policy_digest=pred["policy"]["digest"]["sha256"],
        accepted=True,
        report_digest=pred["report"]["digest"]["sha256"],
        verified_at=datetime.now(UTC),
    )
    with (ledger / ENTRIES_FILE).open("ab") as handle:
        handle.write(canonical_json(doc).encode() + b"\n")
    _sign(ledger, instance)
    check = _check(base, instance, sample_size=0)
    _verify(base, instance, check)
    (note,) = [n for n in check.notes if n.startswith("ledger.other_verifier")]
    assert NAMES[2] in note and "0.9.0" in note
    assert check.trusted_count == 3


def test_an_expired_checkpoint_or_another_signer_refuses_the_ledger(
    board: Path, instance: SigstoreTestInstance, tmp_path: Path
) -> None:
    base = _copy(board, tmp_path)
    later = datetime.now(UTC) + timedelta(days=31)
    check = _check(base, instance, now=later)
    assert len(_verify(base, instance, check)) == 4
    assert _codes(check) == ["ledger.expired"]

    _sign(base / "ledger", instance, who=OTHER)
    check = _check(base, instance)
    assert len(_verify(base, instance, check)) == 4
    assert _codes(check) == ["ledger.signature"] and OTHER in check.notes[0]


def test_a_rolled_back_or_forked_ledger_is_refused(
    board: Path, instance: SigstoreTestInstance, tmp_path: Path
) -> None:
    base = _copy(board, tmp_path)
    check = _check(base, instance)
    _verify(base, instance, check)  # this machine remembers the checkpoint of 4
    assert not [c for c in _codes(check) if c != "verification ledger"]
    published = tmp_path / "published.sigstore.json"
    shutil.copy(base / "ledger" / CHECKPOINT_FILE, published)

    entries = base / "ledger" / ENTRIES_FILE
    lines = entries.read_bytes().splitlines(keepends=True)
    entries.write_bytes(b"".join(lines[:3]))  # rolled back to 3 summaries, signed again
    _sign(base / "ledger", instance)
    check = _check(base, instance)  # by this machine's memory
    assert len(_verify(base, instance, check)) == 4
    assert _codes(check) == ["ledger.rolled_back"]
    check = _check(base, instance, previous=published, cache_root=None)  # by the published one
    _verify(base, instance, check)
    assert _codes(check) == ["ledger.rolled_back"]

    entries.write_bytes(b"".join([lines[1], lines[0], *lines[2:]]))  # same size, other tree
    _sign(base / "ledger", instance)
    check = _check(base, instance, previous=published)
    assert len(_verify(base, instance, check)) == 4
    assert _codes(check) == ["ledger.forked"]

    entries.write_bytes(b"".join(lines))  # the published tree, grown: consistent
    make_bundle(base / "submissions" / "2026-01-05_new", "effect_verified")
    append_summaries(base / "ledger", _bundles(base / "submissions"), _setup(instance), tell=_quiet)
    _sign(base / "ledger", instance)
    check = _check(base, instance, previous=published, sample_size=0)
    assert len(_verify(base, instance, check)) == 5
    assert _codes(check) == ["verification ledger"] and check.trusted_count == 5


def test_no_ledger_verifies_everything_and_the_commands_say_what_they_find(
    board: Path, instance: SigstoreTestInstance, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = _copy(board, tmp_path)
    shutil.rmtree(base / "ledger")
    check = _check(base, instance)
    assert len(_verify(base, instance, check)) == 4
    assert check.notes == [] and check.trusted_count == 0

    fresh = _copy(board, tmp_path / "cli")
    trust = str(instance.trust_config_path)
    signer = ["--ledger-signer", CI, GITHUB_ACTIONS]
    args = ["--ledger", str(fresh / "ledger"), *signer, "--trust-config", trust]
    subs = str(fresh / "submissions")
    # the CLI's record policy (records read from reproductions/, this machine's too) is not
    # the fixture's: its summaries are of another policy until append re-verifies under it
    assert main(["ledger", "verify", *args, "--allow-unsigned", "--submissions", subs]) == 1
    assert f"{NAMES[0]}: ledger.other_policy: " in capsys.readouterr().out
    assert main(["ledger", "append", subs, *args, "--allow-unsigned"]) == 0
    assert "4 summary(ies) appended" in capsys.readouterr().out
    assert main(["ledger", "append", subs, *args, "--allow-unsigned"]) == 0
    assert "0 summary(ies) appended" in capsys.readouterr().out
    token = instance.github_actions_token(CI.removeprefix("https://github.com/"))
    assert main(["ledger", "sign", *args, "--identity-token", token]) == 0
    assert "checkpoint of 8 summaries" in capsys.readouterr().out
    assert main(["ledger", "verify", *args, "--allow-unsigned", "--submissions", subs]) == 0
    out = capsys.readouterr().out
    assert "checkpoint: 8 summaries" in out and f"{NAMES[0]}: matches entry 4" in out
    (fresh / "submissions" / NAMES[3] / "README.md").write_text("added after ledgering\n")
    assert main(["ledger", "audit", subs, *args, "--allow-unsigned"]) == 1
    out = capsys.readouterr().out
    assert f"{NAMES[3]}: " in out and "ledger.bundle_changed" in out
    assert "4 bundle(s) verified in full, 1 disagreement(s)" in out
    before = (fresh / "ledger" / ENTRIES_FILE).read_bytes()
    (fresh / "ledger" / ENTRIES_FILE).write_bytes(before + b"{not json\n")
    assert main(["ledger", "verify", *args]) == 1
    out = capsys.readouterr().out
    assert out.startswith("ledger.malformed: ") and f"{ENTRIES_FILE}:9" in out.splitlines()[0]
    assert main(["ledger", "sign", "--ledger", str(tmp_path / "nowhere")]) == 2
    assert "--ledger" in capsys.readouterr().err
