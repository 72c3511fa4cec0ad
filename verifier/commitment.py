"""A fresh instance's provenance: its commitment, its beacon round and the seed derived from them.

A bundle on a fresh instance (``instances`` in ``submission.json``, a seed other than the pack's
public one) may carry the signed commitment (a Sigstore bundle over a
:data:`effectbench.instances.COMMITMENT_PREDICATE` Statement), the configuration it committed
(harness, model, configuration file hash) and the beacon round its seed was drawn with.
:func:`check_commitment` refuses, each with its named ``pack.instance_*`` finding:

* a commitment that does not verify under the trust root, or names another system or pack
  (``pack.instance_commitment``), or is signed by another identity than the bundle's declared
  signer (``pack.instance_commitment_signer``);
* a declared configuration whose digest is not the committed one, or whose harness is not the
  bundle's baseline (``pack.instance_configuration``);
* a commitment integrated in the log after the run started or after its round was published
  (``pack.instance_commitment_time``);
* a beacon round that does not verify under the pinned chain (:data:`PINNED_CHAIN`, drand's
  quicknet, unless the caller pins another), or no chain pinned (``pack.instance_beacon``);
* any round but the commitment's own, the first published more than
  :data:`effectbench.instances.ROUND_DELAY` seconds after its integrated time
  (``pack.instance_round``);
* a seed that is not :func:`effectbench.instances.derived_seed` of the entry and the round
  (``pack.instance_derived_seed``).

A fresh instance without a commitment is not refused: it is reported uncommitted
(``instance_committed`` false), as a public-seed bundle is reported public.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from effectbench.bundle import InstanceDecl, SubmissionHeader
from effectbench.errors import DataError
from effectbench.findings import CheckId
from effectbench.instances import (
    COMMITMENT_PREDICATE,
    Beacon,
    BeaconChain,
    LogEntry,
    beacon_problem,
    configuration_digest,
    derived_seed,
    harness_name,
    log_entry,
    round_problem,
)
from verifier.instances import InstanceFacts, rerun_hint
from verifier.report import FindingSink

if TYPE_CHECKING:
    from effectbench.signatures.verify import SignerInfo

__all__ = ["PINNED_CHAIN", "check_commitment"]

PINNED_CHAIN = Path(__file__).with_name("beacon_chain.json")
"""The production beacon chain every round is verified under: drand's quicknet (its ``/info``,
scheme ``bls-unchained-g1-rfc9380``)."""


def _epoch(text: str) -> int | None:
    try:
        return int(datetime.fromisoformat(text).timestamp()) if text else None
    except ValueError:
        return None


class _Refused(Exception):
    """A committed instance refused: the check, what is wrong, and the field of
    ``instances`` it is about."""

    def __init__(self, check: CheckId, message: str, field: str) -> None:
        super().__init__(message)
        self.check, self.message, self.field = check, message, field


def check_commitment(
    header: SubmissionHeader,
    facts: InstanceFacts | None,
    sink: FindingSink,
    file: str,
    *,
    trust_config: Path | None = None,
    beacon_chain: Path | None = None,
) -> bool | None:
    """Check a fresh instance's commitment and beacon; return whether the instance is
    committed (None: the bundle is on no fresh instance)."""
    decl = header.instances
    if facts is None or facts.public or decl is None:
        return None
    if decl.commitment is None and decl.beacon is None:
        return False
    try:
        _check_committed(header, decl, facts, trust_config, beacon_chain)
    except _Refused as refused:
        sink.emit(refused.check, refused.message, file, None, f"instances.{refused.field}")
        return False
    return True


def _check_committed(
    header: SubmissionHeader,
    decl: InstanceDecl,
    facts: InstanceFacts,
    trust_config: Path | None,
    beacon_chain: Path | None,
) -> None:
    """Raise :class:`_Refused` at the first thing wrong with a committed instance, in the
    order a submitter fixes them: the declaration, the signed commitment, the configuration,
    the time, the beacon round, the seed."""
    if decl.commitment is None or decl.beacon is None:
        raise _Refused(
            CheckId.PACK_INSTANCE_COMMITMENT,
            "a committed instance carries both its commitment and its beacon round",
            "commitment" if decl.commitment is None else "beacon",
        )
    predicate, signed = _signed_commitment(header, decl.commitment, trust_config)
    _check_configuration(header, decl, _committed_digest(header, predicate))
    try:
        entry = log_entry(decl.commitment)
        beacon = Beacon.from_json(decl.beacon)
    except ValueError as exc:
        raise _Refused(CheckId.PACK_INSTANCE_BEACON, str(exc), "beacon") from None
    _check_time(header, entry, signed, rerun_hint(header.pack.name, facts.seed))
    _check_round(entry, beacon, beacon_chain)
    want = derived_seed(entry, beacon)
    if decl.seed != want:
        raise _Refused(
            CheckId.PACK_INSTANCE_DERIVED_SEED,
            f"the seed {decl.seed!r} is not the one derived from log entry {entry.log_index} and "
            f"beacon round {beacon.round} ({want!r}); {rerun_hint(header.pack.name, want)}",
            "seed",
        )


def _signed_commitment(
    header: SubmissionHeader, commitment: dict[str, Any], trust_config: Path | None
) -> tuple[dict[str, Any], SignerInfo]:
    """The commitment's predicate and who signed it when, verified as signed by the bundle's
    own signer."""
    if header.signer is None:
        raise _Refused(
            CheckId.PACK_INSTANCE_COMMITMENT_SIGNER,
            "the bundle declares no signer to hold its commitment's signer to; declare the "
            "identity that signed the commitment and sign the bundle with it",
            "commitment",
        )
    from effectbench.signatures.verify import StatementProblem, verify_statement  # sigstore

    signer = (header.signer.identity, header.signer.issuer)
    try:
        statement, signed = verify_statement(
            json.dumps(commitment).encode(), [signer], trust_config
        )
    except StatementProblem as problem:
        if problem.kind == "identity":
            raise _Refused(
                CheckId.PACK_INSTANCE_COMMITMENT_SIGNER,
                f"the commitment is {problem.message}; the bundle's signer is {signer[0]} "
                f"(issuer {signer[1]}): commit and submit as one identity",
                "commitment",
            ) from None
        raise _Refused(
            CheckId.PACK_INSTANCE_COMMITMENT,
            f"the commitment does not verify ({problem.kind}): {problem.message}",
            "commitment",
        ) from None
    predicate = statement.get("predicate")
    if statement.get("predicateType") != COMMITMENT_PREDICATE or not isinstance(predicate, dict):
        raise _Refused(
            CheckId.PACK_INSTANCE_COMMITMENT,
            f"the signed statement is not a commitment (predicateType {COMMITMENT_PREDICATE})",
            "commitment",
        )
    return predicate, signed


def _committed_digest(header: SubmissionHeader, predicate: dict[str, Any]) -> str:
    """The configuration digest the commitment names, for this system on this pack."""
    named = (predicate.get("system"), predicate.get("pack"))
    if named != (header.system.name, header.pack.name):
        raise _Refused(
            CheckId.PACK_INSTANCE_COMMITMENT,
            f"the commitment names system {named[0]!r} on pack {named[1]!r}; the bundle is "
            f"{header.system.name!r} on {header.pack.name!r}",
            "commitment",
        )
    digest = predicate.get("configuration_digest")
    if not isinstance(digest, str) or not digest.startswith("sha256:") or len(digest) != 71:
        raise _Refused(
            CheckId.PACK_INSTANCE_COMMITMENT,
            "the commitment names no configuration digest (sha256:<64 hex digits>)",
            "commitment",
        )
    return digest


def _check_configuration(header: SubmissionHeader, decl: InstanceDecl, digest: str) -> None:
    """The declared configuration is the committed one, and the bundle's baseline runs it."""
    configured = decl.configuration
    if configured is None:
        raise _Refused(
            CheckId.PACK_INSTANCE_CONFIGURATION,
            "a committed instance declares the configuration it committed (harness, model, "
            "configuration file hash): submit with --config, and --model if the commit named one",
            "configuration",
        )
    declared = configuration_digest(configured.harness, configured.model, configured.file)
    if declared != digest:
        raise _Refused(
            CheckId.PACK_INSTANCE_CONFIGURATION,
            f"the declared configuration (harness {configured.harness!r}, model "
            f"{configured.model!r}, file {configured.file}) has digest {declared}, not the "
            f"committed {digest}: run the configuration that was committed",
            "configuration",
        )
    baseline = header.system.baseline
    if baseline is not None and configured.harness != harness_name(baseline, None):
        raise _Refused(
            CheckId.PACK_INSTANCE_CONFIGURATION,
            f"the committed harness is {configured.harness!r}, but the bundle is baseline "
            f"{baseline!r} ({harness_name(baseline, None)!r})",
            "configuration.harness",
        )


def _check_time(header: SubmissionHeader, entry: LogEntry, signed: SignerInfo, hint: str) -> None:
    """The commitment was integrated into the log before the run started."""
    started = _epoch(header.run.started_at)
    if started is None or entry.integrated_time > started:
        raise _Refused(
            CheckId.PACK_INSTANCE_COMMITMENT_TIME,
            f"the commitment was integrated at {signed.signed_at}, "
            + ("and the run states no start time" if started is None else "after the run started")
            + f" ({header.run.started_at or 'run.started_at is empty'}): commit first, then "
            f"{hint}",
            "commitment",
        )


def _check_round(entry: LogEntry, beacon: Beacon, beacon_chain: Path | None) -> None:
    """The beacon round verifies under the pinned chain and is the round the commitment's
    time calls for."""
    if beacon_chain is None:
        raise _Refused(
            CheckId.PACK_INSTANCE_BEACON,
            "no beacon chain is pinned in this verifier, so the round cannot be verified "
            "(pass --beacon-chain FILE)",
            "beacon",
        )
    try:
        chain = BeaconChain.from_file(beacon_chain)
    except DataError as exc:
        raise _Refused(CheckId.PACK_INSTANCE_BEACON, exc.diagnostics(), "beacon") from None
    wrong = beacon_problem(beacon, chain)
    if wrong is not None:
        raise _Refused(CheckId.PACK_INSTANCE_BEACON, wrong, "beacon")
    misplaced = round_problem(entry, beacon, chain)
    if misplaced is None:
        return
    kind, message = misplaced
    if kind == "late_commitment":
        raise _Refused(
            CheckId.PACK_INSTANCE_COMMITMENT_TIME,
            f"{message}; commit again and run the instance of that commitment's round "
            "(effectbench draw)",
            "beacon.round",
        )
    raise _Refused(
        CheckId.PACK_INSTANCE_ROUND,
        f"{message} (effectbench draw fetches it); re-run every task of its instance",
        "beacon.round",
    )
