"""A private beacon chain for tests: a BLS12-381 key the test mints, signing drand-style rounds
(unchained: the signature of sha256(round as 8 big-endian bytes)), as the tests run a private
Sigstore instance instead of the public one."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path

from eth_typing import BLSSignature
from py_ecc.bls.ciphersuites import G2Basic

from effectbench.instances import Beacon, BeaconChain, beacon_message


class PrivateBeacon:
    """A beacon chain whose secret key the test holds."""

    def __init__(self, secret: int, genesis_time: int, period: int = 3) -> None:
        self._secret = secret
        self.chain = BeaconChain(G2Basic.SkToPk(secret).hex(), genesis_time, period)

    def round(self, number: int) -> Beacon:
        """Round ``number``, signed for real."""
        signature: BLSSignature = G2Basic.Sign(self._secret, beacon_message(number))
        return Beacon(
            chain=self.chain.chain_hash,
            round=number,
            signature=bytes(signature).hex(),
            randomness=hashlib.sha256(bytes(signature)).hexdigest(),
        )

    def write_chain(self, path: Path) -> Path:
        """Write the chain's public facts (what a verifier pins)."""
        path.write_text(json.dumps(asdict(self.chain)), encoding="utf-8")
        return path
