"""Where an MCP episode's attempts go (shared by the server that writes them and the reader).

An attempt's file is named by whose it is, which cell and which attempt:
``<system>~<task>__t<trial>__a<n>.json``, the system as its slug
(:func:`effectbench.bundle.slugify`), so two systems recorded into one folder
each keep their own attempts. Files written before records were keyed by system
have no ``<system>~`` part; they are still read.
"""

from __future__ import annotations

import re
from pathlib import Path

from effectbench.bundle import slugify

RECORD_NAME = re.compile(
    r"^(?:(?P<system>[a-z0-9_-]+)~)?(?P<task>[^~]+)__t(?P<trial>[0-9]+)"
    r"(?:__a(?P<attempt>[0-9]+))?\.json$"
)
"""An attempt's file name (without ``__a<n>``, written before attempts were kept, it is
attempt 1; without ``<system>~``, written before records were keyed by system)."""


def safe_name(task_id: str) -> str:
    """Return ``task_id`` as a file name's part (anything but ``A-Za-z0-9_.@-`` as ``_``)."""
    return re.sub(r"[^A-Za-z0-9_.@-]+", "_", task_id)


def system_part(system: str) -> str:
    """Return the part of a file name that says whose attempt it is."""
    return slugify(system)


def record_path(record_dir: Path, system: str, task_id: str, trial: int, attempt: int = 1) -> Path:
    """Where ``system``'s attempt ``attempt`` at ``task_id`` trial ``trial`` is kept."""
    return record_dir / f"{system_part(system)}~{safe_name(task_id)}__t{trial}__a{attempt}.json"
