"""The pull-request check: verify every bundle a pull request adds or changes, whatever its name.

Run by ``.github/workflows/verify-pr.yml`` from the base branch's code (the pull
request contributes data, never the code that judges it)::

    python -m verifier.pr --base BASE_SHA --checkout pr

It diffs the pull request's ``HEAD`` against its merge base with ``BASE`` (NUL
separated, so any file name is read whole: spaces, quotes, globs, non-ASCII,
newlines), verifies every bundle folder under ``submissions/`` that holds a
change (the folder-name rule applies), ranks them against the base branch's
``submissions/`` and the maintainers' reference list (a copy of a bundle already on
the board, or of a reference, is refused as the site would refuse it; the base's
bundles are judged by the base checkout's reproduction records and never re-run, since
only their hashes and verified times rank the pull request's), and fails when a bundle
is refused, a bundle is removed, a file outside a bundle folder changes (code,
workflows, the reference list, ``reproductions/``: a maintainer must review those) or
nothing can be read.
The report goes to standard output and to ``$GITHUB_STEP_SUMMARY``; every name
is quoted and every line is made inert, so no file name can issue a workflow
command (``::error``...) or break the summary's markup.
"""

from __future__ import annotations

import argparse
import html
import io
import os
import secrets
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from effectbench.errors import EffectBenchError
from verifier.api import VerifyOptions, verify_bundle
from verifier.ranking import rank_across
from verifier.records import RecordPolicy
from verifier.references import load_references
from verifier.report import BundleReport, format_report

__all__ = ["Changes", "changed_paths", "main", "quoted", "split_changes"]

SUBMISSIONS = "submissions"


def quoted(name: str) -> str:
    """Return ``name`` quoted for printing: one line, every control character escaped."""
    out = []
    for ch in name:
        if ch in '\\"':
            out.append("\\" + ch)
        elif ch.isprintable() and ch not in "\u2028\u2029":
            out.append(ch)
        else:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
    return '"' + "".join(out) + '"'


def inert(line: str) -> str:
    """Return one line of output that the runner cannot read as a workflow command."""
    line = "".join(ch if ch.isprintable() else "\ufffd" for ch in line)
    return " " + line if line.lstrip().startswith("::") else line


def _git(checkout: Path, *args: str) -> bytes:
    done = subprocess.run(
        ["git", "-C", str(checkout), *args], capture_output=True, check=False, timeout=300
    )
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise EffectBenchError(f"git {args[0]}: {message[-1] if message else 'failed'}")
    return done.stdout


def changed_paths(checkout: Path, base: str) -> list[str]:
    """Return every path the pull request's HEAD changes against its merge base with ``base``."""
    merge_base = _git(checkout, "merge-base", base, "HEAD").decode().strip()
    raw = _git(checkout, "diff", "-z", "--name-only", "--no-renames", merge_base, "HEAD", "--")
    return sorted({os.fsdecode(p) for p in raw.split(b"\0") if p})


@dataclass
class Changes:
    """The changed paths, sorted by what the check does with them."""

    bundles: list[str] = field(default_factory=list)
    """Folder names under ``submissions/`` that hold a change."""
    outside: list[str] = field(default_factory=list)
    """Changed paths that are not inside a bundle folder."""


def split_changes(paths: Sequence[str]) -> Changes:
    """Sort changed paths into bundle folders and everything else."""
    changes = Changes()
    folders: set[str] = set()
    for path in paths:
        parts = path.split("/")
        if len(parts) >= 3 and parts[0] == SUBMISSIONS:
            folders.add(parts[1])
        else:
            changes.outside.append(path)
    changes.bundles = sorted(folders)
    return changes


def base_bundles(checkout: Path, base: str, into: Path) -> list[Path]:
    """Write the base commit's ``submissions/`` bundle folders into ``into``; return them."""
    listed = _git(checkout, "ls-tree", "-d", "--name-only", base, "--", SUBMISSIONS)
    if not listed.strip():
        return []
    archive = _git(checkout, "archive", "--format=tar", base, "--", SUBMISSIONS)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    root = into / SUBMISSIONS
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink())


def _ranked(
    checkout: Path, base: str, folders: Sequence[Path], options: VerifyOptions, records: Path
) -> dict[Path, BundleReport]:
    """Verify ``folders`` and rank them against the base's bundles and the reference list.

    The base's bundles are on the board already: what ranks the pull request's against
    them is their hashes and verified times, so none is re-run; each is judged by its
    reproduction record in ``records`` (the base checkout's ``reproductions/``), or left
    undecided without one (:attr:`VerifyOptions.records_only`).
    """
    mine = [verify_bundle(folder, options) for folder in folders]
    names = {folder.name for folder in folders}
    on_board = replace(options, records=RecordPolicy(records=records), records_only=True)
    with tempfile.TemporaryDirectory(prefix="effectbench-pr-base-") as tmp:
        theirs = [
            verify_bundle(folder, on_board)
            for folder in base_bundles(checkout, base, Path(tmp))
            if folder.name not in names  # the pull request's version replaces the base's
        ]
    listed = load_references(options.references) if options.references else None
    ranked = rank_across([*theirs, *mine], references=listed)[len(theirs) :]
    return dict(zip(folders, ranked, strict=True))


def _summary(lines: list[str]) -> None:
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return
    with open(target, "a", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


def run(
    checkout: Path, base: str, options: VerifyOptions, records: Path = Path("reproductions")
) -> int:
    """Verify the pull request checked out at ``checkout``; print and summarise; return 0 or 1.

    ``records`` is the base checkout's folder of reproduction records (for the base's bundles).
    """
    changes = split_changes(changed_paths(checkout, base))
    status = 0
    summary = ["## EffectBench verifier report", ""]
    token = secrets.token_hex(16)
    print(f"::stop-commands::{token}")  # nothing printed below is a workflow command
    try:
        if changes.outside:
            status = 1
            summary += [
                "This pull request also changes files outside a bundle folder of "
                "`submissions/` (a maintainer must review those separately; they did not take "
                "part in this verification):",
                "",
                *[f"- <code>{html.escape(quoted(p))}</code>" for p in changes.outside],
                "",
            ]
            for p in changes.outside:
                print(inert(f"outside a bundle folder: {quoted(p)}"))
        if not changes.bundles:
            summary.append("No bundle added or changed.")
        present = [
            checkout / SUBMISSIONS / name
            for name in changes.bundles
            if (checkout / SUBMISSIONS / name).is_dir()
            and not (checkout / SUBMISSIONS / name).is_symlink()
        ]
        reports = _ranked(checkout, base, present, options, records)
        for name in changes.bundles:
            folder = checkout / SUBMISSIONS / name
            if folder not in reports:
                status = 1
                text = f"{SUBMISSIONS}/{quoted(name)}: removed or not a folder (a maintainer "
                text += "must review)"
            else:
                report = reports[folder]
                status |= 0 if report.accepted else 1
                text = format_report(report).replace(
                    str(folder), f"{SUBMISSIONS}/{quoted(name)}", 1
                )
            lines = [inert(line) for line in text.splitlines()]
            for line in lines:
                print(line)
            summary += [f"### <code>{html.escape(quoted(name))}</code>", "", "<pre>"]
            summary += [html.escape(line) for line in lines] + ["</pre>", ""]
    finally:
        print(f"::{token}::")
    _summary(summary)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Run the pull-request check (exit 0 all good, 1 something to refuse, 2 unreadable)."""
    parser = argparse.ArgumentParser(prog="python -m verifier.pr", description=__doc__)
    parser.add_argument("--base", required=True, help="the base branch's commit")
    parser.add_argument("--checkout", type=Path, default=Path("pr"), help="the pull request")
    parser.add_argument("--trust-config", type=Path, help=argparse.SUPPRESS)  # tests only
    parser.add_argument("--references", type=Path, help=argparse.SUPPRESS)  # tests only
    parser.add_argument(
        "--records",
        type=Path,
        default=Path("reproductions"),
        help="the base checkout's reproduction records, by which the base's bundles are judged "
        "without a re-run (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    options = VerifyOptions(
        trust_config=args.trust_config, references=args.references, folder_rule=True
    )
    try:
        return run(args.checkout, args.base, options, args.records)
    except EffectBenchError as exc:
        print(inert(f"verify-pr: {exc.diagnostics()}"), file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
