"""Episode cadence, measured the way a user meets it: start to start, in a real run.

:func:`cadence` runs ``effectbench run`` (the command a user types, one worker,
with a journal) and reads the journal while the run goes. Each row's
``started_at`` marks one episode; the figure is the interval between the starts
of consecutive episodes, so every interval covers one whole cycle: the rest of
an episode (the agent, the oracle, the teardown) and the next one's
provisioning. The run's start-up (imports, the pack's audit, the first
browser) precedes the first row and is in no interval.

Beside it: the CPU time of the run's whole process tree (the command and every
descendant: Chromium, the X servers, the apps, the readers) between the first
and the last row, per episode. On a busy machine the wall time waits for a
core; the CPU time is what an episode costs, whatever the load. The load
average is read before and after, and printed beside every figure.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import orjson

from effectbench.screens._supervisor import descendants

POLL_S = 0.01
"""How often the journal's size is looked at (a ``stat``; the process tree is read per row)."""


@dataclass(frozen=True)
class Cadence:
    """What one run showed: intervals between starts, CPU per episode, the load around it."""

    label: str
    intervals: list[float]
    cpu_per_episode: float
    dropped: int
    load_before: float
    load_after: float

    def line(self) -> str:
        """One line: median and p90 start-to-start, CPU per episode, the load average."""
        ordered = sorted(self.intervals)
        if not ordered:
            return f"{self.label}: no interval (fewer than two episodes finished)"
        p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
        return (
            f"{self.label}: start-to-start median {statistics.median(ordered):6.3f} s"
            f"  p90 {p90:6.3f} s  (n={len(ordered)}, {self.dropped} dropped)"
            f"  CPU {self.cpu_per_episode:6.3f} s/episode"
            f"  [load average {self.load_before:.1f} -> {self.load_after:.1f}]"
        )


def _tree_cpu(root: int) -> float:
    """CPU seconds of ``root`` and every live descendant, with the children each has reaped."""
    ticks = 0
    for pid in (root, *descendants(root)):
        try:
            stat = Path(f"/proc/{pid}/stat").read_bytes()
        except OSError:
            continue  # ended meanwhile: its time is in its parent's reaped children
        ticks += sum(int(v) for v in stat[stat.rfind(b")") + 2 :].split()[11:15])  # u/s/cu/cs
    return ticks / os.sysconf("SC_CLK_TCK")


def _started(line: bytes) -> float | None:
    """The start of a journalled row (a drop has none), as a POSIX timestamp."""
    record = orjson.loads(line)
    row = record.get("row")
    if not isinstance(row, dict):
        return None
    return datetime.fromisoformat(str(row["started_at"])).timestamp()


def cadence(
    label: str,
    *,
    pack: str,
    substrate: str,
    baseline: str = "screen_only",
    trials: int = 1,
    task: str | None = None,
    timeout: float = 1800.0,
) -> Cadence:
    """Run ``effectbench run`` over the pack's dev tasks on ``substrate`` (only ``task``, when
    given, e.g. ``clean_draft``); measure its cadence."""
    with tempfile.TemporaryDirectory(prefix="effectbench-cadence-") as folder:
        journal = Path(folder) / "run.jsonl"
        argv = [sys.executable, "-m", "effectbench.cli", "run", "--pack", pack]
        argv += ["--substrate", substrate, "--baseline", baseline, "--trials", str(trials)]
        argv += ["--journal", str(journal), "--progress", "off", "--json"]
        if task is not None:
            argv += ["--task", task]
        load_before = os.getloadavg()[0]
        process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        cpu_at: list[tuple[int, float]] = []  # (lines in the journal, CPU seconds of the tree)
        seen = 0
        deadline = time.monotonic() + timeout
        try:
            while process.poll() is None:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{label}: the run took longer than {timeout} s")
                lines = journal.read_bytes().count(b"\n") if journal.exists() else 0
                if lines > seen:
                    seen = lines
                    if lines >= 2:  # the header, then one line per finished episode
                        cpu_at.append((lines, _tree_cpu(process.pid)))
                time.sleep(POLL_S)
        finally:
            if process.poll() is None:
                process.kill()
            _, err = process.communicate()
        load_after = os.getloadavg()[0]
        if process.returncode != 0:
            raise RuntimeError(f"{label}: effectbench run exited {process.returncode}: {err!r}")
        body = journal.read_bytes().splitlines()[1:]
    starts = sorted(s for s in (_started(line) for line in body) if s is not None)
    intervals = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    cpu = 0.0
    if len(cpu_at) > 1:
        (first_line, first_cpu), (last_line, last_cpu) = cpu_at[0], cpu_at[-1]
        cpu = (last_cpu - first_cpu) / (last_line - first_line)
    return Cadence(label, intervals, cpu, len(body) - len(starts), load_before, load_after)


def live_processes(watched: tuple[str, ...], besides: str = "") -> list[str]:
    """Every live process (not a zombie, not this one) whose command line names one of
    ``watched`` and not ``besides``: ``PID COMMAND`` (what a run left behind)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z" and any(w in command for w in watched):
            if not besides or besides not in command:
                found.append(f"{entry.name} {command[:80]}")
    return found
