"""Verifying the submissions for the site, with verifier reports cached by content.

The verifier is the site's only data source. A report is reused only when
everything that could change its verdict is byte-identical: the bundle's files
and path, the verdict-relevant code of the engine and the verifier (with the
versions of the libraries they lean on) and the Sigstore trust root it was
verified under. Many bundles are verified on the build's pool of workers,
which also flatten each accepted bundle's rows into the row cache
(:mod:`effectbench.site._rows`) while they have them at hand.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import platform
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

import effectbench
import verifier
from effectbench._version import engine_version
from effectbench.bundle import EPISODES_FILE, FRAMES_DIR
from effectbench.errors import DataError
from effectbench.hashing import canonical_json
from effectbench.packs import InstalledPack, installed
from effectbench.site._cache import CacheSeal, add_versions, default_seal
from effectbench.site._digests import FileDigests
from effectbench.site._pool import Workers
from effectbench.site._rows import rows_table
from verifier.accepted import accepted_file
from verifier.api import VerifyOptions, bundle_folders, is_bundle, verify_bundle, verify_path
from verifier.commitment import PINNED_CHAIN
from verifier.records import RecordPolicy, load_signers, records_fingerprint
from verifier.report import BundleReport

if TYPE_CHECKING:
    from effectbench.site._ledger import LedgerCheck

VERIFY_DEPENDENCIES = ("pydantic", "pandas", "numpy", "orjson", "sigstore", "cryptography")
"""Installed packages whose version is part of the verifier-report cache key."""
VERIFY_POOL_THRESHOLD = 64
"""Start pool workers for verification only when at least this many bundles need it."""
SCREEN_WEIGHT = 16
"""What one bundle with key frames (a run through a screen) counts for toward
:data:`VERIFY_POOL_THRESHOLD`: re-running a sample of its rows takes a browser or a display
for seconds, as much as verifying a dozen API bundles."""
PINNED_TRUST = "pinned"
"""The trust part of a report-cache key under the verifier's pinned production root
(whose file is part of the code fingerprint)."""


def _verdict_source(rel: Path) -> bool:
    """Whether a package file can influence a verdict (so belongs in the report-cache key).

    Everything counts but the command line (``effectbench/cli/`` and any
    ``__main__.py``: argument parsing and printing, imported by no verification
    code, as the layering test holds) and the site itself; an edit to those keeps
    the cached reports.
    """
    if rel.suffix not in (".py", ".json", ".pem", ".txt") or rel.parts[0] in ("site", "cli"):
        return False
    return rel.name != "__main__.py"


def code_fingerprint() -> str:
    # Everything whose change could change a verdict: the engine and the verifier (with
    # its pinned trust root) and the libraries they lean on. Computed once per build; a
    # report is reused only under the very same code.
    digest = hashlib.sha256(f"python {platform.python_version()}\0".encode())
    add_versions(digest, VERIFY_DEPENDENCIES)
    packs = list(installed().values())  # the entry points, read once
    for name, base in _code_roots(packs):
        for f in sorted(base.rglob("*")):
            rel = f.relative_to(base)
            if f.is_file() and _verdict_source(rel):
                digest.update(f"{name}/{rel}".encode() + b"\0" + f.read_bytes())
    for pack in packs:  # a pack's version re-verifies the bundles it judges
        digest.update(
            f"pack {pack.name} {pack.target} {pack.distribution} {pack.version}\0".encode()
        )
    listed = accepted_file()  # so does the list the packs are held to
    digest.update(listed.read_bytes() if listed.is_file() else b"no accepted list")
    return digest.hexdigest()


def _code_roots(packs: Iterable[InstalledPack]) -> list[tuple[str, Path]]:
    """The engine, the verifier and each of ``packs``' own package (by its entry point's
    module, found without importing it), each once."""
    roots = {
        package.__name__: Path(next(iter(package.__path__))).resolve()
        for package in (effectbench, verifier)
    }
    for pack in packs:
        top = pack.target.split(":")[0].split(".")[0]
        if top in roots:
            continue
        try:
            spec = importlib.util.find_spec(top)
        except (ImportError, ValueError):
            continue
        if spec is not None and spec.submodule_search_locations:
            roots[top] = Path(next(iter(spec.submodule_search_locations))).resolve()
    return sorted(roots.items())


def _file_digests(bundle: Path, digests: FileDigests) -> dict[str, str] | None:
    """Return what a bundle folder holds, entry by entry; None if it holds a link.

    A regular file counts by its sha256 (from ``digests``); a folder (even an empty one) and
    any other entry (a FIFO, a socket, a device) count by their kind, so a bundle whose file
    set changed in any way gets a new cache key and is verified again.
    """
    if bundle.is_symlink():
        return None
    out: dict[str, str] = {}
    stack = [(Path(os.path.abspath(bundle)), "")]  # so every entry's path is absolute
    while stack:
        folder, prefix = stack.pop()
        with os.scandir(folder) as it:
            items = sorted(it, key=lambda e: e.name)
        for item in items:
            if item.is_symlink():
                return None  # let the verifier judge links afresh every time
            rel = prefix + item.name
            st = item.stat(follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                out[rel + "/"] = "folder"
                stack.append((Path(item.path), rel + "/"))
            elif stat.S_ISREG(st.st_mode):
                out[rel] = digests.digest(item.path, st)
            else:
                out[rel] = f"special {stat.S_IFMT(st.st_mode):o}"
    return dict(sorted(out.items()))


def trust_key(trust_config: Path | None) -> str:
    """Return what a report-cache key records of the trust root: its content's hash.

    The pinned production root is :data:`PINNED_TRUST`; a ``--trust-config`` file
    counts by its bytes, so editing it (or pointing the same path at another
    instance) never reuses a report verified under the old root.
    """
    if trust_config is None:
        return PINNED_TRUST
    try:
        with open(trust_config, "rb") as fh:
            return "sha256:" + hashlib.file_digest(fh, "sha256").hexdigest()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise DataError(
            f"cannot read the trust configuration: {reason}", file=str(trust_config)
        ) from None


def _report_key(
    bundle: Path,
    digests: dict[str, str] | None,
    code: str,
    allow_unsigned: bool,
    trust: str = PINNED_TRUST,
    reproduce: bool = True,
) -> str | None:
    if digests is None:
        return None
    # A report verified without re-running shipped baselines is kept apart (the site's and a
    # default ``rank``'s reports re-run them, and never read one that did not).
    mode = "" if reproduce else "\0no-reproduce"
    # The folder where it is (its name is judged), however the command spelled it: `site
    # build` from the checkout and `rank /abs/path/submissions` share one report.
    where = bundle.resolve()
    digest = hashlib.sha256(f"{code}\0{where}\0{allow_unsigned}\0{trust}{mode}".encode())
    for name, file_digest in digests.items():
        digest.update(f"{name}\0{file_digest}\0".encode())
    return digest.hexdigest()


def verifier_version(code: str | None = None) -> dict[str, str]:
    """The verifier's version as a summary records it: the release and the fingerprint of
    every verdict-relevant source file, library version and pack (the report cache's key)."""
    return {"effectbench": engine_version(), "code": code or code_fingerprint()}


def policy_digest(
    *,
    allow_unsigned: bool,
    trust_config: Path | None,
    records: RecordPolicy,
    reproduce: bool = True,
    beacon_chain: Path | None = None,
) -> str:
    """The digest of what a verdict depends on beside the code and the bundle: the trust root,
    the record signers and their root, the beacon chain, and the options."""
    record_trust = records.trust_config if records.trust_config is not None else trust_config
    policy = {
        "allow_unsigned": allow_unsigned,
        "trust": trust_key(trust_config),
        "beacon": trust_key(beacon_chain) if beacon_chain is not None else "pinned",
        "record_signers": sorted(map(list, {*load_signers(), *records.signers})),
        "record_trust": trust_key(record_trust),
        "records": records.records.name if records.records is not None else None,
        "local_records": records.local,
        "reproduce": reproduce,
    }
    return "sha256:" + hashlib.sha256(canonical_json(policy).encode()).hexdigest()


@dataclass(frozen=True)
class _VerifyJob:
    bundle: str
    allow_unsigned: bool
    rows_dir: str | None
    """Where to keep the bundle's flattened rows if it is accepted (None: do not)."""
    trust_config: str | None = None
    """A private Sigstore trust configuration (None: the pinned production root)."""
    records: RecordPolicy = RecordPolicy()
    """Where reproduction records are read (:mod:`verifier.records`)."""
    force_reproduce: bool = False
    reproduce: bool = True
    """Re-run shipped baselines on deterministic packs (or read their records)."""
    beacon_chain: str | None = None
    """A private beacon chain (None: the verifier's pinned production chain)."""


def _verify_jobs(jobs: list[_VerifyJob]) -> list[bytes]:
    """Verify bundles (in a pool worker or inline); return each report as JSON."""
    out = []
    for job in jobs:
        bundle = Path(job.bundle)
        trust = Path(job.trust_config) if job.trust_config is not None else None
        options = VerifyOptions(
            allow_unsigned=job.allow_unsigned,
            trust_config=trust,
            folder_rule=True,
            records=job.records,
            force_reproduce=job.force_reproduce,
            reproduce=job.reproduce,
            beacon_chain=Path(job.beacon_chain) if job.beacon_chain else PINNED_CHAIN,
        )
        report = verify_bundle(bundle, options)
        episodes = bundle / EPISODES_FILE
        if job.rows_dir and report.accepted and episodes.is_file():
            rows_table(episodes, Path(job.rows_dir), load=False)
        out.append(orjson.dumps(report.to_json()))
    return out


def _bundles(submissions: Path) -> list[Path]:
    # The same folders, in the same order, as verify_path(submissions) would verify.
    try:
        return bundle_folders(submissions)
    except PermissionError as exc:
        raise DataError(f"cannot read: {exc.strerror}", file=str(submissions)) from None


def verify_submissions(
    submissions: Path,
    allow_unsigned: bool = False,
    cache_dir: Path | None = None,
    *,
    workers: Workers | None = None,
    rows_dir: Path | None = None,
    trust_config: Path | None = None,
    records: RecordPolicy | None = None,
    force_reproduce: bool = False,
    reproduce: bool = True,
    progress: Callable[[int, int], None] | None = None,
    digests: FileDigests | None = None,
    read_as: dict[str, tuple[BundleReport, str]] | None = None,
    beacon_chain: Path | None = None,
    ledger: LedgerCheck | None = None,
) -> list[BundleReport]:
    """Run the verifier over every bundle in ``submissions`` (the site's only data source, and
    what ``effectbench rank`` reads).

    Signatures are verified under the verifier's pinned production root unless
    ``trust_config`` names a private Sigstore trust configuration (tests); fresh instances' beacon
    rounds under the pinned production chain unless ``beacon_chain`` names a private one (tests,
    with a private Sigstore). Shipped baselines
    are re-run unless ``reproduce`` is false (such reports are cached apart). ``progress`` is
    told ``(done, total)`` bundles: once the cached reports are read, then after each bundle
    verified.
    With ``cache_dir``, a bundle whose files, path, code (engine, verifier, packs) and trust root
    are byte-identical to an earlier run reuses that run's report (local rebuilds);
    without it (CI) every bundle is verified afresh. Many bundles are verified on ``workers``. With
    ``rows_dir``, the flattened rows of each newly verified, accepted bundle are kept
    there (keyed by the content of its ``episodes.jsonl``). ``records`` says where
    reproduction records are read (a report is reused only under the same records);
    ``force_reproduce`` re-runs every reproducible bundle and reuses no report. ``digests``
    holds the bundle files' kept digests, which its owner saves (by default those kept beside
    the reports, saved here). ``read_as`` is filled, per report's path, with the report returned
    and :func:`report_digest` of the JSON it was read from (cached or made): a digest of the
    report that costs no serialising. With ``ledger`` (:mod:`effectbench.site._ledger`), a
    bundle whose files hash to its signed summary takes the ledger's report, but for a sample
    verified in full; what the ledger refused is in its ``notes``.
    """
    records = records or RecordPolicy()
    if not submissions.is_dir():
        raise DataError("the submissions folder does not exist", file=str(submissions))
    trust = trust_key(trust_config)  # also: an unreadable trust file is a clear error up front
    if beacon_chain is not None:  # a private chain's reports are kept apart, by its bytes
        trust += "\0beacon " + trust_key(beacon_chain)
    job = _VerifyJob(
        "",
        allow_unsigned,
        _text(rows_dir),
        _text(trust_config),
        records,
        force_reproduce,
        reproduce,
        _text(beacon_chain),
    )
    if _is_single_bundle(submissions):
        return _verify_one(submissions, job, progress)
    bundles = _bundles(submissions)
    if not bundles:
        return []  # nothing submitted yet: an empty leaderboard, not an error
    if force_reproduce:
        cache_dir = None  # a forced re-run reuses no report
    code = code_fingerprint() if cache_dir is not None or ledger is not None else ""
    if cache_dir is not None:
        trust += "\0" + records_fingerprint(records)
        cache_dir.mkdir(parents=True, exist_ok=True)
    seal = default_seal()
    files = _bundle_digests(
        bundles, digests, cache_dir, seal, wanted=cache_dir is not None or ledger is not None
    )
    plan = _LedgerPlan({}, [])
    if ledger is not None and not force_reproduce:
        policy = policy_digest(
            allow_unsigned=allow_unsigned,
            trust_config=trust_config,
            records=records,
            reproduce=reproduce,
            beacon_chain=beacon_chain,
        )
        plan = _LedgerPlan(
            *ledger.plan(bundles, files, policy=policy, version=verifier_version(code))
        )
    run = _Run(
        bundles,
        files,
        code,
        cache_dir,
        seal,
        key_parts=(allow_unsigned, trust, reproduce),
        job=lambda bundle: replace(job, bundle=str(bundle)),
        workers=workers,
        progress=progress,
    )
    made = run.verify(plan.first(len(bundles)), done=len(plan.ledgered) - len(plan.drawn))
    if ledger is not None and plan.ledgered:
        _take_the_ledger(ledger, plan, run, made)
    return _in_order(bundles, made, read_as)


def _bundle_digests(
    bundles: Sequence[Path],
    digests: FileDigests | None,
    cache_dir: Path | None,
    seal: CacheSeal,
    *,
    wanted: bool,
) -> dict[int, dict[str, str] | None]:
    """The files' digests of each bundle, by index, when ``wanted`` (else none), from
    ``digests`` (kept by its owner) or those kept beside the reports in ``cache_dir`` (saved
    here)."""
    own = digests is None  # then kept here, beside the reports; else its owner keeps it
    kept = FileDigests(cache_dir, seal) if digests is None else digests
    files: dict[int, dict[str, str] | None] = {}
    if wanted:
        files = {i: _file_digests(bundle, kept) for i, bundle in enumerate(bundles)}
    if own:
        kept.save()
    return files


def _text(path: Path | None) -> str | None:
    return str(path) if path is not None else None


def _verify_one(
    bundle: Path, job: _VerifyJob, progress: Callable[[int, int], None] | None
) -> list[BundleReport]:
    """Verify the one bundle ``bundle`` under ``job``'s options (no cache, no ledger)."""
    options = VerifyOptions(
        allow_unsigned=job.allow_unsigned,
        trust_config=Path(job.trust_config) if job.trust_config is not None else None,
        records=job.records,
        force_reproduce=job.force_reproduce,
        reproduce=job.reproduce,
        beacon_chain=Path(job.beacon_chain) if job.beacon_chain else PINNED_CHAIN,
    )
    found = list(verify_path(bundle, options))
    if progress is not None:
        progress(len(found), len(found))
    return found


def _is_single_bundle(submissions: Path) -> bool:
    """Whether ``submissions`` is one bundle rather than a folder of them."""
    try:
        return is_bundle(submissions)
    except PermissionError as exc:
        raise DataError(f"cannot read: {exc.strerror}", file=str(submissions)) from None


@dataclass(frozen=True)
class _LedgerPlan:
    """What the verification ledger offers: the reports it holds, by bundle index, and the
    indices drawn among them to verify in full all the same."""

    ledgered: dict[int, bytes]
    drawn: list[int]

    def first(self, count: int) -> list[int]:
        """The bundles (of ``count``) to verify first: those the ledger does not hold, and
        the drawn sample of those it does."""
        return [i for i in range(count) if i not in self.ledgered or i in self.drawn]


def _take_the_ledger(
    ledger: LedgerCheck,
    plan: _LedgerPlan,
    run: _Run,
    made: dict[int, tuple[BundleReport, bytes]],
) -> None:
    """Add to ``made`` the ledger's reports when every drawn bundle verified as it says;
    else verify every bundle it holds in full (the ledger lied about a sampled bundle)."""
    bundles = run.bundles
    agree = all(
        ledger.agrees(bundles[i].name, plan.ledgered[i], made[i][1])
        for i in plan.drawn
        if i in made
    )
    if not agree:
        made.update(run.verify([i for i in plan.ledgered if i not in made], done=len(made)))
        return
    ledger.accepted()
    for i, raw in plan.ledgered.items():
        if i not in made:
            report = BundleReport.model_validate_json(raw)
            made[i] = (report.model_copy(update={"path": str(bundles[i])}), raw)


def _in_order(
    bundles: Sequence[Path],
    made: Mapping[int, tuple[BundleReport, bytes]],
    read_as: dict[str, tuple[BundleReport, str]] | None,
) -> list[BundleReport]:
    """The reports in the bundles' order; ``read_as`` (when given) gets each one's digest."""
    reports: list[BundleReport] = []
    for i in range(len(bundles)):
        got, data = made[i]
        reports.append(got)
        if read_as is not None:
            read_as[got.path] = (got, report_digest(data, got.path))
    return reports


@dataclass
class _Run:
    """Verifying some of a build's bundles: from this machine's report cache when it holds
    them, else on the pool (or inline, one at a time, telling ``progress``)."""

    bundles: Sequence[Path]
    files: Mapping[int, dict[str, str] | None]
    code: str
    cache_dir: Path | None
    seal: CacheSeal
    key_parts: tuple[bool, str, bool]
    job: Callable[[Path], _VerifyJob]
    workers: Workers | None
    progress: Callable[[int, int], None] | None

    def verify(self, indices: Sequence[int], *, done: int) -> dict[int, tuple[BundleReport, bytes]]:
        """Verify ``indices`` of the bundles (``done`` others already counted); return each
        report and the JSON it was read from."""
        out: dict[int, tuple[BundleReport, bytes]] = {}
        todo: list[tuple[int, Path | None, _VerifyJob]] = []
        for i in indices:
            bundle = self.bundles[i]
            cached = self._cache_path(i)
            hit = _cached_report(self.seal, cached) if cached is not None else None
            if hit is not None:  # the path as this run spells it (its files are read there)
                out[i] = (hit[0].model_copy(update={"path": str(bundle)}), hit[1])
                continue
            todo.append((i, cached, self.job(bundle)))
        total = len(self.bundles)
        done += len(out)
        if self.progress is not None:
            self.progress(done, total)
        results = self._results([job for _, _, job in todo])
        for (i, cached, _), data in zip(todo, results, strict=True):
            if cached is not None:
                self.seal.write(cached.stem, cached, data)
            out[i] = (BundleReport.model_validate_json(data), data)
            done += 1
            if self.progress is not None:
                self.progress(done, total)
        return out

    def _cache_path(self, i: int) -> Path | None:
        """Where bundle ``i``'s report is cached (None: no cache, or no key for it)."""
        if self.cache_dir is None:
            return None
        allow_unsigned, trust, reproduce = self.key_parts
        key = _report_key(
            self.bundles[i], self.files.get(i), self.code, allow_unsigned, trust, reproduce
        )
        return self.cache_dir / f"{key}.json" if key else None

    def _results(self, jobs: list[_VerifyJob]) -> Iterable[bytes]:
        """Each job's report as JSON, in order: on the pool when the work is worth it."""
        weight = sum(SCREEN_WEIGHT if (Path(j.bundle) / FRAMES_DIR).is_dir() else 1 for j in jobs)
        if self.workers is not None and self.workers.worth_it(weight, VERIFY_POOL_THRESHOLD):
            return self.workers.submit_chunks(_verify_jobs, jobs)  # read while the rest runs
        return (data for job in jobs for data in _verify_jobs([job]))  # one at a time: progress


def _cached_report(seal: CacheSeal, path: Path) -> tuple[BundleReport, bytes] | None:
    """Return the report cached at ``path`` and its JSON when this machine wrote it, else
    None."""
    data = seal.read(path.stem, path)
    if data is None:
        return None  # absent, damaged, or planted: verified afresh
    try:
        return BundleReport.model_validate_json(data), data
    except ValueError:
        return None


def report_digest(data: bytes, path: str) -> str:
    """Return the digest of a report read from the JSON ``data`` and given the path ``path``
    (all a report is): the sha256 of both. What a site build's kept parts are keyed by."""
    digest = hashlib.sha256(data)
    digest.update(b"\0" + path.encode("utf-8"))
    return digest.hexdigest()
