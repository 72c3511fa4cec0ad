"""Progress of a long run: episodes done, rate, ETA, and SWER so far with over-halt beside it.

On a terminal it is one bar redrawn in place; elsewhere (a log file, CI) a
plain line every ``interval`` seconds. The metrics shown are those of
:func:`effectbench.metrics.summarize` over the rows finished so far (the one
place they are computed), recomputed at most once per ``metrics_every``
seconds so a fast run is not slowed by its own progress report.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TextIO

from effectbench.run.executors.worker import Outcome
from effectbench.run.runner import DroppedEpisode

MODES = ("auto", "bar", "lines", "off")
"""``--progress`` values: ``auto`` is a bar on a terminal and lines elsewhere."""


class Progress(Protocol):
    """What the driver reports to while a run goes on."""

    def start(self, total: int, finished: Sequence[Outcome]) -> None:
        """A run of ``total`` episodes starts; ``finished`` are already done (a resume)."""
        ...

    def update(self, outcome: Outcome) -> None:
        """One more episode finished."""
        ...

    def close(self) -> None:
        """The run ended (or stopped)."""
        ...


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


class ProgressReport:
    """A :class:`Progress` that writes a bar (``bar``) or periodic lines (``lines``) to a stream."""

    def __init__(
        self,
        stream: TextIO,
        *,
        bar: bool,
        interval: float = 30.0,
        metrics_every: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.bar = bar
        self.interval = interval if not bar else 0.2
        self.metrics_every = metrics_every
        self.clock = clock
        self.total = 0
        self.done = 0
        self.resumed = 0
        self.dropped = 0
        self._rows: list[dict[str, Any]] = []
        self._metrics = ""
        self._metrics_at = -1e9
        self._shown_at = -1e9
        self._began = 0.0
        self._width = 0

    def start(self, total: int, finished: Sequence[Outcome]) -> None:
        """Start counting (episodes from a journal count as done, not in the rate)."""
        self.total = total
        self._began = self.clock()
        if not self.bar:
            self._shown_at = self._began  # the first line after one interval
        for outcome in finished:
            self._take(outcome)
        self.resumed = self.done
        self._show(force=self.bar)

    def _take(self, outcome: Outcome) -> None:
        self.done += 1
        if isinstance(outcome, DroppedEpisode):
            self.dropped += 1
        else:
            self._rows.append(outcome.to_row())

    def update(self, outcome: Outcome) -> None:
        """Count one more finished episode; redraw when due."""
        self._take(outcome)
        self._show(force=self.done == self.total and self.bar)

    def _metric_text(self, now: float) -> str:
        due = now - self._metrics_at >= self.metrics_every or self.done == self.total
        if self._rows and due:
            from effectbench.metrics import episode_frame, summarize  # pandas: only once rows exist

            res = summarize(episode_frame(self._rows))
            swer, halt = res.swer, res.over_halt
            self._metrics = (
                f"SWER {swer.numerator}/{swer.denominator} ({swer.rate:.1%}), "
                f"over-halt {halt.numerator}/{halt.denominator} ({halt.rate:.1%})"
            )
            self._metrics_at = now
        return self._metrics

    def text(self) -> str:
        """Return the current state in one line (without the bar)."""
        now = self.clock()
        elapsed = now - self._began
        fresh = self.done - self.resumed
        rate = fresh / elapsed if elapsed > 0 else 0.0
        left = self.total - self.done
        eta = _duration(left / rate) if rate > 0 else "--:--"
        parts = [
            f"{self.done}/{self.total} episodes",
            f"{rate * 60:.1f}/min",
            f"ETA {eta}",
        ]
        metrics = self._metric_text(now)
        if metrics:
            parts.append(metrics)
        if self.dropped:
            parts.append(f"{self.dropped} dropped")
        return ", ".join(parts)

    def _show(self, *, force: bool = False) -> None:
        now = self.clock()
        if not force and now - self._shown_at < self.interval:
            return
        self._shown_at = now
        line = self.text()
        if self.bar:
            filled = int(24 * self.done / self.total) if self.total else 24
            drawn = f"[{'#' * filled}{'.' * (24 - filled)}] {line}"
            pad = " " * max(0, self._width - len(drawn))
            self._width = len(drawn)
            self.stream.write(f"\r{drawn}{pad}")
        else:
            self.stream.write(f"progress: {line}\n")
        self.stream.flush()

    def close(self) -> None:
        """End the bar's line (lines mode has nothing to finish)."""
        if self.bar and self._width:
            self.stream.write("\n")
            self.stream.flush()


def progress_for(mode: str, stream: TextIO | None = None) -> Progress | None:
    """Return the progress report ``--progress MODE`` asks for on ``stream`` (stderr)."""
    out = sys.stderr if stream is None else stream
    if mode == "off":
        return None
    bar = mode == "bar" or (mode == "auto" and out.isatty())
    return ProgressReport(out, bar=bar)
