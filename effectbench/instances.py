"""Fresh instances for a submission: commit, wait for a beacon round, draw the seed.

A submitter who wants a fresh instance of a generated pack (``clinic-generated``) first
*commits*: a DSSE in-toto Statement (:data:`COMMITMENT_PREDICATE`) naming the system and the
digest of its configuration, signed keyless with Sigstore like a submission and so logged in the
transparency log, which gives it an integrated time and a log index. The instance seed is then
derived from that log entry and the first *beacon* round published after it
(:func:`effectbench.hashing.submission_seed`): nobody, the submitter included, knew the seed when
the system and its configuration were fixed.

The beacon is modelled on drand's unchained scheme: a chain is a BLS12-381 public key (G1, 48
bytes), a genesis time and a period; round ``r`` is published at ``genesis + (r - 1) * period``,
its signature is the BLS signature (G2, 96 bytes; the IETF ciphersuite
``BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_NUL_``) of ``sha256(r as 8 big-endian bytes)``, and its
randomness is ``sha256(signature)``. :func:`beacon_problem` verifies the signature for real with
``py_ecc``. The verifier takes the chain as a pinned file (:class:`BeaconChain`); tests mint a
private chain key, as they run a private Sigstore instance.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from effectbench.errors import DataError
from effectbench.hashing import canonical_hash, hash_file, submission_seed

__all__ = [
    "COMMITMENT_PREDICATE",
    "Beacon",
    "BeaconChain",
    "LogEntry",
    "beacon_message",
    "beacon_problem",
    "commitment_statement",
    "configuration_digest",
    "derived_seed",
    "early_round",
    "log_entry",
]

COMMITMENT_PREDICATE = "https://effectbench.org/commitment/v1"
"""The predicate type of a commitment Statement."""


def configuration_digest(path: Path) -> str:
    """Return ``sha256:<hex>`` of the configuration file the commitment names."""
    try:
        return "sha256:" + hash_file(path)
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None


def commitment_statement(system: str, configuration: str, pack: str) -> dict[str, Any]:
    """Return the commitment's in-toto Statement (JSON): the system's name and configuration
    digest (``sha256:<hex>``), and the generated pack whose instance it will run."""
    return {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [
            {"name": "configuration", "digest": {"sha256": configuration.removeprefix("sha256:")}}
        ],
        "predicateType": COMMITMENT_PREDICATE,
        "predicate": {
            "benchmark": "effectbench",
            "system": system,
            "configuration_digest": configuration,
            "pack": pack,
        },
    }


@dataclass(frozen=True)
class LogEntry:
    """The transparency-log entry of a signed commitment (what the seed is derived from)."""

    log_id: str
    """The log's key id, hex."""
    log_index: int
    integrated_time: int
    """Seconds since the epoch at which the log integrated the entry."""
    body_hash: str
    """sha256 hex of the entry's canonicalized body."""


def log_entry(sigstore_bundle: Mapping[str, Any]) -> LogEntry:
    """Return the log entry of a Sigstore bundle (JSON). Raises :class:`ValueError` naming
    the missing part."""
    try:
        entries = sigstore_bundle["verificationMaterial"]["tlogEntries"]
        if not isinstance(entries, list) or len(entries) != 1:
            raise ValueError("a commitment carries exactly one transparency-log entry")
        entry = entries[0]
        return LogEntry(
            log_id=base64.b64decode(entry["logId"]["keyId"], validate=True).hex(),
            log_index=int(entry["logIndex"]),
            integrated_time=int(entry["integratedTime"]),
            body_hash=hashlib.sha256(
                base64.b64decode(entry["canonicalizedBody"], validate=True)
            ).hexdigest(),
        )
    except (KeyError, TypeError, binascii.Error) as exc:
        raise ValueError(f"the commitment's log entry lacks {exc}") from None


@dataclass(frozen=True)
class BeaconChain:
    """A beacon chain's public facts: its BLS public key, genesis time and period."""

    public_key: str
    """The G1 public key, 48 bytes as hex."""
    genesis_time: int
    period: int
    """Seconds between rounds."""

    @property
    def chain_hash(self) -> str:
        """The chain's identity: the canonical hash of its facts (hex)."""
        return canonical_hash(asdict(self))[len("sha256:") :]

    def round_time(self, round_number: int) -> int:
        """When round ``round_number`` (1 is the first) is published."""
        return self.genesis_time + (round_number - 1) * self.period

    def first_round_after(self, when: int) -> int:
        """The first round published strictly after ``when`` (seconds since the epoch)."""
        if when < self.genesis_time:
            return 1
        return (when - self.genesis_time) // self.period + 2

    @classmethod
    def from_file(cls, path: Path) -> BeaconChain:
        """Read a chain file (JSON ``{public_key, genesis_time, period}``)."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise DataError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
        except ValueError:
            raise DataError("not JSON", file=str(path)) from None
        try:
            chain = cls(str(data["public_key"]), int(data["genesis_time"]), int(data["period"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"a beacon chain needs {exc}", file=str(path)) from None
        if chain.period <= 0:
            raise DataError("the period must be positive", file=str(path), field="period")
        return chain


@dataclass(frozen=True)
class Beacon:
    """One published beacon round."""

    chain: str
    """The chain's hash (:attr:`BeaconChain.chain_hash`)."""
    round: int
    signature: str
    """The BLS signature of :func:`beacon_message` (G2, 96 bytes as hex)."""
    randomness: str
    """sha256 hex of the signature."""

    def to_json(self) -> dict[str, Any]:
        """The round as JSON."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> Beacon:
        """Read a round; raises :class:`ValueError` naming a missing or mistyped field."""
        if not isinstance(data, Mapping):
            raise ValueError("a beacon round is an object {chain, round, signature, randomness}")
        try:
            beacon = cls(data["chain"], data["round"], data["signature"], data["randomness"])
        except KeyError as exc:
            raise ValueError(f"a beacon round needs {exc}") from None
        texts = (beacon.chain, beacon.signature, beacon.randomness)
        if not all(isinstance(t, str) for t in texts) or type(beacon.round) is not int:
            raise ValueError("a beacon round's round is an integer and its other fields text")
        return beacon


def beacon_message(round_number: int) -> bytes:
    """What round ``round_number``'s signature signs: sha256 of the round, 8 bytes big-endian."""
    return hashlib.sha256(round_number.to_bytes(8, "big")).digest()


def beacon_problem(beacon: Beacon, chain: BeaconChain) -> str | None:
    """Return why ``beacon`` is not a round of ``chain`` (None: it is): another chain, a round
    before the first, randomness that is not sha256 of the signature, or a BLS signature that
    does not verify under the chain's public key."""
    from eth_typing import BLSPubkey, BLSSignature
    from py_ecc.bls.ciphersuites import G2Basic

    if beacon.chain != chain.chain_hash:
        return (
            f"the round is of chain {beacon.chain[:16]}..., not the pinned "
            f"{chain.chain_hash[:16]}..."
        )
    if beacon.round < 1:
        return f"round {beacon.round} does not exist (the first is 1)"
    try:
        signature = bytes.fromhex(beacon.signature)
        public_key = bytes.fromhex(chain.public_key)
    except ValueError:
        return "the signature or the chain's public key is not hex"
    if hashlib.sha256(signature).hexdigest() != beacon.randomness:
        return "the randomness is not sha256 of the round's signature"
    try:
        valid = G2Basic.Verify(
            BLSPubkey(public_key), beacon_message(beacon.round), BLSSignature(signature)
        )
    except (ValueError, TypeError, AssertionError):
        valid = False
    return None if valid else f"the BLS signature of round {beacon.round} does not verify"


def early_round(entry: LogEntry, beacon: Beacon, chain: BeaconChain) -> str | None:
    """Return why ``beacon`` cannot seed the instance committed in ``entry`` (None: it can):
    its round was published at or before the commitment's integrated time, so the seed could
    have been known when the system was committed."""
    published = chain.round_time(beacon.round)
    if published > entry.integrated_time:
        return None
    return (
        f"round {beacon.round} was published at {published}, not after the commitment's "
        f"integrated time {entry.integrated_time}: draw the seed from round "
        f"{chain.first_round_after(entry.integrated_time)} or later"
    )


def derived_seed(entry: LogEntry, beacon: Beacon) -> str:
    """The instance seed of a commitment's log entry and a beacon round
    (:func:`effectbench.hashing.submission_seed`)."""
    return submission_seed(asdict(entry), beacon.to_json())
