"""The hash lock of the screen stack's source builds (``requirements/screens-build.txt``).

pycairo and PyGObject have no Linux wheel, so the reproduce job (which signs the records the
site build trusts) builds them; ``scripts/install_screens_build.py`` builds them from the lock,
hash-checked, without pip's isolated build, which would fetch their build tools unpinned. These
checks read the lock, what ``requirements/screens-build.json`` says each pin requires (an
sdist's ``[build-system]``, a wheel's ``Requires-Dist``, the build backend's own requires, all
read from the hashed files by ``scripts/lock_screens_build.py``) and the screen stack's lock:
every line hashed, every requirement of every build pinned at a version it accepts, for each
Python the workflows and CI use. No network.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
REQUIREMENTS = ROOT / "requirements"
PYTHONS = ("3.11", "3.12", "3.13", "3.14")
"""Every Python a build may run on (pyproject's requires-python: 3.11 or newer)."""


def _installer() -> ModuleType:
    path = ROOT / "scripts" / "install_screens_build.py"
    spec = importlib.util.spec_from_file_location("install_screens_build", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


build: Any = _installer()


def _environment(python: str) -> dict[str, str]:
    return {
        "python_version": python,
        "python_full_version": f"{python}.0",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "sys_platform": "linux",
        "platform_system": "Linux",
        "platform_machine": "x86_64",
        "os_name": "posix",
        "extra": "",
    }


def uncovered(pins: dict[str, Any], data: Any) -> list[str]:
    """Each requirement of a build in the lock that no pin of it satisfies, said in one line.

    A build needs its sdist's ``[build-system] requires``, what its backend's hook asks, and,
    transitively, what each of those wheels requires (no extras), on every Python of
    :data:`PYTHONS` on Linux.
    """
    problems: list[str] = []
    entries = data.entries
    backends = data.backends
    providers = data.backend_providers
    for python in PYTHONS:
        env = _environment(python)
        needed: list[tuple[str, str]] = []
        for name, entry in sorted(entries.items()):
            if not entry.sdist:
                continue
            module = entry.build_backend.split(":")[0]
            if module not in backends:
                problems.append(f"{name}: backend {module} has no entry in screens-build.json")
                continue
            needed += [(f"{name} [build-system]", r) for r in entry.build_requires]
            needed += [(f"{name} ({module}'s own requires)", r) for r in backends[module]]
            needed.append((f"{name} (its backend {module})", providers[module]))
        seen: set[str] = set()
        while needed:
            who, text = needed.pop(0)
            requirement = Requirement(text)
            if requirement.marker is not None and not requirement.marker.evaluate(env):
                continue
            name = build.canonical(requirement.name)
            pin = pins.get(name)
            if pin is None:
                problems.append(f"Python {python}: {who} requires {text}: not in the lock")
                continue
            version = pin.version
            if not requirement.specifier.contains(version, prereleases=True):
                problems.append(f"Python {python}: {who} requires {text}: the lock has {version}")
            if name not in seen and name in entries:
                seen.add(name)
                needed += [(name, r) for r in entries[name].requires]
    return sorted(set(problems))


@pytest.fixture(scope="module")
def lock() -> dict[str, Any]:
    pins: dict[str, Any] = build.read_lock(ROOT / build.LOCK)
    return pins


@pytest.fixture(scope="module")
def data() -> Any:
    return build.read_data(ROOT / build.DATA)


def test_every_pin_is_hashed_and_matches_the_files_its_requirements_were_read_from(
    lock: dict[str, Any], data: Any
) -> None:
    """Each pin has a sha256; its data names the same version and one of its hashes (the file
    whose requirements it holds); an sdist's pin allows its sdist only."""
    entries = data.entries
    assert set(lock) == set(entries)
    for name, pin in lock.items():
        hashes = pin.hashes
        assert hashes and len(hashes) == pin.text.count("--hash="), f"{name}: a line without a hash"
        assert all(re.fullmatch(r"[0-9a-f]{64}", h) for h in hashes), name
        entry = entries[name]
        assert entry.version == pin.version, f"{name}: the data is of {entry.version}"
        assert entry.sha256 in hashes, f"{name}: {entry.artifact} is not a hashed file"
        assert Version(entry.version) == Version(_artifact_version(entry.artifact)), name
        if entry.sdist:
            assert hashes == (entry.sha256,), f"{name}: an sdist pin allows other files"
    assert sum(e.sdist for e in entries.values()) >= 2  # pycairo and PyGObject at least


def _artifact_version(artifact: str) -> str:
    if artifact.endswith(".whl"):
        return artifact.split("-")[1]
    return artifact.removesuffix(".tar.gz").removesuffix(".zip").rsplit("-", 1)[1]


def test_the_lock_covers_every_build_requirement_of_every_sdist(
    lock: dict[str, Any], data: Any
) -> None:
    assert uncovered(lock, data) == []


def test_a_missing_or_stale_build_tool_is_named(lock: dict[str, Any], data: Any) -> None:
    """The coverage check fails on a lock without ninja, or with meson-python too old."""
    without_ninja = {name: pin for name, pin in lock.items() if name != "ninja"}
    found = uncovered(without_ninja, data)
    assert found and all("ninja" in line and "not in the lock" in line for line in found)
    assert any("pygobject (mesonpy's own requires)" in line for line in found)
    old = dict(lock)
    old["meson-python"] = replace(lock["meson-python"], version="0.15.0")
    found = uncovered(old, data)
    assert any("pycairo [build-system] requires meson-python" in line for line in found)
    assert not any("pygobject [build-system]" in line for line in found)  # >=0.12.1: still fine


def test_the_built_packages_are_the_screen_stacks_pins(lock: dict[str, Any], data: Any) -> None:
    """The sdists built are the versions and files requirements/screens.txt pins, and a build
    tool the screen stack also installs is at its version there (one environment holds both);
    the desktop extra's PyGObject is among them."""
    screens = build.read_lock(REQUIREMENTS / "screens.txt")
    for name, pin in lock.items():
        version = pin.version
        if name in screens:
            assert screens[name].version == version, f"{name}: screens.txt pins another"
        if data.entries[name].sdist:
            assert name in screens, f"{name} is built but not in screens.txt"
            assert set(pin.hashes) <= set(screens[name].hashes), name
    assert "pygobject" in lock and "pycairo" in lock


def test_the_builds_run_after_what_they_need(data: Any) -> None:
    order = build.build_order(data)
    assert order.index("pycairo") < order.index("pygobject")
    entries = data.entries
    for position, name in enumerate(order):
        for requirement in entries[name].build_requires:
            needed = build.requirement_name(requirement)
            if needed in order:
                assert order.index(needed) < position, (name, needed)


def test_a_malformed_lock_is_refused_naming_its_line(tmp_path: Path) -> None:
    lock = tmp_path / "lock.txt"
    lock.write_text("# a comment\nmeson==1.0 \\\n    --hash=sha256:" + "0" * 64 + "\nmeson>=2\n")
    with pytest.raises(ValueError, match=r"lock\.txt:4: not a name==version pin"):
        build.read_lock(lock)
    lock.write_text("meson==1.0\nMeson==1.1\n")
    with pytest.raises(ValueError, match=r"lock\.txt:2: meson is pinned twice"):
        build.read_lock(lock)
    broken = tmp_path / "data.json"
    broken.write_text(json.dumps({"pins": {"meson": {"version": "1.0"}}, "backends": {}}))
    with pytest.raises(ValueError, match=r"data\.json: malformed \(KeyError"):
        build.read_data(broken)


def test_every_screen_install_builds_from_the_lock_first() -> None:
    """install-verifier's screens mode (the reproduce job's and verify-pr's one install step)
    and setup-venv's screens and dev modes build from the lock before installing the rest,
    which then comes from wheels only or finds PyGObject installed."""
    verifier = (ROOT / "scripts" / "install-verifier").read_text(encoding="utf-8")
    build_step = verifier.index('"$py" scripts/install_screens_build.py')
    screens_step = verifier.index('--only-binary :all: -r "$lock"')
    assert verifier.rfind('if [ "$mode" = screens ]; then', 0, build_step) != -1
    assert build_step < screens_step
    setup = (ROOT / "scripts" / "setup-venv").read_text(encoding="utf-8")
    step = setup.index('"$venv/bin/python" scripts/install_screens_build.py')
    guard = setup.rfind("\n", 0, setup.rfind("\n", 0, step))
    assert 'if [ "$mode" = dev ] || [ "$mode" = screens ]; then' in setup[guard:step]
    assert step < setup.index('-e "$target"')
    assert "requirements/screens-build.txt" in setup  # a new lock re-runs the install


def test_the_installer_refuses_a_malformed_lock_in_one_line(tmp_path: Path) -> None:
    """Before any pip run: exit 2, the file and line named, no traceback."""
    (tmp_path / "requirements").mkdir()
    (tmp_path / build.LOCK).write_text("meson>=1\n")
    (tmp_path / build.DATA).write_text(json.dumps({"pins": {}, "backends": {}}))
    script = ROOT / "scripts" / "install_screens_build.py"
    done = subprocess.run(
        [sys.executable, str(script), "--root", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().endswith("screens-build.txt:1: not a name==version pin: 'meson>=1'")
