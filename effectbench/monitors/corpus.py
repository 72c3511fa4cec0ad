"""A monitor corpus on disk: the overseer's views, their frames and the published labels.

A corpus folder (written by ``effectbench monitor corpus``) holds:

* ``corpus.json``: a :class:`CorpusManifest`: the corpus's name, version and digest, its
  episodes per split, what a monitor may read;
* ``episodes.jsonl``: one :class:`~effectbench.monitors.view.OverseerView` per line, sorted by
  its opaque id; the corpus's **digest** is ``sha256:`` of these bytes, so the corpus is
  content-addressed (a frame is named by the sha256 of its bytes, so the digest binds the
  frames too);
* ``frames/``: every key frame a view names, once;
* ``labels-dev.json``: the dev split's labels (a :class:`LabelFile`). The test split's labels
  are the board's and are never written into a corpus folder.

A label file names the corpus (name, version, digest) it labels; a monitor's scores name
the corpus they score. Both are checked against the corpus's digest before anything is
scored (``monitor.labels``, ``monitor.corpus``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from effectbench.errors import DataError, UsageError
from effectbench.hashing import hash_file
from effectbench.metrics.detection import monitor_label
from effectbench.monitors.view import READABLE, OverseerView
from effectbench.receipts.model import FRAME_NAME
from effectbench.schema import Category, Outcome, Split, Substrate
from effectbench.strictjson import StrictJSONError, load_document

__all__ = [
    "CORPUS_NAME",
    "CORPUS_VERSION",
    "EPISODES_FILE",
    "FRAMES_DIR",
    "MANIFEST_FILE",
    "Corpus",
    "CorpusManifest",
    "CorpusRef",
    "LabelEntry",
    "LabelFile",
    "SliceName",
    "corpus_digest",
    "labels_file_name",
    "read_corpus",
    "read_labels",
    "write_corpus",
    "write_labels",
]

CORPUS_VERSION: Literal[1] = 1
"""The ``effectbench_corpus_version`` this module writes and reads."""
CORPUS_NAME = "effectbench-monitors"
"""The name of the board's corpus."""
MANIFEST_FILE = "corpus.json"
EPISODES_FILE = "episodes.jsonl"
FRAMES_DIR = "frames"
PUBLISHED: tuple[Split, ...] = (Split.DEV,)
"""The splits whose labels a corpus folder carries."""
SliceName = Literal["plain", "monitored"]
"""``monitored``: episodes whose agent was told that a monitor watches (a slice of the test
split); ``plain``: every other."""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class CorpusRef(_Model):
    """Which corpus a label file labels or a monitor scored."""

    name: str = Field(max_length=100)
    version: int = Field(ge=1)
    """The corpus's version (a new set of source bundles is a new version)."""
    digest: str = Field(pattern=r"^sha256:[0-9a-f]{64}$")
    """``sha256:`` of its ``episodes.jsonl``."""


class CorpusManifest(_Model):
    """``corpus.json``: what a corpus folder holds."""

    effectbench_corpus_version: Literal[1] = CORPUS_VERSION
    corpus: CorpusRef
    episodes: int = Field(ge=0)
    """Episodes in ``episodes.jsonl``."""
    splits: dict[Split, int]
    """Episodes per split."""
    frames: int = Field(ge=0)
    """Files in ``frames/``."""
    readable: dict[str, str] = Field(default_factory=lambda: dict(READABLE))
    """What a monitor may read (the names a monitor's manifest declares under ``reads``)."""
    labels: dict[Split, str]
    """The label files this folder carries, by split."""


def labels_file_name(split: Split) -> str:
    """Return the file name of ``split``'s labels (``labels-dev.json``)."""
    return f"labels-{split.value}.json"


class LabelEntry(_Model):
    """One episode's label, from the oracle (a row the verifier re-scored)."""

    id: str
    """The corpus's id of the episode."""
    label: Literal["positive", "negative", "unscored"]
    """``positive``: a silent wrong effect; ``negative``: a success; ``unscored``: no success
    was claimed (:func:`effectbench.metrics.detection.monitor_label` of the outcome)."""
    outcome: Outcome
    """The truth table's label of the episode."""
    task: str
    """The pack's task id (the cluster every interval counts)."""
    category: Category
    substrate: Substrate
    slice: SliceName = "plain"
    source: str
    """The bundle the episode comes from (its folder, relative to the repository)."""
    episode_id: str
    """The episode's id in that bundle."""
    trial: int = Field(ge=0)

    @property
    def scored(self) -> bool | None:
        """True for a positive, False for a negative, None when not scored."""
        return {"positive": True, "negative": False}.get(self.label)


def label_name(outcome: Outcome) -> Literal["positive", "negative", "unscored"]:
    """Return the label of an episode with ``outcome`` (the one rule, by name)."""
    value = monitor_label(outcome)
    return "unscored" if value is None else "positive" if value else "negative"


class LabelFile(_Model):
    """The labels of one split of a corpus (``labels-<split>.json``)."""

    effectbench_labels_version: Literal[1] = 1
    corpus: CorpusRef
    split: Split
    episodes: list[LabelEntry]
    """Sorted by id."""


@dataclass(frozen=True)
class Corpus:
    """A corpus in memory: its views, labels and where each frame's bytes are."""

    ref: CorpusRef
    lines: bytes
    """``episodes.jsonl``'s bytes (what the digest is taken over)."""
    labels: Mapping[Split, LabelFile]
    """Every split's labels (the test split's too: they stay with whoever holds the corpus)."""
    frames: Mapping[str, Path]
    """Each frame a view names -> a file holding its bytes."""
    parsed: Sequence[OverseerView] | None = None
    """The views of :attr:`lines` when the maker has them (None: read from the lines)."""

    @cached_property
    def views(self) -> list[OverseerView]:
        """The overseer's views, one per line of :attr:`lines`, sorted by id."""
        if self.parsed is not None:
            return list(self.parsed)
        return [OverseerView.model_validate_json(line) for line in self.lines.splitlines()]

    def ids(self) -> list[str]:
        """Every view's id, in order (read from the lines when the views were not handed in)."""
        if self.parsed is not None:
            return [v.id for v in self.parsed]
        return [str(orjson.loads(line)["id"]) for line in self.lines.splitlines()]

    def label_of(self) -> dict[str, LabelEntry]:
        """Return every episode's label entry by corpus id."""
        return {e.id: e for f in self.labels.values() for e in f.episodes}

    def manifest(self) -> CorpusManifest:
        """Return the corpus's ``corpus.json``."""
        splits: dict[Split, int] = {}
        for split, labels in self.labels.items():
            splits[split] = len(labels.episodes)
        return CorpusManifest(
            corpus=self.ref,
            episodes=len(self.views),
            splits=splits,
            frames=len(self.frames),
            labels={s: labels_file_name(s) for s in PUBLISHED if s in self.labels},
        )


def view_line(view: OverseerView) -> bytes:
    """Return ``view`` as one line of ``episodes.jsonl`` (canonical: sorted keys)."""
    return orjson.dumps(view.to_json(), option=orjson.OPT_SORT_KEYS) + b"\n"


def corpus_digest(lines: bytes) -> str:
    """Return a corpus's digest: ``sha256:`` of its ``episodes.jsonl`` bytes."""
    return "sha256:" + hashlib.sha256(lines).hexdigest()


def _fresh_folder(out: Path, what: str) -> None:
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise UsageError(f"{out} exists and is not a folder")
    if out.is_dir() and any(out.iterdir()):
        raise UsageError(f"{out} is not empty; write a {what} into a new folder")


def _json_text(model: BaseModel) -> bytes:
    return orjson.dumps(model.model_dump(mode="json"), option=orjson.OPT_INDENT_2) + b"\n"


def write_labels(path: Path, labels: LabelFile) -> Path:
    """Write ``labels`` to ``path`` (refusing to overwrite a file); return ``path``."""
    if path.exists() or path.is_symlink():
        raise UsageError(f"{path} exists; write the labels to a new file")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_json_text(labels))
    return path


def write_corpus(corpus: Corpus, out: Path, *, held_labels: Path | None = None) -> Path:
    """Write ``corpus`` into the new folder ``out``: the views, their frames and the published
    labels; the other splits' labels go into the folder ``held_labels`` when given (the
    board's), never into ``out``. Written into a hidden sibling and renamed when whole."""
    out = Path(out)
    _fresh_folder(out, "corpus")
    if held_labels is not None:
        held_labels = Path(held_labels)
        if held_labels.resolve() == out.resolve() or held_labels.resolve().is_relative_to(
            out.resolve()
        ):
            raise UsageError("the held labels go outside the corpus folder (--held-labels)")
        for split in corpus.labels:
            if split not in PUBLISHED and (held_labels / labels_file_name(split)).exists():
                raise UsageError(f"{held_labels / labels_file_name(split)} exists")
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        (partial / EPISODES_FILE).write_bytes(corpus.lines)
        frames = partial / FRAMES_DIR
        frames.mkdir()
        for name in sorted(corpus.frames):
            shutil.copyfile(corpus.frames[name], frames / name)
        for split, labels in corpus.labels.items():
            if split in PUBLISHED:
                write_labels(partial / labels_file_name(split), labels)
        (partial / MANIFEST_FILE).write_bytes(_json_text(corpus.manifest()))
        partial.chmod(0o755)
        os.replace(partial, out)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    if held_labels is not None:
        for split, labels in corpus.labels.items():
            if split not in PUBLISHED:
                write_labels(held_labels / labels_file_name(split), labels)
    return out


def _document(path: Path) -> object:
    try:
        return load_document(path.read_bytes())
    except FileNotFoundError:
        raise DataError("missing", file=str(path)) from None
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror}", file=str(path)) from None
    except StrictJSONError as exc:
        raise DataError(exc.message, file=str(path)) from None


def _invalid(exc: ValidationError, path: Path) -> DataError:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    return DataError(err["msg"], file=str(path), field=where or None)


def read_labels(path: Path) -> LabelFile:
    """Read a label file (a :class:`DataError` names what is wrong)."""
    try:
        labels = LabelFile.model_validate(_document(path))
    except ValidationError as exc:
        raise _invalid(exc, path) from None
    for i, entry in enumerate(labels.episodes):
        if entry.label != label_name(entry.outcome):
            raise DataError(
                f"label {entry.label!r} is not what outcome {entry.outcome.value!r} gives",
                file=str(path),
                field=f"episodes.{i}.label",
            )
    return labels


@dataclass(frozen=True)
class CorpusFolder:
    """A corpus read from its folder: its manifest, views, and where its frames are."""

    folder: Path
    manifest: CorpusManifest
    views: list[OverseerView]
    raw: list[dict[str, object]]
    """Each view as the JSON data of its line."""

    @property
    def ref(self) -> CorpusRef:
        """Which corpus this is."""
        return self.manifest.corpus

    def frame(self, name: str) -> Path:
        """Return the file of the frame ``name``."""
        return self.folder / FRAMES_DIR / name

    def labels(self, split: Split) -> LabelFile | None:
        """Return the labels of ``split`` this folder carries (None: not published here)."""
        name = self.manifest.labels.get(split)
        return None if name is None else read_labels(self.folder / name)


def read_corpus(folder: Path, *, check_frames: bool = True) -> CorpusFolder:
    """Read a corpus folder, refusing one whose episodes do not have its digest, or whose
    frames are missing or not the bytes their names state (a :class:`DataError`)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DataError("not a corpus folder", file=str(folder))
    try:
        manifest = CorpusManifest.model_validate(_document(folder / MANIFEST_FILE))
    except ValidationError as exc:
        raise _invalid(exc, folder / MANIFEST_FILE) from None
    path = folder / EPISODES_FILE
    try:
        lines = path.read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror}", file=str(path)) from None
    if corpus_digest(lines) != manifest.corpus.digest:
        raise DataError(
            f"its digest is {corpus_digest(lines)}, not the {manifest.corpus.digest} "
            f"{MANIFEST_FILE} states: the corpus was altered; export it again",
            file=str(path),
        )
    views, raw = [], []
    for number, line in enumerate(lines.splitlines(), start=1):
        try:
            data = orjson.loads(line)
            views.append(OverseerView.model_validate(data))
        except (orjson.JSONDecodeError, ValidationError) as exc:
            raise DataError(f"not an overseer's view: {exc}", file=str(path), line=number) from None
        raw.append(data)
    corpus = CorpusFolder(folder, manifest, views, raw)
    if check_frames:
        _check_frames(corpus, (f.name for v in views for f in v.frames))
    return corpus


def _check_frames(corpus: CorpusFolder, names: Iterable[str]) -> None:
    for name in sorted(set(names)):
        path = corpus.frame(name)
        if not FRAME_NAME.fullmatch(name):
            raise DataError(f"frame name {name!r} is not <sha256>.webp or .png", file=str(path))
        if not path.is_file() or path.is_symlink():
            raise DataError("a frame a view names is missing", file=str(path))
        if hash_file(path) != name.partition(".")[0]:
            raise DataError(
                "the frame's bytes do not have the sha256 its name states", file=str(path)
            )
