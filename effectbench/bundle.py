"""Submission bundles: the models of ``submission.json`` and reading and writing a bundle.

A bundle is a folder holding ``submission.json`` (a :class:`Submission`),
``episodes.jsonl`` (one episode row per line, in the interop layout), an
optional submitter ``README.md`` and an optional ``submission.sigstore.json``.
This module also converts the reference implementation's single-document
submission into a bundle (:func:`submission_from_upstream`).

It only reads and writes; every judgement about a bundle is the verifier's.
``make generate`` writes :func:`schema_text` to ``docs/submission.schema.json``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from effectbench.attempts import Ending
from effectbench.errors import DataError, UsageError
from effectbench.filenames import BUNDLE_FILES as BUNDLE_FILES
from effectbench.filenames import EPISODES_FILE as EPISODES_FILE
from effectbench.filenames import FRAMES_DIR as FRAMES_DIR
from effectbench.filenames import MAX_LINE_BYTES as MAX_LINE_BYTES
from effectbench.filenames import README_FILE as README_FILE
from effectbench.filenames import RECEIPTS_FILE as RECEIPTS_FILE
from effectbench.filenames import SIGNATURE_FILE as SIGNATURE_FILE
from effectbench.filenames import SUBMISSION_FILE as SUBMISSION_FILE
from effectbench.metrics import Results
from effectbench.schema import DropReason, EpisodeRecord, Split
from effectbench.showable import (
    SHOWN_PARAGRAPH,
    SHOWN_TEXT,
    UNICODE_VERSION,
    UNSHOWN_CHAR,
    UNSHOWN_PARAGRAPH_CHAR,
)

BUNDLE_VERSION: Literal[1] = 1
"""The ``effectbench_bundle_version`` of a bundle without receipts (an imported document)."""
RECEIPTS_VERSION: Literal[2] = 2
"""The ``effectbench_bundle_version`` of a bundle that carries a receipt for every row
(``receipts.jsonl`` and ``frames/``): what a run of this harness writes."""
BUNDLE_VERSIONS = (BUNDLE_VERSION, RECEIPTS_VERSION)
"""Every ``effectbench_bundle_version`` this module writes and the verifier reads."""
UPSTREAM_VERSION = 1
"""The ``effectbench_submission_version`` of the reference's single document."""

_READ_CHUNK = 16 * 1024 * 1024

NAME_MAX = 80
"""Characters of ``system.name`` (a board row, a chart label)."""
DESCRIPTION_MAX = 2000
"""Characters of ``system.description``."""
URL_MAX = 500
"""Characters of ``system.url`` and of the signer's identity and issuer."""
SHORT_MAX = 100
"""Characters of a short field (pack, baseline, versions, environment entries)."""
MAX_TRIALS = 10_000
"""Upper bound of ``trials_per_task`` (checked before anything is allocated per trial)."""
MAX_LISTED = 1_000_000
MAX_ATTEMPTS = 100
"""Upper bound of the attempts of one (task, trial)."""
"""Upper bound of ``run.n_dropped`` and of the ``run.dropped`` list."""
MAX_DEPENDENCIES = 200
"""Entries of ``environment.dependencies``."""


def _text(max_length: int, *, default: str | None = None, min_length: int = 0) -> Any:
    if default is None:
        return Field(min_length=min_length, max_length=max_length, pattern=SHOWN_TEXT)
    return Field(default, min_length=min_length, max_length=max_length, pattern=SHOWN_TEXT)


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class SystemInfo(_Model):
    """The system under test the submission is about."""

    name: str = _text(NAME_MAX, min_length=1)
    """Display name on the leaderboard (at most 80 characters: letters, marks, numbers,
    punctuation, symbols and spaces; see effectbench.showable)."""
    description: str = Field(default="", max_length=DESCRIPTION_MAX, pattern=SHOWN_PARAGRAPH)
    """One paragraph on what the system is (at most 2000 characters; line breaks allowed)."""
    url: str = _text(URL_MAX, default="")
    """Where to learn more (paper, repository); may be empty."""
    baseline: str | None = Field(default=None, max_length=SHORT_MAX, pattern=SHOWN_TEXT)
    """The shipped baseline this system is (``screen_only``...), else null."""


class HarnessInfo(_Model):
    """The harness (scaffold) that drove the model: what turned it into an agent."""

    name: str = _text(NAME_MAX, min_length=1)
    """Its name (``inspect_ai``, ``baseline:screen_only``, an MCP client's name)."""
    version: str = _text(SHORT_MAX, default="")
    """Its version ("" when not known)."""
    config_digest: str | None = Field(default=None, pattern=r"^sha256:[0-9a-f]{64}$")
    """``sha256:<hex>`` of its configuration (a file, or the canonical JSON of the settings it
    ran with); null when not recorded."""


SCRIPTED_PROVIDER = "scripted"
"""The model provider of a system that calls no model (the reference arms)."""


class ModelInfo(_Model):
    """The model the harness called: who serves it and its identifier there."""

    provider: str = _text(SHORT_MAX, min_length=1)
    """Who serves it (``openai``, ``anthropic``; ``scripted`` for a system that calls none)."""
    id: str = _text(SHORT_MAX, min_length=1)
    """Its identifier at the provider (for ``scripted``: the script, a baseline's name)."""


def model_of(text: str) -> ModelInfo:
    """Return the model ``PROVIDER/ID`` names (``openai/gpt-4o``; the id may hold further
    ``/``); a :class:`ValueError` says why ``text`` names none."""
    provider, sep, ident = text.partition("/")
    if not sep or not provider or not ident:
        raise ValueError(f"{text!r} is not PROVIDER/ID (openai/gpt-4o, scripted/screen_only)")
    try:
        return ModelInfo(provider=provider, id=ident)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ValueError(f"{text!r}: {err['loc'][0]}: {err['msg']}") from None


class SignerDecl(_Model):
    """The Sigstore signer the submitter declares; the signature must match it."""

    identity: str = _text(URL_MAX, min_length=1)
    """The certificate identity (an e-mail or a workflow URI)."""
    issuer: str = _text(URL_MAX, min_length=1)
    """The OIDC issuer URL that vouched for the identity."""


class PackRef(_Model):
    """The task pack the episodes ran on."""

    name: str = _text(SHORT_MAX, min_length=1)
    """The pack's suite name (``mockmed-anchor``) or command-line name (``mockmed``)."""
    fingerprint: str = Field(pattern=r"^sha256:[0-9a-f]{64}$")
    """``effectbench.manifest.fingerprint`` of the pack's manifest."""
    split: Split = Split.DEV
    """Which split of the pack's tasks the episodes cover."""


class DroppedPair(_Model):
    """One (task, trial) of the run that has no scored row, and why."""

    task_id: str = Field(min_length=1, max_length=URL_MAX)
    """The task of the dropped trial."""
    trial: int = Field(ge=0, lt=MAX_TRIALS)
    """The trial index (0-based)."""
    reason: DropReason
    """Why it has no row: the oracle could not read the record, the benchmark's harness or the
    agent's failed, or unknown."""
    detail: str = Field(default="", max_length=DESCRIPTION_MAX)
    """What the oracle or the harness said (informative)."""
    attempt: int = Field(default=1, ge=1, le=MAX_ATTEMPTS)
    """The number of the attempt that ended in this drop (1 when it was the only one)."""


class AttemptRecord(_Model):
    """An attempt that did not count: it ended in a re-runnable drop and its cell ran again."""

    task_id: str = Field(min_length=1, max_length=URL_MAX)
    """The task of the cell."""
    trial: int = Field(ge=0, lt=MAX_TRIALS)
    """The trial index (0-based)."""
    attempt: int = Field(ge=1, le=MAX_ATTEMPTS)
    """The attempt's number within its cell (1-based)."""
    ending: Ending
    """How it ended (``agent_error`` or ``infrastructure`` for an honest run)."""
    detail: str = Field(default="", max_length=DESCRIPTION_MAX)
    """What the harness said (informative)."""


class RunInfo(_Model):
    """When the run happened, which trials could not be scored and every earlier attempt."""

    n_dropped: int = Field(default=0, ge=0, le=MAX_LISTED)
    """Trials with no scored row; equals the length of ``dropped``."""
    dropped: list[DroppedPair] = Field(default_factory=list, max_length=MAX_LISTED)
    """Each dropped (task, trial) with its reason; exactly the pairs that have no row."""
    n_attempts: int | None = Field(default=None, ge=0, le=MAX_LISTED * MAX_ATTEMPTS)
    """Every attempt of the run: the rows, the drops and ``attempts`` (absent: one per cell)."""
    attempts: list[AttemptRecord] = Field(default_factory=list, max_length=MAX_LISTED)
    """Every attempt that did not count, in the order they ran (``effectbench.attempts``)."""
    started_at: str = _text(SHORT_MAX, default="")
    """ISO 8601 time the run started (informative)."""
    finished_at: str = _text(SHORT_MAX, default="")
    """ISO 8601 time the run finished (informative)."""


class ConfigurationDecl(_Model):
    """The configuration a committed fresh instance ran with, as its commitment binds it
    (``effectbench.instances.configuration_digest`` of the three must be the committed digest)."""

    harness: str = _text(URL_MAX, min_length=1)
    """``baseline:NAME`` (a shipped baseline, as ``system.baseline`` names it) or
    ``sut:MODULE:ATTR`` (``effectbench.instances.harness_name``)."""
    model: str = _text(SHORT_MAX, default="")
    """The model the system called ("" for none)."""
    file: str = Field(pattern=r"^sha256:[0-9a-f]{64}$")
    """``sha256:<hex>`` of the configuration file (``effectbench commit --config``)."""


class InstanceDecl(_Model):
    """Which instance of a generated pack the run drew: its seed and where the seed came from."""

    seed: str = _text(SHORT_MAX, min_length=1)
    """The seed every task and payload was drawn from (the verifier draws them again)."""
    commitment: dict[str, Any] | None = None
    """The submitter's signed commitment (a Sigstore bundle, JSON) the seed is derived from;
    null for a seed that is not derived from one (the public dev seed, a preview)."""
    beacon: dict[str, Any] | None = None
    """The beacon round published after the commitment (``effectbench.instances.Beacon``)."""
    configuration: ConfigurationDecl | None = None
    """The committed configuration (with a commitment: required, and held to its digest)."""


class EnvironmentInfo(_Model):
    """The software the run used (informative; not verified)."""

    python: str = _text(SHORT_MAX)
    """The Python version (``3.11.7``)."""
    platform: str = _text(SHORT_MAX * 2)
    """The operating system (``platform.platform()``)."""
    dependencies: dict[Annotated[str, _text(SHORT_MAX)], Annotated[str, _text(SHORT_MAX)]] = Field(
        default_factory=dict, max_length=MAX_DEPENDENCIES
    )
    """Installed versions of the packages that shape a result, by name."""


class SubmissionHeader(_Model):
    """Everything of ``submission.json`` except the claimed results block."""

    effectbench_bundle_version: Literal[1, 2] = BUNDLE_VERSION
    """The bundle format: 2 when every row has its receipt (``receipts.jsonl``, ``frames/``),
    1 for rows alone (a converted document, a bundle made before receipts)."""
    spec_version: str = _text(SHORT_MAX)
    """The SPEC version (semver) the run was scored under."""
    system: SystemInfo
    """The system under test the leaderboard shows."""
    signer: SignerDecl | None = None
    """The declared Sigstore signer; null for an unsigned preview."""
    pack: PackRef
    """The task pack and split the episodes ran on."""
    trials_per_task: int = Field(ge=1, le=MAX_TRIALS)
    """Trials per task (at most 10,000); each (arm, task) has this many rows, less its drops."""
    seeds: list[int] = Field(max_length=MAX_TRIALS)
    """The seed of each trial, by trial index (length ``trials_per_task``)."""
    run: RunInfo = Field(default_factory=RunInfo)
    """When the run happened and which trials have no row."""
    environment: EnvironmentInfo
    """The software the run used (informative)."""
    imported_from: str | None = Field(default=None, max_length=SHORT_MAX, pattern=SHOWN_TEXT)
    """Set by ``effectbench import``: the format of the converted document."""
    instances: InstanceDecl | None = None
    """The instance of a generated pack the run drew (absent: the pack's public seed)."""
    harness: HarnessInfo | None = None
    """The harness that drove the model (absent: not recorded, as in bundles made before it
    was)."""
    model: ModelInfo | None = None
    """The model the harness called (absent: not recorded)."""


class Submission(SubmissionHeader):
    """The whole of ``submission.json``: the header plus the claimed results block."""

    results: Results
    """The claims: exactly ``summarize(episode_frame(rows)).to_json()``."""

    def to_json(self) -> dict[str, Any]:
        """Return the document as JSON-ready data (the results block as ``Results.to_json``)."""
        data = self.model_dump(mode="json", exclude={"results"})
        if data.get("imported_from") is None:
            data.pop("imported_from", None)
        for optional in ("instances", "harness", "model"):
            if data.get(optional) is None:
                data.pop(optional, None)
        if data.get("harness") is not None and data["harness"]["config_digest"] is None:
            del data["harness"]["config_digest"]
        for drop in data["run"]["dropped"]:
            if drop["attempt"] == 1:  # the only attempt of its cell: said by leaving it out
                del drop["attempt"]
        if data["run"].get("n_attempts") is None:  # written by an older version: one per cell
            data["run"].pop("n_attempts", None)
            if not data["run"].get("attempts"):
                data["run"].pop("attempts", None)
        data["results"] = self.results.to_json()
        return data


def submission_schema() -> dict[str, Any]:
    """Return the JSON Schema of ``submission.json``, generated from :class:`Submission`."""
    schema: dict[str, Any] = _shared_text_rules(Submission.model_json_schema(mode="validation"))
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://effectbench.org/schemas/submission.schema.json"
    schema["$defs"].update(
        {
            name: {
                "description": f"{what} (Unicode {UNICODE_VERSION}; see effectbench.showable).",
                "not": {"pattern": unshown},
                "type": "string",
            }
            for name, (_, unshown, what) in _SHOWN_DEFS.items()
        }
    )
    return schema


_SHOWN_DEFS = {
    "ShownText": (
        SHOWN_TEXT,
        UNSHOWN_CHAR,
        "A shown one-line text: letters, marks, numbers, punctuation, symbols and spaces",
    ),
    "ShownParagraph": (
        SHOWN_PARAGRAPH,
        UNSHOWN_PARAGRAPH_CHAR,
        "A shown paragraph: like ShownText, line breaks allowed",
    ),
}
"""The shown-text rules as JSON Schema definitions: each field refers to one (the class of
allowed characters is long) and refuses a text holding a character outside it, which
ECMA-262 (with the ``u`` flag, as JSON Schema 2020-12 asks), Rust and Python read alike."""


def _shared_text_rules(node: Any) -> Any:
    """Return ``node`` with each shown-text ``pattern`` replaced by a ``$ref`` to its rule."""
    if isinstance(node, list):
        return [_shared_text_rules(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _shared_text_rules(v) for k, v in node.items()}
    for name, (pattern, _, _) in _SHOWN_DEFS.items():
        ref = f"#/$defs/{name}"
        if out.get("pattern") == pattern:
            del out["pattern"]
            out["$ref"] = ref
        keyed = out.get("patternProperties")
        if isinstance(keyed, dict) and list(keyed) == [pattern]:
            # pydantic writes a dict's key rule as patternProperties, which lets any
            # other key through; the key rule belongs in propertyNames
            out["additionalProperties"] = keyed[pattern]
            out["propertyNames"] = {**out.get("propertyNames", {}), "$ref": ref}
            del out["patternProperties"]
    return out


def schema_text() -> str:
    """Return the committed text of ``docs/submission.schema.json``."""
    return json.dumps(submission_schema(), indent=2, sort_keys=True) + "\n"


SLUG_UNSAFE = re.compile(r"[^a-z0-9_]+")
"""What a slug may not hold: anything but lower-case letters, digits and ``_``."""


def slugify(name: str) -> str:
    """Return the URL- and folder-safe slug of ``name``: the one rule for every slug.

    Lower case ``a-z0-9`` and ``_``, every other run of characters one dash, at
    most 60 characters, never empty. Bundle folders (``<date>_<slug>``) and the
    site's page names both use it.
    """
    slug = SLUG_UNSAFE.sub("-", name.lower()).strip("-")
    return slug[:60].strip("-") or "submission"


FOLDER_NAME = re.compile(r"(\d{4}-\d{2}-\d{2})_([a-z0-9_-]{1,60})")
"""A bundle folder's name under ``submissions/``: ``YYYY-MM-DD_slug`` (:func:`folder_problem`)."""


def folder_problem(name: str) -> str | None:
    """Return why ``name`` is not a bundle folder name, or None when it is one.

    The one rule: ``YYYY-MM-DD_slug`` with a calendar date and a slug that is its own
    :func:`slugify` (ASCII lower case, digits, ``_`` and single dashes), so two
    folders never share a slug, a page or a download.
    """
    match = FOLDER_NAME.fullmatch(name)
    if match is None:
        return (
            "not YYYY-MM-DD_slug (a date, an underscore, then at most 60 of a-z 0-9 _ -); "
            f"rename it, e.g. to {_example_folder(name)!r}"
        )
    day, slug = match.groups()
    try:
        date.fromisoformat(day)
    except ValueError:
        return f"{day} is not a calendar date"
    if slugify(slug) != slug:
        return f"the slug is not in its plain form; rename it to {day}_{slugify(slug)}"
    return None


def _example_folder(name: str) -> str:
    head = name[:10]
    try:
        day = date.fromisoformat(head).isoformat()
        rest = name[10:]
    except ValueError:
        day, rest = "2026-01-31", name
    return f"{day}_{slugify(rest)}"


def _row_bytes(row: EpisodeRecord | Mapping[str, Any]) -> bytes:
    data = row.to_row() if isinstance(row, EpisodeRecord) else row
    return orjson.dumps(data) + b"\n"


def write_bundle(
    out_dir: Path,
    submission: Submission,
    rows: Iterable[EpisodeRecord | Mapping[str, Any]],
    readme: str | None = None,
) -> Path:
    """Write a bundle into the folder ``out_dir`` (created; it must not hold a bundle yet).

    When every row carries its receipt the bundle is of format 2 (whatever ``submission``
    says) and gets them too (``receipts.jsonl``, in row order, and ``frames/``;
    :mod:`effectbench.receipts.files`). Rows are written one
    compact JSON object per line in the order given, into a
    hidden sibling folder that is renamed to ``out_dir`` only when complete, so
    a failed write never leaves a partial bundle. Returns ``out_dir``.
    """
    out_dir = Path(out_dir)
    if out_dir.is_symlink() or (out_dir.exists() and not out_dir.is_dir()):
        raise UsageError(f"{out_dir} exists and is not a folder")
    if out_dir.is_dir() and any(out_dir.iterdir()):
        raise UsageError(f"{out_dir} is not empty; write a bundle into a new folder")
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    from effectbench.receipts.files import all_carry_receipts, write_receipts

    partial = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        rows = list(rows)
        if all_carry_receipts(rows):  # the format follows the rows: with receipts, format 2
            version = {"effectbench_bundle_version": RECEIPTS_VERSION}
            submission = submission.model_copy(update=version)
        elif submission.effectbench_bundle_version == RECEIPTS_VERSION:
            raise ValueError("a bundle of format 2 needs a receipt for every row")
        with (partial / EPISODES_FILE).open("wb") as fh:
            for row in rows:
                fh.write(_row_bytes(row))
        if submission.effectbench_bundle_version == RECEIPTS_VERSION:
            write_receipts(partial, rows)
        text = json.dumps(submission.to_json(), indent=2, ensure_ascii=False) + "\n"
        (partial / SUBMISSION_FILE).write_text(text, encoding="utf-8")
        if readme is not None:
            (partial / README_FILE).write_text(readme, encoding="utf-8")
        partial.chmod(0o755)  # mkdtemp makes it private
        os.replace(partial, out_dir)  # an existing empty out_dir is replaced
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return out_dir


def iter_episode_lines(
    path: Path,
    max_line_bytes: int | None = None,
    *,
    start: int = 0,
    end: int | None = None,
) -> Iterator[tuple[int, bytes | None]]:
    """Yield ``(line_number, raw_line)`` of a JSON-lines file, 1-based, newline stripped.

    The file is read in large chunks, never whole. A line longer than
    ``max_line_bytes`` is yielded as ``None`` (its bytes are skipped). A blank
    line is yielded as ``b""``; the empty remainder after a final newline is not.
    ``start`` and ``end`` restrict reading to a byte range (line numbers then
    count from the range's first line); a range should start after a newline.
    """
    number = 0
    pending = b""
    skipping = False
    limit = max_line_bytes if max_line_bytes is not None else sys.maxsize
    with Path(path).open("rb") as fh:
        fh.seek(start)
        left = sys.maxsize if end is None else end - start
        while left > 0 and (chunk := fh.read(min(_READ_CHUNK, left))):
            left -= len(chunk)
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()
            for line in lines:
                number += 1
                if skipping:
                    skipping = False
                    yield number, None
                elif len(line) > limit:
                    yield number, None
                else:
                    yield number, line
            if len(pending) > limit:
                skipping, pending = True, b""
        if skipping:
            yield number + 1, None
        elif pending:
            yield number + 1, pending if len(pending) <= limit else None


def parse_episode_line(line: bytes, file: str, number: int) -> dict[str, Any]:
    """Parse one ``episodes.jsonl`` line into a row (a :class:`DataError` names the line)."""
    try:
        row = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise DataError(f"not valid JSON: {exc}", file=file, line=number) from None
    if not isinstance(row, dict):
        raise DataError("a row must be a JSON object", file=file, line=number)
    return row


def read_episodes(path: Path) -> list[dict[str, Any]]:
    """Return every row of an ``episodes.jsonl`` (a :class:`DataError` names a bad line)."""
    rows: list[dict[str, Any]] = []
    for number, line in iter_episode_lines(path):
        if line is None or not line.strip():
            raise DataError("blank line in an episodes file", file=str(path), line=number)
        rows.append(parse_episode_line(line, str(path), number))
    return rows


def _need(doc: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(doc, Mapping) or key not in doc:
        raise DataError(f"missing required field {key!r}", field=f"{where}{key}")
    value = doc[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise DataError(f"wrong type {type(value).__name__}", field=f"{where}{key}")
    return value


def submission_from_upstream(doc: Any) -> tuple[dict[str, Any], list[Any]]:
    """Convert a reference single-document submission to ``(submission.json data, rows)``.

    The claimed results block and the rows are carried over unchanged, so the
    converted bundle verifies exactly when the document does. The system is
    never declared a shipped baseline (``baseline: null``): the reference's
    baselines are not ours, so they cannot be reproduced here. Raises
    :class:`DataError` (naming the field) when the document lacks what a bundle needs.
    """
    if not isinstance(doc, Mapping):
        raise DataError("an upstream submission must be a JSON object")
    expected = {"effectbench_submission_version", "system", "reproducibility", "results"}
    missing = sorted((expected | {"episodes"}) - set(doc))
    if missing:
        raise DataError(f"missing required field {missing[0]!r}", field=missing[0])
    extra = sorted(set(doc) - expected - {"episodes"})
    if extra:
        raise DataError(f"unknown field {extra[0]!r}", field=extra[0])
    version = doc["effectbench_submission_version"]
    if version != UPSTREAM_VERSION or isinstance(version, bool):
        raise DataError(
            f"unsupported effectbench_submission_version {version!r}; this reads version 1",
            field="effectbench_submission_version",
        )
    system = _need(doc, "system", Mapping, "")
    repro = _need(doc, "reproducibility", Mapping, "")
    rows = _need(doc, "episodes", list, "")
    pack_name = _need(repro, "pack", str, "reproducibility.")
    trials = _need(repro, "trials_per_task", int, "reproducibility.")
    dropped = _upstream_drops(pack_name, trials, rows)
    started = [r.get("started_at") for r in rows if isinstance(r, Mapping)]
    finished = [r.get("finished_at") for r in rows if isinstance(r, Mapping)]
    started_s = sorted(s for s in started if isinstance(s, str) and s)
    finished_s = sorted(s for s in finished if isinstance(s, str) and s)
    data: dict[str, Any] = {
        "effectbench_bundle_version": BUNDLE_VERSION,
        "spec_version": _need(repro, "effectbench_version", str, "reproducibility."),
        "system": {
            "name": _need(system, "name", str, "system."),
            "description": system.get("description", ""),
            "url": system.get("url", ""),
            "baseline": None,
        },
        "signer": None,
        "pack": {
            "name": pack_name,
            "fingerprint": _need(repro, "pack_fingerprint", str, "reproducibility."),
            "split": Split.DEV.value,
        },
        "trials_per_task": trials,
        "seeds": _need(repro, "seeds", list, "reproducibility."),
        "run": {
            "n_dropped": len(dropped),
            "dropped": dropped,
            "started_at": started_s[0] if started_s else "",
            "finished_at": finished_s[-1] if finished_s else "",
        },
        "environment": {
            "python": repro.get("python", ""),
            "platform": repro.get("platform", ""),
            "dependencies": repro.get("dependencies", {}),
        },
        "imported_from": f"upstream-submission-v{UPSTREAM_VERSION}",
        "results": doc["results"],
    }
    return data, rows


UPSTREAM_DROP_DETAIL = (
    "no row in the upstream document (the reference implementation leaves out an episode "
    "whose agent raised, without saying so)"
)
"""The ``detail`` of a pair an upstream document has no row for (reason ``unknown``)."""


def _upstream_drops(pack_name: str, trials: int, rows: Sequence[Any]) -> list[dict[str, Any]]:
    """Return each (task, trial) of the document's pack and trials without a row, as dropped.

    The reference implementation silently leaves out an episode whose agent
    raised; the bundle lists those pairs with reason ``unknown``. Nothing is
    listed for a pack not known here or an absurd trial count (the verifier
    refuses those on their own).
    """
    from effectbench.packs import get_pack  # the packs are heavy; only documents need them
    from effectbench.seam import Closable

    if not 1 <= trials <= MAX_TRIALS:
        return []
    try:
        pack = get_pack(pack_name)
    except UsageError:
        return []
    try:
        have = {(r.get("task_id"), r.get("trial")) for r in rows if isinstance(r, Mapping)}
        return [
            {
                "task_id": task.task_id,
                "trial": trial,
                "reason": DropReason.UNKNOWN.value,
                "detail": UPSTREAM_DROP_DETAIL,
            }
            for task in pack.tasks()
            if task.split is Split.DEV
            for trial in range(trials)
            if (task.task_id, trial) not in have
        ]
    except TypeError:  # an unhashable task_id or trial: the verifier names that row
        return []
    finally:
        if isinstance(pack, Closable):
            pack.close()


def upstream_submission(doc: Any) -> tuple[Submission, list[Any]]:
    """Return the :class:`Submission` and rows of an upstream document (a :class:`DataError`
    names the field that keeps it from being a bundle)."""
    data, rows = submission_from_upstream(doc)
    try:
        return Submission.model_validate(data), rows
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        raise DataError(f"cannot convert: {err['msg']}", field=field) from None


def import_upstream(doc: Any, out_dir: Path, readme: str | None = None) -> Path:
    """Write the bundle equivalent of an upstream document into ``out_dir``."""
    submission, rows = upstream_submission(doc)
    return write_bundle(out_dir, submission, rows, readme=readme)
