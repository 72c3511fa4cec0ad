"""Reproduction records: a bundle's re-run, done once, kept signed, read by every later build.

Re-running a shipped baseline's rows (:mod:`verifier.reproduce`) costs a browser or an
X display per screen row; it is the board CI's job, done once per (bundle content hash,
pack name, version and fingerprint, EffectBench version) and kept as a **reproduction
record**: an in-toto Statement (predicate type :data:`PREDICATE_TYPE`) whose one
subject is the bundle's content hash and whose predicate says what the re-run found
(reproduced or not, rows re-run of rows, the ``reproduce`` findings). Two kinds:

* **signed** (``<records>/<hex>.reproduction.sigstore.json``, default folder
  ``reproductions/`` at the repository root): a Sigstore DSSE bundle, verified offline
  under the pinned root (or a private ``trust_config``) and an identity policy, the
  (identity, issuer) pairs of :data:`SIGNERS_FILE` plus any given on the command line
  (the deploy workflow adds its own GitHub identity). What the board publishes from.
* **maintainers'** (``<records>/<hex>.reproduction.json``): the plain statement of a
  listed reference bundle's re-run, committed in ``reproductions/``. Its trust is the
  reference list's: :data:`verifier.references.REFERENCE_FILE` (reviewed code, which the
  pull-request check refuses to see changed by a submission) gives, beside each reference's
  content hash and measured hash, the sha256 of its record's bytes (:func:`record_digest`);
  a record whose bytes are not the listed ones, or for a bundle the list does not give a
  record for, is refused (``reproduce.record_unlisted``). ``effectbench reproduce`` (``make
  reproduce``) writes them and their digests into the list; what the board CI signs is
  for everything else.
* **machine-local** (``$XDG_CACHE_HOME/effectbench/reproductions/<hex>.reproduction.local.json``):
  the same statement sealed with this machine's cache key (:mod:`effectbench.sealed`),
  written by ``effectbench reproduce`` without ``--sign``; trusted on this machine only,
  like every other cache entry, so a local ``make reproduce`` then ``make site`` works
  without any identity.

:func:`read_record` finds a bundle's record by its content hash: the maintainers' first,
then the signed one, then this machine's. A record that is there but cannot be used refuses
the bundle with a named finding (never a silent re-run): ``reproduce.record_malformed``
(truncated, not JSON, not a record), ``reproduce.record_unlisted`` (a maintainers' record
the reference list does not give, byte for byte, for this bundle),
``reproduce.record_forged`` (the signature or seal does not verify),
``reproduce.record_signer`` (an identity the policy does not list),
``reproduce.record_subject`` (a record for other bytes), ``reproduce.record_expired``
(older than :data:`LIFETIME_DAYS` by its verified signing time, or made by another
EffectBench or pack version); ``make reproduce`` (``effectbench reproduce --all``)
replaces it. A bundle with no record is re-run, and where a component the re-run needs
is missing it is refused alone (``reproduce.unavailable``, naming the component).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any

from effectbench._version import engine_version
from effectbench.bundle import SubmissionHeader
from effectbench.errors import DataError
from effectbench.filenames import cache_home
from effectbench.findings import CheckId, Family, Finding
from effectbench.packs import installed
from effectbench.sealed import CacheSeal, default_seal

__all__ = [
    "LIFETIME_DAYS",
    "PREDICATE_TYPE",
    "SIGNERS_FILE",
    "RecordKey",
    "RecordPolicy",
    "RecordRead",
    "Reproduction",
    "load_signers",
    "local_record_file",
    "maintainer_record_file",
    "read_record",
    "record_digest",
    "record_key",
    "records_fingerprint",
    "signed_record_file",
    "write_local_record",
    "write_maintainer_record",
    "write_signed_record",
]

PREDICATE_TYPE = "https://effectbench.dev/reproduction/v1"
"""The in-toto predicate type of a reproduction record."""
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
RECORD_VERSION = 1
LIFETIME_DAYS = 400
"""A record is trusted this many days after its verified signing time; then the bundle is
re-run (``make reproduce``), so a record can be withdrawn by time as well as by code."""
MAX_RECORD_BYTES = 1 << 20
"""A record is a few kilobytes (a certificate, a log entry, at most 20 findings)."""
SIGNED_SUFFIX = ".reproduction.sigstore.json"
LOCAL_SUFFIX = ".reproduction.local.json"
MAINTAINER_SUFFIX = ".reproduction.json"
SIGNERS_FILE = Path(__file__).resolve().with_name("record_signers.json")
"""The identities whose signed records the verifier accepts (part of the verifier's code)."""
KEEP = 20
"""Findings a record keeps (it counts every one)."""


@dataclass(frozen=True)
class Reproduction:
    """What a re-run established (or a record says it established)."""

    reproduced: bool
    rows_rerun: int
    """The rows the re-run compared (all, or a listed reference's sample)."""
    n_rows: int
    findings: tuple[Finding, ...] = ()
    """The ``reproduce`` findings (the first :data:`KEEP`)."""
    n_findings: int = 0


@dataclass(frozen=True)
class RecordKey:
    """What a record is for: one bundle's bytes under one pack and code version."""

    content_hash: str
    folder: str
    pack: str
    pack_version: str
    fingerprint: str
    code_version: str = engine_version()

    @property
    def hex(self) -> str:
        """The content hash's hex digits (the record's file name)."""
        return self.content_hash.removeprefix("sha256:")


def record_key(header: SubmissionHeader, content_hash: str, folder: str) -> RecordKey:
    """Return the key of a bundle's record under the installed pack and this code."""
    pack = installed().get(header.pack.name)
    return RecordKey(
        content_hash=content_hash,
        folder=folder,
        pack=header.pack.name,
        pack_version=pack.version if pack is not None else "",
        fingerprint=header.pack.fingerprint,
    )


@dataclass(frozen=True)
class RecordPolicy:
    """Where records are read and whose signatures count."""

    records: Path | None = None
    """The folder of signed records (None: none read)."""
    signers: tuple[tuple[str, str], ...] = ()
    """(identity, issuer) pairs accepted beside :data:`SIGNERS_FILE`'s."""
    trust_config: Path | None = None
    """A private Sigstore trust configuration (tests); default: the pinned production root."""
    local: bool = False
    """Read this machine's sealed records too."""
    now: datetime | None = field(default=None, compare=False)
    """The time records are judged at (default: the clock)."""


@dataclass(frozen=True)
class RecordRead:
    """What was found for one bundle."""

    reproduction: Reproduction | None = None
    """A valid record's result (None: no record, or one that cannot be used)."""
    problem: Finding | None = None
    """Why a record that is there cannot be used."""
    source: str = ""
    """Who made the valid record, when (for the report's note)."""


def signed_record_file(records: Path, key: RecordKey) -> Path:
    """The signed record of ``key`` in folder ``records``."""
    return records / f"{key.hex}{SIGNED_SUFFIX}"


def maintainer_record_file(records: Path, key: RecordKey) -> Path:
    """The maintainers' record of ``key`` in folder ``records`` (a listed reference's)."""
    return records / f"{key.hex}{MAINTAINER_SUFFIX}"


def record_digest(raw: bytes) -> str:
    """Return the digest the reference list gives for a maintainers' record of bytes ``raw``."""
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def local_record_file(key: RecordKey) -> Path:
    """This machine's sealed record of ``key``."""
    return cache_home() / "reproductions" / f"{key.hex}{LOCAL_SUFFIX}"


def load_signers(path: Path = SIGNERS_FILE) -> tuple[tuple[str, str], ...]:
    """Return the (identity, issuer) pairs listed in ``path`` (none when it is absent)."""
    if not path.is_file():
        return ()
    stat = path.stat()
    return _signers(path, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=4)
def _signers(path: Path, mtime_ns: int, size: int) -> tuple[tuple[str, str], ...]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        return tuple((str(s["identity"]), str(s["issuer"])) for s in doc["signers"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DataError(f"not a record signer list ({exc})", file=str(path)) from None


def statement(key: RecordKey, result: Reproduction, made_at: datetime) -> dict[str, Any]:
    """Return the in-toto Statement of ``key``'s record saying ``result``."""
    return {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": key.folder, "digest": {"sha256": key.hex}}],
        "predicateType": PREDICATE_TYPE,
        "predicate": {
            "record_version": RECORD_VERSION,
            "pack": {
                "name": key.pack,
                "version": key.pack_version,
                "fingerprint": key.fingerprint,
            },
            "effectbench_version": key.code_version,
            "reproduced": result.reproduced,
            "rows_rerun": result.rows_rerun,
            "n_rows": result.n_rows,
            "n_findings": result.n_findings,
            "findings": [
                {"check": f.check.value, "message": f.message, "file": f.file, "line": f.line}
                for f in result.findings[:KEEP]
            ],
            "made_at": made_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        },
    }


def _check_id(value: object) -> CheckId:
    """The check id ``value`` names (ValueError for an unknown one)."""
    for check in CheckId:
        if check.value == value:
            return check
    raise ValueError(f"unknown check id {value!r}")


def _problem(check: CheckId, message: str, where: Path) -> RecordRead:
    return RecordRead(problem=Finding(check, message, file=str(where)))


def _result(
    doc: dict[str, Any], key: RecordKey, where: Path, made: datetime, now: datetime
) -> RecordRead | Reproduction:
    """The record's result when ``doc`` is a usable record of ``key``, else its problem."""
    try:
        subject = doc["subject"]
        digest = subject[0]["digest"]["sha256"] if len(subject) == 1 else None
        predicate = doc["predicate"]
        if doc["_type"] != STATEMENT_TYPE or doc["predicateType"] != PREDICATE_TYPE:
            return _problem(CheckId.REPRODUCE_RECORD_MALFORMED, "not a reproduction record", where)
        pack = predicate["pack"]
        findings = tuple(
            Finding(_check_id(f["check"]), str(f["message"]), f.get("file"), f.get("line"))
            for f in predicate["findings"]
        )
        result = Reproduction(
            reproduced=predicate["reproduced"] is True,
            rows_rerun=int(predicate["rows_rerun"]),
            n_rows=int(predicate["n_rows"]),
            findings=findings,
            n_findings=int(predicate["n_findings"]),
        )
        versions = (str(pack["version"]), str(pack["fingerprint"]))
        code = str(predicate["effectbench_version"])
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        return _problem(
            CheckId.REPRODUCE_RECORD_MALFORMED, f"a record field is missing or wrong ({exc})", where
        )
    if any(f.check.family is not Family.REPRODUCE for f in findings) or (
        result.reproduced and findings
    ):
        return _problem(
            CheckId.REPRODUCE_RECORD_MALFORMED, "its findings are not a re-run's", where
        )
    if digest != key.hex:
        return _problem(
            CheckId.REPRODUCE_RECORD_SUBJECT,
            f"the record is for content hash sha256:{digest}, not this bundle's "
            f"{key.content_hash} (the bundle changed, or the record was copied)",
            where,
        )
    expired = ""
    if now - made > timedelta(days=LIFETIME_DAYS):
        expired = f"it was made {made:%Y-%m-%d}, over {LIFETIME_DAYS} days ago"
    elif code != key.code_version:
        expired = f"it was made by EffectBench {code}, this is {key.code_version}"
    elif versions != (key.pack_version, key.fingerprint):
        expired = f"it was made with pack {key.pack} {versions[0]}, this is {key.pack_version}"
    if expired:
        return _problem(
            CheckId.REPRODUCE_RECORD_EXPIRED,
            f"{expired}; run make reproduce to re-run the bundle and record it again",
            where,
        )
    return result


def _read_bounded(path: Path) -> bytes | RecordRead:
    try:
        if path.is_symlink() or not path.is_file():
            return _problem(CheckId.REPRODUCE_RECORD_MALFORMED, "not a regular file", path)
        if path.stat().st_size > MAX_RECORD_BYTES:
            message = f"larger than {MAX_RECORD_BYTES} bytes"
            return _problem(CheckId.REPRODUCE_RECORD_MALFORMED, message, path)
        return path.read_bytes()
    except OSError as exc:
        message = f"cannot read: {exc.strerror or exc}"
        return _problem(CheckId.REPRODUCE_RECORD_MALFORMED, message, path)


_KINDS = {
    "malformed": CheckId.REPRODUCE_RECORD_MALFORMED,
    "untrusted": CheckId.REPRODUCE_RECORD_FORGED,
    "invalid": CheckId.REPRODUCE_RECORD_FORGED,
    "identity": CheckId.REPRODUCE_RECORD_SIGNER,
}


def _read_signed(path: Path, key: RecordKey, policy: RecordPolicy, now: datetime) -> RecordRead:
    from effectbench.signatures.verify import StatementProblem, verify_statement  # sigstore

    raw = _read_bounded(path)
    if isinstance(raw, RecordRead):
        return raw
    signers = (*load_signers(), *policy.signers)
    try:
        doc, signer = verify_statement(raw, signers, policy.trust_config)
    except StatementProblem as exc:
        accepted = ", ".join(f"{i} ({s})" for i, s in signers) or "none listed"
        extra = f" (accepted: {accepted})" if exc.kind == "identity" else ""
        return _problem(_KINDS[exc.kind], f"{exc.message}{extra}", path)
    made = datetime.fromisoformat(signer.signed_at.replace("Z", "+00:00"))
    found = _result(doc, key, path, made, now)
    if isinstance(found, RecordRead):
        return found
    return RecordRead(found, source=f"signed by {signer.identity} at {signer.signed_at}")


def _read_local(path: Path, key: RecordKey, now: datetime, seal: CacheSeal) -> RecordRead:
    raw = _read_bounded(path)
    if isinstance(raw, RecordRead):
        return raw
    data = seal.open(f"reproduction:{key.hex}", raw)
    if data is None:
        message = "its seal is not this machine's (a machine-local record is never copied)"
        return _problem(CheckId.REPRODUCE_RECORD_FORGED, message, path)
    return _unsigned_read(data, key, path, now, "this machine's own re-run at {}")


def _unsigned_read(
    data: bytes, key: RecordKey, path: Path, now: datetime, source: str
) -> RecordRead:
    """Read an unsigned statement (its seal or listing checked already): its own ``made_at``
    dates it; ``source`` says who made it (``{}``: when)."""
    try:
        doc = json.loads(data)
        made_at = doc["predicate"]["made_at"]
        made = datetime.fromisoformat(made_at.replace("Z", "+00:00"))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        return _problem(CheckId.REPRODUCE_RECORD_MALFORMED, f"not a record ({exc})", path)
    found = _result(doc, key, path, made, now)
    if isinstance(found, RecordRead):
        return found
    return RecordRead(found, source=source.format(made_at))


def _read_maintainer(path: Path, key: RecordKey, listed: str | None, now: datetime) -> RecordRead:
    raw = _read_bounded(path)
    if isinstance(raw, RecordRead):
        return raw
    digest = record_digest(raw)
    if listed is None:
        message = (
            "an unsigned record for a bundle the maintainers' reference list gives no record "
            "for (only a listed reference's record may be unsigned; any other is signed by the "
            "board CI)"
        )
        return _problem(CheckId.REPRODUCE_RECORD_UNLISTED, message, path)
    if digest != listed:
        message = (
            f"its digest {digest} is not the one the maintainers' reference list gives for this "
            f"reference ({listed}): the record was altered or replaced; run make reproduce to "
            "re-run the reference and list its record again"
        )
        return _problem(CheckId.REPRODUCE_RECORD_UNLISTED, message, path)
    return _unsigned_read(raw, key, path, now, "listed in the maintainers' reference list, made {}")


def read_record(key: RecordKey, policy: RecordPolicy, listed: str | None = None) -> RecordRead:
    """Find and check the record of ``key``: the maintainers', else the signed one, else this
    machine's.

    ``listed`` is the record digest the reference list gives for this bundle (None when it
    is no listed reference, or the list gives no record for it).
    """
    now = policy.now or datetime.now(UTC)
    if policy.records is not None:
        maintained = maintainer_record_file(policy.records, key)
        if maintained.exists() or maintained.is_symlink():
            return _read_maintainer(maintained, key, listed, now)
        signed = signed_record_file(policy.records, key)
        if signed.exists() or signed.is_symlink():
            return _read_signed(signed, key, policy, now)
    if policy.local:
        local = local_record_file(key)
        if local.exists() or local.is_symlink():
            return _read_local(local, key, now, default_seal())
    return RecordRead()


def write_signed_record(
    records: Path,
    key: RecordKey,
    result: Reproduction,
    *,
    identity_token: str | None = None,
    trust_config: Path | None = None,
    signers: Sequence[tuple[str, str]] = (),
) -> Path:
    """Sign ``key``'s record with Sigstore (keyless) and write it into ``records``.

    The fresh record is read back under the same policy before it replaces an old one,
    so a record whose signer the policy does not accept is never written.
    """
    from sigstore import dsse

    from effectbench.errors import SigningError
    from effectbench.signatures.sign import sign_statement

    body = statement(key, result, datetime.now(UTC))
    raw, _, _ = sign_statement(
        dsse.Statement(json.dumps(body, sort_keys=True).encode()),
        identity_token=identity_token,
        trust_config=trust_config,
    )
    records.mkdir(parents=True, exist_ok=True)
    path = signed_record_file(records, key)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(raw)
    policy = RecordPolicy(records=records, signers=tuple(signers), trust_config=trust_config)
    check = _read_signed(tmp, key, policy, datetime.now(UTC))
    if check.problem is not None:
        tmp.unlink()
        raise SigningError(f"the fresh record does not verify, nothing written: "
                           f"{check.problem.check}: {check.problem.message}")  # fmt: skip
    tmp.replace(path)
    return path


def write_maintainer_record(
    records: Path, key: RecordKey, result: Reproduction
) -> tuple[Path, str]:
    """Write ``key``'s maintainers' record into ``records``; return it and its digest (which
    the reference list must give for it to be read: :func:`verifier.references.list_records`)."""
    body = statement(key, result, datetime.now(UTC))
    raw = (json.dumps(body, sort_keys=True, indent=2) + "\n").encode()
    records.mkdir(parents=True, exist_ok=True)
    path = maintainer_record_file(records, key)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(raw)
    tmp.replace(path)
    return path, record_digest(raw)


def write_local_record(key: RecordKey, result: Reproduction) -> Path:
    """Seal ``key``'s record with this machine's key into the cache home."""
    body = json.dumps(statement(key, result, datetime.now(UTC)), sort_keys=True).encode()
    path = local_record_file(key)
    default_seal().write(f"reproduction:{key.hex}", path, body)
    return path


def records_fingerprint(policy: RecordPolicy) -> str:
    """Return a hash of everything records could change a verdict by: the policy's signers
    and every record file it reads (a report cache keys on it, so a record added, removed or
    replaced re-verifies)."""
    digest = hashlib.sha256(repr((load_signers(), policy.signers, policy.local)).encode())
    folders = [policy.records] if policy.records is not None else []
    if policy.local:
        folders.append(cache_home() / "reproductions")
    for folder in folders:
        digest.update(f"{folder}\0".encode())
        try:
            names = sorted(
                p
                for p in folder.iterdir()
                if p.name.endswith((SIGNED_SUFFIX, LOCAL_SUFFIX, MAINTAINER_SUFFIX))
            )
        except OSError:
            continue
        for path in names:
            try:
                digest.update(
                    path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest()
                )
            except OSError:
                digest.update(f"{path.name}\0unreadable".encode())
    return digest.hexdigest()
