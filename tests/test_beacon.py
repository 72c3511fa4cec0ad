"""The beacon the fresh-instance seed is drawn from: drand's quicknet, pinned in the verifier,
verified on a real published round; the private chains the tests mint, on each scheme; the one
round a commitment may use."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from support.beacon import PrivateBeacon

from effectbench.errors import DataError
from effectbench.instances import (
    ROUND_DELAY,
    SCHEMES,
    Beacon,
    BeaconChain,
    LogEntry,
    beacon_problem,
    commitment_round,
    round_problem,
)
from verifier.commitment import PINNED_CHAIN

QUICKNET_HASH = "52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971"
ROUND_2 = (
    "b6b6a585449b66eb12e875b64fcbab3799861a00e4dbf092d99e969a"
    "5eac57dd3f798acf61e705fe4f093db926626807"
)
ROUND_3 = (
    "b3fab6df720b68cc47175f2c777e86d84187caab5770906f515ff1099"
    "cb01e4deaa027075d860823e49477b93c72bd64"
)
"""Quicknet's published signatures of rounds 2 and 3 (``https://api.drand.sh/<hash>/public/N``)."""


def _round(number: int, signature: str, chain: str = QUICKNET_HASH) -> Beacon:
    return Beacon(chain, number, signature, hashlib.sha256(bytes.fromhex(signature)).hexdigest())


def test_the_pinned_chain_is_quicknet() -> None:
    chain = BeaconChain.from_file(PINNED_CHAIN)
    assert (chain.hash, chain.scheme, chain.period, chain.genesis_time) == (
        QUICKNET_HASH,
        "bls-unchained-g1-rfc9380",
        3,
        1692803367,
    )
    assert len(bytes.fromhex(chain.public_key)) == 96  # on G2: the signatures are on G1


@pytest.mark.parametrize(("number", "signature"), [(2, ROUND_2), (3, ROUND_3)])
def test_real_quicknet_rounds_verify(number: int, signature: str) -> None:
    assert beacon_problem(_round(number, signature), BeaconChain.from_file(PINNED_CHAIN)) is None


def test_a_real_signature_under_another_round_or_randomness_does_not_verify() -> None:
    chain = BeaconChain.from_file(PINNED_CHAIN)
    problem = beacon_problem(_round(2, ROUND_3), chain)
    assert problem is not None and "BLS signature of round 2 does not verify" in problem
    swapped = Beacon(QUICKNET_HASH, 3, ROUND_3, _round(2, ROUND_2).randomness)
    assert "randomness is not sha256" in str(beacon_problem(swapped, chain))
    flipped = ROUND_3[:-2] + ("00" if ROUND_3[-2:] != "00" else "01")
    assert "does not verify" in str(beacon_problem(_round(3, flipped), chain))
    assert "not the pinned" in str(beacon_problem(_round(3, ROUND_3, chain="ab" * 32), chain))


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_a_private_chain_of_each_scheme_verifies_its_rounds_only(scheme: str) -> None:
    beacon = PrivateBeacon(0xC0FFEE, genesis_time=1_000, scheme=scheme)
    good = beacon.round(4)
    assert beacon_problem(good, beacon.chain) is None
    moved = Beacon(good.chain, 5, good.signature, good.randomness, good.previous_signature)
    assert "does not verify" in str(beacon_problem(moved, beacon.chain))
    other = PrivateBeacon(0xC0FFEF, genesis_time=1_000, scheme=scheme).round(4)
    forged = Beacon(good.chain, 4, other.signature, other.randomness, other.previous_signature)
    assert "does not verify" in str(beacon_problem(forged, beacon.chain))


def test_a_chained_round_needs_its_previous_signature() -> None:
    beacon = PrivateBeacon(0xC0FFEE, genesis_time=1_000, scheme="pedersen-bls-chained")
    good = beacon.round(3)
    bare = Beacon(good.chain, 3, good.signature, good.randomness)
    assert "carries its previous_signature" in str(beacon_problem(bare, beacon.chain))
    wrong = Beacon(good.chain, 3, good.signature, good.randomness, beacon.round(3).signature)
    assert "does not verify" in str(beacon_problem(wrong, beacon.chain))


def test_one_commitment_has_one_round() -> None:
    """The first round published more than ROUND_DELAY s after the integrated time; rounds
    before or after it are refused, one before the commitment as a late commitment."""
    chain = BeaconChain(
        "00", genesis_time=1_000, period=3, scheme="pedersen-bls-unchained", hash="c"
    )
    entry = LogEntry("ab", 7, integrated_time=1_100, body_hash="cd")
    want = commitment_round(entry, chain)
    assert chain.round_time(want) > 1_100 + ROUND_DELAY >= chain.round_time(want - 1)
    assert round_problem(entry, Beacon("c", want, "", ""), chain) is None
    for other in (want + 1, want + 100_000, want - 1):
        kind, _ = round_problem(entry, Beacon("c", other, "", ""), chain) or ("", "")
        assert kind == "round"
    late = chain.first_round_after(1_100) - 1
    kind, message = round_problem(entry, Beacon("c", late, "", ""), chain) or ("", "")
    assert kind == "late_commitment" and f"after round {late} was published" in message


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"scheme": "bls-unknown"}, "is not one this verifier checks"),
        ({"period": 0}, "the period must be positive"),
        ({"hash": None}, "a beacon chain needs"),
    ],
)
def test_a_bad_chain_file_is_a_clear_error(
    tmp_path: Path, change: dict[str, object], said: str
) -> None:
    data = json.loads(PINNED_CHAIN.read_text())
    data.update(change)
    if change.get("hash", "") is None:
        del data["hash"]
    path = tmp_path / "chain.json"
    path.write_text(json.dumps(data))
    with pytest.raises(DataError, match=said):
        BeaconChain.from_file(path)
