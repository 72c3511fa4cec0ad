"""The complexity gate of ``make lint`` (``scripts/complexity.py``) on small made-up trees:
a function above 15 fails it unless the ratchet list holds it at its figure, and the list only
shrinks."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "complexity.py"


def _gate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("complexity_gate", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


gate: Any = _gate()


def _function(name: str, branches: int, indent: str = "") -> str:
    """A function of complexity ``branches + 1`` (one ``if`` a branch)."""
    body = "".join(
        f"{indent}    if x == {i}:\n{indent}        return {i}\n" for i in range(branches)
    )
    return f"{indent}def {name}(x):\n{body}{indent}    return -1\n"


def _run(root: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--root", str(root), *extra],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def _tree(tmp_path: Path, source: str, ratchet: str | None = None) -> Path:
    (tmp_path / "pkg").mkdir(parents=True, exist_ok=True)
    (tmp_path / "pkg" / "mod.py").write_text("import os\n\n\n" + source)
    if ratchet is not None:
        (tmp_path / "scripts").mkdir(exist_ok=True)
        (tmp_path / "scripts" / "complexity_ratchet.txt").write_text(ratchet)
    return tmp_path


def test_a_complex_function_fails_naming_file_line_function_and_complexity(tmp_path: Path) -> None:
    root = _tree(tmp_path, _function("simple", 3) + "\n\n" + _function("tangled", 16))
    done = _run(root)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "complexity: pkg/mod.py:14: tangled has complexity 17, above 15: simplify it "
        "(extract named helpers, a table for an if-chain)"
    ]


def test_fifteen_passes_and_sixteen_fails(tmp_path: Path) -> None:
    assert _run(_tree(tmp_path / "a", _function("f", 14))).returncode == 0
    assert _run(_tree(tmp_path / "b", _function("f", 15))).returncode == 1


def test_a_listed_function_at_its_figure_passes(tmp_path: Path) -> None:
    root = _tree(tmp_path, _function("tangled", 16), "# header\npkg/mod.py::tangled 17\n")
    done = _run(root)
    assert done.returncode == 0, done.stderr
    assert "no function above 15 but the 1 listed" in done.stdout


def test_a_listed_function_that_got_worse_fails_and_update_does_not_excuse_it(
    tmp_path: Path,
) -> None:
    ratchet = "pkg/mod.py::tangled 17\n"
    root = _tree(tmp_path, _function("tangled", 18), ratchet)
    for extra in ((), ("--update",)):
        done = _run(root, *extra)
        assert done.returncode == 1
        assert "pkg/mod.py:4: tangled has complexity 19, up from its listed 17" in done.stderr
    assert (root / "scripts" / "complexity_ratchet.txt").read_text() == ratchet


def test_the_list_only_shrinks(tmp_path: Path) -> None:
    """A listed function simplified to 15 or below, gone, or lowered fails until --update
    takes it off (or lowers it); --update never adds one."""
    ratchet = "pkg/mod.py::gone 30\npkg/mod.py::lower 25\npkg/mod.py::simplified 20\n"
    source = _function("simplified", 10) + "\n\n" + _function("lower", 20)
    root = _tree(tmp_path, source + "\n\n" + _function("new", 16), ratchet)
    done = _run(root)
    assert done.returncode == 1
    assert "pkg/mod.py:28: lower has complexity 21, down from its listed 25" in done.stderr
    assert "pkg/mod.py::gone (listed at 30) is no longer above 15 or is gone" in done.stderr
    assert "pkg/mod.py::simplified (listed at 20) is no longer above 15" in done.stderr
    assert "new has complexity 17, above 15" in done.stderr
    updated = _run(root, "--update")
    assert updated.returncode == 1  # `new` is still not excused
    assert updated.stderr.count("complexity:") == 1 and "new has complexity 17" in updated.stderr
    lines = (root / "scripts" / "complexity_ratchet.txt").read_text().splitlines()
    assert [line for line in lines if not line.startswith("#")] == ["pkg/mod.py::lower 21"]
    (root / "pkg" / "mod.py").write_text(source)
    assert _run(root).returncode == 0


def test_methods_nested_functions_and_repeated_names_are_each_measured(tmp_path: Path) -> None:
    source = (
        "class Outer:\n"
        + _function("method", 16, "    ")
        + "\n\n"
        + _function("outer", 1)
        + _function("inner", 17, "    ")
        + "\n\n"
        + "def factory():\n    class Local:\n"
        + _function("made", 18, "        ")
        + "    return Local\n\n\n"
        + _function("twice", 1)
        + "\n\n"
        + _function("twice", 19)
    )
    found = gate.measure_file(_tree(tmp_path, source) / "pkg" / "mod.py", "pkg/mod.py")
    above = {m.key: m.complexity for m in found if m.complexity > 15}
    assert above == {
        "pkg/mod.py::Outer.method": 17,
        "pkg/mod.py::outer.inner": 18,
        "pkg/mod.py::factory.Local.made": 19,
        "pkg/mod.py::twice#2": 20,
    }
    # a nested function's branches are its own, not its parent's
    assert {m.key: m.complexity for m in found}["pkg/mod.py::outer"] == 2


def test_virtual_environments_and_vendored_code_are_not_read(tmp_path: Path) -> None:
    for folder in (".venv/lib", "site/assets/vendor", "build", "pkg/__pycache__"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "big.py").write_text(_function("tangled", 20))
    assert gate.measure(tmp_path) == []
    (tmp_path / "site" / "own.py").write_text(_function("tangled", 20))
    assert [m.key for m in gate.measure(tmp_path)] == ["site/own.py::tangled"]


def test_a_malformed_ratchet_line_is_refused(tmp_path: Path) -> None:
    root = _tree(tmp_path, _function("f", 1), "pkg/mod.py::f seventeen\n")
    done = _run(root)
    assert done.returncode == 1
    assert "not a `path::name complexity` line" in done.stderr


def test_the_committed_list_is_sorted_and_each_entry_above_the_limit() -> None:
    listed = gate.read_ratchet(ROOT / gate.RATCHET)
    assert all(figure > gate.LIMIT for figure in listed.values())
    assert (ROOT / gate.RATCHET).read_text() == gate.ratchet_text(listed)
