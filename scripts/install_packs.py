"""Install the accepted packs (``verifier/accepted_packs.json``) into this Python's environment.

The one script the workflows and ``make site`` / ``make setup`` call to install the packs whose
bundles the board ranks, with EffectBench already installed. For each accepted distribution it
checks that the folder it is installed from (its ``source`` in this repository) holds the code
the list accepted (:func:`verifier.accepted.package_digest`), installs it with pip, and checks the
installed code again. A folder whose code differs is refused (exit 2), naming the pack; with
``--editable`` (a developer's environment) it is installed editable, and a difference is only
said (``make generate`` brings the list up to date).

* ``--locked``: the packs' dependencies from the hash-locked ``requirements/packs.txt``
  (``pip --require-hashes``) and the packs without dependencies (the workflows);
* ``--editable``: installed editable (``make setup``);
* ``--pack-check``: after installing, run ``effectbench pack check`` on every substrate each
  accepted pack offers (the CI of a pull request that adds or changes a pack); exit 1 when one
  fails.

``--root DIR`` installs from another checkout (its ``packs/`` and ``requirements/``).

usage: python scripts/install_packs.py [--locked | --editable] [--pack-check] [--root DIR]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from verifier.accepted import ACCEPTED_FILE, AcceptedPack, load_accepted, package_digest

ROOT = Path(__file__).resolve().parents[1]
LOCK = Path("requirements") / "packs.txt"
"""The packs' hash-locked dependencies, under the root."""


def _pip(*args: str) -> None:
    # --no-compile: Python compiles what it imports (scripts/setup-venv says why)
    command = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check"]
    command += ["--no-compile", *args]
    done = subprocess.run(command, check=False)
    if done.returncode != 0:
        raise SystemExit(f"install-packs: pip failed ({' '.join(args)})")


def _package(folder: Path) -> Path:
    """Return the one package folder inside a distribution's ``folder``."""
    found = [p.parent for p in folder.glob("*/__init__.py")]
    if len(found) != 1:
        raise SystemExit(f"install-packs: {folder} holds {len(found)} packages, not one")
    return found[0]


def _installed_digest(name: str) -> str | None:
    code = (
        "import sys; from effectbench.packs import installed; "
        "from verifier.accepted import installed_digest; "
        f"print(installed_digest(installed()[{name!r}]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def install(root: Path, locked: bool, editable: bool) -> list[AcceptedPack]:
    """Install every accepted distribution from ``root``; return the accepted packs."""
    accepted = list(load_accepted(ACCEPTED_FILE).values())
    if locked and (root / LOCK).is_file():
        _pip("--require-hashes", "--no-deps", "-r", str(root / LOCK))
    done: set[str] = set()
    for pack in accepted:
        if pack.distribution in done:
            continue
        done.add(pack.distribution)
        folder = root / pack.source
        digest = package_digest(_package(folder))
        if digest != pack.digest:
            why = (
                f"{pack.source} holds code of digest {digest}, the accepted list has {pack.digest} "
                f"for {pack.distribution} {pack.version}"
            )
            if not editable:
                fix = "a changed pack is accepted by a pull request that updates its entry"
                raise SystemExit(f"install-packs: refused: {why}; {fix} (make generate)")
            print(f"install-packs: note: {why} (run make generate)", file=sys.stderr)
        print(f"install-packs: installing {pack.distribution} {pack.version} from {pack.source}")
        flags = ["--no-deps", "--no-build-isolation"] if locked else []
        _pip("--quiet", *flags, *(["-e"] if editable else []), str(folder))
        if not editable and _installed_digest(pack.name) != pack.digest:
            installed = f"the installed {pack.distribution}"
            raise SystemExit(f"install-packs: {installed} is not the code the accepted list names")
    return accepted


def pack_check(accepted: Sequence[AcceptedPack]) -> int:
    """Run ``effectbench pack check`` on every substrate of every accepted pack; 1 if one fails."""
    failed = []
    effectbench = str(Path(sys.executable).with_name("effectbench"))
    for pack in accepted:
        print(f"install-packs: effectbench pack check {pack.name} --substrate all", flush=True)
        done = subprocess.run([effectbench, "pack", "check", pack.name, "--substrate", "all"])
        if done.returncode != 0:
            failed.append(pack.name)
    if failed:
        print(f"install-packs: pack check failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Install the accepted packs (and check them with ``--pack-check``)."""
    parser = argparse.ArgumentParser(prog="install_packs.py", description=__doc__.splitlines()[0])
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--locked", action="store_true", help="hash-locked, no dependency resolution")
    how.add_argument("--editable", action="store_true", help="editable (a developer's setup)")
    parser.add_argument("--pack-check", action="store_true", help="then run pack check on each")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to install from")
    args = parser.parse_args(argv)
    accepted = install(args.root, args.locked, args.editable)
    return pack_check(accepted) if args.pack_check else 0


if __name__ == "__main__":
    sys.exit(main())
