"""Write ``requirements/screens-build.txt`` and ``.json``: pycairo, PyGObject, their build tools.

The versions of the source-only packages (:data:`BUILT`) are the ones ``requirements/screens.txt``
pins. For each, its sdist is fetched from PyPI and checked against that lock's hash, and its
``pyproject.toml`` read: ``[build-system] requires`` and ``build-backend``. The build tools are
those requires (less the source-only packages themselves) and what each backend's own
``get_requires_for_build_wheel`` asks on a Linux machine with no ninja or patchelf on ``PATH``
(a fresh CI container); pip resolves them (wheels only, with the screen stack's pins as
constraints, so a package both need is at one version) and each wheel's ``Requires-Dist`` is
read from its ``METADATA``. Every wheel pin carries the hashes of all its version's wheels (so
``--require-hashes`` holds on any platform the wheels cover), every sdist pin its sdist's.
Run it after ``requirements/screens.txt`` moves PyGObject or pycairo, on x86-64 Linux with
network access, with a Python that has ``packaging`` (the dev venv); then run
``tests/test_screens_build_lock.py``.

usage: python scripts/lock_screens_build.py
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import urllib.request
import zipfile
from email.parser import HeaderParser
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename

sys.path.insert(0, str(Path(__file__).resolve().parent))
from install_screens_build import DATA, LOCK, read_lock  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SCREENS = ROOT / "requirements" / "screens.txt"
INDEX = "https://pypi.org/simple"
BUILT = ("pycairo", "pygobject")
"""The screen stack's packages with no Linux wheel on PyPI: built from their sdists."""
CONFIG_SETTINGS = {"pygobject": {"setup-args": "-Dpycairo=enabled"}}
"""Build options: PyGObject's cairo support is required, not built only if pycairo is found."""
IMPORT_CHECKS = {"pycairo": "import cairo", "pygobject": "import gi; gi.require_foreign('cairo')"}
"""What the installer runs after each build (PyGObject's cairo integration was built)."""


def _files(name: str) -> list[dict[str, Any]]:
    """The index's files of a project (PEP 691 JSON)."""
    request = urllib.request.Request(
        f"{INDEX}/{name}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        files: list[dict[str, Any]] = json.load(response)["files"]
    return files


def _sdist(name: str, version: str, hashes: tuple[str, ...]) -> tuple[str, str, dict[str, Any]]:
    """Fetch a pinned sdist, check its hash, return its file name, sha256 and pyproject."""
    wanted = f"{canonicalize_name(name).replace('-', '_')}-{version}.tar.gz".lower()
    (found,) = [f for f in _files(name) if f["filename"].lower() == wanted]
    with urllib.request.urlopen(found["url"], timeout=120) as response:
        data = response.read()
    digest = hashlib.sha256(data).hexdigest()
    if digest not in hashes or digest != found["hashes"]["sha256"]:
        raise SystemExit(f"lock-screens-build: {found['filename']} has sha256 {digest}, not pinned")
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        top = archive.getnames()[0].split("/")[0]
        member = archive.extractfile(f"{top}/pyproject.toml")
        assert member is not None
        pyproject = tomllib.loads(member.read().decode("utf-8"))
    return found["filename"], digest, pyproject


def _download(requirements: list[str], constraints: Path, folder: Path) -> list[Path]:
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--only-binary", ":all:"]
    command += ["--index-url", INDEX, "-c", str(constraints), "-d", str(folder), *requirements]
    # PyPI's files only: no configured extra index, find-links folder or constraint of this machine
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    subprocess.run(command, check=True, env={**env, "PIP_CONFIG_FILE": os.devnull})
    return sorted(folder.glob("*.whl"))


def _metadata(wheel: Path) -> list[str]:
    """A wheel's ``Requires-Dist`` lines."""
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        headers = HeaderParser().parsestr(archive.read(name).decode("utf-8"))
    return [str(value) for value in headers.get_all("Requires-Dist") or []]


def _backend_requires(module: str, wheels: list[Path]) -> list[str]:
    """The backend's ``get_requires_for_build_wheel`` with no ninja, meson or patchelf around."""
    with tempfile.TemporaryDirectory() as empty:
        env = {"PATH": empty, "PYTHONPATH": os.pathsep.join(map(str, wheels)), "HOME": empty}
        code = f"import json, {module} as b; print(json.dumps(b.get_requires_for_build_wheel()))"
        done = subprocess.run(
            [sys.executable, "-c", code],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            cwd=empty,
        )
    requires: list[str] = json.loads(done.stdout)
    return requires


def _pin_text(name: str, version: str, hashes: list[str], why: str) -> str:
    lines = [f"{name}=={version} \\"]
    lines += [f"    --hash=sha256:{h} \\" for h in sorted(hashes)]
    lines[-1] = lines[-1].removesuffix(" \\")
    return "\n".join([*lines, f"    # {why}"])


def main() -> int:
    screens = read_lock(SCREENS)
    entries: dict[str, dict[str, Any]] = {}
    hashes: dict[str, list[str]] = {}
    whys: dict[str, str] = {}
    tools: list[str] = []
    backends: set[str] = set()
    for name in BUILT:
        pin = screens[name]
        artifact, digest, pyproject = _sdist(name, pin.version, pin.hashes)
        system = pyproject["build-system"]
        entries[name] = {
            "version": pin.version,
            "artifact": artifact,
            "sha256": digest,
            "build-backend": system["build-backend"],
            "build-requires": list(system["requires"]),
        }
        if name in CONFIG_SETTINGS:
            entries[name]["config-settings"] = CONFIG_SETTINGS[name]
        entries[name]["import-check"] = IMPORT_CHECKS[name]
        hashes[name] = [digest]
        whys[name] = f"built from source, as {SCREENS.relative_to(ROOT)} pins it"
        backends.add(system["build-backend"].split(":")[0])
        tools += [r for r in system["requires"] if Requirement(r).name.lower() not in BUILT]
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        constraints = folder / "constraints.txt"
        constraints.write_text("".join(f"{p.name}=={p.version}\n" for p in screens.values()))
        first = _download(tools, constraints, folder / "first")
        module_requires = {m: _backend_requires(m, first) for m in sorted(backends)}
        extra = [r for requires in module_requires.values() for r in requires]
        wheels = _download(tools + extra, constraints, folder / "all")
        providers: dict[str, str] = {}
        for wheel in wheels:
            name, version, _, _ = parse_wheel_filename(wheel.name)
            key = str(name)
            digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
            entries[key] = {
                "version": str(version),
                "artifact": wheel.name,
                "sha256": digest,
                "requires": _metadata(wheel),
            }
            hashes[key] = [
                f["hashes"]["sha256"]
                for f in _files(key)
                if f["filename"].endswith(".whl")
                and parse_wheel_filename(f["filename"])[1] == version
            ]
            if digest not in hashes[key]:
                raise SystemExit(f"lock-screens-build: {wheel.name} is not on the index")
            whys[key] = "a build tool: see screens-build.json for what requires it"
            with zipfile.ZipFile(wheel) as archive:
                for module in backends:
                    if f"{module}/__init__.py" in archive.namelist():
                        providers[module] = key
    head = [
        "# The screen stack's source-only packages (pycairo, PyGObject: no Linux wheel on",
        "# PyPI) and every tool their builds use, hash-locked. scripts/install_screens_build.py",
        "# installs the tools with pip --require-hashes, then builds each sdist with",
        "# --no-build-isolation in that environment (scripts/install-verifier screens,",
        "# scripts/setup-venv screens|dev). What each pin requires is in screens-build.json;",
        "# tests/test_screens_build_lock.py checks the lock covers it. Written by",
        "# scripts/lock_screens_build.py: run it after requirements/screens.txt moves",
        "# PyGObject or pycairo.",
    ]
    body = [_pin_text(n, entries[n]["version"], hashes[n], whys[n]) for n in sorted(entries)]
    (ROOT / LOCK).write_text("\n".join(head + body) + "\n", encoding="utf-8")
    data = {
        "comment": (
            "What each pin of screens-build.txt requires: an sdist's pyproject.toml "
            "[build-system], a wheel's METADATA Requires-Dist, and each build backend's "
            "get_requires_for_build_wheel on Linux without ninja or patchelf on PATH. "
            "Written by scripts/lock_screens_build.py."
        ),
        "pins": {n: entries[n] for n in sorted(entries)},
        "backends": {
            m: {"provided-by": providers[m], "requires": module_requires[m]}
            for m in sorted(backends)
        },
    }
    (ROOT / DATA).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(f"lock-screens-build: {len(entries)} pins written to {LOCK} and {DATA}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
