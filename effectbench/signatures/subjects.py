"""The files a signed submission bundle covers: walk, hash, state and compare.

A bundle is a folder of regular files only (no symbolic link, no special file),
named by clean NFC UTF-8 relative POSIX paths. :func:`scan_bundle` walks it
without following links; :func:`hash_file` hashes one file streamed;
:func:`build_statement` makes the in-toto Statement whose subjects are every
file but :data:`SIGNATURE_FILE`; :func:`parse_subjects` checks a signed
statement and :func:`compare_subjects` reports, file by file, how the folder
differs from it. Nothing here signs or verifies a signature (sigstore is used only for
its in-toto Statement builder); :mod:`effectbench.signatures.sign` and
:mod:`effectbench.signatures.verify` do that.
"""

from __future__ import annotations

import json
import os
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from sigstore import dsse
from sigstore.errors import Error

from effectbench._version import engine_version
from effectbench.bundle import SIGNATURE_FILE, SUBMISSION_FILE
from effectbench.errors import SigningError
from effectbench.findings import CheckId, Finding
from effectbench.hashing import hash_file

__all__ = [
    "BENCHMARK",
    "PREDICATE_TYPE",
    "SIGNATURE_FILE",
    "STATEMENT_TYPE",
    "BundleFiles",
    "build_statement",
    "compare_subjects",
    "hash_file",
    "parse_subjects",
    "predicate_findings",
    "scan_bundle",
]

PREDICATE_TYPE = "https://effectbench.dev/submission/v1"
"""Our in-toto predicate type: an EffectBench submission bundle."""
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
BENCHMARK = "effectbench"

_HEX = frozenset("0123456789abcdef")


@dataclass(frozen=True)
class BundleFiles:
    """What a walk of a bundle folder found (never following a symbolic link)."""

    files: dict[str, Path]
    """Regular files by POSIX relative path, sorted, without the signature file."""
    symlinks: list[str]
    """Relative paths that are symbolic links (to anything)."""
    special: list[str]
    """Relative paths that are neither a regular file, a folder nor a link."""


# -- walking, hashing, the statement -----------------------------------------------------------


def scan_bundle(bundle_dir: Path) -> BundleFiles:
    """Walk ``bundle_dir`` without following links; sort regular files by relative path."""
    files: dict[str, Path] = {}
    symlinks: list[str] = []
    special: list[str] = []

    def walk(folder: Path, prefix: str) -> None:
        with os.scandir(folder) as entries:
            for entry in entries:
                rel = prefix + entry.name
                if entry.is_symlink():
                    symlinks.append(rel)
                elif entry.is_dir(follow_symlinks=False):
                    walk(Path(entry.path), rel + "/")
                elif entry.is_file(follow_symlinks=False):
                    if rel != SIGNATURE_FILE:
                        files[rel] = Path(entry.path)
                else:
                    special.append(rel)

    walk(bundle_dir, "")
    return BundleFiles(
        files={name: files[name] for name in sorted(files)},
        symlinks=sorted(symlinks),
        special=sorted(special),
    )


def build_statement(
    bundle_dir: Path, *, spec_version: str, predicate_type: str = PREDICATE_TYPE
) -> dsse.Statement:
    """Return the in-toto Statement over every regular file of ``bundle_dir``.

    ``predicate_type`` says what kind of bundle it is (a submission by default; a monitor
    bundle has its own, so one kind's signature never vouches for the other).

    Raises :class:`SigningError` when the folder holds a symbolic link or a
    special file: a bundle is regular files only.
    """
    scan = scan_bundle(bundle_dir)
    odd = [f"{name} (symbolic link)" for name in scan.symlinks if name != SIGNATURE_FILE]
    odd += [f"{name} (not a regular file)" for name in scan.special]
    odd += [
        f"{name!r} (not a clean NFC UTF-8 relative path)"
        for name in scan.files
        if not _is_clean_relpath(name)
    ]
    if odd:
        raise SigningError(
            f"{bundle_dir}: a bundle holds regular files only; replace or remove: " + ", ".join(odd)
        )
    if not scan.files:
        raise SigningError(f"{bundle_dir}: the folder holds no file to sign")
    subjects = [
        dsse.Subject(name=name, digest=dsse.DigestSet(root={"sha256": hash_file(path)}))
        for name, path in scan.files.items()
    ]
    predicate = {
        "benchmark": {"name": BENCHMARK, "spec_version": spec_version},
        "tool": {"name": BENCHMARK, "version": engine_version()},
        "files": len(subjects),
        "excluded": [SIGNATURE_FILE],
    }
    try:
        return (
            dsse.StatementBuilder()
            .subjects(subjects)
            .predicate_type(predicate_type)
            .predicate(predicate)
            .build()
        )
    except Error as exc:  # a file name that is not valid text, for instance
        raise SigningError(f"{bundle_dir}: cannot build the statement: {exc}") from None


# -- checking a signed statement against the folder --------------------------------------------


def parse_subjects(
    payload: bytes, predicate_type: str = PREDICATE_TYPE
) -> tuple[dict[str, str], list[Finding]]:
    """Check a signed statement's types; return its subjects (name -> sha256) and any findings.

    ``payload`` is the verified DSSE payload; its predicate type must be ``predicate_type``.
    Findings are ``signature.statement`` or ``signature.predicate_type``; the subjects are
    empty whenever a finding is.
    """

    def bad(message: str, where: str | None = None) -> tuple[dict[str, str], list[Finding]]:
        return {}, [Finding(CheckId.SIGNATURE_STATEMENT, message, file=SIGNATURE_FILE, field=where)]

    try:
        statement = json.loads(payload)
    except (ValueError, UnicodeDecodeError) as exc:
        return bad(f"the signed payload is not JSON: {exc}")
    if not isinstance(statement, dict):
        return bad("the signed payload is not an in-toto Statement object")
    if statement.get("_type") != STATEMENT_TYPE:
        return bad(f"expected _type {STATEMENT_TYPE!r}, got {statement.get('_type')!r}", "_type")
    if statement.get("predicateType") != predicate_type:
        return {}, [
            Finding(
                CheckId.SIGNATURE_PREDICATE_TYPE,
                f"the signed statement has predicate type {statement.get('predicateType')!r}, "
                f"not {predicate_type}",
                file=SIGNATURE_FILE,
                field="predicateType",
            )
        ]
    predicate = statement.get("predicate")
    name = predicate.get("benchmark", {}).get("name") if isinstance(predicate, dict) else None
    if name != BENCHMARK:
        return bad(f"predicate.benchmark.name must be {BENCHMARK!r}", "predicate.benchmark")
    subjects = statement.get("subject")
    if not isinstance(subjects, list) or not subjects:
        return bad("the statement lists no subject", "subject")
    declared: dict[str, str] = {}
    for i, subject in enumerate(subjects):
        where = f"subject[{i}]"
        if not isinstance(subject, dict):
            return bad("a subject must be an object", where)
        name = subject.get("name")
        digest = subject.get("digest")
        sha = digest.get("sha256") if isinstance(digest, dict) else None
        if not isinstance(name, str) or not _is_clean_relpath(name) or name == SIGNATURE_FILE:
            return bad(f"subject name {name!r} is not a clean relative POSIX path", where)
        if not isinstance(sha, str) or len(sha) != 64 or not _HEX.issuperset(sha):
            return bad(f"subject {name!r} has no lowercase sha256 digest", where)
        if name in declared:
            return bad(f"subject {name!r} is listed twice", where)
        declared[name] = sha
    return declared, []


def predicate_findings(payload: bytes, spec_version: str) -> list[Finding]:
    """Compare the signed predicate with ``submission.json``: the SPEC version and the tool.

    ``payload`` is a statement :func:`parse_subjects` accepted. The predicate's
    ``benchmark.spec_version`` must be the declared ``spec_version`` and its
    ``tool`` must name EffectBench with a version: a signature over a run scored
    under another SPEC does not vouch for this declaration.
    """
    predicate = json.loads(payload).get("predicate")
    benchmark = predicate.get("benchmark") if isinstance(predicate, dict) else None
    tool = predicate.get("tool") if isinstance(predicate, dict) else None
    signed = benchmark.get("spec_version") if isinstance(benchmark, dict) else None
    out = []
    if signed != spec_version:
        out.append(
            Finding(
                CheckId.SIGNATURE_PREDICATE,
                f"the signature vouches for SPEC {signed!r}, but {SUBMISSION_FILE} declares "
                f"{spec_version!r}; sign the bundle again (effectbench sign)",
                file=SIGNATURE_FILE,
                field="predicate.benchmark.spec_version",
            )
        )
    name = tool.get("name") if isinstance(tool, dict) else None
    version = tool.get("version") if isinstance(tool, dict) else None
    if name != BENCHMARK or not isinstance(version, str) or not version:
        out.append(
            Finding(
                CheckId.SIGNATURE_PREDICATE,
                f"the signed predicate's tool is {tool!r}, not {BENCHMARK} with a version; "
                "sign the bundle with effectbench sign",
                file=SIGNATURE_FILE,
                field="predicate.tool",
            )
        )
    return out


def _is_clean_relpath(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # an undecodable file name (surrogate escapes)
        return False
    parts = name.split("/")
    return (
        bool(name)
        and "\\" not in name
        and "\x00" not in name
        and unicodedata.normalize("NFC", name) == name
        and all(part not in ("", ".", "..") for part in parts)
    )


def compare_subjects(bundle_dir: Path, declared: dict[str, str]) -> Iterator[Finding]:
    """Yield one finding per file that differs from the signed subjects (each hashed once).

    ``declared`` maps each signed relative path to its sha256 (from
    :func:`parse_subjects`). Links and special files are reported by name; a
    subject below a linked folder is not reported again as removed.
    """
    scan = scan_bundle(bundle_dir)
    links = set(scan.symlinks) - {SIGNATURE_FILE}
    special = set(scan.special)
    for name in sorted(set(declared) | set(scan.files) | links | special):
        if name in links:
            yield Finding(
                CheckId.SIGNATURE_SUBJECT_SYMLINK,
                f"{name} is a symbolic link; a bundle holds regular files only "
                "(replace it with the file itself and sign again)",
                file=name,
            )
        elif name in special:
            yield Finding(
                CheckId.SIGNATURE_SUBJECT_NOT_REGULAR,
                f"{name} is not a regular file; a bundle holds regular files only",
                file=name,
            )
        elif name not in scan.files:
            if not any(name.startswith(link + "/") for link in links):
                yield Finding(
                    CheckId.SIGNATURE_SUBJECT_REMOVED,
                    f"{name} is covered by the signature but missing from the bundle",
                    file=name,
                )
        elif name not in declared:
            yield Finding(
                CheckId.SIGNATURE_SUBJECT_ADDED,
                f"{name} is in the bundle but not covered by the signature "
                "(remove it, or sign the bundle again)",
                file=name,
            )
        elif hash_file(scan.files[name]) != declared[name]:
            yield Finding(
                CheckId.SIGNATURE_SUBJECT_CHANGED,
                f"{name} changed after signing (its sha256 differs from the signed one)",
                file=name,
            )
