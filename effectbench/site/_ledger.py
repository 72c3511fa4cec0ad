"""The site build's use of the verification ledger (:mod:`verifier.ledger`), and the board
CI's side of it: appending summaries after a full verification, signing a checkpoint,
auditing every bundle.

A build given a ledger (:class:`LedgerCheck`) verifies the checkpoint once, then takes the
ledger's report for every bundle whose folder hashes to its latest signed summary made by
this very verifier (:func:`verifier_version`) under this build's policy
(:func:`policy_digest`), except :data:`verifier.ledger.SAMPLE_SIZE` of them drawn from the
checkpoint's root, which are verified in full and must agree with their summaries. Any
refusal is named in the build's notes (``ledger.*``) and its bundles, or all of them, are
verified in full, as without a ledger.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from effectbench.errors import DataError, SigningError
from effectbench.hashing import canonical_json
from effectbench.sealed import default_seal
from effectbench.site._digests import FileDigests
from effectbench.site._reports import (
    _file_digests,
    _verify_jobs,
    _VerifyJob,
    policy_digest,
    verifier_version,
)
from verifier.ledger import (
    CHECKPOINT_FILE,
    ENTRIES_FILE,
    LIFETIME_DAYS,
    REPORTS_DIR,
    SAMPLE_SIZE,
    Checkpoint,
    Ledger,
    Refusal,
    bundle_digest,
    checkpoint_statement,
    leaf_hash,
    open_ledger,
    read_checkpoint,
    read_entries,
    sample,
    summary_statement,
    tree_root,
)
from verifier.records import RecordPolicy, load_signers
from verifier.report import BundleReport

__all__ = [
    "LedgerCheck",
    "append_summaries",
    "audit",
    "policy_digest",
    "sign_checkpoint",
    "verifier_version",
]


def _last_file(cache_root: Path) -> Path:
    return cache_root / "ledger" / "last-checkpoint.json"


@dataclass
class LedgerCheck:
    """What a build trusts the ledger for, and what it found (:attr:`notes`)."""

    folder: Path
    signers: tuple[tuple[str, str], ...]
    """The board CI's identities ((identity, issuer)): beside ``verifier/record_signers.json``."""
    trust_config: Path | None = None
    """The Sigstore root the checkpoint is verified under (None: the pinned production root)."""
    previous: Path | None = None
    """The last published signed checkpoint (the new one must extend it)."""
    cache_root: Path | None = None
    """Where this machine keeps the last checkpoint it accepted (also extended or refused)."""
    now: datetime | None = None
    sample_size: int = SAMPLE_SIZE
    notes: list[str] = field(default_factory=list)
    ledger: Ledger | None = None
    trusted_count: int = 0
    """Bundles whose report the build took from the ledger (the sample left out)."""
    sampled: int = 0
    """Ledgered bundles the build verified in full all the same."""

    def _previous(self) -> tuple[int, bytes] | Refusal | None:
        """The (size, root) the checkpoint must extend: the larger of the given previous
        checkpoint and this machine's last accepted one."""
        found: list[tuple[int, bytes]] = []
        if self.previous is not None:
            point = read_checkpoint(self.previous, self.all_signers, self.trust_config)
            if isinstance(point, Refusal):
                return Refusal(point.code, f"the previous checkpoint: {point.message}")
            found.append((point.size, point.root))
        if self.cache_root is not None:
            data = default_seal().read_object("ledger-checkpoint", _last_file(self.cache_root))
            if data is not None and data.get("folder") == str(self.folder.resolve()):
                found.append((int(data["size"]), bytes.fromhex(str(data["root"]))))
        return max(found, key=lambda p: p[0]) if found else None

    @property
    def all_signers(self) -> tuple[tuple[str, str], ...]:
        return (*load_signers(), *self.signers)

    def open(self) -> Ledger | None:
        """Check the ledger as a whole once; None (with a note) when it is refused or absent."""
        previous = self._previous()
        if isinstance(previous, Refusal):
            self._refuse(previous)
            return None
        got = open_ledger(
            self.folder,
            signers=self.all_signers,
            trust_config=self.trust_config,
            previous=previous,
            now=self.now,
        )
        if got is None:
            return None  # no ledger (a fresh fork): every bundle verified in full, as before
        if isinstance(got, Refusal):
            self._refuse(got)
            return None
        self.ledger = got
        return got

    def _refuse(self, refusal: Refusal) -> None:
        self.ledger = None
        self.notes.append(f"{refusal}; the ledger is not trusted, every bundle verified in full")

    def plan(
        self,
        bundles: Sequence[Path],
        entries: Mapping[int, dict[str, str] | None],
        *,
        policy: str,
        version: Mapping[str, str],
    ) -> tuple[dict[int, bytes], list[int]]:
        """Which bundles take the ledger's report (index to the report's bytes) and which of
        those are the sample verified in full; every refused summary noted by name."""
        ledger = self.ledger if self.ledger is not None else self.open()
        if ledger is None:
            return {}, []
        trusted: dict[int, bytes] = {}
        digests: dict[str, str] = {}
        index_of: dict[str, int] = {}
        refused: list[str] = []
        for i, bundle in enumerate(bundles):
            got = ledger.trusted(bundle.name, entries.get(i), version, policy)
            if isinstance(got, Refusal):
                refused.append(str(got))
            elif got is not None:
                summary, raw = got
                trusted[i] = raw
                digests[bundle.name] = summary.digest
                index_of[bundle.name] = i
        for line in refused:
            self.notes.append(f"{line}; that bundle is verified in full")
        drawn = sample(ledger.checkpoint.root, digests, self.sample_size)
        self.trusted_count, self.sampled = len(trusted) - len(drawn), len(drawn)
        return trusted, sorted(index_of[name] for name in drawn)

    def agrees(self, name: str, ledgered: bytes, fresh: bytes) -> bool:
        """Whether a sampled bundle's full verification gives its summary's report (the path
        aside); if not, the ledger is refused (``ledger.sample``)."""
        if _verdict(ledgered) == _verdict(fresh):
            return True
        self._refuse(
            Refusal(
                "ledger.sample",
                f"{name}: verified in full, its report differs from the ledger's",
            )
        )
        return False

    def accepted(self) -> None:
        """Remember the checkpoint this build trusted (rollbacks below it are refused later)
        and say how many bundles it served."""
        if self.ledger is None:
            return
        point = self.ledger.checkpoint
        if self.cache_root is not None:
            data = {
                "folder": str(self.folder.resolve()),
                "size": point.size,
                "root": point.root.hex(),
            }
            default_seal().write(
                "ledger-checkpoint", _last_file(self.cache_root), orjson.dumps(data)
            )
        self.notes.append(
            f"verification ledger: checkpoint of {point.size} summaries signed by {point.signer}; "
            f"{self.trusted_count} bundle(s) taken from it, a sample of {self.sampled} drawn "
            "from it verified in full"
        )


def _verdict(raw: bytes) -> str:
    """A report's JSON with its path left out, wherever it stands (a finding names files
    under it): what a full verification must give again, however the folder was spelled."""
    doc: dict[str, Any] = json.loads(raw)
    path = str(doc.pop("path", ""))
    text = canonical_json(doc)
    return text.replace(json.dumps(path)[1:-1], "\0bundle") if path else text


# --- the board CI's side: append, sign, audit -------------------------------------------


@dataclass(frozen=True)
class VerifySetup:
    """How the board CI verifies bundles (the site build's options)."""

    allow_unsigned: bool = False
    trust_config: Path | None = None
    records: RecordPolicy = RecordPolicy()
    beacon_chain: Path | None = None

    def job(self, bundle: Path) -> _VerifyJob:
        return _VerifyJob(
            str(bundle),
            self.allow_unsigned,
            None,
            str(self.trust_config) if self.trust_config is not None else None,
            self.records,
            False,
            True,
            str(self.beacon_chain) if self.beacon_chain is not None else None,
        )

    def policy(self) -> str:
        return policy_digest(
            allow_unsigned=self.allow_unsigned,
            trust_config=self.trust_config,
            records=self.records,
            beacon_chain=self.beacon_chain,
        )


def _latest_any(folder: Path) -> dict[str, dict[str, Any]]:
    """Every folder's latest summary, signed or not yet signed (append's own view)."""
    out: dict[str, dict[str, Any]] = {}
    for line in read_entries(folder):
        doc = json.loads(line)
        out[str(doc["subject"][0]["name"])] = doc
    return out


def append_summaries(
    ledger: Path,
    bundles: Sequence[Path],
    setup: VerifySetup,
    *,
    tell: Callable[[str], None] = print,
) -> int:
    """Verify in full every bundle of ``bundles`` the ledger has no current summary of (its
    files, verifier version and policy unchanged) and append one summary each; return how
    many were appended. The reports go to ``reports/``; nothing is signed."""
    version = verifier_version()
    policy = setup.policy()
    latest = _latest_any(ledger)
    digests = FileDigests()
    (ledger / REPORTS_DIR).mkdir(parents=True, exist_ok=True)
    added = 0
    for bundle in bundles:
        entries = _file_digests(bundle, digests)
        if entries is None:
            tell(f"{bundle.name}: holds a link, not ledgered (the build verifies it in full)")
            continue
        digest = bundle_digest(entries)
        old = latest.get(bundle.name)
        if old is not None:
            pred = old["predicate"]
            if (
                "sha256:" + old["subject"][0]["digest"]["sha256"] == digest
                and pred["verifier"]["version"] == version
                and "sha256:" + pred["policy"]["digest"]["sha256"] == policy
            ):
                continue
        (raw,) = _verify_jobs([setup.job(bundle)])
        report = BundleReport.model_validate_json(raw)
        report_sha = hashlib.sha256(raw).hexdigest()
        target = ledger / REPORTS_DIR / f"{report_sha}.json"
        if not target.exists():
            tmp = target.with_name(f".{target.name}.tmp")
            tmp.write_bytes(raw)
            tmp.replace(target)
        doc = summary_statement(
            folder=bundle.name,
            digest=digest,
            verifier_version=version,
            policy_digest=policy,
            accepted=report.accepted,
            report_digest=report_sha,
            verified_at=datetime.now(UTC),
        )
        with (ledger / ENTRIES_FILE).open("ab") as handle:
            handle.write(canonical_json(doc).encode() + b"\n")
            handle.flush()
            os.fsync(handle.fileno())
        latest[bundle.name] = doc
        added += 1
        result = "PASSED" if report.accepted else "FAILED"
        tell(f"{bundle.name}: {report.status} ({result}), appended")
    return added


def sign_checkpoint(
    ledger: Path,
    *,
    signers: Sequence[tuple[str, str]],
    identity_token: str | None = None,
    trust_config: Path | None = None,
    lifetime: timedelta = timedelta(days=LIFETIME_DAYS),
) -> Checkpoint:
    """Sign a checkpoint over every entry of ``ledger`` (keyless Sigstore, the board CI's
    identity) and write it once it verifies under ``signers``; return it."""
    from sigstore import dsse

    from effectbench.signatures.sign import sign_statement

    try:
        lines = read_entries(ledger)
    except DataError:
        raise
    if not lines:
        raise DataError("the ledger has no entries to sign", file=str(ledger / ENTRIES_FILE))
    root = tree_root([leaf_hash(line) for line in lines])
    body = checkpoint_statement(len(lines), root, datetime.now(UTC) + lifetime)
    raw, _, _ = sign_statement(
        dsse.Statement(canonical_json(body).encode()),
        identity_token=identity_token,
        trust_config=trust_config,
    )
    out = ledger / CHECKPOINT_FILE
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_bytes(raw)
    point = read_checkpoint(tmp, (*load_signers(), *signers), trust_config)
    if isinstance(point, Refusal):
        tmp.unlink()
        raise SigningError(f"the fresh checkpoint does not verify, nothing written: {point}")
    tmp.replace(out)
    return point


def audit(
    bundles: Sequence[Path],
    setup: VerifySetup,
    check: LedgerCheck | None,
    *,
    tell: Callable[[str], None] = print,
) -> int:
    """Verify every bundle in full and hold each against the ledger (when there is one);
    return the number of disagreements: the ledger refused as a whole, a summary refused, or
    a summary's report that is not what the full verification gives. A bundle the ledger has
    no summary of is reported, not counted."""
    opened = check.open() if check is not None else None
    bad = 0
    if check is not None:
        for note in check.notes:
            tell(note)
        bad += len(check.notes)
    version, policy = verifier_version(), setup.policy()
    digests = FileDigests()
    for bundle in bundles:
        (fresh,) = _verify_jobs([setup.job(bundle)])
        got = (
            opened.trusted(bundle.name, _file_digests(bundle, digests), version, policy)
            if opened is not None
            else None
        )
        if got is None:
            tell(f"{bundle.name}: {_status(fresh)} (no summary in the ledger)")
        elif isinstance(got, Refusal):
            bad += 1
            tell(f"{bundle.name}: {_status(fresh)}; {got}")
        elif _verdict(got[1]) != _verdict(fresh):
            bad += 1
            tell(f"{bundle.name}: ledger.sample: verified in full, its report is not the summary's")
        else:
            tell(f"{bundle.name}: {_status(fresh)}, agrees with entry {got[0].index}")
    return bad


def _status(raw: bytes) -> str:
    return str(json.loads(raw)["status"])
