"""A private drand-style beacon chain for tests: a BLS12-381 key the test mints, signing rounds
under one of the schemes the verifier checks (quicknet's by default: signatures on G1 of
sha256(round as 8 big-endian bytes), the public key on G2), as the tests run a private Sigstore
instance instead of the public one."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from py_ecc.bls.hash_to_curve import hash_to_G1, hash_to_G2
from py_ecc.bls.point_compression import compress_G1, compress_G2
from py_ecc.optimized_bls12_381.optimized_curve import G1, G2, multiply

from effectbench.hashing import canonical_hash
from effectbench.instances import SCHEMES, Beacon, BeaconChain, beacon_message

QUICKNET = "bls-unchained-g1-rfc9380"


def _g1_bytes(point: object) -> bytes:
    return int(compress_G1(point)).to_bytes(48, "big")  # type: ignore[arg-type]


def _g2_bytes(point: object) -> bytes:
    z1, z2 = compress_G2(point)  # type: ignore[arg-type]
    return int(z1).to_bytes(48, "big") + int(z2).to_bytes(48, "big")


class PrivateBeacon:
    """A beacon chain whose secret key the test holds."""

    def __init__(
        self, secret: int, genesis_time: int, period: int = 3, scheme: str = QUICKNET
    ) -> None:
        self._secret = secret
        self._scheme = SCHEMES[scheme]
        on_g1 = self._scheme.signature_on_g1
        key = _g2_bytes(multiply(G2, secret)) if on_g1 else _g1_bytes(multiply(G1, secret))
        facts = {"public_key": key.hex(), "genesis_time": genesis_time, "period": period}
        self.chain = BeaconChain(
            key.hex(), genesis_time, period, scheme, canonical_hash({**facts, "scheme": scheme})[7:]
        )

    def signature(self, number: int) -> bytes:
        """Round ``number``'s signature (chained: over the previous round's)."""
        previous = self.signature(number - 1) if self._scheme.chained and number > 1 else b""
        message = beacon_message(number, previous)
        sha256: Any = hashlib.sha256
        if self._scheme.signature_on_g1:
            on_g1: Any = hash_to_G1(message, self._scheme.dst, sha256)
            return _g1_bytes(multiply(on_g1, self._secret))
        on_g2: Any = hash_to_G2(message, self._scheme.dst, sha256)
        return _g2_bytes(multiply(on_g2, self._secret))

    def round(self, number: int) -> Beacon:
        """Round ``number``, signed for real."""
        signature = self.signature(number)
        previous = None
        if self._scheme.chained:
            previous = self.signature(number - 1).hex() if number > 1 else ""
        return Beacon(
            chain=self.chain.chain_hash,
            round=number,
            signature=signature.hex(),
            randomness=hashlib.sha256(signature).hexdigest(),
            previous_signature=previous,
        )

    def write_chain(self, path: Path) -> Path:
        """Write the chain's public facts (what a verifier pins)."""
        path.write_text(json.dumps(self.chain.to_json()), encoding="utf-8")
        return path
