"""Temporary folders are removed by the run that made them, and what a killed process
left by the next one: the clinic's database folders (``/dev/shm`` by default) and a
killed site build's staging folder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.bundles import make_bundle
from support.site import site_root

from effectbench.packs.clinic import db
from effectbench.packs.clinic.db import SCRATCH_ENV, scratch_dir
from effectbench.site import build_site

ROOT = Path(__file__).resolve().parents[1]
EFFECTBENCH = [sys.executable, "-m", "effectbench.cli"]
HOLD = (
    "import sys, time\n"
    "from effectbench.packs.clinic.db import scratch_dir\n"
    "print(scratch_dir('effectbench-clinic-'), flush=True)\n"
    "time.sleep(120)\n"
)


def _holder(scratch: Path) -> tuple[subprocess.Popen[str], Path]:
    """A process that made a scratch folder and holds it (until it is killed)."""
    env = {**os.environ, SCRATCH_ENV: str(scratch)}
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD], env=env, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    return proc, Path(proc.stdout.readline().strip())


def test_a_killed_processs_scratch_folder_is_removed_by_the_next_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SCRATCH_ENV, str(tmp_path))
    killed, left = _holder(tmp_path)
    alive, kept = _holder(tmp_path)
    try:
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=30)
        assert left.is_dir() and kept.is_dir()
        unrelated = tmp_path / "effectbench-clinic-notes"  # not a scratch folder's name
        unrelated.mkdir()
        mine = scratch_dir("effectbench-clinic-")
        assert not left.exists()  # its process is gone: swept
        assert kept.is_dir()  # its process runs: kept
        assert unrelated.is_dir() and mine.is_dir()
    finally:
        alive.kill()
        alive.wait(timeout=30)


@pytest.mark.parametrize(
    "command",
    [
        ["verify", str(ROOT / "submissions" / "2026-12-01_screen-only-clinic")],
        ["run", "--pack", "clinic", "--baseline", "screen_only", "--trials", "1"]
        + ["--substrate", "api", "--workers", "2", "--progress", "off"],
    ],
    ids=["verify", "run-in-two-workers"],
)
def test_a_clinic_run_or_verify_leaves_no_scratch_folder(
    tmp_path: Path, command: list[str]
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**os.environ, SCRATCH_ENV: str(scratch)}
    done = subprocess.run(
        [*EFFECTBENCH, *command], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert list(scratch.iterdir()) == []


def test_a_killed_builds_staging_folder_is_removed_by_the_next_build(tmp_path: Path) -> None:
    subs = tmp_path / "submissions"
    make_bundle(subs / "2026-04-01_x", "screen_only", declare_baseline=False)
    out = tmp_path / "public"
    stale = tmp_path / ".public.building-k1ll3d_x"
    (stale / "assets").mkdir(parents=True)
    (stale / "index.html").write_text("half a site\n")
    mine = tmp_path / ".public.building-notes"  # a user's folder of another name: kept
    mine.mkdir()
    build_site(
        subs, out, root=site_root(tmp_path, []), cache_dir=tmp_path / "cache", allow_unsigned=True
    )
    assert not stale.exists() and mine.is_dir()
    assert (out / "index.html").is_file()
    left = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".public.building-"))
    assert left == [".public.building-notes"]


def test_a_folder_removed_while_the_sweep_looks_is_passed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its owner removing its folder between the sweep's listing and its look (the race that
    stopped an MCP server at start-up) leaves the sweep going, and the new folder made."""
    gone = tmp_path / "effectbench-clinic-pid1-abcdefgh"
    gone.mkdir()
    listed = list(os.scandir(tmp_path))
    gone.rmdir()  # as its owner's cleanup would, after the listing
    monkeypatch.setattr(os, "scandir", lambda _base: iter(listed))
    assert db.sweep_scratch(tmp_path) == []
    monkeypatch.setenv(SCRATCH_ENV, str(tmp_path))
    assert scratch_dir("effectbench-clinic-").is_dir()
