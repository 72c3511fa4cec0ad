"""The pull-request workflow's verification step, run for real on a scratch git history.

The step runs ``python -m verifier.pr`` from the base checkout; here it runs on a
scratch repository whose pull request adds bundles under hostile folder names
(spaces, quotes, globs, non-ASCII, a newline carrying a workflow command).
Every changed bundle must be verified whatever its name, every name quoted, and
no line of output may be a workflow command.
"""

from __future__ import annotations

import html
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from sigstore_testroot import GOOGLE, shared_instance
from support.bundles import list_references, make_bundle, read_submission, write_submission

from effectbench.signatures import sign_bundle
from verifier.pr import quoted

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "submissions"
WORKFLOW = ROOT / ".github" / "workflows" / "verify-pr.yml"
GOOD = "2026-12-01_screen-only-again"
HOSTILE = [
    "2026-12-01_with space",
    '2026-12-01_"quoted"',
    "2026-12-01_*",
    "2026-12-01_[ab]?",
    "2026-12-01_ünïcödé",
    "2026-12-01_x\n::error file=x::forged",
    "-rf",
]


def _doc() -> dict[str, object]:
    data = yaml.safe_load(WORKFLOW.read_text())
    assert isinstance(data, dict)
    return data


def _step_script() -> str:
    steps = _doc()["jobs"]["verify"]["steps"]  # type: ignore[index]
    (step,) = [s for s in steps if s.get("name") == "Verify changed bundles"]
    return str(step["run"])


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}  # fmt: skip
    done = subprocess.run(["git", "-C", str(repo), *args], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _pull_request(tmp: Path, change: str, names: tuple[str, ...] = (GOOD,)) -> tuple[Path, str]:
    """A checkout ``tmp/pr`` whose HEAD is a pull request on top of a base commit.

    The base moves on after the pull request branched (another bundle lands), so a
    diff against the base itself would wrongly include that bundle: the check must
    diff against the merge base.
    """
    pr = tmp / "pr"
    (pr / "submissions").mkdir(parents=True)
    shutil.copytree(
        REFERENCE / "2026-12-01_always-halt", pr / "submissions" / "2026-12-01_always-halt"
    )
    _git(pr, "init", "-q", "-b", "main")
    _git(pr, "add", "-A")
    _git(pr, "commit", "-qm", "base")
    _git(pr, "checkout", "-q", "-b", "pull-request")
    for name in names:
        new = pr / "submissions" / name
        shutil.copytree(REFERENCE / "2026-12-01_screen-only", new)
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
    _git(pr, "checkout", "-q", "main")
    shutil.copytree(REFERENCE / "2026-12-01_retry-on-error", pr / "submissions" / "2026-12-01_x")
    _git(pr, "add", "-A")
    _git(pr, "commit", "-qm", "base moves on")
    base = _git(pr, "rev-parse", "HEAD")
    _git(pr, "checkout", "-q", "pull-request")
    return pr, base


def _run_step(tmp: Path, base: str, extra: str = "") -> tuple[int, str, str]:
    """Run the workflow step's own script as the runner would; return status, summary, stdout."""
    summary = tmp / "summary.md"
    bin_dir = str(Path(sys.executable).parent)  # the python of this environment
    env = {**os.environ, "BASE": base, "GITHUB_STEP_SUMMARY": str(summary),
           "PATH": bin_dir + os.pathsep + os.environ["PATH"], "PYTHONPATH": str(ROOT)}  # fmt: skip
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", _step_script() + extra],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return done.returncode, summary.read_text(), done.stdout


def _no_workflow_commands(stdout: str) -> None:
    """Only the check's own stop-commands pair may look like a workflow command."""
    lines = stdout.splitlines()
    commands = [line for line in lines if line.startswith("::")]
    assert len(commands) == 2 and commands[0].startswith("::stop-commands::"), commands
    token = commands[0].removeprefix("::stop-commands::")
    assert commands[1] == f"::{token}::"


def test_a_good_bundle_passes_and_the_report_is_the_summary(tmp_path: Path) -> None:
    pr, base = _pull_request(tmp_path, "good")
    refs = list_references(tmp_path / "refs.json", [pr / "submissions" / GOOD])
    status, summary, stdout = _run_step(tmp_path, base, f" --references {refs}")
    assert status == 0, summary
    assert f"submissions/&quot;{GOOD}&quot; (bundle): RANKED" in summary
    assert "always-halt" not in summary  # only what the pull request adds or changes
    assert "2026-12-01_x" not in summary  # diffed against the merge base, not the base
    _no_workflow_commands(stdout)


def test_an_unsigned_copy_of_a_reference_bundle_fails(tmp_path: Path) -> None:
    _, base = _pull_request(tmp_path, "good")
    status, summary, _ = _run_step(tmp_path, base)
    assert status == 1
    assert "REFUSED" in summary and "signature.reproduced_unlisted" in summary


def test_a_tampered_bundle_fails_with_its_check_id(tmp_path: Path) -> None:
    _, base = _pull_request(tmp_path, "tampered")
    status, summary, _ = _run_step(tmp_path, base)
    assert status == 1
    assert "REFUSED" in summary and "rescore.outcome" in summary


def test_code_changes_in_a_submission_pull_request_fail_the_check(tmp_path: Path) -> None:
    _, base = _pull_request(tmp_path, "code")
    status, summary, _ = _run_step(tmp_path, base)
    assert status == 1
    assert "effectbench/classify.py" in summary and "outside a bundle folder" in summary


def _files(root: Path) -> dict[Path, bytes]:
    return {
        p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and ".git" not in p.parts
    }


def test_hostile_folder_names_are_each_verified_quoted_and_inert(tmp_path: Path) -> None:
    pr, base = _pull_request(tmp_path, "good", tuple(HOSTILE))
    refs = list_references(tmp_path / "refs.json", [pr / "submissions" / n for n in HOSTILE])
    before = _files(pr)
    status, summary, stdout = _run_step(tmp_path, base, f" --references {refs}")
    assert status == 1  # not one of them may pass silently: each breaks the folder rule
    for name in HOSTILE:
        assert f"<code>{html.escape(quoted(name))}</code>" in summary, (name, summary)
        assert quoted(name) in stdout
    assert "\n::error" not in summary and "\n::error" not in stdout
    assert summary.count("(bundle): REFUSED") == len(HOSTILE)
    assert summary.count("structure.folder_name") >= len(HOSTILE)
    assert "\n::" not in "\n" + summary
    _no_workflow_commands(stdout)
    assert _files(pr) == before  # the check reads, never writes


@pytest.mark.parametrize(
    "name", ["verify-pr.yml", "deploy-site.yml", "tests.yml", "packs.yml", "audit.yml"]
)
def test_every_workflow_pins_its_actions_keeps_no_credentials_and_has_time_limits(
    name: str,
) -> None:
    doc = yaml.safe_load((WORKFLOW.parent / name).read_text())
    for job_name, job in doc["jobs"].items():
        assert job["timeout-minutes"] <= 60, job_name
        for step in job["steps"]:
            uses = step.get("uses")
            if uses:
                ref = uses.partition("@")[2].split()[0]
                assert len(ref) == 40 and all(c in "0123456789abcdef" for c in ref), uses
            if uses and uses.startswith("actions/checkout"):
                assert step["with"]["persist-credentials"] is False


@pytest.mark.parametrize(
    ("name", "job", "mode"),
    [("verify-pr.yml", "verify", "screens"), ("deploy-site.yml", "reproduce", "screens"),
     ("deploy-site.yml", "build", "light")],
)  # fmt: skip
def test_the_workflows_install_through_the_one_locked_script(
    name: str, job: str, mode: str
) -> None:
    """Each job's install step is scripts/install-verifier (hash-locked; the screens mode
    installs .ci/apt-packages, the list make and .ci/run install); the deploy build is light."""
    steps = yaml.safe_load((WORKFLOW.parent / name).read_text())["jobs"][job]["steps"]
    (step,) = [s for s in steps if s.get("name") == "Install the locked dependencies"]
    assert f"bash scripts/install-verifier {mode} " in step["run"]
    script = (ROOT / "scripts" / "install-verifier").read_text()
    assert "--require-hashes" in script and "bash .ci/install-system-packages" in script


@pytest.mark.parametrize(
    ("lock", "extras"),
    [
        ("verify.txt", ("inspect", "export")),
        ("screens.txt", ("web", "desktop", "inspect", "export")),
    ],
)
def test_the_locks_pin_what_pyproject_asks(lock: str, extras: tuple[str, ...]) -> None:
    """Every dependency of the core (and of the extras a lock covers) is pinned, hashed, at
    a version its specifier admits; a stale pin (a moved bound in pyproject) fails here."""
    import tomllib

    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"]]
    for extra in extras:
        wanted += project["optional-dependencies"][extra]
    text = (ROOT / "requirements" / lock).read_text()
    pins = {}
    for line in text.splitlines():
        if line and line[0].isalnum() and "==" in line:
            pkg, _, version = line.split(" ")[0].partition("==")
            pins[pkg.lower().replace("_", "-")] = version
    assert text.count("--hash=sha256:") >= len(pins)
    for dep in wanted:
        req = Requirement(dep)
        pinned = pins.get(req.name.lower().replace("_", "-"))
        assert pinned is not None, f"{lock} does not pin {req.name}"
        assert req.specifier.contains(pinned, prereleases=True), (
            f"{lock}: {req.name}=={pinned} vs {req}"
        )
    if "web" not in extras:  # the light stack has no browser, X or PyGObject client
        assert not {"playwright", "pygobject", "python-xlib", "mcp"} & set(pins)


def _copy_pull_request(tmp: Path, base_bundle: Path, copy: Path) -> tuple[Path, str]:
    """A base commit holding ``base_bundle``; the pull request adds ``copy`` beside it."""
    pr = tmp / "pr"
    shutil.copytree(base_bundle, pr / "submissions" / base_bundle.name)
    _git(pr, "init", "-q", "-b", "main")
    _git(pr, "add", "-A")
    _git(pr, "commit", "-qm", "base")
    base = _git(pr, "rev-parse", "HEAD")
    _git(pr, "checkout", "-q", "-b", "pull-request")
    shutil.copytree(copy, pr / "submissions" / copy.name)
    _git(pr, "add", "-A")
    _git(pr, "commit", "-qm", "pull request")
    return pr, base


def _signed(source: Path, folder: Path, who: str, edit: bool) -> Path:
    """``source`` renamed to ``who``'s own system (one reason edited if asked), signed."""
    instance = shared_instance()
    shutil.copytree(source, folder)
    if edit:
        lines = (folder / "episodes.jsonl").read_text().splitlines()
        row = json.loads(lines[2])
        row["reason"] += " "
        lines[2] = json.dumps(row)
        (folder / "episodes.jsonl").write_text("\n".join(lines) + "\n")
    data = read_submission(folder)
    data["system"] = {"name": f"{who} agent", "description": "", "url": ""}
    data["signer"] = {"identity": who, "issuer": GOOGLE}
    write_submission(folder, data)
    token = instance.email_token(who)
    sign_bundle(folder, identity_token=token, trust_config=instance.trust_config_path)
    return folder


def _trust() -> str:
    return f" --trust-config {shared_instance().trust_config_path}"


def test_a_re_signed_copy_of_a_base_reference_fails_as_a_reference_copy(tmp_path: Path) -> None:
    """One space in one reason and a new signer: the copy measured what the reference did."""
    source = REFERENCE / "2026-12-01_always-halt"
    copy = _signed(source, tmp_path / "made" / "2026-12-08_mallory", "mallory@example.org", True)
    _, base = _copy_pull_request(tmp_path, source, copy)
    status, summary, stdout = _run_step(tmp_path, base, _trust())
    assert status == 1, summary
    assert "REFUSED" in summary and "ranking.reference_copy" in summary
    _no_workflow_commands(stdout)


def test_a_pull_request_is_ranked_against_the_base_branchs_bundles(tmp_path: Path) -> None:
    """A signed entry already on the base; the pull request re-signs its rows as another's."""
    made = make_bundle(
        tmp_path / "made" / "run", "retry_on_error", trials=4, declare_baseline=False
    )
    alice = _signed(made, tmp_path / "made" / "2026-12-01_alice", "alice@example.org", False)
    copy = _signed(alice, tmp_path / "made" / "2026-12-09_mallory", "mallory@example.org", False)
    _, base = _copy_pull_request(tmp_path, alice, copy)
    status, summary, _ = _run_step(tmp_path, base, _trust())
    assert status == 1, summary
    assert "ranking.duplicate" in summary and "2026-12-01_alice" in summary


def test_the_base_branchs_bundles_rank_the_pull_request_without_a_re_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Alice's signed bundle claiming a shipped baseline is on the base; Mallory re-signs its
    rows. Only Mallory's bundle is re-run: Alice's counts by its hashes and signing time."""
    import verifier.reproduce
    from verifier.pr import main as pr_main

    instance = shared_instance()
    bundles: dict[str, Path] = {}
    for who, day in (("alice", "01"), ("mallory", "09")):
        folder = tmp_path / "made" / f"2026-12-{day}_{who}"
        if not bundles:
            make_bundle(folder, "retry_on_error", trials=4, signer=(f"{who}@example.org", GOOGLE))
        else:
            shutil.copytree(bundles["alice"], folder)
            (folder / "submission.sigstore.json").unlink()
            data = read_submission(folder)
            data["signer"] = {"identity": f"{who}@example.org", "issuer": GOOGLE}
            write_submission(folder, data)
        token = instance.email_token(f"{who}@example.org")
        sign_bundle(folder, identity_token=token, trust_config=instance.trust_config_path)
        bundles[who] = folder
    pr, base = _copy_pull_request(tmp_path, bundles["alice"], bundles["mallory"])
    rerun = verifier.reproduce.reproduce
    seen: list[str] = []

    def counted(header: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(str(header.signer.identity))
        return rerun(header, *args, **kwargs)

    monkeypatch.setattr(verifier.reproduce, "reproduce", counted)
    monkeypatch.chdir(tmp_path)  # no reproductions/ here: the base's bundle has no record
    args = ["--base", base, "--checkout", str(pr), "--trust-config"]
    assert pr_main([*args, str(instance.trust_config_path)]) == 1
    out = capsys.readouterr().out
    assert "ranking.duplicate" in out and "2026-12-01_alice" in out
    assert "re-ran 'retry_on_error': all 36 rows identical" in out  # Mallory's, re-run
    assert seen == ["mallory@example.org"]
