"""Reproduction records: a re-run done once, signed by the board CI, read by later builds.

Both paths run with the private Sigstore instance: a bundle with a valid record is
judged by it (its note says so; ``--reproduce`` re-runs it anyway), a bundle without
one is re-run, and a record that is forged, for other bytes, signed by another
identity, truncated or expired refuses its bundle by a named finding. A bundle that
needs a re-run this machine cannot do is refused alone (``reproduce.unavailable``),
never stopping the others, and the site build names it. A listed reference's record is
the maintainers' (unsigned): read only when the reference list gives its digest, byte for
byte, for that very bundle.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sigstore_testroot import GITHUB_ACTIONS, GOOGLE, SigstoreTestInstance, shared_instance
from sigstore_testroot.bundles import write_bundle
from support.bundles import list_references

from effectbench.cli import main
from effectbench.findings import Family
from verifier.api import VerifyOptions, verify_bundle, verify_path
from verifier.records import (
    RecordPolicy,
    maintainer_record_file,
    read_record,
    record_key,
    signed_record_file,
)
from verifier.references import bundle_content_hash, load_references

CI = "https://github.com/board/effectbench/.github/workflows/deploy-site.yml@refs/heads/main"
ROOT = Path(__file__).resolve().parents[1]
WEB_REFERENCE = ROOT / "submissions" / "2026-12-01_screen-only-clinic-web"


@pytest.fixture(scope="module")
def instance() -> SigstoreTestInstance:
    return shared_instance()


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Machine-local records and keys in this test's own cache home."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    from effectbench.sealed import default_seal

    default_seal.cache_clear()


def _bundle(folder: Path, baseline: str = "screen_only") -> Path:
    return write_bundle(
        folder, identity=None, issuer=None, baseline=baseline, trials=3, readme=None
    )


def _record_args(instance: SigstoreTestInstance, records: Path) -> list[str]:
    return [
        "--records",
        str(records),
        "--record-signer",
        CI,
        GITHUB_ACTIONS,
        "--record-trust-config",
        str(instance.trust_config_path),
    ]


def _reproduce(instance: SigstoreTestInstance, records: Path, *paths: Path, token: str) -> int:
    args = ["reproduce", *map(str, paths), "--sign", "--identity-token", token]
    args += ["--trust-config", str(instance.trust_config_path)]
    return main([*args, *_record_args(instance, records)])


def _policy(instance: SigstoreTestInstance, records: Path, **kw: object) -> RecordPolicy:
    signers = ((CI, GITHUB_ACTIONS),)
    return RecordPolicy(records, signers, instance.trust_config_path, **kw)  # type: ignore[arg-type]


def _ci_token(instance: SigstoreTestInstance) -> str:
    return instance.github_actions_token(CI.removeprefix("https://github.com/"))


def test_a_signed_record_replaces_the_re_run_and_reproduce_forces_it(
    tmp_path: Path, instance: SigstoreTestInstance, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = _bundle(tmp_path / "subs" / "2026-12-01_demo")
    records = tmp_path / "reproductions"
    assert _reproduce(instance, records, bundle, token=_ci_token(instance)) == 0
    assert "reproduced, 27/27 rows re-run" in capsys.readouterr().out
    (record,) = records.iterdir()
    assert record.name == f"{bundle_content_hash(bundle)[7:]}.reproduction.sigstore.json"
    options = VerifyOptions(allow_unsigned=True, records=_policy(instance, records))
    report = verify_bundle(bundle, options)
    step = report.check(Family.REPRODUCE)
    assert report.reproduced is True and report.accepted
    assert f"from the reproduction record signed by {CI}" in step.note
    assert report.reproduced_rows == report.n_rows == 27
    forced = verify_bundle(bundle, VerifyOptions(allow_unsigned=True, force_reproduce=True))
    assert forced.reproduced is True and "record" not in forced.check(Family.REPRODUCE).note
    # a second `reproduce` keeps the valid record instead of re-running
    assert _reproduce(instance, records, bundle, token=_ci_token(instance)) == 0
    assert "has a valid record" in capsys.readouterr().out


def _refusal(bundle: Path, policy: RecordPolicy) -> set[str]:
    report = verify_bundle(bundle, VerifyOptions(allow_unsigned=True, records=policy))
    assert not report.accepted and report.reproduced is False
    return {f.check for f in report.check(Family.REPRODUCE).findings}


def test_a_record_that_cannot_be_used_refuses_its_bundle_by_name(
    tmp_path: Path, instance: SigstoreTestInstance
) -> None:
    first = _bundle(tmp_path / "subs" / "2026-12-01_first")
    second = _bundle(tmp_path / "subs" / "2026-12-01_second", baseline="effect_verified")
    records = tmp_path / "reproductions"
    assert _reproduce(instance, records, first, second, token=_ci_token(instance)) == 0
    policy = _policy(instance, records)
    own = signed_record_file(records, _key(second))
    good = own.read_bytes()

    # forged: the signed statement altered after signing
    doc = json.loads(good)
    payload = json.loads(base64.b64decode(doc["dsseEnvelope"]["payload"]))
    payload["predicate"]["rows_rerun"] = 1
    doc["dsseEnvelope"]["payload"] = base64.b64encode(json.dumps(payload).encode()).decode()
    own.write_text(json.dumps(doc))
    assert _refusal(second, policy) == {"reproduce.record_forged"}
    # truncated
    own.write_bytes(good[: len(good) // 2])
    assert _refusal(second, policy) == {"reproduce.record_malformed"}
    # for other bytes: the first bundle's valid record under the second's name
    own.write_bytes(signed_record_file(records, _key(first)).read_bytes())
    assert _refusal(second, policy) == {"reproduce.record_subject"}
    # expired: judged 401 days on
    own.write_bytes(good)
    later = _policy(instance, records, now=datetime.now(UTC) + timedelta(days=401))
    assert _refusal(second, later) == {"reproduce.record_expired"}
    # signed by another identity: alice may sign, but the policy lists only the CI
    alice = "alice@example.org"
    code = main(
        [
            "reproduce",
            str(second),
            "--all",
            "--sign",
            "--identity-token",
            instance.email_token(alice),
            "--trust-config",
            str(instance.trust_config_path),
            *_record_args(instance, records),
            "--record-signer",
            alice,
            GOOGLE,
        ]
    )
    assert code == 0 and own.read_bytes() != good
    assert _refusal(second, policy) == {"reproduce.record_signer"}
    assert read_record(_key(second), policy).problem is not None
    # the right record again: accepted
    own.write_bytes(good)
    assert verify_bundle(second, VerifyOptions(allow_unsigned=True, records=policy)).accepted


def _key(bundle: Path):  # type: ignore[no-untyped-def]
    from effectbench.bundle import Submission

    header = Submission.model_validate_json((bundle / "submission.json").read_bytes())
    return record_key(header, bundle_content_hash(bundle), bundle.name)


def test_a_machine_record_serves_this_machine_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = _bundle(tmp_path / "subs" / "2026-12-01_local")
    records = tmp_path / "reproductions"
    assert main(["reproduce", str(bundle), "--records", str(records)]) == 0
    assert not records.exists()  # nothing signed: sealed in this machine's cache home
    policy = RecordPolicy(records, local=True)
    report = verify_bundle(bundle, VerifyOptions(allow_unsigned=True, records=policy))
    assert "record this machine's own re-run" in report.check(Family.REPRODUCE).note
    # the same cache home with another machine's key: the record is not trusted
    (tmp_path / "cache" / "effectbench" / "cache.key").write_bytes(b"k" * 32)
    from effectbench.sealed import default_seal

    default_seal.cache_clear()
    assert _refusal(bundle, policy) == {"reproduce.record_forged"}


def test_a_missing_component_refuses_only_the_bundles_that_need_it(
    tmp_path: Path,
    instance: SigstoreTestInstance,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    subs = tmp_path / "subs"
    demo = _bundle(subs / "2026-12-01_demo")
    shutil.copytree(WEB_REFERENCE, subs / WEB_REFERENCE.name)
    records = tmp_path / "reproductions"
    assert _reproduce(instance, records, demo, token=_ci_token(instance)) == 0
    monkeypatch.setenv("EFFECTBENCH_CHROMIUM", str(tmp_path / "no-chromium"))
    policy = _policy(instance, records)
    by_name = {
        Path(r.path).name: r
        for r in verify_path(subs, VerifyOptions(allow_unsigned=True, records=policy))
    }
    assert by_name["2026-12-01_demo"].accepted  # judged by its record
    web = by_name[WEB_REFERENCE.name]
    (finding,) = web.check(Family.REPRODUCE).findings
    assert finding.check == "reproduce.unavailable" and not web.accepted
    assert "Chromium is missing" in finding.message and "make reproduce" in finding.message
    capsys.readouterr()
    code = main(["verify", str(subs), "--allow-unsigned", *_record_args(instance, records)])
    assert code == 1  # a refusal, not "unreadable" (2): the other bundle was verified
    assert "1 of 2 accepted" in capsys.readouterr().out


def _maintained(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path, Path]:
    """Two listed references (no record yet), each re-run once by `effectbench reproduce`."""
    first = _bundle(tmp_path / "subs" / "2026-12-01_first")
    second = _bundle(tmp_path / "subs" / "2026-12-01_second", baseline="effect_verified")
    listing = list_references(tmp_path / "references.json", [first, second])
    records = tmp_path / "reproductions"
    args = ["reproduce", str(tmp_path / "subs"), "--records", str(records)]
    assert main([*args, "--references", str(listing)]) == 0
    out = capsys.readouterr().out
    assert "recorded 2, kept 0" in out and f"listed 2 maintainers' record(s) in {listing}" in out
    return first, second, listing


def _listed_options(records: Path, listing: Path) -> VerifyOptions:
    return VerifyOptions(allow_unsigned=True, records=RecordPolicy(records), references=listing)


def test_a_listed_references_record_is_the_maintainers_and_the_list_gives_its_digest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second, listing = _maintained(tmp_path, capsys)
    records = tmp_path / "reproductions"
    listed = load_references(listing)
    for bundle in (first, second):
        path = maintainer_record_file(records, _key(bundle))
        entry = listed[bundle_content_hash(bundle)]
        assert entry.record == "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    # judged by its record, unsigned, with no re-run: the re-run's code is not even reachable
    import verifier.reproduce

    def no_rerun(*_: object, **__: object) -> None:
        raise AssertionError("re-ran a bundle that has a listed record")

    monkeypatch.setattr(verifier.reproduce, "reproduce", no_rerun)
    report = verify_bundle(second, _listed_options(records, listing))
    assert report.accepted and report.reproduced is True, report
    assert "listed in the maintainers' reference list" in report.check(Family.REPRODUCE).note
    # a second `reproduce` keeps both records and leaves the list as it is
    before = listing.read_bytes()
    args = ["reproduce", str(tmp_path / "subs"), "--records", str(records)]
    assert main([*args, "--references", str(listing)]) == 0
    assert "recorded 0, kept 2" in capsys.readouterr().out
    assert listing.read_bytes() == before


def test_a_maintainers_record_the_list_does_not_give_is_refused_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second, listing = _maintained(tmp_path, capsys)
    records = tmp_path / "reproductions"
    options = _listed_options(records, listing)
    own = maintainer_record_file(records, _key(second))
    good = own.read_bytes()

    def refusal() -> tuple[set[str], str]:
        report = verify_bundle(second, options)
        assert not report.accepted and report.reproduced is False
        findings = report.check(Family.REPRODUCE).findings
        return {f.check for f in findings}, " ".join(f.message for f in findings)

    # altered: one number changed, so its bytes are no longer the listed ones
    own.write_bytes(good.replace(b'"rows_rerun": 27', b'"rows_rerun": 1'))
    checks, message = refusal()
    assert checks == {"reproduce.record_unlisted"}
    assert "not the one the maintainers' reference list gives" in message
    # for other bytes: the first bundle's record under the second's name...
    own.write_bytes(maintainer_record_file(records, _key(first)).read_bytes())
    assert refusal()[0] == {"reproduce.record_unlisted"}
    # ...even with the list changed to give that record's digest: its subject is another bundle
    doc = json.loads(listing.read_text())
    digests = {e["content_hash"]: e["record"] for e in doc["bundles"]}
    for entry in doc["bundles"]:
        entry["record"] = digests[bundle_content_hash(first)]
    listing.write_text(json.dumps(doc))
    assert refusal()[0] == {"reproduce.record_subject"}
    # a bundle the list does not name: its unsigned record is refused, never believed
    listing.write_text(json.dumps({"bundles": []}))
    own.write_bytes(good)
    checks, message = refusal()
    assert checks == {"reproduce.record_unlisted"} and "gives no record for" in message


def test_a_removed_record_names_its_bundle_and_make_reproduce(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The screen reference's listed record gone: on a machine without Chromium the build
    refuses that bundle alone, by name, and says make reproduce; the others stay ranked."""
    from verifier.records import Reproduction, write_maintainer_record
    from verifier.references import list_records

    subs = tmp_path / "subs"
    web = subs / WEB_REFERENCE.name
    shutil.copytree(WEB_REFERENCE, web)
    demo = _bundle(subs / "2026-12-01_demo")
    listing = list_references(tmp_path / "references.json", [web, demo])
    records = tmp_path / "reproductions"
    digests = {}
    for bundle, rows in ((web, 12), (demo, 27)):
        result = Reproduction(True, rows, 81 if bundle is web else 27)
        _, digests[bundle_content_hash(bundle)] = write_maintainer_record(
            records, _key(bundle), result
        )
    assert sorted(list_records(digests, listing)) == sorted([web.name, demo.name])
    monkeypatch.setenv("EFFECTBENCH_CHROMIUM", str(tmp_path / "no-chromium"))
    options = _listed_options(records, listing)
    assert all(r.accepted for r in verify_path(subs, options))  # no browser needed
    maintainer_record_file(records, _key(web)).unlink()
    by_name = {Path(r.path).name: r for r in verify_path(subs, options)}
    assert by_name[demo.name].accepted
    (finding,) = by_name[web.name].check(Family.REPRODUCE).findings
    assert finding.check == "reproduce.unavailable" and "make reproduce" in finding.message


def test_a_records_folder_that_cannot_be_written_is_one_line_and_lists_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = _bundle(tmp_path / "subs" / "2026-12-01_first")
    listing = list_references(tmp_path / "references.json", [bundle])
    before = listing.read_bytes()
    blocked = tmp_path / "reproductions"
    blocked.write_text("a file, not a folder\n")
    args = ["reproduce", str(bundle), "--records", str(blocked), "--references", str(listing)]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot write" in err[0] and str(blocked) in err[0], err
    assert listing.read_bytes() == before and blocked.read_text() == "a file, not a folder\n"
