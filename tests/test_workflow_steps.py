"""The workflows' own install and verify steps, run as their YAML has them, in clean venvs.

Each step's ``run`` script is read from ``.github/workflows/*.yml`` and run with bash as
the runner runs it (``bash --noprofile --norc -eo pipefail``), in a copy of the working
tree (what ``actions/checkout`` gives), with the step's own ``env`` (``VERIFIER``, the
screens venv's folder, pointed into the test's temporary folder), ``${{ }}`` expressions
given their values, and ``$GITHUB_PATH`` honoured between steps. Nothing here re-types a
command. One clean virtual environment is made per module, of this test's Python: the
deploy build job's (``actions/setup-python`` then the ``light`` install); once the light
tests are done, verify-pr's ``screens`` install (identical in deploy-site's reproduce job)
runs into it, adding the screen packages to the same locked pins (see :func:`screens`).

The light one builds the shipped ``submissions/`` from the reproduction records with no
Chromium and no X server: neither is reachable on its PATH (every other program of the
machine's PATH is) and its Python holds no Playwright or PyGObject. Every shipped bundle
must be ranked; with one record removed, ``make site``'s command names that bundle and
``make reproduce``. The screens one verifies a sample pull request (a signed bundle that
claims a shipped baseline, re-run row for row, ranked against the shipped bundles, which
are judged by their records and never re-run) and runs the reproduce job, which keeps
every listed record.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from sigstore_testroot import GOOGLE, shared_instance
from support.bundles import make_bundle

from effectbench.signatures import sign_bundle
from verifier.references import bundle_content_hash

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"
REPOSITORY = "board/effectbench"
HIDDEN = re.compile(r"^(chromium.*|chrome.*|google-chrome.*|X.*|xvfb.*)$")
"""Programs the light steps must not see: the browser and the X servers."""
ALICE = "alice@example.org"
BUILD_STEP = "Verify every bundle from its record and build the site"
REPRODUCE_STEP = "Re-run and record the bundles without a valid record"
PYTHON = Path(getattr(sys, "_base_executable", sys.executable))
"""This test's Python outside its virtual environment (what the clean venvs are made of)."""
SPENT: dict[str, float] = {}
"""Seconds each phase took (printed at the end of the module: pytest -s)."""


def _step(workflow: str, job: str, name: str) -> dict[str, Any]:
    doc = yaml.safe_load((WORKFLOWS / workflow).read_text(encoding="utf-8"))
    (step,) = [s for s in doc["jobs"][job]["steps"] if s.get("name") == name]
    return dict(step)


def _expand(text: str, values: Mapping[str, str]) -> str:
    """``text`` with each ``${{ expression }}`` replaced by its value (unknown: an error)."""

    def value(match: re.Match[str]) -> str:
        expression = match.group(1).strip()
        assert expression in values, f"no value for ${{{{ {expression} }}}}"
        return values[expression]

    return re.sub(r"\$\{\{(.*?)\}\}", value, text)


@dataclass
class Runner:
    """Runs steps as the GitHub runner does, in ``workspace`` (the checkout)."""

    workspace: Path
    path: list[str]
    """The PATH the steps see (``$GITHUB_PATH`` lines are put in front, step by step)."""
    env: dict[str, str]
    scratch: Path

    def run(
        self,
        step: Mapping[str, Any],
        *,
        overrides: Mapping[str, str] | None = None,
        values: Mapping[str, str] | None = None,
        extra: str = "",
        cwd: Path | None = None,
        phase: str = "",
    ) -> subprocess.CompletedProcess[str]:
        github_path = self.scratch / "github_path"
        github_path.write_text("")
        step_env = {k: _expand(str(v), values or {}) for k, v in (step.get("env") or {}).items()}
        env = {**self.env, **step_env, **(overrides or {})}
        env |= {"PATH": os.pathsep.join(self.path), "GITHUB_PATH": str(github_path)}
        env["GITHUB_STEP_SUMMARY"] = str(self.scratch / "summary.md")
        script = _expand(str(step["run"]), values or {}) + extra
        started = time.monotonic()
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
            cwd=cwd or self.workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
        )
        if phase:
            SPENT[phase] = SPENT.get(phase, 0.0) + time.monotonic() - started
        added = [line for line in github_path.read_text().splitlines() if line]
        self.path[:0] = reversed(added)
        return done


def _checkout(into: Path) -> Path:
    """Copy the working tree as a checkout of it: tracked and new files, nothing ignored."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "-c", "-o", "--exclude-standard"],
        capture_output=True,
        check=True,
    ).stdout
    for name in sorted({os.fsdecode(n) for n in listed.split(b"\0") if n}):
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return into


def _system_tools(into: Path) -> Path:
    """A folder of links to every program on this machine's PATH but the browser and the X
    servers, and but this test's own virtual environment."""
    into.mkdir()
    own = Path(sys.prefix).resolve()
    for folder in os.environ["PATH"].split(os.pathsep):
        base = Path(folder)
        if not base.is_dir() or own in base.resolve().parents or base.resolve() == own:
            continue
        for program in base.iterdir():
            link = into / program.name
            if HIDDEN.match(program.name) or link.exists() or link.is_symlink():
                continue
            if program.is_file() and os.access(program, os.X_OK):
                link.symlink_to(program)
    for name in ("python3", "python"):
        (into / name).unlink(missing_ok=True)
        (into / name).symlink_to(PYTHON)
    return into


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("workflow")
    started = time.monotonic()
    _checkout(root / "checkout")
    _system_tools(root / "tools")
    SPENT["checkout copy"] = time.monotonic() - started
    yield root
    print("\nworkflow steps, seconds:", {k: round(v, 1) for k, v in SPENT.items()})


def _runner(root: Path, *path: Path) -> Runner:
    env = {
        "HOME": os.environ.get("HOME", str(root)),
        "LANG": "C.UTF-8",
        "GITHUB_REPOSITORY": REPOSITORY,
        "GITHUB_ACTIONS": "true",
        "CI": "true",
        "EFFECTBENCH_CHROMIUM": str(root / "no-chromium"),  # nor Debian's default path
    }
    for name in ("PIP_FIND_LINKS", "PIP_CERT", "PIP_DEFAULT_TIMEOUT"):
        if name in os.environ:  # this machine's pip set-up
            env[name] = os.environ[name]
    # the packs' audits the test run already made (conftest), keyed by the source the checkout
    # copy holds byte for byte: a step probes a pack only when no process of the run did
    if "EFFECTBENCH_AUDIT_CACHE" in os.environ:
        env["EFFECTBENCH_AUDIT_CACHE"] = os.environ["EFFECTBENCH_AUDIT_CACHE"]
    # pip's own cache (a PyGObject wheel built once is reused); every other cache but the
    # audits' is the test's
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    env["PIP_CACHE_DIR"] = os.environ.get("PIP_CACHE_DIR") or str(cache / "pip")
    env["XDG_CACHE_HOME"] = str(root / "cache")
    scratch = root / "scratch"
    scratch.mkdir(exist_ok=True)
    return Runner(root / "checkout", [str(p) for p in path], env, scratch)


@pytest.fixture(scope="module")
def light(workspace: Path) -> Runner:
    """deploy-site's build job: actions/setup-python (a clean venv on PATH), then its install."""
    setup_python = workspace / "setup-python"
    subprocess.run([str(PYTHON), "-m", "venv", str(setup_python)], check=True)
    runner = _runner(workspace, setup_python / "bin", workspace / "tools")
    step = _step("deploy-site.yml", "build", "Install the locked dependencies")
    done = runner.run(step, phase="light install")
    assert done.returncode == 0, done.stderr[-3000:]
    return runner


def _pins(lock: str) -> dict[str, str]:
    """A lock's pins: each ``name==version`` line with its hashes."""
    text = (ROOT / "requirements" / lock).read_text(encoding="utf-8")
    return {
        block.split("==", 1)[0].lower(): block
        for block in re.split(r"\n(?=[A-Za-z0-9])", text)
        if re.match(r"^[A-Za-z0-9_.-]+==", block)
    }


@pytest.fixture(scope="module")
def screens(workspace: Path, light: Runner) -> Runner:
    """verify-pr's (and deploy-site's reproduce job's) install of the screen stack.

    Run into the light venv, once the light tests are done with it: every light pin is a
    screens pin (same version, same hashes: asserted), so pip finds those installed by the
    same locked step and adds the seven screen packages, and the venv ends as a clean
    screens install would (a second clean install of the same 64 wheels tests nothing more
    and costs about two minutes).
    """
    light_pins, screen_pins = _pins("verify.txt"), _pins("screens.txt")
    assert {name: screen_pins.get(name) for name in light_pins} == light_pins
    runner = _runner(workspace, workspace / "tools")
    step = _step("verify-pr.yml", "verify", "Install the locked dependencies")
    same = _step("deploy-site.yml", "reproduce", "Install the locked dependencies")
    assert step == same  # one install for both jobs, so it is run once here
    verifier = Path(light.path[0]).parent
    done = runner.run(step, overrides={"VERIFIER": str(verifier)}, phase="screens install")
    assert done.returncode == 0, done.stderr[-3000:]
    assert runner.path[0] == str(verifier / "bin")  # $GITHUB_PATH put it first
    return runner


def _imports(runner: Runner, code: str) -> subprocess.CompletedProcess[str]:
    python = shutil.which("python", path=os.pathsep.join(runner.path))
    assert python is not None
    return subprocess.run([python, "-c", code], capture_output=True, text=True, check=False)


def _bundles(checkout: Path) -> list[str]:
    return sorted(p.name for p in (checkout / "submissions").iterdir() if p.is_dir())


def test_the_deploy_build_job_ranks_every_shipped_bundle_without_a_browser_or_x_server(
    light: Runner,
) -> None:
    path = os.pathsep.join(light.path)
    assert all(shutil.which(p, path=path) is None for p in ("chromium", "Xvfb", "Xvnc"))
    assert _imports(light, "import playwright").returncode != 0
    assert _imports(light, "import gi").returncode != 0
    step = _step("deploy-site.yml", "build", BUILD_STEP)
    done = light.run(step, phase="deploy build (every shipped bundle, --fresh)")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    shipped = _bundles(light.workspace)
    assert f"bundles {len(shipped)}: ranked {len(shipped)}, preview 0, refused 0" in done.stdout
    assert "make reproduce" not in done.stdout
    pages = light.workspace / "public" / "submissions"
    assert {p.stem for p in pages.glob("*.html")} >= set(shipped)


def _make_site_command(checkout: Path, venv: Path) -> str:
    """The command ``make site`` runs once its set-up is done (read from the Makefile)."""
    done = subprocess.run(
        ["make", "-s", "-n", "site", f"VENV={venv}"],
        cwd=checkout,
        capture_output=True,
        text=True,
        check=True,
    )
    setup, command = done.stdout.strip().splitlines()
    assert "scripts/setup-venv site" in setup  # the light install already gave it more
    return command


def test_make_site_names_the_bundle_whose_record_was_removed(light: Runner) -> None:
    """A clone of the checkout holding two shipped bundles, one without its record."""
    assert _imports(light, "import playwright").returncode != 0  # still the light stack
    clone = light.scratch / "clone"
    shutil.copytree(light.workspace, clone, ignore=shutil.ignore_patterns("public", "pr"))
    keep = {"2026-12-01_always-halt", "2026-12-01_screen-only-clinic-web"}
    for folder in (clone / "submissions").iterdir():
        if folder.name not in keep:
            shutil.rmtree(folder)
    web = clone / "submissions" / "2026-12-01_screen-only-clinic-web"
    record = clone / "reproductions" / f"{bundle_content_hash(web)[7:]}.reproduction.json"
    record.unlink()
    venv = Path(light.path[0]).parent
    command = _make_site_command(clone, venv)
    done = light.run({"run": command}, cwd=clone, phase="make site (2 bundles)")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "bundles 2: ranked 1, preview 0, refused 1" in done.stdout
    (note,) = [line for line in done.stdout.splitlines() if "make reproduce" in line]
    assert web.name in note and "always-halt" not in note


def _pull_request(checkout: Path) -> str:
    """``checkout/pr``: the shipped submissions at the base; the pull request adds Alice's
    signed bundle claiming the ``retry_on_error`` baseline (re-run row for row)."""
    pr = checkout / "pr"
    shutil.copytree(checkout / "submissions", pr / "submissions")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}  # fmt: skip

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(pr), *args], env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-qm", "base")
    base = git("rev-parse", "HEAD")
    git("checkout", "-q", "-b", "pull-request")
    folder = make_bundle(
        pr / "submissions" / "2026-12-08_alice-retry", "retry_on_error", trials=4,
        signer=(ALICE, GOOGLE),
    )  # fmt: skip
    instance = shared_instance()
    token = instance.email_token(ALICE)
    sign_bundle(folder, identity_token=token, trust_config=instance.trust_config_path)
    git("add", "-A")
    git("commit", "-qm", "pull request")
    return base


def test_the_verify_pr_job_verifies_a_sample_pull_request(screens: Runner) -> None:
    assert (
        _imports(screens, "import playwright, gi; gi.require_version('Gtk', '3.0')").returncode == 0
    )
    base = _pull_request(screens.workspace)
    step = _step("verify-pr.yml", "verify", "Verify changed bundles")
    values = {"github.event.pull_request.base.sha": base}
    trust = f" --trust-config {shared_instance().trust_config_path}"  # the tests' Sigstore
    done = screens.run(step, values=values, extra=trust, phase="verify-pr check")
    summary = (screens.scratch / "summary.md").read_text()
    assert done.returncode == 0, summary + done.stderr[-3000:]
    assert "2026-12-08_alice-retry&quot; (bundle): RANKED" in summary
    assert "re-ran 'retry_on_error': all 36 rows identical" in done.stdout
    assert "2026-12-01_" not in summary  # the shipped bundles rank it, unreported, not re-run


def test_the_deploy_reproduce_job_keeps_every_listed_record(screens: Runner) -> None:
    step = _step("deploy-site.yml", "reproduce", REPRODUCE_STEP)
    done = screens.run(step, phase="deploy reproduce")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    shipped = _bundles(screens.workspace)
    assert f"recorded 0, kept {len(shipped)}, could not re-run 0" in done.stdout
