"""The verification ledger: the board CI's verdicts, kept in an append-only Merkle tree.

When the board CI verifies a bundle it records one **verification summary**, an in-toto
Statement shaped as a SLSA Verification Summary Attestation (predicate type
:data:`VSA_TYPE`): the bundle's folder name and digest (:func:`bundle_digest`: every entry
of the folder, the signature file included) as subject; the verifier's id and version; the
digest of the policy it verified under; ``PASSED`` or ``FAILED``; and the digest of the
report it wrote (kept beside the summaries, ``reports/<hex>.json``). Summaries are the
leaves of a Merkle tree (RFC 6962 / RFC 9162 hashing, :func:`leaf_hash`,
:func:`tree_root`), one canonical JSON line each in ``entries.jsonl``; a **checkpoint**
(size, root, ledger version, expiry) is signed with the board CI's Sigstore identity
(``checkpoint.sigstore.json``). The folder (``ledger/`` at the repository root) is kept in
the repository.

:func:`open_ledger` checks the ledger as a whole (the checkpoint's signature, the root
recomputed from the signed entries, consistency with a previous checkpoint through an RFC
9162 consistency proof, the expiry); :meth:`Ledger.trusted` then judges one bundle against
its latest summary. Every refusal is a :class:`Refusal` named by one of the ``ledger.*``
codes of :data:`PROBLEMS`; a refused ledger (or summary) is never fatal: its bundles are
verified in full.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from effectbench.errors import DataError
from effectbench.hashing import canonical_json, content_hash

__all__ = [
    "CHECKPOINT_FILE",
    "CHECKPOINT_TYPE",
    "ENTRIES_FILE",
    "LEDGER_VERSION",
    "PROBLEMS",
    "REPORTS_DIR",
    "SAMPLE_SIZE",
    "VERIFIER_ID",
    "VSA_TYPE",
    "Checkpoint",
    "Ledger",
    "Refusal",
    "Summary",
    "bundle_digest",
    "checkpoint_statement",
    "consistency_proof",
    "leaf_hash",
    "open_ledger",
    "read_checkpoint",
    "sample",
    "summary_statement",
    "tree_root",
    "verify_consistency",
]

VSA_TYPE = "https://slsa.dev/verification_summary/v1"
"""The predicate type of a verification summary (SLSA VSA v1)."""
CHECKPOINT_TYPE = "https://effectbench.dev/ledger-checkpoint/v1"
"""The predicate type of a signed checkpoint."""
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
VERIFIER_ID = "https://effectbench.dev/verifier"
"""The verifier's id in every summary."""
POLICY_URI = "https://effectbench.dev/verification-policy/v1"
ORIGIN = "effectbench.dev/verification-ledger"
"""The checkpoint's origin line (its subject's name)."""
LEDGER_VERSION = 1
ENTRIES_FILE = "entries.jsonl"
REPORTS_DIR = "reports"
CHECKPOINT_FILE = "checkpoint.sigstore.json"
SAMPLE_SIZE = 20
"""Bundles with a trusted summary that a build still verifies in full (drawn by :func:`sample`)."""
LIFETIME_DAYS = 30
"""A fresh checkpoint's default lifetime: a build refuses it after its expiry."""
MAX_LINE_BYTES = 1 << 16
MAX_CHECKPOINT_BYTES = 1 << 20

PROBLEMS = {
    "ledger.malformed": "a ledger file or line is not what the ledger writes",
    "ledger.unsigned": "the ledger has entries but no signed checkpoint",
    "ledger.signature": "the checkpoint's signature does not verify under the board CI's identity",
    "ledger.root": "the signed entries do not hash to the checkpoint's root (an edited summary)",
    "ledger.rolled_back": "the checkpoint is smaller than the previous one",
    "ledger.forked": "the checkpoint is not an extension of the previous one",
    "ledger.expired": "the checkpoint is past its expiry",
    "ledger.version": "the checkpoint is of another ledger version",
    "ledger.planted": "a summary the signed checkpoint does not cover",
    "ledger.bundle_changed": "the bundle's files no longer hash to its summary's digest",
    "ledger.other_verifier": "the summary was made by another verifier version",
    "ledger.other_policy": "the summary was made under another verification policy",
    "ledger.report": "the summary's report is missing or not the one it gives the digest of",
    "ledger.sample": "a sampled bundle verified in full disagrees with its summary",
}
"""Every refusal code, with what it means (docs/site-scale.md lists them)."""


@dataclass(frozen=True)
class Refusal:
    """Why the ledger, or one bundle's summary, is not trusted."""

    code: str
    message: str

    def __post_init__(self) -> None:
        assert self.code in PROBLEMS, self.code

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


# --- Merkle tree hashing (RFC 6962 section 2.1, RFC 9162 section 2.1) -------------------


def leaf_hash(data: bytes) -> bytes:
    """The hash of a leaf: SHA-256 over a zero byte and the leaf's bytes."""
    return hashlib.sha256(b"\x00" + data).digest()


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two smaller than ``n`` (n > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


def tree_root(leaves: Sequence[bytes]) -> bytes:
    """The Merkle tree hash of ``leaves`` (leaf hashes), computed level by level.

    Equal to RFC 6962's recursive definition: at each level a node without a sibling is
    carried up unchanged, which is what splitting at the largest power of two gives.
    """
    if not leaves:
        return hashlib.sha256(b"").digest()
    level = list(leaves)
    while len(level) > 1:
        paired = [_node(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0]


def consistency_proof(leaves: Sequence[bytes], m: int) -> list[bytes]:
    """The consistency proof from the tree of the first ``m`` of ``leaves`` to all of them
    (RFC 6962 section 2.1.2, ``PROOF(m, D[n])``); empty when ``m`` is 0 or ``len(leaves)``."""
    n = len(leaves)
    if not 0 <= m <= n:
        raise ValueError(f"no consistency proof from size {m} to {n}")
    if m in (0, n):
        return []
    return _subproof(m, leaves, True)


def _subproof(m: int, leaves: Sequence[bytes], whole: bool) -> list[bytes]:
    n = len(leaves)
    if m == n:
        return [] if whole else [tree_root(leaves)]
    k = _split(n)
    if m <= k:
        return [*_subproof(m, leaves[:k], whole), tree_root(leaves[k:])]
    return [*_subproof(m - k, leaves[k:], False), tree_root(leaves[:k])]


def verify_consistency(m: int, n: int, old: bytes, new: bytes, proof: Sequence[bytes]) -> bool:
    """Whether ``proof`` shows the tree of size ``m`` with root ``old`` is a prefix of the tree
    of size ``n`` with root ``new`` (the verification of RFC 9162 section 2.1.4.2)."""
    if m > n or m < 0:
        return False
    if m == 0:
        return not proof
    if m == n:
        return not proof and old == new
    path = list(proof)
    if m & (m - 1) == 0:  # m a power of two: the old root is the first node of the path
        path.insert(0, old)
    if not path:
        return False
    fn, sn = m - 1, n - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = _node(c, fr)
            sr = _node(c, sr)
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = _node(sr, c)
        fn >>= 1
        sn >>= 1
    return sn == 0 and fr == old and sr == new


# --- summaries and checkpoints ------------------------------------------------------------


def bundle_digest(entries: Mapping[str, str]) -> str:
    """The digest a summary gives for a bundle folder: the canonical content hash of every
    entry of the folder (``entries``: relative name to sha256 hex, folders and special files
    by their kind), the signature file included, so a re-signed or re-ordered bundle differs."""
    return content_hash(entries)


def summary_statement(
    *,
    folder: str,
    digest: str,
    verifier_version: Mapping[str, str],
    policy_digest: str,
    accepted: bool,
    report_digest: str,
    verified_at: datetime,
) -> dict[str, Any]:
    """The verification summary of one bundle (an in-toto Statement, SLSA VSA v1 shape)."""
    hexdigest = report_digest.removeprefix("sha256:")
    return {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": folder, "digest": {"sha256": digest.removeprefix("sha256:")}}],
        "predicateType": VSA_TYPE,
        "predicate": {
            "verifier": {"id": VERIFIER_ID, "version": dict(verifier_version)},
            "timeVerified": verified_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "resourceUri": f"submissions/{folder}",
            "policy": {
                "uri": POLICY_URI,
                "digest": {"sha256": policy_digest.removeprefix("sha256:")},
            },
            "verificationResult": "PASSED" if accepted else "FAILED",
            "verifiedLevels": ["EFFECTBENCH_ACCEPTED" if accepted else "EFFECTBENCH_REFUSED"],
            "report": {"uri": f"{REPORTS_DIR}/{hexdigest}.json", "digest": {"sha256": hexdigest}},
        },
    }


@dataclass(frozen=True)
class Summary:
    """One ledger entry, read."""

    index: int
    folder: str
    digest: str
    """``sha256:<hex>``: :func:`bundle_digest` of the folder when it was verified."""
    verifier_version: dict[str, str]
    policy_digest: str
    accepted: bool
    report_digest: str
    """``sha256:<hex>`` of the report file's bytes."""
    time_verified: str

    @property
    def report_name(self) -> str:
        return f"{self.report_digest.removeprefix('sha256:')}.json"


def _summary(doc: object, index: int) -> Summary:
    """Read one entry (``ValueError`` naming the field that is wrong)."""
    try:
        assert isinstance(doc, dict), "not a JSON object"
        assert doc["_type"] == STATEMENT_TYPE, "_type"
        assert doc["predicateType"] == VSA_TYPE, "predicateType"
        (subject,) = doc["subject"]
        pred = doc["predicate"]
        verifier = pred["verifier"]
        assert verifier["id"] == VERIFIER_ID, "predicate.verifier.id"
        version = verifier["version"]
        assert isinstance(version, dict), "predicate.verifier.version"
        result = pred["verificationResult"]
        assert result in ("PASSED", "FAILED"), "predicate.verificationResult"
        digest, policy, report = (
            str(subject["digest"]["sha256"]),
            str(pred["policy"]["digest"]["sha256"]),
            str(pred["report"]["digest"]["sha256"]),
        )
        for name, value in (("subject", digest), ("policy", policy), ("report", report)):
            assert len(value) == 64 and all(c in "0123456789abcdef" for c in value), name
        folder = subject["name"]
        assert isinstance(folder, str) and folder and "/" not in folder, "subject.name"
        return Summary(
            index=index,
            folder=folder,
            digest="sha256:" + digest,
            verifier_version={str(k): str(v) for k, v in version.items()},
            policy_digest="sha256:" + policy,
            accepted=result == "PASSED",
            report_digest="sha256:" + report,
            time_verified=str(pred["timeVerified"]),
        )
    except AssertionError as exc:
        raise ValueError(f"wrong {exc}") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"missing or wrong field ({exc})") from None


@dataclass(frozen=True)
class Checkpoint:
    """A signed checkpoint, read and verified."""

    size: int
    root: bytes
    version: int
    expires: datetime
    signer: str = ""
    signed_at: str = ""

    @property
    def root_text(self) -> str:
        return base64.b64encode(self.root).decode()


def checkpoint_statement(size: int, root: bytes, expires: datetime) -> dict[str, Any]:
    """The in-toto Statement a checkpoint signs: the tree's size, root, the ledger version and
    when a build stops trusting it."""
    return {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": ORIGIN, "digest": {"sha256": root.hex()}}],
        "predicateType": CHECKPOINT_TYPE,
        "predicate": {
            "origin": ORIGIN,
            "version": LEDGER_VERSION,
            "size": size,
            "root": base64.b64encode(root).decode(),
            "expires": expires.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        },
    }


def _checkpoint(doc: dict[str, Any]) -> Checkpoint:
    """Read a verified checkpoint statement (``ValueError`` naming the wrong field)."""
    try:
        if doc.get("_type") != STATEMENT_TYPE or doc.get("predicateType") != CHECKPOINT_TYPE:
            raise ValueError("not a ledger checkpoint statement")
        pred = doc["predicate"]
        if pred["origin"] != ORIGIN:
            raise ValueError(f"origin is {pred['origin']!r}, not {ORIGIN}")
        size, version = pred["size"], pred["version"]
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise ValueError("predicate.size is not a count")
        if not isinstance(version, int) or isinstance(version, bool):
            raise ValueError("predicate.version is not a number")
        root = base64.b64decode(pred["root"], validate=True)
        if len(root) != 32 or doc["subject"][0]["digest"]["sha256"] != root.hex():
            raise ValueError("predicate.root is not the subject's 32-byte digest")
        expires = datetime.fromisoformat(str(pred["expires"]).replace("Z", "+00:00"))
        if expires.tzinfo is None:
            raise ValueError("predicate.expires has no time zone")
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise ValueError(f"checkpoint field: {exc}") from None
    return Checkpoint(size=size, root=root, version=version, expires=expires)


def read_checkpoint(
    path: Path, signers: Sequence[tuple[str, str]], trust_config: Path | None
) -> Checkpoint | Refusal:
    """Verify the signed checkpoint at ``path`` (a Sigstore DSSE bundle by one of ``signers``)
    and read it; a :class:`Refusal` saying why not."""
    from effectbench.signatures.verify import StatementProblem, verify_statement  # sigstore

    try:
        if path.is_symlink() or not path.is_file():
            return Refusal("ledger.malformed", f"{path}: not a regular file")
        if path.stat().st_size > MAX_CHECKPOINT_BYTES:
            return Refusal("ledger.malformed", f"{path}: larger than {MAX_CHECKPOINT_BYTES} bytes")
        raw = path.read_bytes()
    except OSError as exc:
        return Refusal("ledger.malformed", f"{path}: cannot read ({exc.strerror or exc})")
    try:
        doc, signer = verify_statement(raw, signers, trust_config)
    except StatementProblem as exc:
        code = "ledger.malformed" if exc.kind == "malformed" else "ledger.signature"
        accepted = ", ".join(f"{i} ({s})" for i, s in signers) or "none listed"
        return Refusal(code, f"{path}: {exc.message} (accepted signers: {accepted})")
    try:
        point = _checkpoint(doc)
    except ValueError as exc:
        return Refusal("ledger.malformed", f"{path}: {exc}")
    return Checkpoint(
        point.size, point.root, point.version, point.expires, signer.identity, signer.signed_at
    )


# --- the ledger folder -----------------------------------------------------------------


@dataclass
class Ledger:
    """A ledger whose checkpoint verified: its signed summaries, the latest per folder."""

    folder: Path
    checkpoint: Checkpoint
    latest: dict[str, Summary] = field(default_factory=dict)
    planted: list[str] = field(default_factory=list)
    """Folders named only by lines past the signed size (refused by ``ledger.planted``)."""
    leaves: list[bytes] = field(default_factory=list)

    def trusted(
        self,
        folder: str,
        entries: Mapping[str, str] | None,
        verifier_version: Mapping[str, str],
        policy_digest: str,
    ) -> tuple[Summary, bytes] | Refusal | None:
        """Judge the bundle ``folder`` (``entries``: what :func:`bundle_digest` reads, None for a
        folder holding a link) against its latest signed summary: the summary and the report's
        bytes when they can be trusted, a :class:`Refusal` when not, None when the ledger
        has no summary of it."""
        summary = self.latest.get(folder)
        if summary is None:
            if folder in self.planted:
                return Refusal(
                    "ledger.planted",
                    f"{folder}: its summary lies past the {self.checkpoint.size} entries the "
                    "checkpoint signs",
                )
            return None
        where = f"{folder} (entry {summary.index})"
        if entries is None:
            return Refusal("ledger.bundle_changed", f"{where}: the folder holds a link")
        digest = bundle_digest(entries)
        if digest != summary.digest:
            return Refusal(
                "ledger.bundle_changed",
                f"{where}: its files hash to {digest}, the summary gives {summary.digest}",
            )
        if dict(verifier_version) != summary.verifier_version:
            theirs = summary.verifier_version.get("effectbench", "?")
            return Refusal(
                "ledger.other_verifier",
                f"{where}: verified by EffectBench {theirs} "
                f"(code {summary.verifier_version.get('code', '?')[:12]}), this is "
                f"{verifier_version.get('effectbench', '?')} "
                f"(code {verifier_version.get('code', '?')[:12]})",
            )
        if policy_digest != summary.policy_digest:
            return Refusal(
                "ledger.other_policy",
                f"{where}: verified under policy {summary.policy_digest}, this build's is "
                f"{policy_digest}",
            )
        report = self.folder / REPORTS_DIR / summary.report_name
        try:
            if report.is_symlink() or not report.is_file():
                return Refusal("ledger.report", f"{where}: {report} is missing")
            raw = report.read_bytes()
        except OSError as exc:
            return Refusal("ledger.report", f"{where}: cannot read {report} ({exc.strerror})")
        got = "sha256:" + hashlib.sha256(raw).hexdigest()
        if got != summary.report_digest:
            return Refusal(
                "ledger.report",
                f"{where}: {report} hashes to {got}, not the summary's {summary.report_digest}",
            )
        return summary, raw


def read_entries(folder: Path) -> list[bytes]:
    """The ledger's entry lines (their bytes, without the newline); none without the file.
    A line that is not canonical JSON is a :class:`DataError` naming it."""
    path = folder / ENTRIES_FILE
    if not path.exists() and not path.is_symlink():
        return []
    if path.is_symlink() or not path.is_file():
        raise DataError("not a regular file", file=str(path))
    lines = []
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            body = line.rstrip(b"\n")
            if len(body) > MAX_LINE_BYTES or not line.endswith(b"\n"):
                raise DataError("a truncated or oversized entry", file=str(path), line=number)
            try:
                doc = json.loads(body)
            except ValueError:
                raise DataError("an entry that is not JSON", file=str(path), line=number) from None
            if canonical_json(doc).encode() != body:
                raise DataError("an entry not in canonical JSON", file=str(path), line=number)
            lines.append(body)
    return lines


def open_ledger(
    folder: Path,
    *,
    signers: Sequence[tuple[str, str]],
    trust_config: Path | None = None,
    previous: tuple[int, bytes] | None = None,
    now: datetime | None = None,
) -> Ledger | Refusal | None:
    """Check the ledger in ``folder`` as a whole; None when there is none (no entries, no
    checkpoint: a fresh fork).

    ``previous`` is the (size, root) of the last checkpoint this board published or this
    machine accepted: the new one must extend it (:func:`verify_consistency`). A refusal
    names why the whole ledger is not trusted.
    """
    checkpoint_file = folder / CHECKPOINT_FILE
    try:
        lines = read_entries(folder)
    except DataError as exc:
        return Refusal("ledger.malformed", exc.diagnostics())
    has_checkpoint = checkpoint_file.exists() or checkpoint_file.is_symlink()
    if not lines and not has_checkpoint:
        return None
    if not has_checkpoint:
        return Refusal("ledger.unsigned", f"{folder}: {len(lines)} entries, no {CHECKPOINT_FILE}")
    point = read_checkpoint(checkpoint_file, signers, trust_config)
    if isinstance(point, Refusal):
        return point
    if point.version != LEDGER_VERSION:
        return Refusal(
            "ledger.version", f"checkpoint version {point.version}, this is {LEDGER_VERSION}"
        )
    now = now or datetime.now(UTC)
    if now > point.expires:
        return Refusal(
            "ledger.expired",
            f"the checkpoint of size {point.size} expired {point.expires:%Y-%m-%d %H:%M} UTC; "
            "the board CI signs a fresh one (effectbench ledger sign)",
        )
    leaves = _signed_leaves(point, lines)
    if isinstance(leaves, Refusal):
        return leaves
    if previous is not None:
        broken = _not_extending(point, leaves, previous)
        if broken is not None:
            return broken
    return _read_summaries(Ledger(folder=folder, checkpoint=point, leaves=leaves), lines)


def _signed_leaves(point: Checkpoint, lines: Sequence[bytes]) -> list[bytes] | Refusal:
    """The leaf hashes of the entries the checkpoint signs, when they hash to its root."""
    if point.size > len(lines):
        return Refusal(
            "ledger.root",
            f"the checkpoint signs {point.size} entries, {ENTRIES_FILE} has {len(lines)}",
        )
    leaves = [leaf_hash(line) for line in lines[: point.size]]
    if tree_root(leaves) != point.root:
        return Refusal(
            "ledger.root",
            f"the first {point.size} entries of {ENTRIES_FILE} do not hash to the signed root "
            f"{point.root_text} (a summary was edited, planted or removed)",
        )
    return leaves


def _not_extending(
    point: Checkpoint, leaves: list[bytes], previous: tuple[int, bytes]
) -> Refusal | None:
    """Why the checkpoint does not extend the ``previous`` one (None: it does)."""
    old_size, old_root = previous
    if point.size < old_size:
        return Refusal(
            "ledger.rolled_back",
            f"the checkpoint signs {point.size} entries, the previous one {old_size}",
        )
    proof = consistency_proof(leaves, old_size)
    if not verify_consistency(old_size, point.size, old_root, point.root, proof):
        return Refusal(
            "ledger.forked",
            f"the first {old_size} entries are not those of the previous checkpoint (root "
            f"{base64.b64encode(old_root).decode()})",
        )
    return None


def _read_summaries(ledger: Ledger, lines: Sequence[bytes]) -> Ledger | Refusal:
    """``ledger`` with its entries read: the latest signed summary of each folder, and the
    folders only unsigned entries name (planted)."""
    size = ledger.checkpoint.size
    for index, line in enumerate(lines):
        try:
            summary = _summary(json.loads(line), index)
        except ValueError as exc:
            return Refusal("ledger.malformed", f"{ledger.folder / ENTRIES_FILE}:{index + 1}: {exc}")
        if index < size:
            ledger.latest[summary.folder] = summary
        elif summary.folder not in ledger.latest:
            ledger.planted.append(summary.folder)
    return ledger


def sample(root: bytes, candidates: Mapping[str, str], k: int = SAMPLE_SIZE) -> list[str]:
    """The ``k`` of ``candidates`` (folder name to bundle digest) a build verifies in full:
    drawn from the checkpoint's ``root``, so neither the build nor a submitter chooses them,
    and every build of one checkpoint draws the same."""

    def draw(item: tuple[str, str]) -> bytes:
        return hashlib.sha256(root + b"\0" + item[0].encode() + b"\0" + item[1].encode()).digest()

    return [name for name, _ in sorted(candidates.items(), key=draw)[:k]]
