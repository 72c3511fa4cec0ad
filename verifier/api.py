"""The verifier's entry points: verify a bundle, an upstream document, or a folder of bundles.

Verification only reads: files are opened without following symlinks and
nothing is written, so the same input always gets the same verdict. One
submission goes through :func:`_verify`, a list of steps, one per check family
(each family's rules live in its own module):

1. ``structure`` of the declaration (:func:`_check_header`);
2. ``spec`` and ``pack``: the declared SPEC version and pack (:func:`_check_declaration`);
3. ``structure``, ``pack`` and ``rescore`` of every row in one pass (:func:`_check_rows`);
4. ``claims``: the results block recomputed (:func:`_check_claims`);
5. ``reproduce``: a shipped baseline re-run (:func:`_check_reproduction`);
6. ``signature`` (:func:`verifier.signature.check_signature`);

then the status rule (:func:`verifier.report.decide_status`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import orjson
from pydantic import ValidationError

from effectbench.bundle import (
    BUNDLE_VERSIONS,
    EPISODES_FILE,
    SUBMISSION_FILE,
    Submission,
    SubmissionHeader,
)
from effectbench.errors import DataError
from effectbench.findings import CheckId, Family
from effectbench.metrics import (
    Results,
    SubstrateUsage,
    TaskTable,
    substrate_usage,
    summarize,
    task_table,
)
from effectbench.seam import BenchmarkProvider
from effectbench.showable import SHOWN_PARAGRAPH, describe_unshowable
from verifier import reproduce as _reproduce
from verifier.claims import compare_claims
from verifier.commitment import PINNED_CHAIN, check_commitment
from verifier.inputs import Submitted, open_bundle, open_document
from verifier.instances import InstanceFacts, check_instance_rows
from verifier.limits import Limits
from verifier.pack import TaskFacts, check_drops, check_pack, clusters_of
from verifier.ranking import rank_across
from verifier.receipts import ReceiptResult, check_receipts, unranked_reason
from verifier.records import RecordPolicy, Reproduction, read_record, record_key
from verifier.references import Reference, listed_reference, load_references
from verifier.report import (
    SUBMISSION_FAMILIES,
    BundleReport,
    FindingSink,
    Status,
    Step,
    decide_status,
)
from verifier.rows import RowChecker
from verifier.signature import SignatureResult, check_signature
from verifier.spec import check_spec

__all__ = [
    "VerifyOptions",
    "bundle_folders",
    "is_bundle",
    "verify_bundle",
    "verify_document",
    "verify_path",
]

RANKING_NOTE = "runs across bundles (a folder of bundles, or the site build)"
RECORDS_ONLY_NOTE = "not re-run: no reproduction record, and only its hashes are asked for here"
"""What a single bundle's report says of the ``ranking`` step."""
_HEADER_RULES = {
    "missing": CheckId.STRUCTURE_MISSING_FIELD,
    "extra_forbidden": CheckId.STRUCTURE_UNKNOWN_FIELD,
    "string_pattern_mismatch": CheckId.STRUCTURE_TEXT,
    "string_too_long": CheckId.STRUCTURE_TEXT_LENGTH,
    "too_long": CheckId.STRUCTURE_TEXT_LENGTH,
}
"""pydantic error types that have their own check id (every other one is ``structure.type``)."""


@dataclass(frozen=True)
class VerifyOptions:
    """How to verify (the command-line flags of ``effectbench verify``)."""

    allow_unsigned: bool = False
    """Accept an unsigned bundle as a preview (never ranked)."""
    trust_config: Path | None = None
    """A private Sigstore trust configuration (tests); default: the pinned production root."""
    reproduce: bool = True
    """Re-run shipped baselines on deterministic packs."""
    limits: Limits = field(default_factory=Limits)
    """Size, row and line-length limits."""
    references: Path | None = None
    """The maintainers' reference list (default: :data:`verifier.references.REFERENCE_FILE`)."""
    folder_rule: bool = False
    """Hold the bundle folder's name to ``YYYY-MM-DD_slug`` (set for a folder of bundles)."""
    records: RecordPolicy = field(default_factory=RecordPolicy)
    """Where reproduction records are read and whose count (:mod:`verifier.records`)."""
    beacon_chain: Path | None = PINNED_CHAIN
    """The pinned beacon chain (:class:`effectbench.instances.BeaconChain` file) a fresh
    instance's round is verified under (default: drand's quicknet,
    :data:`verifier.commitment.PINNED_CHAIN`; tests pin a private chain); None: none is
    pinned, a committed instance is refused."""
    force_reproduce: bool = False
    """Re-run even a bundle that has a valid reproduction record (``--reproduce``)."""
    records_only: bool = False
    """Judge reproduction by records alone: a bundle without one is not re-run and its
    reproduction stays undecided (``reproduced`` None). Only for bundles whose verdict is
    not what is asked: the base branch's bundles in the pull-request check
    (:mod:`verifier.pr`), which rank the pull request's by their hashes and verified times."""


# --------------------------------------------------------------------------- the steps


@dataclass(frozen=True)
class _Declared:
    """The declared pack, when it is known."""

    pack: BenchmarkProvider | None = None
    tasks: dict[str, TaskFacts] | None = None
    instance: InstanceFacts | None = None
    """The instance of a generated pack the bundle ran on (None: the pack draws none)."""
    fingerprint: str = ""
    """The pack's fingerprint as computed here (not as declared)."""


@dataclass(frozen=True)
class _Claims:
    results: Results | None
    """The results block recomputed from the rows (None when they cannot all be read)."""
    step: Step
    tasks: TaskTable | None = None
    """The rows counted per task (what the board's task-clustered numbers read)."""
    usage: dict[str, SubstrateUsage] | None = None
    """Per substrate, first-try successes and model cost (:func:`substrate_usage`)."""


@dataclass(frozen=True)
class _Reproduction:
    reproduced: bool | None
    """True when every re-run row matched; None when it does not apply."""
    step: Step
    rows: int | None = None
    """The rows the re-run compared (None when nothing was re-run)."""


def _check_header(sub: Submitted, sink: FindingSink) -> SubmissionHeader | None:
    """``structure``: the declaration against :class:`SubmissionHeader` (None when refused)."""
    doc, file = sub.doc, sub.sub_file
    if doc is None:
        return None
    version = doc.get("effectbench_bundle_version")
    if "effectbench_bundle_version" in doc and (
        version not in BUNDLE_VERSIONS or isinstance(version, bool)
    ):
        sink.emit(
            CheckId.STRUCTURE_BUNDLE_VERSION,
            f"effectbench_bundle_version {version!r} is not supported; this verifier reads "
            f"{' and '.join(str(v) for v in BUNDLE_VERSIONS)}",
            file,
            None,
            "effectbench_bundle_version",
        )
        return None
    header = {k: v for k, v in doc.items() if k != "results"}
    try:
        return SubmissionHeader.model_validate_json(orjson.dumps(header), strict=True)
    except ValidationError as exc:
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"])
            rule = _HEADER_RULES.get(err["type"], CheckId.STRUCTURE_TYPE)
            message = (
                _unshowable(err["input"], (err.get("ctx") or {}).get("pattern"))
                if rule is CheckId.STRUCTURE_TEXT
                else err["msg"]
            )
            sink.emit(rule, str(message), file, None, sub.fields.get(loc, loc) or None)
        return None


def _unshowable(text: object, pattern: object) -> str:
    """Say which character of a refused shown text cannot be shown, and where."""
    also = "\n" if pattern == SHOWN_PARAGRAPH else ""
    said = describe_unshowable(text, also=also) if isinstance(text, str) else None
    return f"{said}; remove it" if said else "holds a character that cannot be shown"


def _check_declaration(
    sub: Submitted, header: SubmissionHeader | None, sink: FindingSink
) -> _Declared:
    """``spec`` and ``pack``: the declared SPEC version and pack (skipped without a header)."""
    if header is None:
        return _Declared()
    check_spec(header.spec_version, sink, sub.sub_file, sub.fields["spec_version"])
    pack, tasks, instance, fingerprint = check_pack(header, sink, sub.sub_file, sub.fields)
    return _Declared(pack, tasks, instance, fingerprint)


def _check_rows(
    sub: Submitted, header: SubmissionHeader | None, declared: _Declared, sink: FindingSink
) -> RowChecker:
    """Every row's structure, pack facts and re-score in one pass; then the missing trials."""
    checker = RowChecker(
        sink,
        sub.rows_file,
        tasks=declared.tasks,
        trials=header.trials_per_task if header else None,
        seeds=header.seeds if header else None,
        instance=declared.instance is not None,
    )
    if sub.feed_rows is None:
        return checker
    sub.feed_rows(checker)
    if checker.n_rows == 0:
        sink.emit(
            CheckId.STRUCTURE_EMPTY,
            "no episode rows; a submission needs its scored rows",
            sub.rows_file,
        )
    if header is not None and declared.tasks is not None and not checker.structure_failed:
        _check_coverage(sub, header, declared.tasks, declared, checker, sink)
        check_instance_rows(
            header,
            declared.instance,
            declared.tasks,
            checker.named_tasks(),
            sink,
            {"rows": sub.rows_file, "submission": sub.sub_file},
        )
    return checker


def _check_coverage(
    sub: Submitted,
    header: SubmissionHeader,
    tasks: dict[str, TaskFacts],
    declared: _Declared,
    checker: RowChecker,
    sink: FindingSink,
) -> None:
    """The missing trials, each dropped with a reason or refused: a run covers the split on
    the substrates it chose (SPEC 1.1 task variants), those of its rows and of its drops (a
    run whose every episode dropped is capped too)."""
    seen = checker.seen_tasks() | {d.task_id for d in header.run.dropped}
    substrates = {f.substrate for tid, f in tasks.items() if tid in seen}
    covered = {tid: f for tid, f in tasks.items() if f.substrate in substrates}
    missing = checker.missing_trials(covered)
    check_drops(missing, header, covered, declared.pack, sink, sub.sub_file, sub.rows_file)


def _check_receipts(
    sub: Submitted,
    header: SubmissionHeader | None,
    declared: _Declared,
    checker: RowChecker,
    sink: FindingSink,
    options: VerifyOptions,
) -> ReceiptResult:
    """``receipt``: every row's receipt, its frames, and the row derived again from it."""
    if sub.kind != "bundle":
        return ReceiptResult(Step(True, "an upstream document carries no receipts"))
    ready = not sink.failed(Family.STRUCTURE) and checker.n_valid == checker.n_rows > 0
    return check_receipts(
        header,
        declared.pack,
        iter(sub.rows_again()) if sub.rows_again is not None and ready else None,
        sub.receipts_file,
        sub.frames,
        sink,
        options.limits,
        ready=ready,
        episode_ids=checker.episode_ids(),
        pack_fingerprint=declared.fingerprint,
    )


def _check_claims(
    sub: Submitted,
    header: SubmissionHeader | None,
    checker: RowChecker,
    sink: FindingSink,
    declared: _Declared,
    receipts: ReceiptResult,
) -> _Claims:
    """``claims``: recompute the results from the rows and compare the claimed block."""
    if sink.failed(Family.STRUCTURE) or not checker.n_valid:
        return _Claims(None, Step(True, "not run: the rows could not all be read"))
    if len(checker.arms) != 1:
        return _Claims(None, Step(True, "not run: the rows cover more than one arm"))
    known = receipts.collateral if not sink.failed(Family.RECEIPT) else None
    frame = checker.frame(known)
    results = summarize(frame)
    available = (
        {tid: f.correct_action_available for tid, f in declared.tasks.items()}
        if declared.tasks is not None
        else None
    )
    clusters = clusters_of(declared.tasks) if declared.tasks is not None else None
    tasks = task_table(frame, available, clusters)
    if sub.doc is not None and "results" in sub.doc:
        compare_claims(sub.doc["results"], results.to_json(), sink, sub.sub_file)
    elif sub.doc is not None:
        sink.emit(
            CheckId.CLAIMS_MISSING_FIELD,
            "the results block is missing",
            sub.sub_file,
            None,
            "results",
        )
    retried = {(a.task_id, a.trial) for a in header.run.attempts} if header is not None else set()
    usage = substrate_usage(frame, checker.c_trial, [bool(c) for c in checker.c_calls], retried)
    return _Claims(results, Step(), tasks, usage)


def _check_reproduction(
    sub: Submitted,
    header: SubmissionHeader | None,
    declared: _Declared,
    checker: RowChecker,
    sink: FindingSink,
    options: VerifyOptions,
    receipts: ReceiptResult,
) -> _Reproduction:
    """``reproduce``: re-run a shipped baseline on a deterministic pack, row for row (and, for
    a bundle with receipts, change set for change set)."""
    if header is None:
        return _Reproduction(None, Step(True))
    skipped = _reproduction_skipped(sub, header, declared, sink, options)
    if skipped is not None:
        return skipped
    reference, _ = listed_reference(sub.content_hash, sub.path.name, options.references)
    recorded = _recorded_reproduction(sub, header, sink, options, reference)
    if recorded is not None:
        return recorded
    if options.records_only:
        return _Reproduction(None, Step(True, RECORDS_ONLY_NOTE))
    assert declared.pack is not None and sub.rows_again is not None  # not skipped
    frames = _reproduce.FrameMatch()
    with_receipts = header.effectbench_bundle_version > 1
    rerun = _reproduce.reproduce(
        header,
        declared.pack,
        sub.rows_again(),
        checker.n_rows,
        sink,
        sub.rows_file,
        options.limits,
        receipts.change_sets if with_receipts else None,
        (receipts.frame_sets, frames) if with_receipts else None,
        sample_from=reference.content_hash if reference is not None else None,
    )
    if not rerun.reproduced:
        return _Reproduction(False, Step(True), rerun.rows or None)
    note = reproduced_note(header, rerun.rows, checker.n_rows) + frames.note()
    return _Reproduction(True, Step(note=note), rerun.rows)


def _reproduction_skipped(
    sub: Submitted,
    header: SubmissionHeader,
    declared: _Declared,
    sink: FindingSink,
    options: VerifyOptions,
) -> _Reproduction | None:
    """The ``reproduce`` step of a bundle that is not re-run (None: it is re-run, or read
    from its record): disabled, not a shipped baseline on a deterministic pack, rows not
    all read, seeds not one per trial, or refused already."""
    if not options.reproduce:
        return _Reproduction(None, Step(True, "disabled (--no-reproduce)"))
    why = _reproduce.applicable(header, declared.pack)
    if why is not None:
        return _Reproduction(None, Step(True, why))
    if sink.failed(Family.STRUCTURE) or sub.rows_again is None or declared.pack is None:
        return _Reproduction(False, Step(True, "not run: the rows could not all be read"))
    if sink.ids[CheckId.PACK_SEEDS]:
        return _Reproduction(False, Step(True, "not run: the seeds are not one per trial"))
    # A refused bundle's rows are not re-run (the cost buys nothing). Too few trials refuse
    # the rank, not the rows: a one-trial preview is still re-run.
    pack_refused = sink.counts[Family.PACK.value] > sink.ids[CheckId.PACK_MIN_TRIALS]
    refused = (Family.SPEC, Family.RESCORE, Family.RECEIPT, Family.CLAIMS)
    if pack_refused or any(sink.failed(f) for f in refused):
        return _Reproduction(False, Step(True, "not run: the bundle is refused already"))
    return None


def _recorded_reproduction(
    sub: Submitted,
    header: SubmissionHeader,
    sink: FindingSink,
    options: VerifyOptions,
    reference: Reference | None,
) -> _Reproduction | None:
    """The ``reproduce`` step as the bundle's reproduction record gives it (None: no record
    to read, or a re-run is forced)."""
    if sub.kind != "bundle" or sub.content_hash is None or options.force_reproduce:
        return None
    key = record_key(header, sub.content_hash, sub.path.name)
    listed = reference.record or None if reference is not None else None
    found = read_record(key, options.records, listed)
    if found.problem is not None:
        sink.add(found.problem)
        return _Reproduction(False, Step(True))
    if found.reproduction is not None:
        return _replayed(header, found.reproduction, found.source, sink)
    return None


def _replayed(
    header: SubmissionHeader, record: Reproduction, source: str, sink: FindingSink
) -> _Reproduction:
    """The ``reproduce`` step as a valid record states it (its findings filed again)."""
    for finding in record.findings:
        sink.add(finding)
    if not record.reproduced:
        note = f"from the reproduction record {source}: the re-run did not match"
        return _Reproduction(False, Step(True, note), record.rows_rerun or None)
    note = f"{reproduced_note(header, record.rows_rerun, record.n_rows)}; from the reproduction "
    note += f"record {source}"
    return _Reproduction(True, Step(note=note), record.rows_rerun)


def reproduced_note(header: SubmissionHeader, rerun: int, rows: int) -> str:
    """The ``reproduce`` step's note for a re-run whose ``rerun`` rows of ``rows`` matched."""
    which = f"all {rows} rows" if rerun == rows else f"{rerun} of {rows} rows (its sample)"
    return f"re-ran {header.system.baseline!r}: {which} identical (timings aside)"


def _submission(doc: object, header: SubmissionHeader | None) -> Submission | None:
    """The whole declaration as a :class:`Submission`, for the report (None when it is not one)."""
    if header is None or not isinstance(doc, dict):
        return None
    try:
        return Submission.model_validate({**header.model_dump(), "results": doc.get("results")})
    except ValidationError:
        return None


def _verify(sub: Submitted, sink: FindingSink, options: VerifyOptions) -> BundleReport:
    """Run every check family on one submission, in order, and decide its status."""
    header = _check_header(sub, sink)
    declared = _check_declaration(sub, header, sink)
    committed = (  # before the rows, whose findings may fill the family's kept ones
        check_commitment(
            header,
            declared.instance,
            sink,
            sub.sub_file,
            trust_config=options.trust_config,
            beacon_chain=options.beacon_chain,
        )
        if header is not None
        else None
    )
    checker = _check_rows(sub, header, declared, sink)
    receipts = _check_receipts(sub, header, declared, checker, sink, options)
    claims = _check_claims(sub, header, checker, sink, declared, receipts)
    reproduction = _check_reproduction(sub, header, declared, checker, sink, options, receipts)
    signature: SignatureResult = check_signature(
        sub,
        header,
        sink,
        trust_config=options.trust_config,
        allow_unsigned=options.allow_unsigned,
        reproduced=reproduction.reproduced is True,
        references=options.references,
    )
    unread = Step(True, f"not run: {sub.sub_file} unreadable") if header is None else Step()
    no_rows = Step(True, "not run: no row could be read") if not checker.n_rows else Step()
    steps = {
        Family.STRUCTURE: Step(),
        Family.SPEC: unread,
        Family.PACK: unread,
        Family.RESCORE: no_rows,
        Family.RECEIPT: receipts.step,
        Family.CLAIMS: claims.step,
        Family.SIGNATURE: signature.step,
        Family.REPRODUCE: reproduction.step,
        Family.RANKING: Step(True, RANKING_NOTE),
    }
    checks = [sink.report(family, steps[family]) for family in SUBMISSION_FAMILIES]
    unranked = unranked_reason(header, declared.pack)
    status = decide_status(
        checks,
        signature_verified=signature.signer is not None,
        signature_present=sub.signature_present,
        ranked_unsigned=signature.ranked_unsigned,
        allow_unsigned=options.allow_unsigned,
        unranked=unranked,
    )
    return BundleReport(
        path=str(sub.path),
        kind=sub.kind,
        status=status,
        accepted=status is not Status.REFUSED,
        checks=checks,
        submission=_submission(sub.doc, header),
        results=claims.results,
        tasks=claims.tasks,
        usage=claims.usage,
        signer=signature.signer,
        reproduced=reproduction.reproduced,
        reproduced_rows=reproduction.rows,
        n_rows=checker.n_rows,
        verified_at=signature.verified_at,
        content_hash=sub.content_hash,
        rows_hash=checker.rows_hash() if not sink.failed(Family.STRUCTURE) else None,
        measured_hash=checker.measured_hash() if not sink.failed(Family.STRUCTURE) else None,
        instance_seed=declared.instance.seed if declared.instance else None,
        public_seed=declared.instance.public if declared.instance else None,
        instance_committed=committed,
        unranked=unranked if status is not Status.REFUSED else "",
    )


# --------------------------------------------------------------------------- entry points


def _unreadable(exc: OSError, where: Path) -> DataError:
    """The error for a file the verifier cannot read (exit status 2, not a refusal)."""
    name = exc.filename if isinstance(exc.filename, str) else str(where)
    return DataError(f"cannot read: {exc.strerror or exc}", file=name)


def verify_bundle(bundle: Path, options: VerifyOptions | None = None) -> BundleReport:
    """Verify one bundle folder.

    Raises :class:`DataError` when a file of the bundle cannot be read at all
    (permissions, I/O errors): that is unreadable input, not a verdict.
    """
    options = options or VerifyOptions()
    sink = FindingSink()
    try:
        opened = open_bundle(Path(bundle), sink, options.limits, folder_rule=options.folder_rule)
        return _verify(opened, sink, options)
    except OSError as exc:
        raise _unreadable(exc, Path(bundle)) from None


def verify_document(path: Path, options: VerifyOptions | None = None) -> BundleReport:
    """Verify an upstream single-document submission (the reference's format) directly.

    Raises :class:`DataError` when the file cannot be read or is not a JSON
    object at all (binary data, an array, some other file): there is no
    submission to judge. A damaged JSON object is refused with findings.
    """
    options = options or VerifyOptions()
    sink = FindingSink()
    try:
        return _verify(open_document(Path(path), sink, options.limits), sink, options)
    except OSError as exc:
        raise _unreadable(exc, Path(path)) from None


def is_bundle(path: Path) -> bool:
    """Return whether folder ``path`` looks like one bundle (it holds a bundle file)."""
    return any(os.path.lexists(path / name) for name in (SUBMISSION_FILE, EPISODES_FILE))


def bundle_folders(submissions: Path) -> list[Path]:
    """Return the bundle folders of a folder of bundles, sorted by name.

    Every sub-folder (or link to one) counts but a hidden one: a name starting
    with ``.`` is never a bundle (a half-written bundle is written under a hidden
    name, so a killed ``submit`` leaves nothing that counts).
    """
    return sorted(
        p
        for p in submissions.iterdir()
        if not p.name.startswith(".") and (p.is_dir() or (p.is_symlink() and not p.is_file()))
    )


def verify_path(
    path: Path,
    options: VerifyOptions | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[BundleReport]:
    """Verify a bundle folder, an upstream document, or a folder of bundles (``progress``
    told ``(done, total)`` after each of them).

    Raises :class:`DataError` (exit status 2) when ``path`` does not exist or
    holds nothing to verify.
    """
    options = options or VerifyOptions()
    path = Path(path)
    if not os.path.lexists(path):
        raise DataError("no such file or folder", file=str(path))
    try:
        if path.is_file() and not path.is_dir():
            return [verify_document(path, options)]
        if not path.is_dir():
            raise DataError("neither a bundle folder nor a JSON document", file=str(path))
        if is_bundle(path):
            return [verify_bundle(path, options)]
        subdirs = bundle_folders(path)
        if not any(is_bundle(p) for p in subdirs):
            raise DataError(
                f"no bundle here: no {SUBMISSION_FILE} or {EPISODES_FILE}, "
                "nor a folder holding one",
                file=str(path),
            )
        member = replace(options, folder_rule=True)
        listed = load_references(options.references) if options.references else None
        reports = []
        for p in subdirs:
            reports.append(verify_bundle(p, member))
            if progress is not None:
                progress(len(reports), len(subdirs))
        return rank_across(reports, references=listed)
    except PermissionError as exc:
        raise DataError(f"cannot read: {exc.strerror}", file=str(path)) from None
