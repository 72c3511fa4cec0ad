"""Running a monitor over a corpus: ``effectbench monitor run NAME --corpus DIR``.

A monitor (:class:`Monitor`) declares what it reads; :func:`run_monitor` hands it every
episode of the corpus with only those fields (:func:`~effectbench.monitors.view.project`),
and the frames' files only when it reads ``frames``, so a shipped monitor cannot read what it
did not declare. A monitor that learns does so from the published dev labels before it
scores. Each score's cost and wall-clock time are measured here (or, for a monitor that
scores many episodes at once, by the monitor per episode), and the bundle states the dev
split's metrics, computed by :func:`~effectbench.monitors.bundle.claims_of` (what the
verifier recomputes).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from effectbench.bundle import SignerDecl
from effectbench.errors import UsageError
from effectbench.monitors.bundle import (
    Claimed,
    Measured,
    MonitorInfo,
    MonitorManifest,
    ScoreLine,
    claims_of,
    monitor_folder,
    write_monitor_bundle,
)
from effectbench.monitors.corpus import CorpusFolder, LabelFile
from effectbench.monitors.view import forbidden_reads, project
from effectbench.schema import Split

__all__ = [
    "FrameFiles",
    "Learns",
    "Monitor",
    "ScoresAtOnce",
    "Scored",
    "run_monitor",
]

FrameFiles = Callable[[str], Path]
"""Where the bytes of a frame (by name) are; handed only to a monitor that reads frames."""


@dataclass(frozen=True)
class Scored:
    """One episode's score and what it took."""

    score: float
    cost_usd: float = 0.0
    latency_s: float | None = None
    """Seconds, when the monitor measured it itself (else the runner times the call)."""


class Monitor(Protocol):
    """What a monitor is: a name, what it reads, and a score per episode."""

    @property
    def name(self) -> str:
        """Display name."""

    @property
    def version(self) -> str:
        """Its version."""

    @property
    def description(self) -> str:
        """What it does, in a paragraph."""

    @property
    def reference(self) -> str | None:
        """Its name among the shipped reference monitors (None for any other)."""

    @property
    def model(self) -> str | None:
        """The model it asks, if any."""

    @property
    def reads(self) -> Sequence[str]:
        """The fields of the overseer's view it reads (names of ``READABLE``)."""

    def score(self, episode: Mapping[str, Any], frames: FrameFiles | None) -> Scored:
        """Return the score of one episode (its view, with only the fields it reads)."""
        ...


@runtime_checkable
class Learns(Protocol):
    """A monitor that learns from published labels before it scores."""

    def fit(self, episodes: Sequence[Mapping[str, Any]], labels: Sequence[bool]) -> None:
        """Learn from the dev split's scored episodes (True: a silent wrong effect)."""
        ...


@runtime_checkable
class ScoresAtOnce(Protocol):
    """A monitor that scores many episodes at once (a model asked concurrently)."""

    def score_all(
        self, episodes: Sequence[Mapping[str, Any]], frames: FrameFiles | None
    ) -> list[Scored]:
        """Return every episode's score, in order, each with its own measured latency."""
        ...


def _timed(
    monitor: Monitor, episodes: Sequence[Mapping[str, Any]], frames: FrameFiles | None
) -> list[Scored]:
    if isinstance(monitor, ScoresAtOnce):
        return monitor.score_all(episodes, frames)
    out = []
    for episode in episodes:
        start = time.perf_counter()
        scored = monitor.score(episode, frames)
        spent = time.perf_counter() - start
        out.append(Scored(scored.score, scored.cost_usd, scored.latency_s or spent))
    return out


def _fit_on_dev(
    monitor: Monitor, views: list[dict[str, Any]], dev: LabelFile | None
) -> list[Split]:
    """Fit a monitor that learns on the dev split's scored episodes; return the splits it
    learned from (none for one that does not learn)."""
    if not isinstance(monitor, Learns):
        return []
    if dev is None:
        raise UsageError(f"monitor {monitor.name!r} learns from the dev labels: none here")
    at = {v["id"]: v for v in views}
    train = [e for e in dev.episodes if e.scored is not None]
    monitor.fit([at[e.id] for e in train], [bool(e.scored) for e in train])
    return [Split.DEV]


def _measured(lines: list[ScoreLine]) -> Measured:
    """What scoring the corpus cost: in all, and per episode."""
    n = len(lines)
    total = sum(line.cost_usd for line in lines)
    return Measured(
        episodes=n,
        cost_usd=total,
        cost_usd_per_episode=total / n if n else 0.0,
        latency_s_per_episode=sum(line.latency_s for line in lines) / n if n else 0.0,
    )


def run_monitor(
    monitor: Monitor,
    corpus: CorpusFolder,
    out: Path,
    *,
    when: str,
    readme: str | None = None,
    signer: SignerDecl | None = None,
) -> Path:
    """Score every episode of ``corpus`` with ``monitor``; write its bundle under ``out``
    (``<when>_<name>``), declaring ``signer`` (None: an unsigned preview), and return the
    bundle's folder."""
    refused = forbidden_reads(monitor.reads)
    if refused:
        name, why = refused[0]
        raise UsageError(f"monitor {monitor.name!r} declares it reads {name!r} ({why})")
    views = [project(raw, monitor.reads) for raw in corpus.raw]
    frames = corpus.frame if "frames" in monitor.reads else None
    dev = corpus.labels(Split.DEV)
    learned = _fit_on_dev(monitor, views, dev)
    scored = _timed(monitor, views, frames)
    lines = [
        ScoreLine(id=v["id"], score=s.score, cost_usd=s.cost_usd, latency_s=s.latency_s or 0.0)
        for v, s in zip(views, scored, strict=True)
    ]
    by_id = {line.id: line.score for line in lines}
    manifest = MonitorManifest(
        monitor=MonitorInfo(
            name=monitor.name,
            version=monitor.version,
            description=monitor.description,
            reference=monitor.reference,
            model=monitor.model,
        ),
        reads=list(monitor.reads),
        learned_from=learned,
        corpus=corpus.ref,
        signer=signer,
        measured=_measured(lines),
        dev=claims_of(by_id, dev)
        if dev is not None
        else Claimed(auroc=None, recall_1=None, recall_5=None),
    )
    folder = monitor_folder(out, monitor.reference or monitor.name, when)
    return write_monitor_bundle(folder, manifest, lines, readme)
