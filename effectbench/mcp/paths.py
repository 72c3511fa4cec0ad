"""Where an MCP episode's attempts go (shared by the server that writes them and the reader)."""

from __future__ import annotations

import re
from pathlib import Path


def safe_name(task_id: str) -> str:
    """Return ``task_id`` as a file name's part (anything but ``A-Za-z0-9_.@-`` as ``_``)."""
    return re.sub(r"[^A-Za-z0-9_.@-]+", "_", task_id)


def record_path(record_dir: Path, task_id: str, trial: int, attempt: int = 1) -> Path:
    """Where attempt ``attempt`` at ``task_id`` trial ``trial`` is kept."""
    return record_dir / f"{safe_name(task_id)}__t{trial}__a{attempt}.json"
