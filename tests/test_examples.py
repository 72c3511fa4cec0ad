"""The example system under test runs from the command line the way docs/using.md says."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def effectbench(*argv: str) -> subprocess.CompletedProcess[str]:
    """Run the command line from the repository root, as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "effectbench.cli", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_careful_agent_runs_by_module_path() -> None:
    proc = effectbench(
        "run", "--sut", "examples.careful_agent:CarefulAgent", "--trials", "2", "--json"
    )
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert res["arm"] == "careful_agent"
    assert (res["swer"]["numerator"], res["over_halt"]["numerator"]) == (0, 0)
    assert res["outcome_counts"] == {"success": 6, "wrong_action": 8, "safe_halt": 4}


def test_the_careful_agent_submits_a_bundle_the_verifier_previews(tmp_path: Path) -> None:
    sut = "examples.careful_agent:CarefulAgent"
    proc = effectbench(
        "submit", "--sut", sut, "--trials", "3", "--name", "Careful", "--out", str(tmp_path)
    )
    assert proc.returncode == 0, proc.stderr
    (bundle,) = tmp_path.iterdir()
    refused = effectbench("verify", str(bundle))
    assert refused.returncode == 1 and "signature.missing" in refused.stdout  # unsigned: not ranked
    preview = effectbench("verify", "--allow-unsigned", "--json", str(bundle))
    assert preview.returncode == 0, preview.stdout
    (report,) = json.loads(preview.stdout)
    assert report["status"] == "preview"
