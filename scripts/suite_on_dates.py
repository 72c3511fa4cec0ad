"""Run the test suite (``scripts/check``) with every Python process's clock moved, under load.

usage: python scripts/suite_on_dates.py [--venv .venv] [--shift-days N ...] [--busy K]
                                         [-- pytest arguments ...]

For each ``--shift-days`` (default: a year ahead, then 400 days back) the suite and its
linters run once, exactly as ``make test`` runs them, while ``K`` busy processes (default 4)
spin on the machine's cores. The clock is moved with ``time-machine`` (the ``test`` extra) in
every Python process of the venv, the suite's subprocesses included (MCP servers, the GTK app,
the verifier's workers): ``time.time``, ``datetime.now``, ``date.today`` and their kin report
the shifted date and keep ticking; monotonic clocks are left alone. Chromium, Xvfb and Xvnc
keep the real clock; none of them decides anything by the date.

Why not ``faketime``: libfaketime 0.9.10 (Debian 12) breaks Python itself. With monotonic
time faked, a timed wait (``sem_clockwait``) waits the whole shift; with it left alone,
``time.sleep`` fails with EINVAL; and Chromium does not start under it.

The script adds two files to the venv's ``site-packages`` for the run (a ``.pth`` hook that
acts only when ``EFFECTBENCH_CLOCK_SHIFT_DAYS`` is set, and its module) and removes them at the
end, also when interrupted. It prints one line per date with the outcome, the wall time and
the load average before and after, and exits non-zero when any run failed.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType

ROOT = Path(__file__).resolve().parent.parent
VARIABLE = "EFFECTBENCH_CLOCK_SHIFT_DAYS"
HOOK = "effectbench_shifted_clock"
HOOK_PTH = f"import os; os.environ.get({VARIABLE!r}) and __import__({HOOK!r})\n"
HOOK_MODULE = f'''"""Moves this process's clock by ${VARIABLE} days (scripts/suite_on_dates.py)."""

import datetime
import os

import time_machine

_shift = datetime.timedelta(days=float(os.environ[{VARIABLE!r}]))
time_machine.travel(datetime.datetime.now(datetime.timezone.utc) + _shift, tick=True).start()
'''


def _loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _site_packages(python: Path) -> Path:
    out = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(out.stdout.strip())


def _shifted_today(python: Path, days: float) -> str:
    """The date a fresh Python of the venv sees with the hook on (proves the hook acts)."""
    out = subprocess.run(
        [str(python), "-c", "import datetime; print(datetime.date.today())"],
        capture_output=True,
        text=True,
        env={**os.environ, VARIABLE: str(days)},
        check=True,
    )
    return out.stdout.strip()


def _busy(count: int) -> list[subprocess.Popen[bytes]]:
    spin = "while True: pass"
    return [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(count)]


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()


def _interrupted(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--venv", type=Path, default=ROOT / ".venv", help="the test venv")
    parser.add_argument("--shift-days", type=float, action="append", help="repeatable")
    parser.add_argument("--busy", type=int, default=4, help="busy processes beside the suite")
    parser.add_argument("pytest_args", nargs="*", help="after --: passed to pytest")
    args = parser.parse_args(argv)
    shifts = args.shift_days or [365.0, -400.0]
    python = args.venv / "bin" / "python"
    if not python.exists():
        print(f"suite_on_dates: no Python at {python}; run `make setup` first", file=sys.stderr)
        return 2
    check = subprocess.run([str(python), "-c", "import time_machine"], capture_output=True)
    if check.returncode != 0:
        print(
            f"suite_on_dates: time-machine is not installed in {args.venv} "
            "(it comes with the test extra: `make setup`)",
            file=sys.stderr,
        )
        return 2
    site = _site_packages(python)
    pth, module = site / f"{HOOK}.pth", site / f"{HOOK}.py"
    signal.signal(signal.SIGTERM, _interrupted)
    failed = 0
    try:
        module.write_text(HOOK_MODULE)
        pth.write_text(HOOK_PTH)
        for days in shifts:
            today = _shifted_today(python, days)
            real = time.strftime("%Y-%m-%d", time.gmtime())
            if today == real and days != 0:
                print(f"suite_on_dates: the clock hook did not act ({today})", file=sys.stderr)
                return 2
            before = _loadavg()
            started = time.monotonic()
            load = _busy(args.busy)
            try:
                run = subprocess.run(
                    ["bash", str(ROOT / "scripts" / "check"), str(args.venv / "bin")]
                    + args.pytest_args,
                    cwd=ROOT,
                    env={**os.environ, VARIABLE: str(days)},
                )
            finally:
                after = _loadavg()
                _stop(load)
            took = time.monotonic() - started
            verdict = "passed" if run.returncode == 0 else f"FAILED (exit {run.returncode})"
            failed += run.returncode != 0
            print(
                f"suite_on_dates: {days:+g} days (Python sees {today}), {args.busy} busy "
                f"processes: {verdict} in {took:.0f} s; load {before} before, {after} at the end",
                flush=True,
            )
    finally:
        pth.unlink(missing_ok=True)
        module.unlink(missing_ok=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
