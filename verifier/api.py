"""The verifier's entry points: verify a bundle, an upstream document, or a folder of bundles.

Verification only reads: files are opened without following symlinks and
nothing is written, so the same input always gets the same verdict.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from effectbench.bundle import (
    BUNDLE_FILES,
    EPISODES_FILE,
    README_FILE,
    SIGNATURE_FILE,
    SUBMISSION_FILE,
    Submission,
    SubmissionHeader,
    iter_episode_lines,
    submission_from_upstream,
)
from effectbench.errors import DataError
from effectbench.findings import Finding
from effectbench.metrics import Results, summarize
from effectbench.seam import BenchmarkProvider
from effectbench.strictjson import StrictJSONError, load_document
from verifier import reproduce as _reproduce
from verifier.checks import check_pack, check_spec, compare_claims
from verifier.limits import Limits
from verifier.report import (
    BundleReport,
    CheckReport,
    Family,
    FindingSink,
    SignerView,
    Status,
    decide_status,
)
from verifier.rows import RowChecker, TaskFacts
from verifier.scan import scan_episodes

_HEADER_FIELDS = {
    "pack.name": "pack.name",
    "pack.fingerprint": "pack.fingerprint",
    "seeds": "seeds",
    "trials_per_task": "trials_per_task",
    "spec_version": "spec_version",
}
_UPSTREAM_FIELDS = {
    "pack.name": "reproducibility.pack",
    "pack.fingerprint": "reproducibility.pack_fingerprint",
    "seeds": "reproducibility.seeds",
    "trials_per_task": "reproducibility.trials_per_task",
    "spec_version": "reproducibility.effectbench_version",
}


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


# --------------------------------------------------------------------------- reading safely


def _read_nofollow(path: Path, limit: int) -> bytes:
    """Read a regular file without following a symlink; at most ``limit`` bytes."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as fh:
        return fh.read(limit + 1)


def _inspect_files(bundle: Path, sink: FindingSink, limits: Limits) -> dict[str, Path]:
    """Check the bundle's file list; return the allowed regular files present."""
    found: dict[str, Path] = {}
    caps = {
        SUBMISSION_FILE: limits.max_submission_bytes,
        EPISODES_FILE: limits.max_episodes_bytes,
        README_FILE: limits.max_readme_bytes,
        SIGNATURE_FILE: limits.max_signature_bytes,
    }
    for entry in sorted(os.scandir(bundle), key=lambda e: e.name):
        info = entry.stat(follow_symlinks=False)
        if stat.S_ISLNK(info.st_mode):
            sink.emit(
                "structure.symlink",
                "a bundle holds regular files only; replace the symlink with the file itself",
                entry.name,
            )
            continue
        if entry.name not in BUNDLE_FILES or not stat.S_ISREG(info.st_mode):
            kind = "folder" if stat.S_ISDIR(info.st_mode) else "file"
            sink.emit(
                "structure.unexpected_file",
                f"unexpected {kind}; a bundle holds only {', '.join(BUNDLE_FILES)}",
                entry.name,
            )
            continue
        if info.st_size > caps[entry.name]:
            sink.emit(
                "structure.file_size",
                f"{info.st_size} bytes exceed the limit of {caps[entry.name]}",
                entry.name,
            )
            continue
        found[entry.name] = Path(entry.path)
    for name in (SUBMISSION_FILE, EPISODES_FILE):
        if name not in found and not any(f.file == name for f in sink.kept["structure"]):
            sink.emit("structure.missing_file", "required file is missing", name)
    return found


def _validate_header(
    doc: Mapping[str, Any], sink: FindingSink, file: str, fields: Mapping[str, str]
) -> SubmissionHeader | None:
    version = doc.get("effectbench_bundle_version")
    if "effectbench_bundle_version" in doc and (version != 1 or isinstance(version, bool)):
        sink.emit(
            "structure.bundle_version",
            f"effectbench_bundle_version {version!r} is not supported; this verifier reads 1",
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
            rule = {
                "missing": "structure.missing_field",
                "extra_forbidden": "structure.unknown_field",
            }.get(err["type"], "structure.type")
            sink.emit(rule, str(err["msg"]), file, None, fields.get(loc, loc) or None)
        return None


# --------------------------------------------------------------------------- the core


@dataclass
class _Input:
    """One submission, whatever its container, ready for the common checks."""

    path: Path
    kind: str
    sub_file: str
    rows_file: str
    fields: Mapping[str, str]
    doc: Mapping[str, Any] | None
    feed_rows: Callable[[RowChecker], None] | None
    again: Callable[[], Iterable[tuple[int, dict[str, Any]]]] | None
    bundle_dir: Path | None
    signature_present: bool


def _verify(inp: _Input, sink: FindingSink, options: VerifyOptions) -> BundleReport:
    header = None
    if inp.doc is not None:
        header = _validate_header(inp.doc, sink, inp.sub_file, inp.fields)

    pack: BenchmarkProvider | None = None
    tasks: dict[str, TaskFacts] | None = None
    if header is not None:
        check_spec(header.spec_version, sink, inp.sub_file, inp.fields["spec_version"])
        pack, tasks = check_pack(header, sink, inp.sub_file, inp.fields)

    checker = RowChecker(
        sink,
        inp.rows_file,
        tasks=tasks,
        trials=header.trials_per_task if header else None,
        seeds=header.seeds if header else None,
    )
    if inp.feed_rows is not None:
        inp.feed_rows(checker)
        if checker.n_rows == 0:
            sink.emit(
                "structure.empty",
                "no episode rows; a submission needs its scored rows",
                inp.rows_file,
            )
    if header is not None and tasks is not None and checker.n_rows and not checker.structure_failed:
        missing = checker.missing_trials(tasks)
        if len(missing) != header.run.n_dropped:
            shown = ", ".join(f"{t} trial {i}" for t, i in missing[:5])
            sink.emit(
                "pack.missing_trials",
                f"{len(missing)} declared (task, trial) pairs have no row"
                + (f" ({shown}{', ...' if len(missing) > 5 else ''})" if missing else "")
                + f", but run.n_dropped is {header.run.n_dropped}; every task needs "
                f"exactly trials_per_task rows",
                inp.rows_file,
            )

    results: Results | None = None
    structure_ok = not sink.failed(Family.STRUCTURE)
    claims_note = ""
    if structure_ok and checker.n_valid and len(checker.arms) == 1:
        results = summarize(checker.frame())
        if inp.doc is not None and "results" in inp.doc:
            compare_claims(inp.doc["results"], results.to_json(), sink, inp.sub_file)
        elif inp.doc is not None:
            sink.emit(
                "claims.missing_field",
                "the results block is missing",
                inp.sub_file,
                None,
                "results",
            )
    else:
        claims_note = (
            "not run: the rows could not all be read"
            if not structure_ok
            else ("not run: the rows cover more than one arm")
        )

    reproduced: bool | None = None
    reproduce_note = ""
    if header is not None and options.reproduce:
        why = _reproduce.applicable(header, pack)
        if why is not None:
            reproduce_note = why
        elif not structure_ok or inp.again is None:
            reproduce_note = "not run: the rows could not all be read"
            reproduced = False
        else:
            assert pack is not None
            reproduced = _reproduce.reproduce(
                header, pack, inp.again(), checker.n_rows, sink, inp.rows_file, options.limits
            )
            if reproduced:
                reproduce_note = (
                    f"re-ran {header.system.baseline!r}: {checker.n_rows} rows identical "
                    "(timings aside)"
                )
    elif header is not None:
        reproduce_note = "disabled (--no-reproduce)"

    signer, verified, sig_note = _signature(inp, header, sink, options, reproduced is True)

    checks: list[CheckReport] = []
    for fam in Family:
        if fam is Family.CLAIMS and claims_note:
            checks.append(sink.report(fam, skipped=True, note=claims_note))
        elif fam is Family.REPRODUCE:
            skipped = reproduced is None or (reproduced is False and not sink.failed(fam))
            checks.append(sink.report(fam, skipped=skipped, note=reproduce_note))
        elif fam is Family.SIGNATURE:
            checks.append(sink.report(fam, skipped=not inp.signature_present, note=sig_note))
        elif fam is Family.RESCORE and checker.n_rows == 0 and not sink.failed(fam):
            checks.append(sink.report(fam, skipped=True, note="not run: no row could be read"))
        elif fam in (Family.SPEC, Family.PACK) and header is None:
            checks.append(
                sink.report(fam, skipped=True, note=f"not run: {inp.sub_file} unreadable")
            )
        else:
            checks.append(sink.report(fam))
    status = decide_status(
        checks,
        signature_verified=verified,
        signature_present=inp.signature_present,
        reproduced=reproduced,
        allow_unsigned=options.allow_unsigned,
    )
    submission = None
    if header is not None and inp.doc is not None:
        try:
            submission = Submission.model_validate(
                {**header.model_dump(), "results": inp.doc.get("results")}
            )
        except ValidationError:
            submission = None
    return BundleReport(
        path=str(inp.path),
        kind=inp.kind,  # type: ignore[arg-type]
        status=status,
        accepted=status is not Status.REFUSED,
        checks=checks,
        submission=submission,
        results=results,
        signer=signer,
        reproduced=reproduced,
        n_rows=checker.n_rows,
    )


def _signature(
    inp: _Input,
    header: SubmissionHeader | None,
    sink: FindingSink,
    options: VerifyOptions,
    reproduced: bool,
) -> tuple[SignerView | None, bool, str]:
    """Run the signature family; return (verified signer, verified, note)."""
    if not inp.signature_present:
        if reproduced:
            return None, False, "unsigned; ranked because it reproduced row for row"
        if options.allow_unsigned:
            return None, False, "unsigned: accepted as a local preview only, never ranked"
        where = SIGNATURE_FILE if inp.kind == "bundle" else inp.sub_file
        how = (
            "sign the bundle (effectbench sign)"
            if inp.kind == "bundle"
            else "import it into a bundle (effectbench import) and sign that"
        )
        sink.emit(
            "signature.missing",
            f"the submission is not signed; {how}, or pass --allow-unsigned for a local preview",
            where,
        )
        return None, False, ""
    if header is None or inp.bundle_dir is None:
        return None, False, f"not run: {inp.sub_file} unreadable"
    if header.signer is None:
        sink.emit(
            "signature.no_signer",
            "a signature is present but submission.json declares no signer "
            "(set signer.identity and signer.issuer)",
            SUBMISSION_FILE,
            None,
            "signer",
        )
        return None, False, ""
    try:
        from effectbench.signatures import verify_bundle_signature
    except ImportError as exc:
        sink.emit(
            "signature.unavailable", f"signature verification is unavailable: {exc}", SIGNATURE_FILE
        )
        return None, False, ""
    result = verify_bundle_signature(
        inp.bundle_dir,
        identity=header.signer.identity,
        issuer=header.signer.issuer,
        trust_config=options.trust_config,
    )
    for f in result.findings:
        if not f.check.startswith("signature."):
            f = Finding("signature." + f.check, f.message, f.file, f.line, f.field)
        sink.add(f)
    if result.findings or result.signer is None:
        if not result.findings:
            sink.emit("signature.invalid", "the signature did not verify", SIGNATURE_FILE)
        return None, False, ""
    s = result.signer
    view = SignerView(identity=s.identity, issuer=s.issuer, signed_at=s.signed_at)
    return view, True, f"signed by {s.identity} ({s.issuer}) at {s.signed_at}"


# --------------------------------------------------------------------------- containers


def _jsonl_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, data in iter_episode_lines(path):
        if data:
            yield number, orjson.loads(data)


def _unreadable(exc: OSError, where: Path) -> DataError:
    """The error for a file the verifier cannot read (exit status 2, not a refusal)."""
    name = exc.filename if isinstance(exc.filename, str) else str(where)
    return DataError(f"cannot read: {exc.strerror or exc}", file=name)


def verify_bundle(bundle: Path, options: VerifyOptions | None = None) -> BundleReport:
    """Verify one bundle folder.

    Raises :class:`DataError` when a file of the bundle cannot be read at all
    (permissions, I/O errors): that is unreadable input, not a verdict.
    """
    try:
        return _verify_bundle(Path(bundle), options or VerifyOptions())
    except OSError as exc:
        raise _unreadable(exc, Path(bundle)) from None


def _verify_bundle(bundle: Path, options: VerifyOptions) -> BundleReport:
    limits = options.limits
    sink = FindingSink()
    bundle = Path(bundle)
    if bundle.is_symlink():
        sink.emit(
            "structure.symlink", "the bundle folder is a symlink; submit a real folder", str(bundle)
        )
        files: dict[str, Path] = {}
    else:
        files = _inspect_files(bundle, sink, limits)
    doc: Mapping[str, Any] | None = None
    if SUBMISSION_FILE in files:
        try:
            parsed = load_document(
                _read_nofollow(files[SUBMISSION_FILE], limits.max_submission_bytes)
            )
        except StrictJSONError as exc:
            sink.emit(exc.check, exc.message, SUBMISSION_FILE)
        else:
            if isinstance(parsed, dict):
                doc = parsed
            else:
                sink.emit(
                    "structure.type", "submission.json must hold a JSON object", SUBMISSION_FILE
                )
    if README_FILE in files:
        try:
            _read_nofollow(files[README_FILE], limits.max_readme_bytes).decode("utf-8")
        except UnicodeDecodeError:
            sink.emit("structure.readme", "README.md must be UTF-8 text", README_FILE)

    feed = None
    again = None
    if EPISODES_FILE in files:
        episodes = files[EPISODES_FILE]

        def feed(checker: RowChecker) -> None:
            scan_episodes(checker, episodes, limits)

        def again() -> Iterable[tuple[int, dict[str, Any]]]:
            return _jsonl_rows(episodes)

    inp = _Input(
        path=bundle,
        kind="bundle",
        sub_file=SUBMISSION_FILE,
        rows_file=EPISODES_FILE,
        fields=_HEADER_FIELDS,
        doc=doc,
        feed_rows=feed,
        again=again,
        bundle_dir=bundle,
        signature_present=SIGNATURE_FILE in files,
    )
    return _verify(inp, sink, options)


def verify_document(path: Path, options: VerifyOptions | None = None) -> BundleReport:
    """Verify an upstream single-document submission (the reference's format) directly.

    Raises :class:`DataError` when the file cannot be read or is not a JSON
    object at all (binary data, an array, some other file): there is no
    submission to judge. A damaged JSON object is refused with findings.
    """
    try:
        return _verify_document(Path(path), options or VerifyOptions())
    except OSError as exc:
        raise _unreadable(exc, Path(path)) from None


def _verify_document(path: Path, options: VerifyOptions) -> BundleReport:
    limits = options.limits
    sink = FindingSink()
    path = Path(path)
    name = path.name
    rows_file = f"{name}:episodes"
    doc: dict[str, Any] | None = None
    rows: list[Any] | None = None
    if path.is_symlink():
        sink.emit("structure.symlink", "the document is a symlink; submit the file itself", name)
    elif path.stat().st_size > limits.max_document_bytes:
        sink.emit(
            "structure.file_size",
            f"{path.stat().st_size} bytes exceed the limit of {limits.max_document_bytes}",
            name,
        )
    else:
        data = _read_nofollow(path, limits.max_document_bytes)
        if data.lstrip()[:1] != b"{":
            raise DataError(
                "not a submission document (a JSON object); verify takes a bundle folder, a "
                "folder of bundles, or an upstream submission document",
                file=str(path),
            )
        try:
            raw = load_document(data)
        except StrictJSONError as exc:
            sink.emit(exc.check, exc.message, name)
        else:
            try:
                doc, rows = submission_from_upstream(raw)
            except DataError as exc:
                sink.emit("structure.upstream", exc.message, name, None, exc.field)
    if rows is not None and len(rows) > limits.max_rows:
        sink.emit("structure.row_count", f"more than {limits.max_rows} rows", rows_file)
        rows = None
    feed = None
    if rows is not None:
        rows_ = rows

        def feed(checker: RowChecker) -> None:
            for i, row in enumerate(rows_, start=1):
                checker.add(i, row)

    inp = _Input(
        path=path,
        kind="upstream",
        sub_file=name,
        rows_file=rows_file,
        fields=_UPSTREAM_FIELDS,
        doc=doc,
        feed_rows=feed,
        again=(lambda: list(enumerate(rows_, start=1))) if rows is not None else None,
        bundle_dir=None,
        signature_present=False,
    )
    return _verify(inp, sink, options)


def is_bundle(path: Path) -> bool:
    """Return whether folder ``path`` looks like one bundle (it holds a bundle file)."""
    return any(os.path.lexists(path / name) for name in (SUBMISSION_FILE, EPISODES_FILE))


def verify_path(path: Path, options: VerifyOptions | None = None) -> list[BundleReport]:
    """Verify a bundle folder, an upstream document, or a folder of bundles.

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
        subdirs = sorted(
            p for p in path.iterdir() if p.is_dir() or (p.is_symlink() and not p.is_file())
        )
        if not any(is_bundle(p) for p in subdirs):
            raise DataError(
                "no bundle here: no submission.json or episodes.jsonl, nor a folder holding one",
                file=str(path),
            )
        return [verify_bundle(p, options) for p in subdirs]
    except PermissionError as exc:
        raise DataError(f"cannot read: {exc.strerror}", file=str(path)) from None
