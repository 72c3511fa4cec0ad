"""Shared fixtures and the test groups.

* The interop vectors live in ``tests/data/vectors`` (see its README), so
  every test runs in a fresh clone.
* ``-m browser`` marks tests that drive real headless Chromium. A run that
  selects them without a Chromium stops at collection with one line saying
  what to install (never a skip, never a traceback); ``make test-fast``
  deselects them (and the ``slow`` group).
* No test skips: a skipped test fails the run (a missing component is an
  error to fix, not a test to leave out).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

VECTORS = Path(__file__).resolve().parent / "data" / "vectors"
"""Documents produced by the reference implementation of EffectBench (MIT)."""
CHROMIUM_ENV = "EFFECTBENCH_CHROMIUM"
"""Environment variable naming the Chromium binary (default: Debian's ``/usr/bin/chromium``)."""
DEFAULT_CHROMIUM = "/usr/bin/chromium"


def chromium_path() -> Path | None:
    """Return the Chromium binary the browser tests drive, or None when there is none."""
    named = os.environ.get(CHROMIUM_ENV)
    candidate = named or DEFAULT_CHROMIUM
    if os.access(candidate, os.X_OK) and Path(candidate).is_file():
        return Path(candidate)
    if named:
        return None  # asked for one that is not there: say so rather than guess another
    found = shutil.which("chromium")
    return Path(found) if found else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Refuse, in one line, a run that selected browser tests on a machine without Chromium."""
    browser = [item for item in items if item.get_closest_marker("browser") is not None]
    if browser and chromium_path() is None:
        where = os.environ.get(CHROMIUM_ENV) or DEFAULT_CHROMIUM
        raise pytest.UsageError(
            f"{len(browser)} browser tests need Chromium, not found at {where}: install "
            f"Debian's `chromium` (apt-get install chromium) or set {CHROMIUM_ENV}, or run "
            "`make test-fast` / pytest -m 'not browser' without them"
        )


_skipped: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Remember every skipped test (they fail the run in :func:`pytest_sessionfinish`)."""
    if report.skipped and not hasattr(report, "wasxfail"):
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail a run in which any test skipped, naming them."""
    if _skipped and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say why a run with skipped tests failed."""
    if _skipped:
        terminalreporter.write_line(
            f"ERROR: {len(_skipped)} tests skipped ({', '.join(_skipped[:3])}"
            f"{' ...' if len(_skipped) > 3 else ''}); every test must run",
            red=True,
        )


@pytest.fixture(scope="session")
def chromium() -> Path:
    """The Chromium binary (collection already refused a run without one)."""
    path = chromium_path()
    assert path is not None
    return path


@pytest.fixture(scope="session")
def vectors_dir() -> Path:
    """The reference implementation's interop vectors (read-only; copy before editing)."""
    return VECTORS


@pytest.fixture(scope="session")
def upstream_docs(vectors_dir: Path) -> dict[str, dict[str, Any]]:
    """Both upstream submission documents, by arm."""
    docs = {}
    for arm in ("screen_only", "effect_verified"):
        docs[arm] = json.loads((vectors_dir / f"upstream-{arm}-t3.json").read_text())
    return docs
