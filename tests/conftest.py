"""Shared fixtures and the test groups.

* The interop vectors live in ``tests/data/vectors`` (see its README), so
  every test runs in a fresh clone. Helpers the modules share live in the
  ``support`` package; no test module imports another.
* Groups (``pyproject.toml`` lists them): ``browser`` (the built site in
  headless Chromium), ``web`` (episodes on the web substrate, in Chromium),
  ``desktop`` (episodes on the desktop and remote-display substrates: X
  servers, D-Bus, AT-SPI, GTK 3, PyGObject), ``postgres`` (the ticketing pack's
  PostgreSQL server) and ``slow``. ``make test-fast``
  leaves every group out. A run that selects a group without what it needs
  stops at collection with one line saying what to install (never a skip,
  never a traceback).
* No test skips: a skipped test fails the run (a missing component is an
  error to fix, not a test to leave out).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support import workflows

from effectbench.errors import UsageError
from effectbench.screens.chromium import chromium_executable
from effectbench.screens.xsession import TYPELIBS, programs_for, require

VECTORS = Path(__file__).resolve().parent / "data" / "vectors"
"""Documents produced by the reference implementation of EffectBench (MIT)."""


def _chromium() -> None:
    chromium_executable()


def _desktop() -> None:
    require(programs_for("xvfb") + programs_for("xvnc")[:1] + ("xauth",), tuple(TYPELIBS))


def _postgres() -> None:
    from effectbench_ticketing.cluster import server_binaries

    server_binaries()


NEEDS: dict[str, tuple[str, Callable[[], None]]] = {
    "browser": ("Chromium", _chromium),
    "web": ("Chromium", _chromium),
    "desktop": ("the X, D-Bus, AT-SPI and GTK stack", _desktop),
    "postgres": ("a PostgreSQL server", _postgres),
}
"""What each group of tests needs, and the check that raises one line when it is missing."""


@pytest.hookimpl(trylast=True)  # after -m and -k have deselected what will not run
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Refuse, in one line, a run that selected a group whose components are missing."""
    for group, (what, check) in NEEDS.items():
        selected = [item for item in items if item.get_closest_marker(group) is not None]
        if not selected:
            continue
        try:
            check()
        except UsageError as exc:
            raise pytest.UsageError(
                f"{len(selected)} {group} tests need {what}: {exc}; or run `make test-fast` "
                f"(pytest -m 'not {group}') without them"
            ) from None


_AUDITS: list[Path] = []


def pytest_configure(config: pytest.Config) -> None:
    """Share the packs' audits among this run's processes (one machine cache for the run,
    removed after it; :class:`effectbench.kit.audit.AuditCache`), unless one is named."""
    if "EFFECTBENCH_AUDIT_CACHE" not in os.environ:
        folder = Path(tempfile.mkdtemp(prefix="effectbench-test-audits-"))
        _AUDITS.append(folder)
        os.environ["EFFECTBENCH_AUDIT_CACHE"] = str(folder)


def pytest_unconfigure(config: pytest.Config) -> None:
    for folder in _AUDITS:
        shutil.rmtree(folder, ignore_errors=True)


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
    """The Chromium binary the runtime drives (collection already refused a run without one)."""
    return chromium_executable()


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


@pytest.fixture(scope="session")
def workflow_workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A checkout copy and the light PATH the workflows' steps run in (support.workflows);
    the seconds each step took are printed at the end of the run (pytest -s)."""
    yield workflows.workspace(tmp_path_factory.mktemp("workflow"))
    print("\nworkflow steps, seconds:", {k: round(v, 1) for k, v in workflows.SPENT.items()})


@pytest.fixture(scope="session")
def light_runner(workflow_workspace: Path) -> workflows.Runner:
    """deploy-site's build job's clean venv and install, made once per test run."""
    return workflows.light(workflow_workspace)


@pytest.fixture(scope="session")
def deploy_build(light_runner: workflows.Runner) -> workflows.DeployBuild:
    """The deploy job's build of every shipped bundle, once per test run: checked by
    ``test_workflow_steps``, its published site read by ``test_shipped_site``."""
    return workflows.deploy_build(light_runner)
