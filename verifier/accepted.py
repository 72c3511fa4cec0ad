"""The accepted packs: the packs of other distributions whose bundles the board ranks.

The core distribution's own packs (MockMed, the clinic) are the verifier's own code and are
accepted with it. Any other pack is accepted only as listed in :data:`ACCEPTED_FILE` (part of
the verifier's code, outside ``submissions/``): its name, the distribution that provides it,
that distribution's version and the digest of its code (:func:`package_digest`: every Python
file of its package, by content). A bundle of a pack not on the list, of another version, or
of installed code whose digest differs from the list's, is refused
(:data:`~effectbench.findings.CheckId.PACK_NOT_ACCEPTED`), saying how a pack gets on it
(:data:`HOW_TO_JOIN`).

The list is generated (``make generate``: :func:`accepted_listing`) from the packs shipped
in the repository's ``packs/`` folder, each a distribution of its own; a pack joins it by a
pull request that adds its folder there, whose CI runs ``effectbench pack check`` on every
substrate the pack offers. ``scripts/install_packs.py`` installs exactly the listed packs (the
workflows and ``make site``), refusing a folder whose code is not the listed digest. A local
board can hold bundles to another list: the file ``$EFFECTBENCH_ACCEPTED_PACKS`` names (the
``--accepted`` option of ``verify`` and ``site build`` sets it).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from effectbench.hashing import canonical_hash
from effectbench.packs import InstalledPack, installed

__all__ = [
    "ACCEPTED_ENV",
    "ACCEPTED_FILE",
    "CORE_DISTRIBUTION",
    "HOW_TO_JOIN",
    "AcceptedPack",
    "accepted_file",
    "accepted_listing",
    "acceptance_problem",
    "entry_of",
    "installed_digest",
    "load_accepted",
    "package_digest",
]

ACCEPTED_FILE = Path(__file__).resolve().with_name("accepted_packs.json")
"""The list of accepted packs (part of the verifier's code)."""
ACCEPTED_ENV = "EFFECTBENCH_ACCEPTED_PACKS"
"""Names another list to hold bundles to (a local board's)."""
CORE_DISTRIBUTION = "effectbench"
"""The distribution of the engine and the verifier: its packs are accepted with it."""
HOW_TO_JOIN = (
    "a pack gets on the list by a pull request that adds its distribution under packs/ and its "
    "entry to verifier/accepted_packs.json (make generate writes it), whose CI runs effectbench "
    "pack check on every substrate the pack offers (docs/pack-authors.md, section 7)"
)


@dataclass(frozen=True)
class AcceptedPack:
    """One accepted pack: what provides it and the digest of its code."""

    name: str
    """A name the pack is installed under (an entry point of ``effectbench.packs``)."""
    distribution: str
    version: str
    digest: str
    """:func:`package_digest` of the package the pack's entry point is in."""
    source: str = ""
    """Where ``scripts/install_packs.py`` installs it from (a folder of the repository)."""


def accepted_file() -> Path:
    """Return the list bundles are held to: ``$EFFECTBENCH_ACCEPTED_PACKS``, else the verifier's."""
    named = os.environ.get(ACCEPTED_ENV)
    return Path(named) if named else ACCEPTED_FILE


def load_accepted(path: Path | None = None) -> dict[str, AcceptedPack]:
    """Return the accepted packs of the list at ``path`` (default :func:`accepted_file`), by
    name; raises ``OSError``, ``ValueError`` or ``TypeError`` for a file that is no list."""
    data = json.loads((path or accepted_file()).read_text(encoding="utf-8"))
    packs = [AcceptedPack(**entry) for entry in data["packs"]]
    return {p.name: p for p in packs}


def package_digest(code: Path) -> str:
    """Return the digest of a pack's code: every ``.py`` file of its package folder ``code``
    (or the one module file ``code``), by its path relative to it and its content (the same for
    a source folder and its installed copy)."""
    paths = [code] if code.is_file() else sorted(code.rglob("*.py"))
    base = code.parent if code.is_file() else code
    files = {
        path.relative_to(base).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in paths
        if "__pycache__" not in path.parts
    }
    return canonical_hash(files)


def _code_of(entry: InstalledPack) -> Path | None:
    top = entry.target.split(":")[0].split(".")[0]
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(spec.origin) if spec.origin else None


def installed_digest(entry: InstalledPack) -> str | None:
    """Return :func:`package_digest` of the installed code of ``entry`` (its package, or its
    module; None: not found), found without importing it."""
    code = _code_of(entry)
    return None if code is None else package_digest(code)


def entry_of(entry: InstalledPack, source: str = "") -> AcceptedPack:
    """Return the list entry that accepts the installed pack ``entry`` as it is."""
    digest = installed_digest(entry)
    if digest is None:
        raise ValueError(f"pack {entry.name!r}: the package of {entry.target} is not found")
    return AcceptedPack(entry.name, entry.distribution, entry.version, digest, source)


def acceptance_problem(name: str, accepted: Mapping[str, AcceptedPack] | None = None) -> str | None:
    """Return why bundles of installed pack ``name`` may not be ranked (None: they may).

    A pack registered in this process (tests, a notebook) or shipped by the core distribution
    is accepted; any other needs its entry on the list, at the installed version and digest.
    """
    entry = installed().get(name)
    if entry is None or entry.distribution in ("", CORE_DISTRIBUTION):
        return None
    if accepted is None:
        try:
            accepted = load_accepted()
        except (OSError, ValueError, TypeError, KeyError) as exc:
            return f"the accepted list {accepted_file()} cannot be read ({exc})"
    listed = accepted.get(entry.name)
    source = f"{entry.distribution} {entry.version}"
    if listed is None:
        return f"pack {name!r} ({source}) is not on the accepted list; {HOW_TO_JOIN}"
    if (listed.distribution, listed.version) != (entry.distribution, entry.version):
        return (
            f"pack {name!r} is installed from {source}, the accepted list has "
            f"{listed.distribution} {listed.version}; install the accepted version "
            f"(python scripts/install_packs.py), or: {HOW_TO_JOIN}"
        )
    digest = installed_digest(entry)
    if digest != listed.digest:
        return (
            f"pack {name!r} ({source}) is installed with code of digest {digest}, the accepted "
            f"list has {listed.digest}: it is not the code that was accepted; install it with "
            f"python scripts/install_packs.py, or: {HOW_TO_JOIN}"
        )
    return None


def accepted_listing(root: Path) -> str:
    """Return the list of the packs shipped in ``root/packs/`` (one distribution per folder,
    read from its ``pyproject.toml``), as ``make generate`` writes it."""
    entries = []
    for project in sorted((root / "packs").glob("*/pyproject.toml")):
        meta = tomllib.loads(project.read_text(encoding="utf-8"))["project"]
        points = meta.get("entry-points", {}).get("effectbench.packs", {})
        for name, target in sorted(points.items()):
            top = project.parent / str(target).split(":")[0].split(".")[0]
            digest = package_digest(top if top.is_dir() else top.with_suffix(".py"))
            folder = project.parent.relative_to(root).as_posix()
            entries.append(AcceptedPack(name, meta["name"], meta["version"], digest, folder))
    document = {
        "note": "Generated by make generate from packs/*/pyproject.toml: the packs of other "
        "distributions whose bundles the board ranks (verifier/accepted.py)",
        "packs": [asdict(e) for e in entries],
    }
    return json.dumps(document, indent=2) + "\n"
