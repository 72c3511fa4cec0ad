"""Benchmark what keeping each episode's channels private costs, step by step.

Prints figures, asserts nothing. Each figure is one step the privacy of an
episode added, timed alone, beside the episode step it sits in:

* the record service: drawing an episode's secret (once per mount) and a
  keep-alive request carrying it through the Host, secret, Origin and type
  checks, beside a request the service refuses at the secret check;
* an X session: writing its cookie file (once per session) and an X
  connection presenting it, beside starting the whole session;
* a remote display: the RFB handshake on Xvnc's Unix socket;
* a run's rows: a worker's answer as text and read back (``to_wire`` and
  ``from_wire``) and the driver's re-judging (``rejudge``), per row.

    .venv/bin/python benchmarks/bench_channels.py [--repeats 200] [--sessions 5]
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from effectbench.baselines import get_baseline
from effectbench.kit.http import ServiceClient
from effectbench.packs import get_pack
from effectbench.packs.clinic import ClinicProvider
from effectbench.packs.clinic.service import Channel
from effectbench.run.executors.worker import from_wire, to_wire
from effectbench.run.runner import Cell, evaluate, rejudge
from effectbench.screens.rfb import RfbClient
from effectbench.screens.xdisplay import open_display
from effectbench.screens.xsession import XSession, write_xauthority


def _ms(values: list[float]) -> str:
    values = sorted(values)
    p95 = values[min(len(values) - 1, int(0.95 * len(values)))]
    return f"median {statistics.median(values) * 1000:8.3f} ms  p95 {p95 * 1000:8.3f} ms"


def _timed(step: Callable[[], object], repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return times


def record_service(repeats: int) -> dict[str, list[float]]:
    """The secret's draw, an admitted request and a refused one, on a mounted episode."""
    with ClinicProvider() as pack:
        task = pack.tasks()[0]
        with pack.provision(task, 0, pack.trial_params(task, 0)):
            channel = pack.service.channel
            assert channel is not None
            client = ServiceClient(channel)
            path = "/api/patients?name=Jonas%20Berg"
            admitted = _timed(lambda: client.call("GET", path), repeats)
            client.close()
            stranger = ServiceClient(
                Channel(channel.port, "not the episode's secret", channel.header)
            )
            refused = _timed(lambda: stranger.call("GET", path), repeats)
            stranger.close()
    return {
        "draw an episode's secret (per mount)": _timed(
            lambda: Channel(1, secrets.token_urlsafe(32), "X-Episode"), repeats
        ),
        "admitted request (secret, Host, Origin, type checked)": admitted,
        "refused request (no secret; a fresh connection each)": refused,
    }


def x_sessions(sessions: int, repeats: int) -> dict[str, list[float]]:
    """The cookie's write and an X connection presenting it, beside a whole session's start."""
    out: dict[str, list[float]] = {"write the cookie file (per session)": []}
    with tempfile.TemporaryDirectory() as folder:
        for index in range(repeats):
            t0 = time.perf_counter()
            write_xauthority(Path(folder) / f"cookie-{index}")
            out["write the cookie file (per session)"].append(time.perf_counter() - t0)
    out["start an Xvfb session (display, buses)"] = []
    out["X connection presenting the cookie"] = []
    out["start an Xvnc session"] = []
    out["RFB handshake on Xvnc's Unix socket"] = []
    for _ in range(sessions):
        t0 = time.perf_counter()
        session = XSession(server="xvfb", accessibility=True)
        out["start an Xvfb session (display, buses)"].append(time.perf_counter() - t0)
        try:
            for _ in range(10):
                t1 = time.perf_counter()
                open_display(session.display, session.xauthority).close()
                out["X connection presenting the cookie"].append(time.perf_counter() - t1)
        finally:
            session.close()
        t0 = time.perf_counter()
        remote = XSession(server="xvnc", accessibility=False)
        out["start an Xvnc session"].append(time.perf_counter() - t0)
        try:
            for _ in range(5):  # one client at a time: each closes before the next
                t1 = time.perf_counter()
                RfbClient(remote.rfb_path).close()
                out["RFB handshake on Xvnc's Unix socket"].append(time.perf_counter() - t1)
        finally:
            remote.close()
    return out


def rows(repeats: int) -> dict[str, list[float]]:
    """A worker's answer written and read back, and the driver's re-judging, per row."""
    pack = get_pack("mockmed")
    sut = get_baseline("screen_only", pack)
    run = evaluate(sut, pack, trials=max(1, repeats // 9))
    specs = {task.task_id: task for task in pack.tasks()}
    wire, judge = [], []
    for row in run.rows:
        cell = Cell(row.task_id, row.trial, row.seed or 0)
        t0 = time.perf_counter()
        from_wire(to_wire(row), cell, "bench")
        t1 = time.perf_counter()
        rejudge(sut.name, specs[row.task_id], cell, row)
        t2 = time.perf_counter()
        wire.append(t1 - t0)
        judge.append(t2 - t1)
    return {"answer as text and read back (per row)": wire, "rejudge (per row)": judge}


def main() -> None:
    """Run every part and print its figures with the load average."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--sessions", type=int, default=5)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    for title, figures in (
        ("record service", record_service(args.repeats)),
        ("X sessions", x_sessions(args.sessions, args.repeats)),
        ("a run's rows", rows(args.repeats)),
    ):
        print(f"\n{title}")
        for name, values in figures.items():
            print(f"  {name:<56} {_ms(values)}  (n={len(values)})")
    print(f"\nload average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
