"""The workflows' steps run as the GitHub runner runs them, and the deploy job's build.

A step's ``run`` script is read from ``.github/workflows/*.yml`` and run with bash as the
runner runs it (``bash --noprofile --norc -eo pipefail``), in a copy of the working tree
(what ``actions/checkout`` gives), with the step's own ``env``, ``${{ }}`` expressions given
their values, and ``$GITHUB_PATH`` honoured between steps. Nothing here re-types a command.

:func:`deploy_build` is the deploy job's build of every shipped bundle in its light venv (no
Chromium, no X server on its PATH), made once per test run: ``test_workflow_steps`` checks
the job, and ``test_shipped_site`` reads the site it published (the site the board serves),
so the shipped site is built once, not twice.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
REPOSITORY = "board/effectbench"
HIDDEN = re.compile(r"^(chromium.*|chrome.*|google-chrome.*|X.*|xvfb.*)$")
"""Programs the light steps must not see: the browser and the X servers."""
BUILD_STEP = "Verify every bundle from its record and build the site"
REPRODUCE_STEP = "Re-run and record the bundles without a valid record"
PYTHON = Path(getattr(sys, "_base_executable", sys.executable))
"""This test's Python outside its virtual environment (what the clean venvs are made of)."""
SPENT: dict[str, float] = {}
"""Seconds each phase took (conftest prints them when the workspace is removed: pytest -s)."""


def step(workflow: str, job: str, name: str) -> dict[str, Any]:
    """The step ``name`` of ``job`` in ``workflow``, as its YAML has it."""
    doc = yaml.safe_load((WORKFLOWS / workflow).read_text(encoding="utf-8"))
    (found,) = [s for s in doc["jobs"][job]["steps"] if s.get("name") == name]
    return dict(found)


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


def workspace(root: Path) -> Path:
    """Fill ``root``: the checkout copy (``checkout/``) and the light PATH (``tools/``)."""
    started = time.monotonic()
    _checkout(root / "checkout")
    _system_tools(root / "tools")
    SPENT["checkout copy"] = time.monotonic() - started
    return root


def runner(root: Path, *path: Path) -> Runner:
    """A runner in ``root``'s checkout whose steps see ``path`` as their PATH."""
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


def light(root: Path) -> Runner:
    """deploy-site's build job: actions/setup-python (a clean venv on PATH), then its install."""
    setup_python = root / "setup-python"
    subprocess.run([str(PYTHON), "-m", "venv", str(setup_python)], check=True)
    made = runner(root, setup_python / "bin", root / "tools")
    install = step("deploy-site.yml", "build", "Install the locked dependencies")
    done = made.run(install, phase="light install")
    assert done.returncode == 0, done.stderr[-3000:]
    return made


def imports(runner: Runner, code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` with the Python the runner's steps find first on their PATH."""
    python = shutil.which("python", path=os.pathsep.join(runner.path))
    assert python is not None
    return subprocess.run([python, "-c", code], capture_output=True, text=True, check=False)


@dataclass(frozen=True)
class DeployBuild:
    """The deploy job's build step, run once in the light venv: what the build could reach,
    its output and the site."""

    reachable: tuple[str, ...]
    """The browser and X server programs on the build's PATH (none, for a light build)."""
    importable: tuple[str, ...]
    """Which of Playwright and PyGObject the build's Python could import (none either)."""
    done: subprocess.CompletedProcess[str]
    public: Path
    """The site it published (``public/`` of the checkout)."""


def deploy_build(light: Runner) -> DeployBuild:
    """Run the deploy job's build of every shipped bundle (``site build --fresh``), noting
    first what of the screen stack the light venv reaches."""
    path = os.pathsep.join(light.path)
    reachable = tuple(p for p in ("chromium", "Xvfb", "Xvnc") if shutil.which(p, path=path))
    importable = tuple(
        m for m in ("playwright", "gi") if imports(light, f"import {m}").returncode == 0
    )
    done = light.run(
        step("deploy-site.yml", "build", BUILD_STEP),
        phase="deploy build (every shipped bundle, --fresh)",
    )
    return DeployBuild(reachable, importable, done, light.workspace / "public")
