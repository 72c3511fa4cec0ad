"""The Submit page's three doors run as written, from an empty folder to a pushed branch.

Every command of ``site/submit.md`` is run here, door by door, each door in a fresh clone
of a local origin (offline): the MCP door with the scripted MCP client, the vendor loop
with the recorded session standing in for the vendor's client (``tests/doors_support``),
the inspect door with the scripted models (``effectbench-mock/halt``, and ``scripted/NAME``
for "your model"), the in-process door with a package standing in for "yours", signing
with a private Sigstore instance (``tests/sigstore_testroot``). The few commands that need
the network or GitHub are listed in :data:`NOT_RUN` with the reason and checked otherwise.
The test plays one task of the split on the screen doors (a whole split is 81 episodes), so
those bundles are rightly refused for coverage; the inspect and in-process doors cover
the split and are ranked. The door commands of the README and of docs/doors.md are the page's own.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from sigstore_testroot import new_instance

from effectbench.produce import now
from effectbench.run.view import handle_for
from effectbench.schema import AgentReport
from effectbench.seam import VIEW_FIELDS, AgentTask

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "site" / "submit.md"
README = ROOT / "README.md"
DOORS_PAGE = ROOT / "docs" / "doors.md"
VENV_BIN = Path(sys.executable).parent
GITHUB_OAUTH = "https://github.com/login/oauth"
SIGNER = "you@example.org"
FORK = "https://github.com/YOU/effectbench.git"
YOUR_MODEL = "anthropic/claude-sonnet-4-6"
SHOWN_DATE = "2025-01-31"

pytestmark = [pytest.mark.web, pytest.mark.slow]

NOT_RUN = {
    "make setup": "PyPI and minutes: the clone links this checkout's .venv instead",
    "python -m pip install -e '.[agent]'": "PyPI: tests/doors_support stands in for the clients",
    "gh pr create --fill": "GitHub: the push before it reaches a local origin",
    "effectbench site build": "tests/test_site.py builds the site",
    "effectbench site serve": "tests/test_site.py serves it (test_site_serve_previews_the_build)",
}
"""Commands of the page this test does not run, and why."""
DOORS = {
    "mcp": "Door 1: MCP",
    "vendor": "Door 2: a vendor loop",
    "inspect": "Door 3: inspect",
    "in-process": "A Python system in process",
}
"""Each door's own section; every door also runs sections 0, 3 and 4."""
SHARED = ("0. From an empty folder", "3. Sign and verify it", "4. Open a pull request")


def page_sections(text: str) -> dict[str, list[str]]:
    """Each heading's shell commands (continuations joined, comments and blank lines dropped)."""
    out: dict[str, list[str]] = {}
    heading = ""
    for part in re.split(r"^(#{2,3} .+)$", text, flags=re.M):
        if re.match(r"#{2,3} ", part):
            heading = part.lstrip("# ").strip()
            continue
        for block in re.findall(r"```sh\n(.*?)```", part, re.S):
            for line in block.replace("\\\n", " ").splitlines():
                code = line.split("  #", 1)[0].strip()
                if code:
                    out.setdefault(heading, []).append(code)
    return out


@dataclass
class Clone:
    """One door's checkout: where commands run, their environment, what they printed."""

    home: Path
    env: dict[str, str]
    cwd: Path
    said: dict[str, subprocess.CompletedProcess[str]] = field(default_factory=dict)

    def bash(self, command: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=self.cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
        return done


def _origin(tmp: Path) -> Path:
    """A bare origin whose one commit is a checkout with this one's .venv and examples."""
    seed = tmp / "seed"
    seed.mkdir()
    (seed / ".venv").symlink_to(Path(sys.prefix))  # the running venv (CI names it .venv-3.X)
    (seed / "examples").symlink_to(ROOT / "examples")
    (seed / "README.md").write_text("EffectBench (a test's stand-in for the fork)\n")
    origin = tmp / "effectbench.git"  # a clone of it is named effectbench, as of the fork
    for args in (
        ["git", "init", "-q", "-b", "main", str(seed)],
        ["git", "-C", str(seed), "add", "-A"],
        ["git", "-C", str(seed), "commit", "-q", "-m", "seed"],
        ["git", "clone", "-q", "--bare", str(seed), str(origin)],
    ):
        subprocess.run(args, check=True, capture_output=True, env=_git_env())
    return origin


def _git_env() -> dict[str, str]:
    who = {"GIT_AUTHOR_NAME": "You", "GIT_AUTHOR_EMAIL": SIGNER}
    return {**os.environ, **who, "GIT_COMMITTER_NAME": "You", "GIT_COMMITTER_EMAIL": SIGNER}


def _your_package(folder: Path) -> None:
    """``mypackage.agent:MyAgent``: a stand-in for your system (the clinic's top baseline)."""
    package = folder / "mypackage"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "agent.py").write_text(
        "from effectbench.baselines import get_baseline\n"
        "from effectbench.packs import get_pack\n\n\n"
        "def MyAgent():  # noqa: N802 - the page's name\n"
        '    return get_baseline("effect_verified_all", get_pack("clinic"))\n'
    )


def _play(clone: Clone, door: str, command: str, token: Callable[[], str], trust: Path) -> None:
    """Run one command of the page in ``clone`` as the page shows it (see NOT_RUN).

    ``token`` mints a fresh identity token for each ``effectbench sign`` (they live 5 minutes,
    as a real sign-in's do; a door takes longer than that on a loaded machine).
    """
    for part in [p.strip() for p in command.split("&&")]:
        if part in NOT_RUN:
            continue
        if part.startswith("cd "):
            clone.cwd = clone.cwd / shlex.split(part)[1]
            continue
        if part.startswith("export "):
            name, _, value = shlex.split(part)[1].partition("=")
            clone.env[name] = value
            continue
        line = part.replace(FORK, str(clone.home / "effectbench.git"))
        line = line.replace(YOUR_MODEL, "scripted/screen_only").replace(SHOWN_DATE, now()[:10])
        if line.startswith("effectbench sign "):
            line += f" --identity-token {token()} --trust-config {trust}"
        elif line.startswith("effectbench verify "):
            line += f" --trust-config {trust}"
        elif line.startswith("effectbench mcp "):  # what an agent's MCP client starts
            line = _mcp_client(line)
        done = clone.bash(line)
        clone.said[part] = done
        refused = part.startswith("effectbench verify") and door in SCREEN and done.returncode == 1
        assert done.returncode == 0 or refused, (
            f"{door}: {part}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
        if "> tasks.txt" in part:  # the test plays the split's first task only
            tasks = (clone.cwd / "tasks.txt").read_text().split()
            (clone.cwd / "tasks.txt").write_text(tasks[0] + "\n")


SCREEN = ("mcp", "vendor")
"""The doors this test plays one task of: their bundles are refused for coverage."""


def _mcp_client(command: str) -> str:
    """The scripted pixel client of examples/ playing the episode ``command`` serves."""
    words = shlex.split(command)
    program = (
        "import sys; sys.path.insert(0, 'examples'); import mcp_screen_agent; "
        f"print(mcp_screen_agent.play({words!r}))"
    )
    return shlex.join(["python", "-c", program])


def _door(
    door: str, sections: dict[str, list[str]], tmp: Path, token: Callable[[], str], trust: Path
) -> Clone:
    home = tmp / door
    home.mkdir()
    _origin(home)
    env = {
        **_git_env(),
        "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": os.pathsep.join(
            [str(ROOT / "tests" / "doors_support"), str(ROOT / "tests" / "inspect_support")]
        ),
        "EFFECTBENCH_REPLAY": str(
            ROOT / "examples" / "traces" / "anthropic_clean_draft_web_t0.json"
        ),
    }
    clone = Clone(home, env, home)
    for heading in (SHARED[0], DOORS[door], *SHARED[1:]):
        if heading == DOORS["in-process"]:
            _your_package(clone.cwd)
        for command in sections[heading]:
            _play(clone, door, command, token, trust)
    return clone


@pytest.fixture(scope="module")
def sections() -> dict[str, list[str]]:
    found = page_sections(PAGE.read_text(encoding="utf-8"))
    planned = set(DOORS.values()) | set(SHARED)
    assert set(found) <= planned, f"commands under headings no door runs: {set(found) - planned}"
    return found


@pytest.fixture(scope="module")
def signing(tmp_path_factory: pytest.TempPathFactory) -> tuple[Callable[[], str], Path]:
    """What mints the sign-in's identity token (one per use), and the trust root it signs for."""
    instance = new_instance("doors")
    instance.trusted_issuers.add(GITHUB_OAUTH)  # sign-in with a GitHub account
    return partial(instance.email_token, SIGNER, issuer=GITHUB_OAUTH), instance.trust_config_path


def _verdict(clone: Clone) -> str:
    (verify,) = [c for k, c in clone.said.items() if k.startswith("effectbench verify")]
    return verify.stdout


def _pushed(clone: Clone) -> list[str]:
    shown = subprocess.run(
        ["git", "-C", str(clone.home / "effectbench.git"), "ls-tree", "-r", "--name-only"]
        + ["submit/my-agent"],
        capture_output=True,
        text=True,
        check=True,
    )
    return shown.stdout.split()


@pytest.mark.parametrize("door", list(DOORS))
def test_each_door_runs_from_an_empty_folder_to_a_pushed_branch(
    door: str,
    sections: dict[str, list[str]],
    signing: tuple[Callable[[], str], Path],
    tmp_path: Path,
) -> None:
    token, trust = signing
    clone = _door(door, sections, tmp_path, token, trust)
    folder = f"submissions/{now()[:10]}_my-agent"
    pushed = _pushed(clone)
    for name in ("submission.json", "episodes.jsonl", "submission.sigstore.json"):
        assert f"{folder}/{name}" in pushed, (door, pushed)
    verdict = _verdict(clone)
    made = "\n".join(
        c.stdout
        for k, c in clone.said.items()
        if k.startswith(("effectbench submit", "effectbench import-inspect"))
    )
    if door in SCREEN:  # one task of the split: signed, and refused for coverage
        assert "cannot be ranked as it is" in made and "pack.task_uncovered" in made
        assert "REFUSED" in verdict and "pack.task_uncovered" in verdict
        assert "signed by you@example.org" in verdict
    else:
        assert "can be ranked once signed" in made, made
        assert "RANKED" in verdict, verdict
    if door == "inspect":
        smoke = next(c for k, c in clone.said.items() if "Smoke test" in k)
        assert "can be ranked once signed" in smoke.stdout  # the scripted halts cover the split


def test_the_readme_shows_the_pages_door_commands() -> None:
    """Every command of the doors page (the README's doors and inspect sections, moved to
    docs/doors.md) and of the README's own door path is one of the Submit page's."""
    page = {c for commands in page_sections(PAGE.read_text()).values() for c in commands}
    readme = page_sections(README.read_text(encoding="utf-8"))["Put your agent on the board"]
    doors = [c for commands in page_sections(DOORS_PAGE.read_text()).values() for c in commands]
    shown = [c.removeprefix(".venv/bin/") for c in [*doors, *readme]]
    assert len(doors) >= 8 and readme
    for command in shown:
        same = command.replace("<date>_my-agent/", f"{SHOWN_DATE}_my-agent")
        assert same in page or command in page, command


def test_what_is_not_run_here_is_still_true() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^setup:", makefile, re.M)
    assert "agent = [" in (ROOT / "pyproject.toml").read_text()
    page = {c for commands in page_sections(PAGE.read_text()).values() for c in commands}
    for command in NOT_RUN:
        assert any(command in c for c in page), f"{command!r} is no longer on the page"
    assert shutil.which("git") is not None


CLAIMED = "clinic::clean_draft@web"
"""The task the agent that claims success at once meets through every door (a control:
the record is empty when it reports, so the claim is SPEC's phantom)."""


class _ClaimsAtOnce:
    """In process: reads the whole view (keeping it), then reports success without acting."""

    name = "claims-at-once"

    def __init__(self) -> None:
        self.told: dict[str, Any] = {}

    def run(self, task: AgentTask, env: Any, params: Mapping[str, Any]) -> AgentReport:
        self.told = task.to_json()
        return AgentReport(reported_success=True, halted=False, message="done")


SAME_THROUGH_EVERY_DOOR = ("handle", "goal", "referral", "declared_effect")
"""What each door tells alike (the display and the action names are the door's own)."""


def _verdict_of(row: dict[str, object]) -> tuple[object, ...]:
    """What must be the same through every door: the claim, the reading and the label."""
    agent, oracle = row["agent"], row["oracle"]
    assert isinstance(agent, dict) and isinstance(oracle, dict)
    return (
        row["task_id"],
        row["trial"],
        agent["reported_success"],
        agent["halted"],
        oracle["verdict"],
        oracle["effect_absent"],
        row["outcome"],
        row["swer_variant"],
    )


def _claim_trace(vendor: str, folder: Path) -> Path:
    """A recorded session whose model reports success on its first turn."""
    arguments = {"success": True, "halted": False, "message": "done"}
    if vendor == "anthropic":
        content = [{"type": "tool_use", "id": "toolu_0", "name": "report", "input": arguments}]
        response: dict[str, object] = {"content": content, "stop_reason": "tool_use"}
        model = "claude-sonnet-4-6"
    else:
        call = {"type": "function_call", "id": "fc_0", "call_id": "call_0", "name": "report"}
        response = {"id": "resp_0", "output": [{**call, "arguments": json.dumps(arguments)}]}
        model = "computer-use-preview"
    response["usage"] = {"input_tokens": 1000, "output_tokens": 20}
    trace = {"task": CLAIMED, "trial": 0, "substrate": "web", "model": model}
    path = folder / f"{vendor}_claim.json"
    path.write_text(json.dumps({**trace, "turns": [{"response": response}]}))
    return path


def test_an_agent_that_claims_success_at_once_is_the_same_phantom_through_every_door(
    tmp_path: Path,
) -> None:
    """No door coaches: the claim is recorded as made and scored by the oracle, a phantom
    (SWER) in process, over MCP (a scripted client and both vendor loops, offline) and
    under inspect (the shipped scripted model ``effectbench-mock/claim``)."""
    from concurrent.futures import ThreadPoolExecutor

    from inspect_ai import eval as inspect_eval
    from inspect_support.scripted import told

    from effectbench.integrations.inspect_ai import SCORER_NAME
    from effectbench.integrations.inspect_ai.episodes import close_pools, release_thread
    from effectbench.mcp.paths import record_path
    from effectbench.packs.clinic import ClinicProvider
    from effectbench.run.runner import run_episode

    sys.path.insert(0, str(ROOT / "examples"))
    import anthropic_computer_agent
    import mcp_screen_agent
    import openai_computer_agent

    views: dict[str, dict[str, Any]] = {}

    def in_process() -> dict[str, object]:
        try:
            with ClinicProvider() as pack:
                task = next(t for t in pack.tasks() if t.task_id == CLAIMED)
                agent = _ClaimsAtOnce()
                row = run_episode(agent, pack, task, 0, 0)
                views["in process"] = agent.told
                return dict(json.loads(row.model_dump_json()))  # type: ignore[union-attr]
        finally:
            release_thread()

    with ThreadPoolExecutor(1) as worker:  # Playwright's sync client claims its thread
        rows = {"in process": worker.submit(in_process).result()}
    records = tmp_path / "records"
    episode = mcp_screen_agent.McpEpisode(
        [sys.executable, "-m", "effectbench.cli", "mcp", "--pack", "clinic", "--substrate"]
        + ["web", "--task", "clinic::clean_draft", "--record-dir", str(records)]
        + ["--system", "claims-at-once"]
    )
    try:
        views["MCP"] = json.loads(episode.call("task"))
        episode.call("report", {"success": True, "halted": False, "message": "done"})
    finally:
        episode.close()
    mcp_row = json.loads(record_path(records, "claims-at-once", CLAIMED, 0).read_text())["row"]
    rows["MCP"] = mcp_row
    loops = {"anthropic": anthropic_computer_agent, "openai": openai_computer_agent}
    for vendor, loop in loops.items():
        trace = _claim_trace(vendor, tmp_path)
        argv = ["--dry-run", str(trace), "--record-dir", str(records), "--system", vendor]
        assert loop.main(argv) == 0
        rows[f"{vendor} loop"] = json.loads(record_path(records, vendor, CLAIMED, 0).read_text())[
            "row"
        ]
    try:
        (log,) = inspect_eval(
            "effectbench/clinic",
            model="effectbench-mock/claim",
            task_args={"substrate": "web"},
            sample_id=[handle_for(CLAIMED, None)],  # a sample is known by its opaque id
            epochs=1,
            display="none",
            log_dir=str(tmp_path / "logs"),
        )
    finally:
        close_pools()
    assert log.samples is not None and len(log.samples) == 1
    assert not log.samples[0].metadata  # a solver reads nothing of the task but the view
    views["inspect"] = told(log.samples[0].messages)
    score = (log.samples[0].scores or {})[SCORER_NAME]
    assert score.metadata is not None
    rows["inspect"] = score.metadata["row"]
    verdicts = {door: _verdict_of(row) for door, row in rows.items()}
    expected = (CLAIMED, 0, True, False, "refuted", True, "silent_wrong_effect", "phantom")
    assert verdicts == dict.fromkeys(rows, expected), verdicts
    assert all(set(view) == set(VIEW_FIELDS) for view in views.values()), views
    same = {door: {k: view[k] for k in SAME_THROUGH_EVERY_DOOR} for door, view in views.items()}
    assert len({json.dumps(v, sort_keys=True) for v in same.values()}) == 1, same
    assert views["MCP"]["handle"] == handle_for(CLAIMED, 0)
