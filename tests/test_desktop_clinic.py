"""The clinic on the desktop and remote-display substrates, end to end.

Real Xvfb / Xvnc / D-Bus / AT-SPI / GTK 3 processes per episode, the real
record service with each task's fault, and the pack's one oracle. Kept lean
(a task per fault category, not the whole pack): the full ladder runs in
``benchmarks/bench_desktop.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from support.handles import spec_of
from support.screens import left_since, processes_now

from effectbench.baselines import ScreenOnly, get_baseline
from effectbench.computer import Display, images
from effectbench.mcp.paths import record_path
from effectbench.packs.clinic import ClinicProvider
from effectbench.packs.clinic.desktop import pixel_driver
from effectbench.packs.clinic.frontends import variant_id
from effectbench.run.runner import DroppedEpisode, run_episode
from effectbench.schema import AgentReport, DropReason, EpisodeRecord, Outcome, Substrate, TaskSpec
from effectbench.screens._supervisor import command_line
from effectbench.screens.processes import exited
from effectbench.seam import AgentTask

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import mcp_screen_agent  # noqa: E402

pytestmark = pytest.mark.desktop

FAULTS = {
    "C1_partial_save": "partial_note",
    "C2_duplicate_submission": "duplicate_submit",
    "C3_optimistic_then_reject": "optimistic_rollback",
    "C4_stale_overwrite": "stale_allergies",
    "C5_double_delivered_input": "double_click",
    "C6_wrong_record_homonym": "homonym_dob",
    "C7_silent_noop_wrong_target": "noop_green",
}
"""One task per fault category whose banner turns green while the record is wrong."""


@pytest.fixture(scope="module")
def pack() -> Iterator[ClinicProvider]:
    with ClinicProvider() as provider:
        yield provider


def _task(pack: ClinicProvider, name: str, substrate: Substrate) -> TaskSpec:
    return next(t for t in pack.tasks() if t.task_id == variant_id(name, substrate))


class ScreenTruster:
    """Run the pack's scripted steps, then believe a screenshot's banner colour."""

    name = "screen_truster"

    def __init__(self, pack: ClinicProvider) -> None:
        self._pack = pack
        self.seen: list[str] = []

    def run(self, task: AgentTask, env: Any, params: Mapping[str, Any]) -> AgentReport:
        spec = spec_of(task, self._pack.tasks())
        self._pack.attempt(env, spec, params)
        # The accessibility tree says the save is done before the X server has the banner's
        # new pixels (a loaded machine widens the gap): look until the banner is painted.
        deadline = time.monotonic() + 30
        status = pixel_driver.banner_status(images.pixels(env.screenshot()))
        while status == "idle" and time.monotonic() < deadline:
            status = pixel_driver.banner_status(images.pixels(env.screenshot()))
        self.seen.append(status)
        return AgentReport(reported_success=status == "success", halted=status != "success")


@pytest.mark.parametrize("substrate", [Substrate.DESKTOP, Substrate.REMOTE_DISPLAY])
def test_a_green_screen_over_a_wrong_record_in_every_category(
    pack: ClinicProvider, substrate: Substrate
) -> None:
    before = processes_now()
    sut = ScreenTruster(pack)
    for category, name in FAULTS.items():
        row = run_episode(sut, pack, _task(pack, name, substrate), 0, 0)
        assert isinstance(row, EpisodeRecord), row
        assert row.category.value == category and row.substrate is substrate
        assert sut.seen[-1] == "success"  # the screenshot's banner is green
        assert row.oracle.verdict.value == "refuted"  # the record is wrong
        assert row.outcome is Outcome.SILENT_WRONG_EFFECT
    assert left_since(before) == set()  # no process outlived its episode


def test_pixel_baselines_reproduce_row_for_row(pack: ClinicProvider) -> None:
    names = [
        *FAULTS.values(),
        "clean_draft",
        "edit_note",
        "refusal_ambiguous",
        "commit_then_timeout",
    ]

    def outcomes(arm: str, substrate: Substrate) -> list[tuple[str, bool, str, str]]:
        sut = get_baseline(arm, pack)
        rows = [run_episode(sut, pack, _task(pack, n, substrate), 0, 0) for n in names]
        return [
            (
                r.task_id.split("@")[0],
                r.agent.reported_success,
                r.oracle.verdict.value,
                r.outcome.value,
            )
            for r in rows
            if isinstance(r, EpisodeRecord)
        ]

    first = outcomes("effect_verified", Substrate.REMOTE_DISPLAY)
    assert len(first) == len(names)
    assert outcomes("effect_verified", Substrate.REMOTE_DISPLAY) == first
    # the same faults fool or spare the pixel arm as the API-level arm
    assert first == outcomes("effect_verified", Substrate.API)
    assert {o for _, _, _, o in first} >= {"silent_wrong_effect", "success", "safe_halt"}


def _wait_until_dead(pid: int, timeout: float = 10.0) -> None:
    """Return once ``pid`` has exited (a zombie or gone); a loaded machine delays SIGKILL."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if exited(pid):
            return
        time.sleep(0.01)
    raise AssertionError(f"pid {pid} survived SIGKILL for {timeout} s")


class Saboteur:
    """Runs the scripted steps after killing one process of its own episode (a harness fault)."""

    name = "saboteur"

    def __init__(self, pack: ClinicProvider, program: str) -> None:
        self._pack, self._program = pack, program
        self.killed: list[list[int]] = []
        """The pids each attempt killed (the runner retries an infrastructure failure)."""

    def run(self, task: AgentTask, env: Any, params: Mapping[str, Any]) -> AgentReport:
        killed = []
        for pid in processes_now():
            command = command_line(pid).split(b"\0")
            if any(part.endswith(self._program.encode()) for part in command[:3]):
                os.kill(pid, signal.SIGKILL)
                _wait_until_dead(pid)  # SIGKILL lands when the process is next scheduled
                killed.append(pid)
        self.killed.append(killed)
        spec = spec_of(task, self._pack.tasks())
        try:
            self._pack.attempt(env, spec, params)
        except Exception:  # noqa: BLE001 - the screen is gone; the harness decides
            pass
        return AgentReport(reported_success=True, halted=False, message="saw it through")


@pytest.mark.parametrize(
    ("substrate", "program"),
    [
        (Substrate.DESKTOP, "Xvfb"),
        (Substrate.DESKTOP, "app.py"),
        (Substrate.REMOTE_DISPLAY, "Xvnc"),
    ],
)
def test_a_killed_server_or_app_is_an_infrastructure_drop(
    pack: ClinicProvider, substrate: Substrate, program: str
) -> None:
    before = processes_now()
    saboteur = Saboteur(pack, program)
    dropped = run_episode(saboteur, pack, _task(pack, "clean_draft", substrate), 0, 0)
    assert saboteur.killed and all(saboteur.killed), saboteur.killed
    assert isinstance(dropped, DroppedEpisode), (dropped, saboteur.killed)
    assert dropped.reason is DropReason.INFRASTRUCTURE
    assert "no longer running" in dropped.detail or "broke" in dropped.detail
    assert left_since(before) == set()


@pytest.mark.parametrize(
    ("substrate", "package"), [("desktop", "xvfb"), ("remote_display", "tigervnc")]
)
def test_run_without_the_x_server_says_which_package_in_one_line(
    tmp_path: Path, substrate: str, package: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "effectbench.cli", "run", "--pack", "clinic"]
        + ["--substrate", substrate, "--baseline", "screen_only", "--trials", "1"],
        env={**os.environ, "PATH": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and package in lines[0] and "install" in lines[0], lines


def _mcp_command(name: str, substrate: str, record_dir: Path) -> list[str]:
    return [sys.executable, "-m", "effectbench.cli", "mcp", "--pack", "clinic"] + [
        "--substrate",
        substrate,
        "--task",
        name,
        "--trial",
        "1",
        "--record-dir",
        str(record_dir),
        "--system",
        "screen_only",
    ]


TIMING = ("latency_s", "started_at", "finished_at")
"""Row fields that differ between any two runs."""


def _row_without_timing(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in TIMING}


@pytest.mark.parametrize("substrate", [Substrate.DESKTOP, Substrate.REMOTE_DISPLAY])
def test_the_mcp_episode_server_on_both_substrates(
    pack: ClinicProvider, tmp_path: Path, substrate: Substrate
) -> None:
    """A pixel agent over MCP leaves the in-process baseline's row; only desktop has a11y."""
    episode = mcp_screen_agent.McpEpisode(_mcp_command("noop_green", substrate.value, tmp_path))
    try:
        listed = asyncio.run_coroutine_threadsafe(
            episode._session.list_tools(), episode._loop
        ).result(timeout=60)
        tools = {tool.name for tool in listed.tools}
        info = json.loads(episode.call("task"))
        assert info["display"]["surface"] == substrate.value
        if substrate is Substrate.DESKTOP:
            assert {"a11y_tree", "a11y_action", "a11y_set_text"} <= tools
            tree = json.loads(episode.call("a11y_tree"))
            assert tree["role"] == "application"
        else:
            assert not any(name.startswith("a11y") for name in tools)
        display = Display(info["display"]["width"], info["display"]["height"])
        env = mcp_screen_agent.McpScreen(episode, display)
        screen = pixel_driver.attempt(
            env, mcp_screen_agent.workflow(info["referral"]), info["referral"]
        )
        ok = screen.status == "success"
        episode.call("report", {"success": ok, "halted": not ok, "message": screen.banner})
    finally:
        episode.close()
    path = record_path(tmp_path, "screen_only", variant_id("noop_green", substrate), 1)
    record = json.loads(path.read_text())
    assert "row" in record, record
    over_mcp = _row_without_timing(record["row"])
    # the MCP door records its client (the harness) in the row's env fingerprint; the rest of
    # the row is the in-process one
    assert over_mcp["env_fingerprint"].pop("harness")["name"] == "mcp"
    in_process = run_episode(ScreenOnly(pack), pack, _task(pack, "noop_green", substrate), 1, 1)
    assert isinstance(in_process, EpisodeRecord)
    expected = _row_without_timing(json.loads(in_process.model_dump_json()))
    assert over_mcp["outcome"] == expected["outcome"] == "silent_wrong_effect"
    assert over_mcp["substrate"] == substrate.value
    assert {k: v for k, v in over_mcp.items() if k not in ("episode_id", "arm", "agent")} == {
        k: v for k, v in expected.items() if k not in ("episode_id", "arm", "agent")
    }
