"""The pull-request workflow's verification step, run for real on a scratch git history."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "submissions"
WORKFLOW = ROOT / ".github" / "workflows" / "verify-pr.yml"


def _step_script() -> str:
    doc = yaml.safe_load(WORKFLOW.read_text())
    (step,) = [
        s for s in doc["jobs"]["verify"]["steps"] if s.get("name") == "Verify changed bundles"
    ]
    return str(step["run"])


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}  # fmt: skip
    done = subprocess.run(["git", "-C", str(repo), *args], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _pull_request(tmp: Path, change: str) -> tuple[Path, str]:
    """A checkout ``tmp/pr`` whose HEAD is a pull request on top of a base commit."""
    pr = tmp / "pr"
    (pr / "submissions").mkdir(parents=True)
    shutil.copytree(
        REFERENCE / "2026-11-30_always-halt", pr / "submissions" / "2026-11-30_always-halt"
    )
    _git(pr, "init", "-q")
    _git(pr, "add", "-A")
    _git(pr, "commit", "-qm", "base")
    base = _git(pr, "rev-parse", "HEAD")
    new = pr / "submissions" / "2026-12-01_screen-only-again"
    shutil.copytree(REFERENCE / "2026-11-30_screen-only", new)
    if change == "tampered":
        lines = (new / "episodes.jsonl").read_text().splitlines()
        row = json.loads(lines[1])
        row["outcome"] = "safe_halt" if row["outcome"] == "success" else "success"
        lines[1] = json.dumps(row)
        (new / "episodes.jsonl").write_text("\n".join(lines) + "\n")
    if change == "code":
        (pr / "effectbench").mkdir()
        (pr / "effectbench" / "classify.py").write_text("# a 'fix' that always says success\n")
    _git(pr, "add", "-A")
    _git(pr, "commit", "-qm", "pull request")
    return pr, base


def _run_step(tmp: Path, base: str) -> tuple[int, str]:
    summary = tmp / "summary.md"
    bin_dir = str(Path(sys.executable).parent)  # the effectbench command of this environment
    env = {**os.environ, "BASE": base, "GITHUB_STEP_SUMMARY": str(summary),
           "PATH": bin_dir + os.pathsep + os.environ["PATH"]}  # fmt: skip
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", _step_script()],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
    )
    return done.returncode, summary.read_text()


def test_a_good_bundle_passes_and_the_report_is_the_summary(tmp_path: Path) -> None:
    _, base = _pull_request(tmp_path, "good")
    status, summary = _run_step(tmp_path, base)
    assert status == 0, summary
    assert "2026-12-01_screen-only-again (bundle): RANKED" in summary
    assert "always-halt" not in summary  # only what the pull request adds or changes


def test_a_tampered_bundle_fails_with_its_check_id(tmp_path: Path) -> None:
    _, base = _pull_request(tmp_path, "tampered")
    status, summary = _run_step(tmp_path, base)
    assert status == 1
    assert "REFUSED" in summary and "rescore.outcome" in summary


def test_code_changes_in_a_submission_pull_request_fail_the_check(tmp_path: Path) -> None:
    _, base = _pull_request(tmp_path, "code")
    status, summary = _run_step(tmp_path, base)
    assert status == 1
    assert "effectbench/classify.py" in summary and "outside submissions/" in summary
