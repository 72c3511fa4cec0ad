"""Shared fixtures: the reference vectors beside the checkout (read in place)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
VECTORS = SHARED / "vectors"


@pytest.fixture(scope="session")
def vectors_dir() -> Path:
    """The reference implementation's test vectors; skip (saying why) without ../shared."""
    if not VECTORS.is_dir():
        pytest.skip(f"reference vectors not present at {VECTORS} (../shared is absent)")
    return VECTORS


@pytest.fixture(scope="session")
def upstream_docs(vectors_dir: Path) -> dict[str, dict[str, Any]]:
    """Both upstream submission documents, by arm."""
    docs = {}
    for arm in ("screen_only", "effect_verified"):
        docs[arm] = json.loads((vectors_dir / f"upstream-{arm}-t3.json").read_text())
    return docs
