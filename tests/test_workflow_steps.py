"""The workflows' own install and verify steps, run as their YAML has them, in clean venvs.

Each step's ``run`` script is read from ``.github/workflows/*.yml`` and run with bash as
the runner runs it (``bash --noprofile --norc -eo pipefail``), in a copy of the working
tree (what ``actions/checkout`` gives), with the step's own ``env`` (``VERIFIER``, the
screens venv's folder, pointed into the test's temporary folder), ``${{ }}`` expressions
given their values, and ``$GITHUB_PATH`` honoured between steps. Nothing here re-types a
command (:mod:`support.workflows`). One clean virtual environment is made per test run, of
this test's Python: the deploy build job's (``actions/setup-python`` then the ``light``
install), in which the job's build runs once (conftest's ``deploy_build``; its site is the one
``test_shipped_site`` checks); once the light tests are done, verify-pr's ``screens`` install
(identical in deploy-site's reproduce job) runs into it, adding the screen packages to the
same locked pins (see :func:`screens`).

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
from pathlib import Path

import pytest
from sigstore_testroot import GOOGLE, shared_instance
from support import workflows
from support.bundles import make_bundle
from support.workflows import REPRODUCE_STEP, DeployBuild, Runner, imports

from effectbench.signatures import sign_bundle
from verifier.references import bundle_content_hash

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
ALICE = "alice@example.org"


def _pins(lock: str) -> dict[str, str]:
    """A lock's pins: each ``name==version`` line with its hashes (the lock's ``# via``
    comments aside: which packages need a pin differs between two locks, never the pin)."""
    text = (ROOT / "requirements" / lock).read_text(encoding="utf-8")
    return {
        block.split("==", 1)[0].lower(): re.sub(r"\n\s*#.*", "", block)
        for block in re.split(r"\n(?=[A-Za-z0-9])", text)
        if re.match(r"^[A-Za-z0-9_.-]+==", block)
    }


@pytest.fixture(scope="module")
def screens(workflow_workspace: Path, light_runner: Runner) -> Runner:
    """verify-pr's (and deploy-site's reproduce job's) install of the screen stack.

    Run into the light venv, once the light tests are done with it: every light pin is a
    screens pin (same version, same hashes: asserted), so pip finds those installed by the
    same locked step and adds the seven screen packages, and the venv ends as a clean
    screens install would (a second clean install of the same 64 wheels tests nothing more
    and costs about two minutes).
    """
    light_pins, screen_pins = _pins("verify.txt"), _pins("screens.txt")
    assert {name: screen_pins.get(name) for name in light_pins} == light_pins
    runner = workflows.runner(workflow_workspace, workflow_workspace / "tools")
    step = workflows.step("verify-pr.yml", "verify", "Install the locked dependencies")
    same = workflows.step("deploy-site.yml", "reproduce", "Install the locked dependencies")
    assert step == same  # one install for both jobs, so it is run once here
    verifier = Path(light_runner.path[0]).parent
    done = runner.run(step, overrides={"VERIFIER": str(verifier)}, phase="screens install")
    assert done.returncode == 0, done.stderr[-3000:]
    assert runner.path[0] == str(verifier / "bin")  # $GITHUB_PATH put it first
    return runner


def _bundles(checkout: Path) -> list[str]:
    return sorted(p.name for p in (checkout / "submissions").iterdir() if p.is_dir())


def test_the_deploy_build_job_ranks_every_shipped_bundle_without_a_browser_or_x_server(
    light_runner: Runner, deploy_build: DeployBuild
) -> None:
    """The job's build (run once per test run: conftest; ``test_shipped_site`` reads its site)."""
    assert deploy_build.reachable == () and deploy_build.importable == ()
    done = deploy_build.done
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    shipped = _bundles(light_runner.workspace)
    assert f"bundles {len(shipped)}: ranked {len(shipped)}, preview 0, refused 0" in done.stdout
    assert "make reproduce" not in done.stdout
    pages = deploy_build.public / "submissions"
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


def test_make_site_names_the_bundle_whose_record_was_removed(light_runner: Runner) -> None:
    """A clone of the checkout holding two shipped bundles, one without its record."""
    assert imports(light_runner, "import playwright").returncode != 0  # still the light stack
    clone = light_runner.scratch / "clone"
    shutil.copytree(light_runner.workspace, clone, ignore=shutil.ignore_patterns("public", "pr"))
    keep = {"2026-12-01_always-halt", "2026-12-01_screen-only-clinic-web"}
    for folder in (clone / "submissions").iterdir():
        if folder.name not in keep:
            shutil.rmtree(folder)
    web = clone / "submissions" / "2026-12-01_screen-only-clinic-web"
    record = clone / "reproductions" / f"{bundle_content_hash(web)[7:]}.reproduction.json"
    record.unlink()
    venv = Path(light_runner.path[0]).parent
    command = _make_site_command(clone, venv)
    done = light_runner.run({"run": command}, cwd=clone, phase="make site (2 bundles)")
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
        imports(screens, "import playwright, gi; gi.require_version('Gtk', '3.0')").returncode == 0
    )
    base = _pull_request(screens.workspace)
    step = workflows.step("verify-pr.yml", "verify", "Verify changed bundles")
    values = {"github.event.pull_request.base.sha": base}
    trust = f" --trust-config {shared_instance().trust_config_path}"  # the tests' Sigstore
    done = screens.run(step, values=values, extra=trust, phase="verify-pr check")
    summary = (screens.scratch / "summary.md").read_text()
    assert done.returncode == 0, summary + done.stderr[-3000:]
    assert "2026-12-08_alice-retry&quot; (bundle): RANKED" in summary
    assert "re-ran 'retry_on_error': all 36 rows identical" in done.stdout
    assert "2026-12-01_" not in summary  # the shipped bundles rank it, unreported, not re-run


def test_the_deploy_reproduce_job_keeps_every_listed_record(screens: Runner) -> None:
    step = workflows.step("deploy-site.yml", "reproduce", REPRODUCE_STEP)
    done = screens.run(step, phase="deploy reproduce")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    shipped = _bundles(screens.workspace)
    assert f"recorded 0, kept {len(shipped)}, could not re-run 0" in done.stdout
