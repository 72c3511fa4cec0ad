"""The inspect extra is optional: the core imports, runs and tests without inspect_ai.

A child Python whose import system refuses ``inspect_ai`` (as an install
without the extra would) imports every module of the engine, the verifier and
the site, runs core tests, and gets a clear message naming the extra from the
integration.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GTK_PROGRAMS = (
    "effectbench.packs.clinic.desktop.app",
    "effectbench.screens._a11y_helper",
    "effectbench.kit.desktop.render",
)
"""Programs an episode runs in its own X session with PyGObject (the desktop extra); they are
run, never imported, so a core install without that extra does not import them."""

BLOCK = """
import sys
class _NoInspect:
    def find_spec(self, name, path=None, target=None):
        if name == "inspect_ai" or name.startswith("inspect_ai."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, _NoInspect())
"""


def _child(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BLOCK + code, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_every_core_module_imports_without_inspect_ai() -> None:
    done = _child(
        """
import importlib, importlib.util, pkgutil
import effectbench, verifier
names = []
for pkg in (effectbench, verifier):
    for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
        if info.name.startswith("effectbench.integrations.inspect_ai"):
            continue
        if info.name in sys.argv[1:] and importlib.util.find_spec("gi") is None:
            continue
        importlib.import_module(info.name)
        names.append(info.name)
assert "inspect_ai" not in sys.modules
from effectbench.cli import build_parser
build_parser()
print(len(names))
""",
        *GTK_PROGRAMS,
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.strip()) > 30


def test_the_integration_says_which_extra_to_install() -> None:
    done = _child(
        """
try:
    import effectbench.integrations.inspect_ai
except ModuleNotFoundError as exc:
    print(exc)
    print(exc.name)
else:
    raise SystemExit("imported without inspect_ai")
"""
    )
    assert done.returncode == 0, done.stderr
    message, name = done.stdout.strip().splitlines()
    assert "pip install -e '.[inspect]'" in message
    assert name == "inspect_ai"


@pytest.mark.slow
def test_core_tests_pass_without_inspect_ai() -> None:
    done = _child(
        """
import pytest
code = pytest.main(["-q", "-p", "no:cacheprovider", *sys.argv[1:]])
assert "inspect_ai" not in sys.modules
sys.exit(code)
""",
        "tests/test_truth_table.py",
        "tests/test_runner_infrastructure.py",
        "tests/test_cli_core.py",
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert " passed" in done.stdout
