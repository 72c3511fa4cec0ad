"""``make generate``: every generated file is current, and only scripts know repository paths."""

from __future__ import annotations

import ast
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "generate.py"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("eb_generate", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_generated_file_is_current() -> None:
    generator = _generator()
    files = generator.generated_files(core=True)
    names = {p.relative_to(ROOT).as_posix() for p in files}
    assert {
        "docs/verifier-report.md",
        "docs/submission.schema.json",
        "docs/packs/mockmed-anchor.manifest.json",
        "docs/packs/mockmed-anchor.reachable.json",
        "docs/packs/clinic.manifest.json",
        "docs/packs/clinic.reachable.json",
        "verifier/reference_bundles.json",
        "verifier/reference_monitors.json",
        "verifier/accepted_packs.json",
    } <= names
    assert generator.stale_files(core=True) == [], "stale generated files: run make generate"


@pytest.mark.postgres
def test_every_accepted_packs_manifest_and_table_are_published() -> None:
    """``make generate`` publishes the accepted packs' documents too (the ticketing pack's
    manifest needs its audit, on a PostgreSQL server)."""
    generator = _generator()
    files = generator.generated_files()
    names = {p.relative_to(ROOT).as_posix() for p in files}
    assert {"docs/packs/ticketing.manifest.json", "docs/packs/ticketing.reachable.json"} <= names
    assert generator.stale_files() == [], "stale generated files: run make generate"


@pytest.mark.postgres
def test_the_check_names_a_stale_file_and_writes_nothing(tmp_path: Path) -> None:
    """A copy of the repository with one table edited: --check names it, exit 1, untouched.
    Every generated file is checked, the accepted packs' too (the ticketing pack's manifest
    needs its audit, on a PostgreSQL server)."""
    root = tmp_path / "repo"
    for part in ("docs", "submissions", "packs", "monitors"):
        shutil.copytree(ROOT / part, root / part, ignore=shutil.ignore_patterns("*.egg-info"))
    (root / "effectbench").mkdir()
    shutil.copy(ROOT / "effectbench" / "_showable_table.py", root / "effectbench")
    report = root / "docs" / "verifier-report.md"
    report.write_text(report.read_text().replace("| `rescore.outcome` |", "| `rescore.oops` |"))
    before = report.read_bytes()
    generator = _generator()
    assert generator.stale_files(root) == [report]
    assert report.read_bytes() == before


def test_make_generate_runs_the_generator() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert "\n\t$(BIN)/python scripts/generate.py\n" in makefile
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--check", "--core"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr


def _repository_paths(path: Path) -> list[str]:
    """Where a module builds a path out of its own file's location above its package."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        parents = (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "parents"
        )
        grandparent = (
            isinstance(node, ast.Attribute)
            and node.attr == "parent"
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "parent"
        )
        if parents or grandparent:
            found.append(f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}")
    return found


def test_library_modules_hold_no_paths_into_the_repository() -> None:
    """The engine and the verifier read only their own package files (``Path(__file__)`` with
    ``.parent`` or ``with_name``), never ``docs/``, ``site/`` or ``submissions/`` above them."""
    modules = sorted((ROOT / "effectbench").rglob("*.py")) + sorted(
        (ROOT / "verifier").rglob("*.py")
    )
    assert [hit for path in modules for hit in _repository_paths(path)] == []
