"""Where an MCP episode's record goes (shared by the server that writes it and the reader)."""

from __future__ import annotations

import re
from pathlib import Path


def _safe(task_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.@-]+", "_", task_id)


def record_path(record_dir: Path, task_id: str, trial: int) -> Path:
    """Where an MCP episode's row is written."""
    return record_dir / f"{_safe(task_id)}__t{trial}.json"
