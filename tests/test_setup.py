"""The set-up a newcomer meets: the venv check of ``scripts/setup-venv`` and the test groups."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SETUP = ROOT / "scripts" / "setup-venv"


def _fake_python(path: Path, version: str) -> Path:
    """An executable that answers the version probe like a Python ``version`` would."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho {version}\n")
    path.chmod(0o755)
    return path


def _check(py: str | Path, venv: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SETUP), "check", str(py), str(venv)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_python_older_than_3_11_is_refused_naming_the_version_needed(tmp_path: Path) -> None:
    old = _fake_python(tmp_path / "python3.10", "3.10")
    done = _check(old, tmp_path / "venv")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"setup: {old} is Python 3.10; EffectBench needs Python 3.11 or newer "
        "(run e.g. make PY=python3.11 ...)"
    ]
    assert not (tmp_path / "venv").exists()


def test_a_missing_python_is_one_line(tmp_path: Path) -> None:
    done = _check(tmp_path / "no-such-python", tmp_path / "venv")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert "not found; EffectBench needs Python 3.11 or newer" in done.stderr


def test_a_venv_made_by_another_python_is_rebuilt(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    _fake_python(venv / "bin" / "python", "3.10")
    done = _check(sys.executable, venv)
    assert done.returncode == 1
    assert "would be rebuilt: it was made by Python 3.10" in done.stdout
    assert (venv / "bin" / "python").is_file()  # check mode never touches it


def test_a_broken_venv_is_rebuilt(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    done = _check(sys.executable, venv)
    assert done.returncode == 1
    assert "would be rebuilt: it is broken" in done.stdout


@pytest.mark.slow
def test_a_working_venv_of_the_same_python_is_kept(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    done = _check(sys.executable, venv)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "is a working environment of Python" in done.stdout


def test_browser_tests_without_chromium_stop_with_one_line() -> None:
    env = {**os.environ, "EFFECTBENCH_CHROMIUM": "/nonexistent/chromium"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "tests/test_site_browser.py"],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in (done.stdout + done.stderr).splitlines() if "ERROR" in line]
    assert len(errors) == 1
    assert "browser tests need Chromium: Chromium is missing: " in errors[0]
    assert "EFFECTBENCH_CHROMIUM=/nonexistent/chromium is not an executable file" in errors[0]
    assert "Traceback" not in done.stdout + done.stderr


def test_the_runtime_and_the_tests_find_chromium_in_one_place(tmp_path: Path) -> None:
    """The web substrate honours EFFECTBENCH_CHROMIUM too: a missing binary is one line
    when the front end is made, before any episode (never an infrastructure drop)."""
    env = {**os.environ, "EFFECTBENCH_CHROMIUM": str(tmp_path / "no-chromium")}
    done = subprocess.run(
        [sys.executable, "-m", "effectbench.cli", "run", "--pack", "clinic", "--substrate", "web",
         "--baseline", "screen_only", "--trials", "1", "--progress", "off"],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.splitlines() == [
        f"effectbench: Chromium is missing: EFFECTBENCH_CHROMIUM={tmp_path / 'no-chromium'} "
        "is not an executable file (point it at a Chromium binary, or unset it to use "
        "/usr/bin/chromium)"
    ]


def _make_recipe(target: str) -> list[str]:
    """Return the command lines of ``target``'s recipe in the Makefile."""
    lines = (ROOT / "Makefile").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{target}:"))
    recipe = []
    for line in lines[start + 1 :]:
        if not line.startswith("\t"):
            break
        recipe.append(line.strip())
    return recipe


def test_pre_commit_runs_the_linters_of_make_lint() -> None:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    hooks = [hook for repo in config["repos"] for hook in repo["hooks"]]

    def tool(command: str) -> list[str]:
        words = command.replace("$(BIN)/", "").replace(".venv/bin/", "").split()
        return [w for w in words if w not in (".", "--force-exclude")]

    assert [tool(h["entry"]) for h in hooks] == [tool(line) for line in _make_recipe("lint")]


def test_test_fast_leaves_out_exactly_the_groups_and_lint_never_hides_tests() -> None:
    assert _make_recipe("test") == ['@bash scripts/check "$(BIN)"']
    assert _make_recipe("test-fast") == ['@bash scripts/check "$(BIN)" -m "$(FAST)"']
    makefile = (ROOT / "Makefile").read_text()
    assert "FAST := not browser and not web and not desktop and not postgres and not slow\n" in (
        makefile
    )
    assert "test-fast: setup-test " in makefile  # wheels only: no compiler, no Debian package
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    markers = config["tool"]["pytest"]["ini_options"]["markers"]
    assert sorted(m.split(":")[0] for m in markers) == [
        "browser",
        "desktop",
        "postgres",
        "site",
        "slow",
        "web",
    ]  # fmt: skip  (site goes with slow, which FAST leaves out)
    assert "tests" in config["tool"]["mypy"]["files"]  # the tests are type-checked like the code
    extras = config["project"]["optional-dependencies"]
    assert not any("pygobject" in dep for dep in extras["test"])
    # scripts/check runs exactly the linters of `make lint`, each whatever the one before said
    check = (ROOT / "scripts" / "check").read_text()
    linters = re.findall(r'^  "\$bin/(\S+)"(.*) \|\| status=1$', check, re.MULTILINE)
    assert [f"$(BIN)/{tool}{args}" for tool, args in linters] == _make_recipe("lint")


def test_a_lint_error_does_not_hide_the_test_results(tmp_path: Path) -> None:
    """scripts/check with a failing linter and passing tests: both reported, exit 1."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool, body in {
        "ruff": 'echo "ruff $*"; [ "$1" = format ]',  # `ruff check` fails, the format check passes
        "mypy": 'echo "mypy ran"',
        "pytest": 'echo "pytest $*"',
    }.items():
        (bin_dir / tool).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / tool).chmod(0o755)
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "check"), str(bin_dir), "-m", "not slow"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1
    assert "pytest -q --durations=60 -m not slow" in done.stdout
    assert "ruff check ." in done.stdout and "ruff format --check ." in done.stdout
    assert "mypy ran" in done.stdout  # every linter ran although the first failed
    assert done.stderr.strip() == "check: FAILED: lint"


def _make_variable(name: str) -> str:
    """Return the value of ``name := ...`` in the Makefile, ``$(OTHER)`` expanded."""
    makefile = (ROOT / "Makefile").read_text()
    (value,) = re.findall(rf"^{name} := (.*)$", makefile, re.MULTILINE)
    return re.sub(r"\$\((\w+)\)", lambda m: _make_variable(m.group(1)), value)


def _selects(expression: str, groups: frozenset[str]) -> bool:
    """Whether pytest's ``-m expression`` selects a test carrying exactly the markers ``groups``
    (the expressions use only the group names, and, or, not and parentheses: Python's own)."""
    names = {g: g in groups for g in ("browser", "web", "desktop", "postgres", "slow", "site")}
    return bool(eval(expression, {"__builtins__": {}}, names))  # noqa: S307


def test_the_ci_legs_run_every_test_exactly_once() -> None:
    """Over every combination of groups a test can carry: exactly one of the two legs of
    .ci/run selects it; the oldest takes the screen and slow groups (the desktop's PyGObject is
    built there only) and the ticketing pack's web app, the newest the fast group, the browser,
    the rest of postgres and the whole-site builds that need no screen."""
    oldest, newest, fast = (_make_variable(v) for v in ("CI_OLDEST", "CI_NEWEST", "FAST"))
    groups = ("browser", "web", "desktop", "postgres", "slow", "site")
    for k in range(len(groups) + 1):
        for combo in itertools.combinations(groups, k):
            marked = frozenset(combo)
            legs = (_selects(oldest, marked), _selects(newest, marked))
            assert legs.count(True) == 1, marked
            if _selects(fast, marked):
                assert legs[1], marked
    assert _selects(newest, frozenset({"browser"})) and _selects(newest, frozenset({"postgres"}))
    assert _selects(oldest, frozenset({"postgres", "web"}))  # the ticketing web app evens them
    assert _selects(newest, frozenset({"site", "slow"}))  # a whole-site build without screens
    assert _selects(oldest, frozenset({"site", "slow", "web", "desktop"}))
    for screen in ({"web"}, {"desktop"}, {"slow"}, {"web", "slow"}, {"web", "desktop"}):
        assert _selects(oldest, frozenset(screen)), screen
    # the newest leg is set up from wheels only (no PyGObject): a desktop test stays on the oldest
    assert not _selects(newest, frozenset({"desktop"}))
    assert not _selects(newest, frozenset({"web", "desktop", "slow"}))
    assert not _selects(newest, frozenset({"desktop", "site", "slow"}))
    assert _selects(oldest, frozenset({"desktop", "postgres"}))  # the ticketing desktop app
    assert _selects(oldest, frozenset({"desktop", "browser"}))
    assert _make_recipe("test-ci-oldest") == ['@bash scripts/check "$(BIN)" -m "$(CI_OLDEST)"']
    assert _make_recipe("test-ci-newest") == [
        '@bash scripts/check --no-lint "$(BIN)" -m "$(CI_NEWEST)"'
    ]
    makefile = (ROOT / "Makefile").read_text()
    assert "test-ci-oldest: setup " in makefile  # the desktop extra and the Debian packages
    assert "test-ci-newest: setup-test " in makefile
    run = (ROOT / ".ci" / "run").read_text()
    assert "make test-ci-newest " in run and "target=test-ci-oldest" in run


def test_check_without_lint_runs_the_tests_alone(tmp_path: Path) -> None:
    """scripts/check --no-lint: pytest runs and decides the exit; no linter is started."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool, body in {
        "ruff": f'touch "{tmp_path}/linted"',
        "mypy": f'touch "{tmp_path}/linted"',
        "pytest": 'echo "pytest $*"; [ "$3" != "-x" ]',  # `-x` here: the tests fail
    }.items():
        (bin_dir / tool).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / tool).chmod(0o755)
    check = ["bash", str(ROOT / "scripts" / "check"), "--no-lint", str(bin_dir)]
    done = subprocess.run([*check, "-m", "browser"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pytest -q --durations=60 -m browser" in done.stdout
    assert "lint not run" in done.stdout
    failed = subprocess.run([*check, "-x"], capture_output=True, text=True, timeout=60)
    assert failed.returncode == 1
    assert failed.stderr.strip() == "check: FAILED: tests (pytest exit 1)"
    assert not (tmp_path / "linted").exists()


def test_code_pull_requests_run_the_ci_script_on_two_pythons() -> None:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "tests.yml").read_text())
    trigger = workflow[True]  # YAML 1.1 reads the key `on` as true
    assert trigger["pull_request"]["paths-ignore"] == ["submissions/**"]
    verify_pr = yaml.safe_load((ROOT / ".github" / "workflows" / "verify-pr.yml").read_text())
    assert verify_pr[True]["pull_request"]["paths"] == ["submissions/**"]  # the other half
    (job,) = workflow["jobs"].values()
    assert [s.get("run") for s in job["steps"] if "run" in s] == ["bash .ci/run"]
    assert job["strategy"]["matrix"]["image"] == ["debian:bookworm", "debian:trixie"]
