"""A stand-in for the OpenAI client (tests only): the session ``$EFFECTBENCH_REPLAY`` names."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples"))
from agent_kit import Replay, load_trace  # noqa: E402


class OpenAI:
    """``client.responses.create(**request)`` answers with the recorded turns."""

    def __init__(self, **options: Any) -> None:
        self._replay = Replay(load_trace(os.environ["EFFECTBENCH_REPLAY"]))
        self.responses = SimpleNamespace(create=self._create)

    def _create(self, **request: Any) -> dict[str, Any]:
        return self._replay.next_turn(request)
