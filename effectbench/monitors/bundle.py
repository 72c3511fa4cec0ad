"""A monitor bundle: one monitor's scores of one corpus, with what it read and what it cost.

A monitor bundle is a folder holding:

* ``monitor.json``: a :class:`MonitorManifest`: the monitor's name and version, what it
  reads (names of :data:`~effectbench.monitors.view.READABLE`), the corpus it scored (name,
  version, digest), which published labels it learned from, its declared signer, and what
  it measured: episodes scored, cost and latency per episode, and its metrics on the dev
  split (whose labels are published), which the verifier recomputes;
* ``scores.jsonl``: one :class:`ScoreLine` per corpus episode: the score (higher: more
  likely a silent wrong effect), and what that score cost (USD) and took (seconds);
* an optional ``README.md``, and ``submission.sigstore.json`` when signed (``effectbench
  sign``, exactly as a submission bundle: a DSSE in-toto Statement over every file, of
  predicate type :data:`PREDICATE_TYPE`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field

from effectbench._version import SPEC_VERSION
from effectbench.bundle import SignerDecl, slugify
from effectbench.errors import UsageError
from effectbench.filenames import README_FILE, SIGNATURE_FILE
from effectbench.metrics.detection import detection
from effectbench.monitors.corpus import CorpusRef, LabelFile
from effectbench.schema import Split
from effectbench.showable import SHOWN_PARAGRAPH, SHOWN_TEXT

__all__ = [
    "MONITOR_FILE",
    "MONITOR_FILES",
    "MONITOR_VERSION",
    "PREDICATE_TYPE",
    "SCORES_FILE",
    "Claimed",
    "Measured",
    "MonitorInfo",
    "MonitorManifest",
    "ScoreLine",
    "claims_of",
    "monitor_folder",
    "write_monitor_bundle",
]

MONITOR_VERSION: Literal[1] = 1
"""The ``effectbench_monitor_version`` this module writes and the verifier reads."""
MONITOR_FILE = "monitor.json"
SCORES_FILE = "scores.jsonl"
MONITOR_FILES = (MONITOR_FILE, SCORES_FILE, README_FILE, SIGNATURE_FILE)
"""Every file a monitor bundle may hold; the first two are required."""
PREDICATE_TYPE = "https://effectbench.dev/monitor/v1"
"""The in-toto predicate type of a monitor bundle's signature."""
MAX_SCORES = 1_000_000
"""Score lines the verifier reads at most."""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class MonitorInfo(_Model):
    """The monitor the bundle is about."""

    name: str = Field(min_length=1, max_length=80, pattern=SHOWN_TEXT)
    """Display name on the monitors board."""
    version: str = Field(min_length=1, max_length=100, pattern=SHOWN_TEXT)
    description: str = Field(default="", max_length=2000, pattern=SHOWN_PARAGRAPH)
    url: str = Field(default="", max_length=500, pattern=SHOWN_TEXT)
    reference: str | None = Field(default=None, max_length=100, pattern=SHOWN_TEXT)
    """The shipped reference monitor this is (``claim-text``...), else null."""
    model: str | None = Field(default=None, max_length=200, pattern=SHOWN_TEXT)
    """The model a model-asking monitor asked (``provider/model``), else null."""


class Claimed(_Model):
    """The monitor's metrics on the dev split, as it measured them (the verifier recomputes
    them with the published labels and refuses a difference above 1e-9)."""

    auroc: float | None
    recall_1: float | None
    """Recall at 1% false-positive rate."""
    recall_5: float | None
    """Recall at 5% false-positive rate."""


class Measured(_Model):
    """What scoring the corpus took."""

    episodes: int = Field(ge=0)
    """Episodes scored (every episode of the corpus)."""
    cost_usd: float = Field(ge=0, allow_inf_nan=False)
    """Total cost (model calls), USD."""
    cost_usd_per_episode: float = Field(ge=0, allow_inf_nan=False)
    latency_s_per_episode: float = Field(ge=0, allow_inf_nan=False)
    """Mean wall-clock seconds to score one episode."""


class MonitorManifest(_Model):
    """``monitor.json``."""

    effectbench_monitor_version: Literal[1] = MONITOR_VERSION
    spec_version: str = Field(default=SPEC_VERSION, max_length=100, pattern=SHOWN_TEXT)
    """The SPEC version the labels it is scored by follow (and its signature vouches for)."""
    monitor: MonitorInfo
    reads: list[str] = Field(max_length=50)
    """What it reads of each episode (names of the corpus's ``readable``)."""
    learned_from: list[Split] = Field(default_factory=list)
    """The published labels it learned from (``dev``), if any."""
    corpus: CorpusRef
    """The corpus it scored."""
    signer: SignerDecl | None = None
    """The declared Sigstore signer; null for an unsigned preview."""
    measured: Measured
    dev: Claimed
    """Its metrics on the dev split."""


class ScoreLine(_Model):
    """One line of ``scores.jsonl``."""

    id: str = Field(max_length=100)
    """The corpus's id of the episode."""
    score: float = Field(allow_inf_nan=False)
    """Higher: more likely a silent wrong effect."""
    cost_usd: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    latency_s: float = Field(default=0.0, ge=0, allow_inf_nan=False)


def claims_of(scores: Mapping[str, float], labels: LabelFile) -> Claimed:
    """Return the metrics of ``scores`` (by corpus id) on the episodes ``labels`` labels: what
    a bundle states under ``dev`` and what the verifier recomputes."""
    entries = labels.episodes
    found = detection(
        [scores[e.id] for e in entries], [e.scored for e in entries], [e.task for e in entries]
    )
    recall = {p.name: p.recall.rate if p.recall is not None else None for p in found.points}
    return Claimed(auroc=found.auroc, recall_1=recall["1%"], recall_5=recall["5%"])


def monitor_folder(out: Path, name: str, when: str) -> Path:
    """Return ``out/<when>_<slug of name>``, the folder a new monitor bundle goes into."""
    return Path(out) / f"{when}_{slugify(name)}"


def write_monitor_bundle(
    folder: Path,
    manifest: MonitorManifest,
    scores: Iterable[ScoreLine],
    readme: str | None = None,
) -> Path:
    """Write a monitor bundle into the new folder ``folder`` (written into a hidden sibling,
    renamed when whole); return ``folder``."""
    folder = Path(folder)
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise UsageError(f"{folder} exists and is not a folder")
    if folder.is_dir() and any(folder.iterdir()):
        raise UsageError(f"{folder} is not empty; write a monitor bundle into a new folder")
    folder.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        with (partial / SCORES_FILE).open("wb") as fh:
            for line in scores:
                fh.write(orjson.dumps(line.model_dump(mode="json")) + b"\n")
        text = orjson.dumps(manifest.model_dump(mode="json"), option=orjson.OPT_INDENT_2)
        (partial / MONITOR_FILE).write_bytes(text + b"\n")
        if readme is not None:
            (partial / README_FILE).write_text(readme, encoding="utf-8")
        partial.chmod(0o755)
        os.replace(partial, folder)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return folder
