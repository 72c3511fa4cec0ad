"""The verifier on fresh instances: it draws the instance again from the bundle's seed, holds the
seed to the signed commitment and the beacon round, and flags public-seed bundles.

One committed bundle is made for the module, as a submitter makes it: commit (signed by the
private Sigstore instance, logged with an integrated time), take the first round of a private
beacon chain after the commitment, derive the seed, run on the instance drawn from it, sign the
bundle. Each test verifies it, or a copy with one thing changed (re-signed, so that only the
instance's own checks can refuse it).
"""

from __future__ import annotations

import argparse
import base64
import http.server
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sigstore import dsse
from sigstore_testroot import GOOGLE, SigstoreTestInstance, shared_instance
from support.beacon import PrivateBeacon
from support.bundles import (
    copy_bundle,
    read_receipts,
    read_rows,
    read_submission,
    write_receipts,
    write_rows,
    write_submission,
)

from effectbench.bundle import (
    ConfigurationDecl,
    InstanceDecl,
    SignerDecl,
    SubmissionHeader,
    SystemInfo,
)
from effectbench.cli import main
from effectbench.cli._produce import instance_decl
from effectbench.errors import UsageError
from effectbench.findings import CheckId
from effectbench.hashing import instance_mark
from effectbench.instances import (
    ROUND_DELAY,
    Beacon,
    LogEntry,
    commitment_round,
    commitment_statement,
    configuration_digest,
    configuration_file_digest,
    derived_seed,
    log_entry,
)
from effectbench.kit.catalogue import Catalogue
from effectbench.kit.generate import Draw, Template
from effectbench.metrics import DEFAULT_PRICES, contamination_delta
from effectbench.packs.clinic import generated
from effectbench.packs.clinic.generated import (
    DEV_SEED,
    GeneratedTask,
    instance_slots,
    instance_split,
)
from effectbench.packs.clinic.generated_pack import GeneratedClinicProvider
from effectbench.produce import make_submission, now
from effectbench.produce import write_submission as write_bundle
from effectbench.run import run
from effectbench.schema import Category, Split
from effectbench.signatures import sign_bundle
from effectbench.signatures.sign import sign_statement
from effectbench.site._contamination import companions, contamination, pooled
from effectbench.site._entries import entry_from_report
from effectbench.site._reports import verify_submissions
from verifier.api import VerifyOptions, verify_bundle
from verifier.commitment import check_commitment
from verifier.instances import InstanceFacts
from verifier.report import BundleReport, FindingSink, Status

ALICE = "alice@example.org"
BOB = "bob@example.org"
SYSTEM = "Fresh instance checker"
PACK = "clinic-generated"
BEACON_SECRET = 0x5EED_C0FFEE_1234_5678_9ABC
"""The private beacon chain's secret key (minted for the tests, like the private Sigstore)."""
HARNESS = "sut:fresh_checker:Agent"
MODEL = "local/checker-1"


@dataclass(frozen=True)
class Made:
    """The module's committed fresh bundle and what it was made from."""

    bundle: Path
    public: Path
    """A bundle on the public dev seed (no instances declared)."""
    seed: str
    entry: LogEntry
    beacon: PrivateBeacon
    round: Beacon
    chain_file: Path
    config: Path
    instance: SigstoreTestInstance


def _configured(config: Path) -> ConfigurationDecl:
    return ConfigurationDecl(harness=HARNESS, model=MODEL, file=configuration_file_digest(config))


def _commit(instance: SigstoreTestInstance, config: Path, who: str) -> dict[str, Any]:
    c = _configured(config)
    statement = commitment_statement(SYSTEM, configuration_digest(c.harness, c.model, c.file), PACK)
    raw, _, _ = sign_statement(
        dsse.Statement(json.dumps(statement).encode()),
        identity_token=instance.email_token(who),
        trust_config=instance.trust_config_path,
    )
    data: dict[str, Any] = json.loads(raw)
    return data


def _bundle(
    pack: GeneratedClinicProvider,
    folder: Path,
    instances: InstanceDecl | None,
    instance: SigstoreTestInstance,
) -> Path:
    started = now()
    result = run(pack, baseline="effect_verified", trials=3).result
    submission = make_submission(
        result,
        pack,
        SystemInfo(name=SYSTEM),
        trials=3,
        split=Split.DEV,
        started_at=started,
        finished_at=now(),
        signer=SignerDecl(identity=ALICE, issuer=GOOGLE),
        instances=instances,
    )
    path = write_bundle(folder, submission, result.rows)
    _sign(path, instance)
    return path


def _sign(bundle: Path, instance: SigstoreTestInstance) -> None:
    sign_bundle(
        bundle, identity_token=instance.email_token(ALICE), trust_config=instance.trust_config_path
    )


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Made:
    instance = shared_instance()
    root = tmp_path_factory.mktemp("fresh")
    config = root / "config.json"
    config.write_text('{"agent": "effect_verified", "retries": 0}\n', encoding="utf-8")
    commitment = _commit(instance, config, ALICE)
    entry = log_entry(commitment)
    beacon = PrivateBeacon(BEACON_SECRET, genesis_time=entry.integrated_time - 300, period=3)
    chosen = beacon.round(commitment_round(entry, beacon.chain))
    seed = derived_seed(entry, chosen)
    fresh = GeneratedClinicProvider(seed=seed)
    public = GeneratedClinicProvider()
    try:
        decl = InstanceDecl(
            seed=seed,
            commitment=commitment,
            beacon=chosen.to_json(),
            configuration=_configured(config),
        )
        bundle = _bundle(fresh, root / "fresh", decl, instance)
        public_bundle = _bundle(public, root / "public", None, instance)
    finally:
        fresh.close()
        public.close()
    return Made(
        bundle,
        public_bundle,
        seed,
        entry,
        beacon,
        chosen,
        beacon.write_chain(root / "chain.json"),
        config,
        instance,
    )


def _verify(made: Made, bundle: Path, *, chain: str = "private") -> BundleReport:
    """Verify under the private chain, or none (``chain="none"``), or the verifier's pinned
    production chain (``"pinned"``, its default)."""
    if chain == "pinned":
        return verify_bundle(bundle, VerifyOptions(trust_config=made.instance.trust_config_path))
    pinned = made.chain_file if chain == "private" else None
    options = VerifyOptions(trust_config=made.instance.trust_config_path, beacon_chain=pinned)
    return verify_bundle(bundle, options)


def _variant(
    made: Made,
    folder: Path,
    *,
    submission: Callable[[dict[str, Any]], None] | None = None,
    rows: Callable[[list[dict[str, Any]], list[dict[str, Any]]], None] | None = None,
) -> Path:
    """A copy of the committed bundle with one thing changed, signed again."""
    bundle = copy_bundle(made.bundle, folder)
    (bundle / "submission.sigstore.json").unlink()
    if submission is not None:
        data = read_submission(bundle)
        submission(data)
        write_submission(bundle, data)
    if rows is not None:
        got, receipts = read_rows(bundle), read_receipts(bundle)
        rows(got, receipts)
        write_rows(bundle, got)
        write_receipts(bundle, receipts)
    _sign(bundle, made.instance)
    return bundle


def _refused_with(report: BundleReport, check: str) -> str:
    assert report.status is Status.REFUSED, report.finding_ids()
    assert check in report.finding_ids(), report.finding_ids()
    return " ".join(f.message for c in report.checks for f in c.findings if f.check == check)


# -- accepted ---------------------------------------------------------------------------------


def test_a_committed_fresh_bundle_is_ranked_with_its_seed(made: Made) -> None:
    report = _verify(made, made.bundle)
    assert report.status is Status.RANKED, report.finding_ids()
    assert report.instance_seed == made.seed and report.public_seed is False
    assert report.instance_committed is True
    assert report.to_json()["instance_seed"] == made.seed
    # every task of the bundle is of the seed's instance, and its payload carries the mark
    drawn = {t.task_id for t in instance_split(made.seed)}
    assert {r["task_id"] for r in read_rows(made.bundle)} == drawn
    tag = instance_mark(made.seed)[27:39]
    notes = [e["match"].get("note", "") for r in read_receipts(made.bundle) for e in r["effects"]]
    assert notes and all(tag in n for n in notes if n)


def test_a_public_seed_bundle_stays_accepted_and_is_flagged(made: Made) -> None:
    report = _verify(made, made.public)
    assert report.status is Status.RANKED, report.finding_ids()
    assert report.instance_seed == DEV_SEED and report.public_seed is True
    assert report.instance_committed is None


def test_a_fresh_seed_without_a_commitment_is_accepted_as_uncommitted(
    made: Made, tmp_path: Path
) -> None:
    def drop(data: dict[str, Any]) -> None:
        data["instances"] = {"seed": made.seed}

    report = _verify(made, _variant(made, tmp_path / "b", submission=drop))
    assert report.status is Status.RANKED, report.finding_ids()
    assert (report.public_seed, report.instance_committed) == (False, False)


# -- rows and payloads not drawn from the seed ------------------------------------------------


def test_rows_of_another_seed_are_refused(made: Made, tmp_path: Path) -> None:
    def other(data: dict[str, Any]) -> None:
        data["instances"] = {"seed": "a-seed-these-rows-were-not-drawn-from"}

    message = _refused_with(
        _verify(made, _variant(made, tmp_path / "b", submission=other)), "pack.instance_task"
    )
    assert "re-run every task of the instance drawn from seed" in message


def test_a_bundle_mixing_seeds_is_refused(made: Made, tmp_path: Path) -> None:
    """Three rows of a public-seed run (with their receipts) in place of three of the seed's."""
    public_rows, public_receipts = read_rows(made.public), read_receipts(made.public)

    def mix(rows: list[dict[str, Any]], receipts: list[dict[str, Any]]) -> None:
        rows[-3:], receipts[-3:] = public_rows[:3], public_receipts[:3]

    message = _refused_with(
        _verify(made, _variant(made, tmp_path / "b", rows=mix)), "pack.instance_mixed"
    )
    assert "mixes seeds" in message and "from the public dev seed" in message


def test_a_payload_not_drawn_from_the_seed_is_refused(made: Made, tmp_path: Path) -> None:
    """One receipt whose note carries another seed's mark: the row's task is the seed's, its
    payload is not."""
    mine, theirs = instance_mark(made.seed)[27:39], instance_mark("another-seed")[27:39]

    def swap(rows: list[dict[str, Any]], receipts: list[dict[str, Any]]) -> None:
        i = next(i for i, r in enumerate(receipts) if mine in json.dumps(r["effects"]))
        receipts[i] = json.loads(json.dumps(receipts[i]).replace(mine, theirs))

    message = _refused_with(
        _verify(made, _variant(made, tmp_path / "b", rows=swap)), "pack.instance_payload"
    )
    assert "not drawn from the bundle's instance seed" in message


@pytest.mark.parametrize("fault", ["raises", "repeats"])
def test_a_template_that_raises_or_repeats_is_named(
    made: Made, fault: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = generated.TEMPLATES[0]

    def broken(d: Draw, name: str, split: Split) -> GeneratedTask:
        if d.mark is None:  # the public split still draws
            return first.draw(d, name, split)
        if fault == "raises":
            raise RuntimeError("no charts left")
        return first.draw(Draw(d.seed, first.name, 0), name, split)

    templates = (Template(first.name, Category.CONTROL, broken), *generated.TEMPLATES[1:])
    catalogue = Catalogue(generated.CATALOGUE.generator, templates, generated.DEV_COUNTS, DEV_SEED)
    monkeypatch.setattr(GeneratedClinicProvider, "catalogue", catalogue)
    report = _verify(made, made.bundle)
    message = _refused_with(report, "pack.instance_generator")
    said = "raised on draw 0" if fault == "raises" else "same situation and payload"
    assert f"template {first.name!r}" in message and said in message
    assert report.results is None or report.status is Status.REFUSED


# -- the commitment and the beacon ------------------------------------------------------------


def test_without_a_pinned_chain_the_round_is_not_taken_on_trust(made: Made) -> None:
    message = _refused_with(_verify(made, made.bundle, chain="none"), "pack.instance_beacon")
    assert "no beacon chain is pinned" in message


def test_the_verifier_pins_quicknet_so_a_private_round_is_refused(made: Made) -> None:
    """By default the verifier (and so the board's build) pins drand's quicknet: a round of
    another chain, however well signed, is not taken."""
    message = _refused_with(_verify(made, made.bundle, chain="pinned"), "pack.instance_beacon")
    assert "not the pinned 52db9ba70e0cc0f6" in message


def _with_round(made: Made, folder: Path, number: int) -> Path:
    """The bundle naming round ``number`` and the seed derived from it (signed again)."""
    other = made.beacon.round(number)

    def swap(data: dict[str, Any]) -> None:
        data["instances"]["beacon"] = other.to_json()
        data["instances"]["seed"] = derived_seed(made.entry, other)

    return _variant(made, folder, submission=swap)


def test_a_seed_not_derived_from_the_entry_and_round_is_refused(made: Made, tmp_path: Path) -> None:
    def swap(data: dict[str, Any]) -> None:
        data["instances"]["seed"] = "a-seed-of-my-choosing"

    message = _refused_with(
        _verify(made, _variant(made, tmp_path / "b", submission=swap)),
        "pack.instance_derived_seed",
    )
    assert made.seed in message


@pytest.mark.parametrize("later", [1, 1000])
def test_a_later_round_than_the_commitments_is_refused(
    made: Made, tmp_path: Path, later: int
) -> None:
    """One commitment gives one seed: a later round (a new seed every period) is refused by
    name, whatever its seed."""
    report = _verify(made, _with_round(made, tmp_path / "b", made.round.round + later))
    message = _refused_with(report, "pack.instance_round")
    assert f"not the commitment's round {made.round.round}" in message


def test_a_round_inside_the_delay_is_refused(made: Made, tmp_path: Path) -> None:
    """A round published after the commitment but within ROUND_DELAY of it is not its round."""
    chain = made.beacon.chain
    inside = chain.first_round_after(made.entry.integrated_time)
    assert inside < made.round.round  # the period (3 s) is shorter than the delay (10 s)
    assert made.entry.integrated_time < chain.round_time(inside)
    assert chain.round_time(inside) <= made.entry.integrated_time + ROUND_DELAY
    _refused_with(_verify(made, _with_round(made, tmp_path / "b", inside)), "pack.instance_round")


def test_a_commitment_made_after_its_round_is_refused(made: Made, tmp_path: Path) -> None:
    """A round already published when the commitment was integrated: the seed was known."""
    earlier = made.beacon.chain.first_round_after(made.entry.integrated_time) - 1
    assert made.beacon.chain.round_time(earlier) <= made.entry.integrated_time
    report = _verify(made, _with_round(made, tmp_path / "b", earlier))
    message = _refused_with(report, "pack.instance_commitment_time")
    assert f"after round {earlier} was published" in message


@pytest.mark.parametrize(
    ("part", "value"),
    [("harness", "sut:other:Agent"), ("model", "bigger-model"), ("file", "sha256:" + "0" * 64)],
)
def test_a_configuration_other_than_the_committed_is_refused(
    made: Made, tmp_path: Path, part: str, value: str
) -> None:
    """Each of the three declared parts differs in turn from what was committed."""

    def swap(data: dict[str, Any]) -> None:
        data["instances"]["configuration"][part] = value

    message = _refused_with(
        _verify(made, _variant(made, tmp_path / "b", submission=swap)),
        "pack.instance_configuration",
    )
    assert "not the committed" in message


def test_a_committed_instance_without_its_configuration_is_refused(
    made: Made, tmp_path: Path
) -> None:
    def drop(data: dict[str, Any]) -> None:
        del data["instances"]["configuration"]

    message = _refused_with(
        _verify(made, _variant(made, tmp_path / "b", submission=drop)),
        "pack.instance_configuration",
    )
    assert "--config" in message


def test_a_round_signed_by_another_key_is_refused(made: Made, tmp_path: Path) -> None:
    forged = PrivateBeacon(BEACON_SECRET + 1, made.beacon.chain.genesis_time).round(
        made.round.round
    )
    claimed = Beacon(made.round.chain, forged.round, forged.signature, forged.randomness)

    def swap(data: dict[str, Any]) -> None:
        data["instances"]["beacon"] = claimed.to_json()
        data["instances"]["seed"] = derived_seed(made.entry, claimed)

    message = _refused_with(
        _verify(made, _variant(made, tmp_path / "b", submission=swap)), "pack.instance_beacon"
    )
    assert "BLS signature" in message and "does not verify" in message


def test_a_commitment_by_another_signer_is_refused(made: Made, tmp_path: Path) -> None:
    bobs = _commit(made.instance, made.config, BOB)
    entry = log_entry(bobs)
    chosen = made.beacon.round(commitment_round(entry, made.beacon.chain))

    def swap(data: dict[str, Any]) -> None:
        data["instances"] = {
            "seed": derived_seed(entry, chosen),
            "commitment": bobs,
            "beacon": chosen.to_json(),
            "configuration": _configured(made.config).model_dump(),
        }

    message = _refused_with(
        _verify(made, _variant(made, tmp_path / "b", submission=swap)),
        "pack.instance_commitment_signer",
    )
    assert BOB in message and ALICE in message


def test_a_commitment_integrated_after_the_run_started_is_refused(
    made: Made, tmp_path: Path
) -> None:
    before = datetime.fromtimestamp(made.entry.integrated_time - 3600, UTC)

    def backdate(data: dict[str, Any]) -> None:
        data["run"]["started_at"] = before.strftime("%Y-%m-%dT%H:%M:%SZ")

    message = _refused_with(
        _verify(made, _variant(made, tmp_path / "b", submission=backdate)),
        "pack.instance_commitment_time",
    )
    assert "after the run started" in message and "commit first" in message


def test_a_tampered_commitment_does_not_verify(made: Made, tmp_path: Path) -> None:
    def tamper(data: dict[str, Any]) -> None:
        envelope = data["instances"]["commitment"]["dsseEnvelope"]
        statement = json.loads(base64.b64decode(envelope["payload"]))
        statement["predicate"]["system"] = "Someone else"
        envelope["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()

    _refused_with(
        _verify(made, _variant(made, tmp_path / "b", submission=tamper)),
        "pack.instance_commitment",
    )


def test_the_contamination_delta_of_one_system_on_both_seeds(made: Made) -> None:
    """From the two verified reports' task tables, as the board reads them."""
    public, fresh = _verify(made, made.public), _verify(made, made.bundle)
    assert public.tasks is not None and fresh.tasks is not None
    delta = contamination_delta(public.tasks, fresh.tasks, instance_slots(made.seed))
    # the board counts templates (ClustersTasks): the same 26 units on both seeds
    assert public.tasks.task_id == fresh.tasks.task_id
    assert delta.tasks == len(generated.TEMPLATES) and delta.measure == "swer"
    assert delta.first == pytest.approx(fresh.results.swer.rate if fresh.results else -1)
    assert delta.lo <= delta.difference <= delta.hi


class _Relay:
    """A drand HTTP relay on 127.0.0.1 serving a private chain's rounds as drand does
    (``/<chain hash>/public/<round>``: round, randomness, signature; no chain named)."""

    def __init__(self, beacon: PrivateBeacon) -> None:
        chain_hash = beacon.chain.chain_hash
        self.asked: list[str] = []
        asked = self.asked

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (the http.server name)
                asked.append(self.path)
                parts = self.path.strip("/").split("/")
                if len(parts) != 3 or parts[:2] != [chain_hash, "public"]:
                    self.send_error(404)
                    return
                got = beacon.round(int(parts[2])).to_json()
                body = json.dumps({k: got[k] for k in ("round", "randomness", "signature")})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(body.encode())

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


def test_commit_and_draw_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``effectbench commit`` signs and logs the commitment and names its one round; ``draw``
    fetches that round from a relay once it is out (or reads a saved one), verifies it and
    prints the seed the verifier derives; any other round is refused."""
    instance = shared_instance()
    config = tmp_path / "config.json"
    config.write_text('{"agent": "mine"}\n', encoding="utf-8")
    out = tmp_path / "commitment.json"
    genesis = int(datetime.now(UTC).timestamp()) - 600
    beacon = PrivateBeacon(BEACON_SECRET, genesis_time=genesis, period=3)
    chain = beacon.write_chain(tmp_path / "chain.json")
    trust = str(instance.trust_config_path)
    argv = ["commit", "--name", SYSTEM, "--config", str(config), "--out", str(out)]
    argv += ["--sut", HARNESS[len("sut:") :], "--model", MODEL]
    argv += ["--identity-token", instance.email_token(ALICE), "--trust-config", trust]
    assert main([*argv, "--beacon-chain", str(chain)]) == 0
    said = capsys.readouterr().out
    entry = log_entry(json.loads(out.read_bytes()))
    first = commitment_round(entry, beacon.chain)
    assert f"log index {entry.log_index}" in said and f"beacon round {first} " in said
    statement = json.loads(
        base64.b64decode(json.loads(out.read_bytes())["dsseEnvelope"]["payload"])
    )
    c = _configured(config)
    committed = configuration_digest(c.harness, c.model, c.file)
    assert statement["predicate"]["configuration_digest"] == committed
    assert main([*argv, "--beacon-chain", str(chain)]) == 2  # the file exists: never overwritten
    capsys.readouterr()
    relay = _Relay(beacon)
    try:
        fetch = ["draw", "--commitment", str(out), "--beacon-chain", str(chain)]
        fetch += ["--relay", relay.url]
        assert main(fetch) == 2  # not published yet: nothing asked of the relay
        assert "run draw again then" in capsys.readouterr().err and not relay.asked
        published = beacon.chain.round_time(first)
        monkeypatch.setattr("effectbench.cli._commit._now", lambda: published)
        saved = tmp_path / "saved.json"
        assert main([*fetch, "--save", str(saved)]) == 0
        assert relay.asked == [f"/{beacon.chain.chain_hash}/public/{first}"]
    finally:
        relay.stop()
    chosen = beacon.round(first)
    assert capsys.readouterr().out.strip() == derived_seed(entry, chosen)
    assert json.loads(saved.read_text()) == chosen.to_json()
    # offline: the saved round (ours, or drand's own JSON) gives the same seed
    draw = ["draw", "--commitment", str(out), "--beacon-chain", str(chain), "--beacon"]
    drand = tmp_path / "drand.json"
    drand.write_text(
        json.dumps({k: chosen.to_json()[k] for k in ("round", "signature", "randomness")})
    )
    for file in (saved, drand):
        assert main([*draw, str(file)]) == 0
        assert capsys.readouterr().out.strip() == derived_seed(entry, chosen)
    for other in (first - 1, first + 1):
        (tmp_path / f"{other}.json").write_text(json.dumps(beacon.round(other).to_json()))
        assert main([*draw, str(tmp_path / f"{other}.json")]) == 2
        assert f"not the commitment's round {first}" in capsys.readouterr().err


def test_submit_draws_its_instance_from_the_commitment_and_the_round(tmp_path: Path) -> None:
    """``submit --commitment --beacon --config``: the seed it runs on and declares is the
    derived one, with the configuration it committed; a contradicting --instance-seed, a lone
    --beacon or no --config is a usage error before anything runs."""
    instance = shared_instance()
    config = tmp_path / "config.json"
    config.write_text("{}\n", encoding="utf-8")
    commitment = _commit(instance, config, ALICE)
    entry = log_entry(commitment)
    beacon = PrivateBeacon(BEACON_SECRET, genesis_time=entry.integrated_time - 30)
    chosen = beacon.round(commitment_round(entry, beacon.chain))
    files = tmp_path / "commitment.json", tmp_path / "round.json"
    files[0].write_text(json.dumps(commitment), encoding="utf-8")
    files[1].write_text(json.dumps(chosen.to_json()), encoding="utf-8")
    run_as = {"sut": HARNESS[len("sut:") :], "baseline": None, "model": MODEL, "config": config}
    args = argparse.Namespace(instance_seed=None, commitment=files[0], beacon=files[1], **run_as)
    decl = instance_decl(args)
    assert decl is not None and decl.seed == derived_seed(entry, chosen) == args.instance_seed
    assert decl.commitment == commitment and decl.beacon == chosen.to_json()
    assert decl.configuration == _configured(config)
    wrong = argparse.Namespace(instance_seed="mine", commitment=files[0], beacon=files[1], **run_as)
    with pytest.raises(UsageError, match="is not the seed the commitment and beacon give"):
        instance_decl(wrong)
    with pytest.raises(UsageError, match="--config"):
        instance_decl(argparse.Namespace(instance_seed=None, commitment=files[0], beacon=files[1]))
    with pytest.raises(UsageError, match="go together"):
        instance_decl(argparse.Namespace(instance_seed=None, commitment=None, beacon=files[1]))
    plain = instance_decl(argparse.Namespace(instance_seed="s", commitment=None, beacon=None))
    assert plain == InstanceDecl(seed="s")


# -- where the board is built -----------------------------------------------------------------


def test_the_board_ranks_a_committed_bundle_as_committed_and_pools_its_delta(
    made: Made, tmp_path: Path
) -> None:
    """The site's verification (``verify_submissions``) pins the production chain, so a round
    of another chain is refused there; pinned to the private chain the tests run, the committed
    bundle is ranked as a committed fresh entry. The contamination delta pools every committed
    fresh entry of a system, and leaves an uncommitted one out."""
    folder = tmp_path / "submissions"
    folder.mkdir()
    copy_bundle(made.bundle, folder / "2026-12-07_fresh-committed")
    copy_bundle(made.public, folder / "2026-12-07_public")

    def drop(data: dict[str, Any]) -> None:
        data["instances"] = {"seed": made.seed}

    uncommitted = _variant(made, tmp_path / "u", submission=drop)
    copy_bundle(uncommitted, folder / "2026-12-07_fresh-uncommitted")
    trust = made.instance.trust_config_path
    pinned = {Path(r.path).name: r for r in verify_submissions(folder, trust_config=trust)}
    refused = pinned["2026-12-07_fresh-committed"]
    assert refused.status is Status.REFUSED
    assert "pack.instance_beacon" in refused.finding_ids()
    reports = verify_submissions(folder, trust_config=trust, beacon_chain=made.chain_file)
    by_name = {Path(r.path).name: r for r in reports}
    fresh = by_name["2026-12-07_fresh-committed"]
    assert fresh.status is Status.RANKED, fresh.finding_ids()
    entries = {Path(r.path).name: entry_from_report(r) for r in reports}
    assert entries["2026-12-07_fresh-committed"].instance == "fresh"
    assert entries["2026-12-07_fresh-uncommitted"].instance == "fresh-uncommitted"
    assert entries["2026-12-07_public"].instance == "public"
    # a second committed run of the same system (the same report under another slug) is pooled
    twin = entry_from_report(fresh, slug="fresh-twin")
    by_slug = {e.slug: e for e in entries.values()} | {"fresh-twin": twin}
    tables = {
        e.slug: r.tasks
        for e, r in zip(entries.values(), reports, strict=True)
        if r.tasks is not None
    }
    tables["fresh-twin"] = tables[entries["2026-12-07_fresh-committed"].slug]
    (delta,) = contamination(companions(list(by_slug), by_slug), by_slug, tables, DEFAULT_PRICES)
    assert delta.fresh == (entries["2026-12-07_fresh-committed"].slug, "fresh-twin")
    assert delta.public == (entries["2026-12-07_public"].slug,)
    one = tables[entries["2026-12-07_fresh-committed"].slug]
    both = pooled([one, one])
    assert both.task_id == one.task_id and both.trials == [2 * t for t in one.trials]
    assert both.events["swer"] == [2 * n for n in one.events["swer"]]
    assert delta.delta.first == pytest.approx(fresh.results.swer.rate if fresh.results else -1)


def test_a_committed_harness_other_than_the_bundles_baseline_is_refused(made: Made) -> None:
    """A bundle that says it is a shipped baseline holds its committed harness to it (checked
    on the header alone: a bundle naming a baseline would otherwise be re-run)."""
    data = read_submission(made.bundle)
    data.pop("results")
    data["system"]["baseline"] = "effect_verified"
    header = SubmissionHeader.model_validate(data)
    facts = InstanceFacts(made.seed, public=False)
    sink = FindingSink()
    committed = check_commitment(
        header,
        facts,
        sink,
        "submission.json",
        trust_config=made.instance.trust_config_path,
        beacon_chain=made.chain_file,
    )
    assert committed is False
    (finding,) = sink.kept["pack"]
    assert finding.check is CheckId.PACK_INSTANCE_CONFIGURATION
    assert "'baseline:effect_verified'" in finding.message and HARNESS in finding.message
    data["system"]["baseline"] = None  # the same header without it is committed
    header = SubmissionHeader.model_validate(data)
    assert check_commitment(
        header,
        facts,
        FindingSink(),
        "submission.json",
        trust_config=made.instance.trust_config_path,
        beacon_chain=made.chain_file,
    )
