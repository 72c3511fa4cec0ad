"""Fresh instances for a submission: commit, wait for the commitment's beacon round, draw the seed.

A submitter who wants a fresh instance of a generated pack (``clinic-generated``) first
*commits*: a DSSE in-toto Statement (:data:`COMMITMENT_PREDICATE`) naming the system and the
digest of its configuration (:func:`configuration_digest`: the harness, the model and the
configuration file's hash, which the bundle declares again), signed keyless with Sigstore like a
submission and so logged in the transparency log, which gives it an integrated time and a log
index. The instance seed is then derived from that log entry and *one* beacon round
(:func:`effectbench.hashing.submission_seed`): the first published more than
:data:`ROUND_DELAY` seconds after the integrated time (:func:`commitment_round`), no other, so
nobody, the submitter included, knew or could choose the seed when the system was fixed.

The beacon is drand. A chain is its ``/info``: a BLS12-381 public key, a genesis time, a period,
a scheme and a hash (:class:`BeaconChain`); round ``r`` is published at
``genesis + (r - 1) * period`` and its randomness is ``sha256(signature)``. The production chain
is quicknet (``bls-unchained-g1-rfc9380``: signatures on G1 of ``sha256(r as 8 big-endian
bytes)``, hashed to the curve by RFC 9380 with ``BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_``,
the public key on G2); the ``pedersen-bls-unchained`` and ``pedersen-bls-chained`` schemes
(signatures on G2; a chained round also signs its predecessor's signature) are verified too
(:data:`SCHEMES`). :func:`beacon_problem` verifies the pairing for real with ``py_ecc``. The
verifier pins the chain as a file (:data:`verifier.commitment.PINNED_CHAIN`); tests mint a
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
from typing import Any, cast

from effectbench.errors import DataError
from effectbench.hashing import canonical_hash, hash_file, submission_seed

__all__ = [
    "COMMITMENT_PREDICATE",
    "ROUND_DELAY",
    "SCHEMES",
    "Beacon",
    "BeaconChain",
    "LogEntry",
    "Scheme",
    "beacon_message",
    "beacon_problem",
    "bls_verifies",
    "commitment_round",
    "commitment_statement",
    "configuration_digest",
    "configuration_file_digest",
    "derived_seed",
    "harness_name",
    "log_entry",
    "round_problem",
]

COMMITMENT_PREDICATE = "https://effectbench.org/commitment/v1"
"""The predicate type of a commitment Statement."""


def configuration_file_digest(path: Path) -> str:
    """Return ``sha256:<hex>`` of a configuration file."""
    try:
        return "sha256:" + hash_file(path)
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None


def harness_name(baseline: str | None, sut: str | None) -> str:
    """The harness a run used, as a commitment and a bundle name it: ``baseline:NAME`` for a
    shipped baseline, ``sut:MODULE:ATTR`` for a system under test of one's own."""
    if baseline:
        return f"baseline:{baseline}"
    if sut:
        return f"sut:{sut}"
    raise ValueError("a harness is a shipped baseline (--baseline) or a system (--sut)")


def configuration_digest(harness: str, model: str, configuration_file: str) -> str:
    """Return the digest a commitment binds: the canonical hash of the harness
    (:func:`harness_name`), the model (``""``: none) and the configuration file's digest
    (:func:`configuration_file_digest`), the three a committed bundle declares again."""
    return canonical_hash(
        {"harness": harness, "model": model, "configuration_file": configuration_file}
    )


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
class Scheme:
    """A drand signing scheme: which group carries the signature and what a round signs."""

    name: str
    signature_on_g1: bool
    """True: signatures on G1 (48 bytes) and the public key on G2 (96 bytes); else swapped."""
    dst: bytes
    """The hash-to-curve domain separation tag (RFC 9380) of the signature's group."""
    chained: bool
    """True: a round signs its predecessor's signature with its number (``previous_signature``)."""


SCHEMES = {
    s.name: s
    for s in (
        Scheme(
            "bls-unchained-g1-rfc9380", True, b"BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_", False
        ),
        Scheme(
            "pedersen-bls-unchained", False, b"BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_NUL_", False
        ),
        Scheme("pedersen-bls-chained", False, b"BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_NUL_", True),
    )
}
"""The drand schemes a round is verified under, by the name a chain's info gives."""

ROUND_DELAY = 10
"""Seconds after a commitment's integrated time before its round may be published: the round
is the first one published strictly after ``integrated_time + ROUND_DELAY`` (a margin for the
log's clock, so the round cannot be one already out when the entry was made)."""


@dataclass(frozen=True)
class BeaconChain:
    """A drand chain's public facts (its ``/info``): public key, genesis time, period, scheme
    and the chain's hash, which names it in every round."""

    public_key: str
    """The BLS public key as hex: 96 bytes (G2) when the scheme signs on G1, else 48 (G1)."""
    genesis_time: int
    period: int
    """Seconds between rounds."""
    scheme: str
    """The scheme's name (:data:`SCHEMES`)."""
    hash: str
    """The chain's hash (hex) as drand publishes it: what a round's ``chain`` names."""

    @property
    def chain_hash(self) -> str:
        """The chain's identity (:attr:`hash`)."""
        return self.hash

    def round_time(self, round_number: int) -> int:
        """When round ``round_number`` (1 is the first) is published."""
        return self.genesis_time + (round_number - 1) * self.period

    def first_round_after(self, when: int) -> int:
        """The first round published strictly after ``when`` (seconds since the epoch)."""
        if when < self.genesis_time:
            return 1
        return (when - self.genesis_time) // self.period + 2

    def to_json(self) -> dict[str, Any]:
        """The chain file's content."""
        return asdict(self)

    @classmethod
    def from_file(cls, path: Path) -> BeaconChain:
        """Read a chain file (JSON ``{public_key, genesis_time, period, scheme, hash}``, as
        drand's ``/info`` gives them; other keys are ignored)."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise DataError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
        except ValueError:
            raise DataError("not JSON", file=str(path)) from None
        if not isinstance(data, Mapping):
            raise DataError("a beacon chain is a JSON object", file=str(path))
        try:
            chain = cls(
                str(data["public_key"]),
                int(data["genesis_time"]),
                int(data["period"]),
                str(data.get("scheme", data.get("schemeID"))),
                str(data["hash"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"a beacon chain needs {exc}", file=str(path)) from None
        if chain.period <= 0:
            raise DataError("the period must be positive", file=str(path), field="period")
        if chain.scheme not in SCHEMES:
            raise DataError(
                f"scheme {chain.scheme!r} is not one this verifier checks ({', '.join(SCHEMES)})",
                file=str(path),
                field="scheme",
            )
        return chain


@dataclass(frozen=True)
class Beacon:
    """One published beacon round."""

    chain: str
    """The chain's hash (:attr:`BeaconChain.hash`)."""
    round: int
    signature: str
    """The BLS signature of :func:`beacon_message` as hex (on the chain scheme's group)."""
    randomness: str
    """sha256 hex of the signature."""
    previous_signature: str | None = None
    """The previous round's signature (hex), which a chained scheme's round signs."""

    def to_json(self) -> dict[str, Any]:
        """The round as JSON."""
        data = asdict(self)
        if self.previous_signature is None:
            del data["previous_signature"]
        return data

    @classmethod
    def from_json(cls, data: Any, chain: str | None = None) -> Beacon:
        """Read a round: ours (``{chain, round, signature, randomness}``) or, with ``chain``
        given, drand's own JSON (which names no chain). Raises :class:`ValueError` naming a
        missing or mistyped field."""
        if not isinstance(data, Mapping):
            raise ValueError("a beacon round is an object {chain, round, signature, randomness}")
        named = data.get("chain", chain)
        try:
            beacon = cls(
                named,
                data["round"],
                data["signature"],
                data["randomness"],
                data.get("previous_signature"),
            )
        except KeyError as exc:
            raise ValueError(f"a beacon round needs {exc}") from None
        if beacon.chain is None:
            raise ValueError("a beacon round needs 'chain' (the chain's hash)")
        texts = (beacon.chain, beacon.signature, beacon.randomness)
        if not all(isinstance(t, str) for t in texts) or type(beacon.round) is not int:
            raise ValueError("a beacon round's round is an integer and its other fields text")
        if beacon.previous_signature is not None and not isinstance(beacon.previous_signature, str):
            raise ValueError("a beacon round's previous_signature is text")
        return beacon


def beacon_message(round_number: int, previous_signature: bytes = b"") -> bytes:
    """What round ``round_number``'s signature signs: sha256 of the previous signature (chained
    schemes only; empty otherwise) and the round as 8 big-endian bytes."""
    return hashlib.sha256(previous_signature + round_number.to_bytes(8, "big")).digest()


def _point(data: bytes, on_g1: bool) -> Any:
    """Decompress a point (ZCash encoding) and check it is in the prime-order subgroup;
    raises ValueError otherwise."""
    from py_ecc.bls.point_compression import decompress_G1, decompress_G2
    from py_ecc.optimized_bls12_381.optimized_curve import curve_order, is_inf, multiply

    if len(data) != (48 if on_g1 else 96):
        raise ValueError("wrong length")
    point: Any
    if on_g1:
        point = decompress_G1(cast(Any, int.from_bytes(data, "big")))
    else:
        halves = (int.from_bytes(data[:48], "big"), int.from_bytes(data[48:], "big"))
        point = decompress_G2(cast(Any, halves))
    if is_inf(point) or not is_inf(multiply(point, curve_order)):
        raise ValueError("not in the subgroup")
    return point


def bls_verifies(scheme: Scheme, public_key: bytes, message: bytes, signature: bytes) -> bool:
    """Whether ``signature`` is ``public_key``'s BLS signature of ``message`` under ``scheme``
    (``e(sig, g) == e(H(message), pk)``, hashing to the signature's group by RFC 9380)."""
    from py_ecc.bls.hash_to_curve import hash_to_G1, hash_to_G2
    from py_ecc.fields import optimized_bls12_381_FQ12 as FQ12
    from py_ecc.optimized_bls12_381.optimized_curve import G1, G2, neg
    from py_ecc.optimized_bls12_381.optimized_pairing import final_exponentiate, pairing

    sha256: Any = hashlib.sha256
    try:
        sig = _point(signature, scheme.signature_on_g1)
        key = _point(public_key, not scheme.signature_on_g1)
    except (ValueError, TypeError, AssertionError):
        return False
    if scheme.signature_on_g1:  # e(G2, sig) == e(pk, H(m)), pairing's arguments being (G2, G1)
        hashed: Any = hash_to_G1(message, scheme.dst, sha256)
        product = pairing(G2, sig, final_exponentiate=False) * pairing(
            neg(key), hashed, final_exponentiate=False
        )
    else:
        hashed = hash_to_G2(message, scheme.dst, sha256)
        product = pairing(sig, G1, final_exponentiate=False) * pairing(
            hashed, neg(key), final_exponentiate=False
        )
    return bool(final_exponentiate(product) == FQ12.one())


def beacon_problem(beacon: Beacon, chain: BeaconChain) -> str | None:
    """Return why ``beacon`` is not a round of ``chain`` (None: it is): another chain, a round
    before the first, randomness that is not sha256 of the signature, or a BLS signature that
    does not verify under the chain's public key and scheme."""
    if beacon.chain != chain.chain_hash:
        return (
            f"the round is of chain {beacon.chain[:16]}..., not the pinned "
            f"{chain.chain_hash[:16]}..."
        )
    if beacon.round < 1:
        return f"round {beacon.round} does not exist (the first is 1)"
    scheme = SCHEMES[chain.scheme]
    try:
        signature = bytes.fromhex(beacon.signature)
        public_key = bytes.fromhex(chain.public_key)
        previous = bytes.fromhex(beacon.previous_signature or "")
    except ValueError:
        return "the signature, the previous signature or the chain's public key is not hex"
    if scheme.chained and beacon.previous_signature is None:
        return f"a round of a {scheme.name} chain carries its previous_signature"
    if hashlib.sha256(signature).hexdigest() != beacon.randomness:
        return "the randomness is not sha256 of the round's signature"
    message = beacon_message(beacon.round, previous if scheme.chained else b"")
    if bls_verifies(scheme, public_key, message, signature):
        return None
    return f"the BLS signature of round {beacon.round} does not verify ({scheme.name})"


def commitment_round(entry: LogEntry, chain: BeaconChain) -> int:
    """The one round that seeds the instance committed in ``entry``: the first published
    strictly after its integrated time plus :data:`ROUND_DELAY`."""
    return chain.first_round_after(entry.integrated_time + ROUND_DELAY)


def round_problem(entry: LogEntry, beacon: Beacon, chain: BeaconChain) -> tuple[str, str] | None:
    """Return why ``beacon`` cannot seed the instance committed in ``entry`` (None: it can), as
    ``(kind, message)``: ``"late_commitment"`` when the commitment was integrated after the
    round was published (the seed could have been known when the system was committed),
    ``"round"`` for any other round than :func:`commitment_round`."""
    want = commitment_round(entry, chain)
    published = chain.round_time(beacon.round)
    if published <= entry.integrated_time:
        return (
            "late_commitment",
            f"the commitment was integrated at {entry.integrated_time}, after round "
            f"{beacon.round} was published ({published}): its round is {want}",
        )
    if beacon.round != want:
        return (
            "round",
            f"round {beacon.round} is not the commitment's round {want} (the first published "
            f"more than {ROUND_DELAY} s after its integrated time {entry.integrated_time}, at "
            f"{chain.round_time(want)}): the seed is drawn from round {want}, no other",
        )
    return None


def derived_seed(entry: LogEntry, beacon: Beacon) -> str:
    """The instance seed of a commitment's log entry and a beacon round
    (:func:`effectbench.hashing.submission_seed`)."""
    return submission_seed(asdict(entry), beacon.to_json())
