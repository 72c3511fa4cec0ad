"""Per-episode X sessions: isolation, teardown and the envs on a real GTK app.

Real Xvfb, Xvnc, dbus-daemon, AT-SPI and GTK 3 processes (installed by
``.ci/install-system-packages``); every session is torn down by the test.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support.screens import desktop_env, start_app

from effectbench.computer import A11yNode, AccessibleComputerEnv, ActionError, ComputerEnv, images
from effectbench.packs.clinic.db import provision_copy, scratch_dir
from effectbench.packs.clinic.desktop import a11y_driver
from effectbench.packs.clinic.desktop import layout as L
from effectbench.packs.clinic.service import Channel, ClinicService
from effectbench.packs.clinic.store import ClinicStore, Fault
from effectbench.screens import xsession
from effectbench.screens.processes import exited
from effectbench.screens.rfb import RemoteDisplayEnv
from effectbench.screens.xdisplay import AccessibleXEnv
from effectbench.screens.xsession import MissingComponentError, XSession, require

pytestmark = pytest.mark.desktop


def _alive(pid: int) -> bool:
    """Say whether ``pid`` is a live (not zombie) process."""
    return not exited(pid)


@pytest.fixture(scope="module")
def service() -> Iterator[Channel]:
    """A record service with the clinic's template state mounted (no fault): its channel."""
    folder = scratch_dir("effectbench-test-screens-")
    store = ClinicStore(provision_copy(folder / "clinic.sqlite"), Fault())
    running = ClinicService().start()
    yield running.mount(store)
    running.stop()
    store.close()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def desktop(service: Channel) -> Iterator[tuple[XSession, AccessibleXEnv]]:
    session = XSession()
    try:
        env = desktop_env(session, service)
        yield session, env
        env.close()
    finally:
        session.close()


def test_session_is_private_and_leaves_no_process(desktop: tuple[XSession, AccessibleXEnv]) -> None:
    session, env = desktop
    run = session.root / "run"
    assert run.stat().st_mode & 0o777 == 0o700
    assert session.bus_address.startswith(f"unix:path={run}/")
    assert session.a11y_address.startswith(f"unix:path={run}/at-spi/")
    pids = session.supervisor.descendants()
    # Xvfb, dbus-daemon, the accessibility bus launcher and its bus, the app, the reader
    assert len(pids) >= 5
    assert session.health() is None
    env.close()
    session.close()
    assert [p for p in [*pids, session.supervisor.pid] if _alive(p)] == []
    assert not session.root.exists()


def test_missing_program_is_one_line_naming_the_package(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with pytest.raises(MissingComponentError) as caught:
        require(["/usr/libexec/at-spi-bus-launcher-gone"])
    assert "\n" not in caught.value.diagnostics()
    assert caught.value.exit_code == 2
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(MissingComponentError, match="Debian package tigervnc-standalone-server"):
        XSession(server="xvnc", accessibility=False)
    with pytest.raises(MissingComponentError, match="Debian package xvfb"):
        XSession()
    monkeypatch.setattr(xsession, "TYPELIB_DIRS", (str(tmp_path),))
    with pytest.raises(MissingComponentError, match="Debian package gir1.2-atspi-2.0"):
        require(typelibs=["Atspi-2.0"])


def test_desktop_env_types_clicks_and_reads_the_tree(
    desktop: tuple[XSession, AccessibleXEnv],
) -> None:
    _, env = desktop
    assert isinstance(env, AccessibleComputerEnv)
    shot = images.pixels(env.screenshot())
    assert shot.shape == (L.SCREEN[1], L.SCREEN[0], 3)
    env.click(*L.centre(L.NAME_ENTRY))
    env.type("Ab c-9")
    env.key("shift+Home")
    env.type("Jonas Berg")
    deadline = time.monotonic() + 5  # the app handles the X events after XTest sent them
    while True:
        tree = env.a11y_tree()
        nodes = {(n.role, n.name): n for n in _walk(tree)}
        entry = nodes[("text", "Patient name")]
        if entry.text == "Jonas Berg" or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert entry.text == "Jonas Berg"
    assert entry.extents == L.NAME_ENTRY
    assert nodes[("push button", "Search")].extents == L.SEARCH_BUTTON
    banner = next(n for n in _walk(tree) if n.role == "status bar")
    assert banner.description == "idle"
    env.a11y_set_text(nodes[("text", "MRN")].id, "M-0101")
    assert {(n.role, n.name): n for n in _walk(env.a11y_tree())}[("text", "MRN")].text == "M-0101"
    with pytest.raises(ActionError, match="off the screen"):
        env.click(L.SCREEN[0], 5)
    with pytest.raises(ActionError, match="no action"):
        env.a11y_action(entry.id, "explode")
    with pytest.raises(ActionError, match="no node"):
        env.a11y_action("1/2", "click")


def test_vanished_and_foreign_nodes_are_tool_errors(
    desktop: tuple[XSession, AccessibleXEnv],
) -> None:
    session, env = desktop
    search = next(n for n in _walk(env.a11y_tree()) if n.name == "Search")
    other = start_app(session, name="other-app")  # a second application on the same desktop
    with pytest.raises(ActionError, match="another application"):
        env.a11y_action(f"{other}/{search.id.split('/')[1]}", "click")
    tree = env.a11y_tree()
    assert a11y_driver.find(tree, "push button", "New encounter") is None  # a hidden view
    name = a11y_driver.find(tree, "text", "Patient name")
    assert name is not None
    env.a11y_set_text(name.id, "David Chen")
    tree = a11y_driver.press(env, tree, "Search")
    row = a11y_driver.find(tree, "push button", "Open chart M-0232")
    assert row is not None
    env.a11y_set_text(name.id, "Jonas Berg")
    a11y_driver.press(env, tree, "Search")  # the result rows are rebuilt
    with pytest.raises(ActionError, match="vanished"):
        env.a11y_action(row.id, "click")
    session.supervisor.kill(session.programs["app"], signal.SIGKILL)
    deadline = time.monotonic() + 10
    while session.health() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert "app" in str(session.health())
    with pytest.raises(ActionError, match="vanished"):
        env.a11y_action(name.id, "activate")


def _walk(node: A11yNode) -> Iterator[A11yNode]:
    yield node
    for child in node.children:
        yield from _walk(child)


def _episode_identity(index: int) -> dict[str, object]:
    """One whole desktop episode: session, app, reader; what it held, and that it typed alone."""
    with XSession() as session:
        env = desktop_env(session)
        try:
            env.click(*L.centre(L.NAME_ENTRY))
            env.type(f"episode {index}")
            deadline = time.monotonic() + 30  # four apps on a loaded machine answer late
            while True:  # wait for the condition: the entry reads what was typed
                entry = a11y_driver.find(env.a11y_tree(), "text", "Patient name")
                if (entry and entry.text == f"episode {index}") or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            sockets = sorted(str(p) for p in (session.root / "run").rglob("*") if p.is_socket())
            return {
                "display": session.display,
                "bus": session.bus_address,
                "a11y": session.a11y_address,
                "sockets": sockets,
                "typed": entry.text if entry else None,
                "pids": session.supervisor.descendants(),
            }
        finally:
            env.close()


def test_four_parallel_episodes_share_no_display_bus_or_socket() -> None:
    with ThreadPoolExecutor(max_workers=4) as pool:
        seen = list(pool.map(_episode_identity, range(4)))
    for key in ("display", "bus", "a11y"):
        assert len({str(s[key]) for s in seen}) == 4, key
    sockets = [sock for s in seen for sock in s["sockets"]]  # type: ignore[attr-defined]
    assert len(sockets) == len(set(sockets)) and len(sockets) >= 4 * 3
    assert [s["typed"] for s in seen] == [f"episode {i}" for i in range(4)]
    pids = [p for s in seen for p in s["pids"]]  # type: ignore[attr-defined]
    deadline = time.monotonic() + 15  # a stopped process exits a moment later under load
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [p for p in pids if _alive(p)] == []


def test_a_killed_harness_leaves_nothing_behind(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import json, sys, time
        sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})
        from support.screens import desktop_env
        from effectbench.screens.xsession import XSession
        session = XSession()
        env = desktop_env(session)
        pids = session.supervisor.descendants() + [session.supervisor.pid]
        print(json.dumps([str(session.root), pids]), flush=True)
        time.sleep(60)
        """
    )
    harness = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=tmp_path
    )
    assert harness.stdout is not None
    root, pids = json.loads(harness.stdout.readline())
    assert len(pids) >= 6 and all(_alive(p) for p in pids) and Path(root).is_dir()
    harness.kill()  # SIGKILL: no cleanup runs in the harness
    harness.wait()
    deadline = time.monotonic() + 15
    while (any(_alive(p) for p in pids) or Path(root).exists()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [p for p in pids if _alive(p)] == []
    assert not Path(root).exists()  # nor its files: the supervisor removed the session's folder


def test_remote_display_gives_pixels_and_input_only() -> None:
    with XSession(server="xvnc", accessibility=False) as session:
        assert session.a11y_address == ""
        start_app(session)
        env = RemoteDisplayEnv(session.rfb_path)
        try:
            assert isinstance(env, ComputerEnv)
            assert not isinstance(env, AccessibleComputerEnv)
            assert not any(hasattr(env, name) for name in ("a11y_tree", "a11y_action"))
            held = _reachable(env)
            assert not any(type(o).__module__.startswith(("Xlib", "gi")) for o in held)
            assert not any(isinstance(o, str) and o == session.display for o in held)
            before = images.pixels(env.screenshot())
            assert before.shape == (L.SCREEN[1], L.SCREEN[0], 3)
            env.click(*L.centre(L.NAME_ENTRY))
            env.type("Remote Typist")
            x, y, w, h = L.NAME_ENTRY
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                after = images.pixels(env.screenshot())
                if (after[y : y + h, x : x + w] != before[y : y + h, x : x + w]).any():
                    break
            assert (after[y : y + h, x : x + w] != before[y : y + h, x : x + w]).any()
        finally:
            env.close()


def _reachable(root: object) -> list[object]:
    """Every object reachable from ``root``'s attributes (what an in-process agent could get)."""
    seen: dict[int, object] = {}
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, type | int | float | bytes):
            continue
        seen[id(obj)] = obj
        if isinstance(obj, dict):
            stack.extend(obj.values())
        elif isinstance(obj, list | tuple | set):
            stack.extend(obj)
        elif hasattr(obj, "__dict__"):
            stack.extend(vars(obj).values())
    return list(seen.values())
