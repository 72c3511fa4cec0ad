"""The command line of one MCP episode server (for the MCP tests)."""

from __future__ import annotations

import sys
from pathlib import Path


def server_command(task: str, trial: int, record_dir: Path, *extra: str) -> list[str]:
    """``effectbench mcp`` for ``task`` and ``trial``, rows into ``record_dir``."""
    return [
        sys.executable,
        "-m",
        "effectbench.cli",
        "mcp",
        "--task",
        task,
        "--trial",
        str(trial),
        "--record-dir",
        str(record_dir),
        *extra,
    ]
