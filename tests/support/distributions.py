"""Installed distributions as pip leaves them, without pip: modules and a dist-info folder.

A folder on ``PYTHONPATH`` holding ``NAME-VERSION.dist-info`` (``METADATA``, ``entry_points.txt``
and, when given, ``RECORD``) is what :mod:`importlib.metadata` reads for an installed
distribution; the tests make third-party packs (working, broken, rival) this way in a temporary
folder and run the command line in a subprocess with it on the path.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from pathlib import Path

from effectbench.packs import ENTRY_POINT_GROUP


def install(
    site: Path,
    name: str,
    version: str,
    modules: Mapping[str, str],
    packs: Mapping[str, str],
    *,
    record: bool = False,
) -> Path:
    """Leave distribution ``name`` ``version`` in ``site``: ``modules`` (file name -> source)
    and the packs it declares (pack name -> ``module:attribute``); with ``record`` also the
    ``RECORD`` file listing every file with its hash. Return the dist-info folder."""
    for file, source in modules.items():
        (site / file).write_text(source, encoding="utf-8")
    info = site / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    points = "".join(f"{pack} = {target}\n" for pack, target in packs.items())
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{points}")
    if record:
        lines = []
        for path in [*(site / f for f in modules), info / "METADATA", info / "entry_points.txt"]:
            digest = base64.urlsafe_b64encode(hashlib.sha256(path.read_bytes()).digest())
            sha = digest.rstrip(b"=").decode()
            lines.append(f"{path.relative_to(site).as_posix()},sha256={sha},{path.stat().st_size}")
        lines.append(f"{name}-{version}.dist-info/RECORD,,")
        (info / "RECORD").write_text("\n".join(lines) + "\n")
    return info
