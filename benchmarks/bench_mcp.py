"""How soon an MCP episode server is useful: ``initialize``, ``list_tools``, ``task``, the screen.

For each run it starts ``effectbench mcp`` (the command an agent's client starts) with the
``mcp`` SDK's own stdio client, as an agent would, and times:

* ``initialize``: from the process's start to the answer (the server finds the task and
  claims the attempt's file first);
* ``list_tools``: from the ``initialize`` answer to the tool list (the target: 1 s at a
  load below 2);
* ``task``: from the ``initialize`` answer to the ``task`` tool's answer (the target: 1 s;
  the episode's browser or display is being prepared meanwhile);
* ``screenshot``: from the ``initialize`` answer to the first screenshot (the episode is
  provisioned by then);
* ``server cpu at task``: the CPU seconds the server process (its children apart) had used
  when ``task`` was answered: the work before the first useful answer, whatever the load;
* the drop: the client then leaves without reporting; the time until the server has
  written the attempt's ``agent_error`` drop (a client that leaves is a drop, never a
  halt) and the SDK's client has closed.

Prints the median and the largest of ``--runs`` runs per substrate, with the load average
(``/proc/loadavg``, one minute) before and after beside each figure: the machine is shared,
so read each figure with its load. Usage:

    .venv/bin/python benchmarks/bench_mcp.py [--runs 5] [--substrate web,desktop]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, stdio_client

TICKS = os.sysconf("SC_CLK_TCK")


def _children() -> list[int]:
    """This process's child processes (the server the SDK's client started)."""
    found = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        found += [int(p) for p in (task / "children").read_text().split()]
    return found


def _cpu(pid: int) -> float:
    """CPU seconds (user and system) ``pid`` has used itself."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


async def _one(substrate: str, task: str, records: Path) -> dict[str, float]:
    argv = ["-m", "effectbench.cli", "mcp", "--pack", "clinic", "--substrate", substrate]
    argv += ["--task", task, "--record-dir", str(records)]
    params = StdioServerParameters(command=sys.executable, args=argv)
    started = time.perf_counter()
    async with stdio_client(params) as (read, write):
        (server,) = _children()
        async with ClientSession(read, write) as session:
            await session.initialize()
            ready = time.perf_counter()
            tools = await session.list_tools()
            listed = time.perf_counter()
            answer = await session.call_tool("task", {})
            told = time.perf_counter()
            cpu = _cpu(server)
            if answer.is_error or "task" not in {t.name for t in tools.tools}:
                raise RuntimeError(f"the task tool failed: {answer}")
            shot = await session.call_tool("screenshot", {})
            seen = time.perf_counter()
            if shot.is_error:
                raise RuntimeError(f"the screenshot failed: {shot}")
            left = time.perf_counter()
    gone = time.perf_counter() - left
    (written,) = list(records.glob("*.json"))
    if json.loads(written.read_text()).get("dropped", {}).get("reason") != "agent_error":
        raise RuntimeError(f"no agent_error drop after the client left: {written}")
    written.unlink()
    return {
        "initialize": ready - started,
        "list_tools": listed - ready,
        "task": told - ready,
        "screenshot": seen - ready,
        "server cpu at task": cpu,
        "drop after leaving": gone,
    }


def _load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--substrate", default="web,desktop,remote_display")
    parser.add_argument("--task", default="clinic::clean_draft")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="effectbench-bench-mcp-") as folder:
        for substrate in args.substrate.split(","):
            figures: dict[str, list[float]] = {}
            load_before = _load()
            for _ in range(args.runs):
                one = asyncio.run(_one(substrate, args.task, Path(folder)))
                for name, seconds in one.items():
                    figures.setdefault(name, []).append(seconds)
            load = f"[load average {load_before:.1f} -> {_load():.1f}]"
            for name, values in figures.items():
                print(
                    f"mcp {substrate:14s} {name:18s} median {statistics.median(values):5.2f} s"
                    f"  max {max(values):5.2f} s  (n={len(values)})  {load}",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
