"""Attacks on an episode as a second local user would make them (uid 65534).

:func:`attack` runs :mod:`.second_user_attacks` (a standard-library script) as root,
which switches to uid and gid 65534 before it touches anything of the
episode. The suite runs as root in CI (fresh Debian containers); anywhere
else the switch fails and the test fails saying so: never a skip.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SCRIPT = Path(__file__).with_name("second_user_attacks.py")
NOBODY = 65534
TIMEOUT_S = 60.0


def attack(*attacks: dict[str, Any]) -> list[dict[str, Any]]:
    """Run ``attacks`` as uid 65534 and return one result per attack, in order."""
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(SCRIPT)],
        input=json.dumps(list(attacks)),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
        cwd="/",
        check=False,
    )
    if done.returncode == 3:
        pytest.fail(
            "these tests attack an episode as a second local user, which needs root to switch "
            f"to uid {NOBODY} (CI runs the suite as root): {done.stderr.strip()}",
            pytrace=False,
        )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["uid"] == NOBODY
    results: list[dict[str, Any]] = report["results"]
    return results
