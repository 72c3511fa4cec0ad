"""How fast an MCP episode server answers: ``initialize``, the first tool call, the row.

For each run it starts ``effectbench mcp`` (the command an agent's client
starts) and speaks MCP's stdio transport itself (one JSON-RPC message per
line; no SDK in this process, so the client's own imports are not timed):

* ``initialize``: from the process's start to the answer (the target: 1 s);
* ``task``: from the start to the first tool call answered (the episode is
  provisioned by then: the browser, the X session or the app started);
* the row: the client then leaves without reporting, and the time until the
  server has written the episode's record (a halt) and exited.

Prints the median of ``--runs`` runs per substrate, with the load average beside
each figure. Usage:

    .venv/bin/python benchmarks/bench_mcp.py [--runs 5] [--substrate web,desktop]
"""

from __future__ import annotations

import argparse
import json
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PROTOCOL = "2025-06-18"
TIMEOUT_S = 120.0


class Wire:
    """A raw MCP stdio connection to a server process: send a message, wait for an answer."""

    def __init__(self, argv: list[str]) -> None:
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self._buffer = b""
        self._next = 0

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request and return its answer (skipping notifications)."""
        self._next += 1
        self.send({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})
        while True:
            message = self._read()
            if message.get("id") == self._next:
                return message

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        deadline = time.monotonic() + TIMEOUT_S
        while b"\n" not in self._buffer:
            if time.monotonic() > deadline or self.process.poll() is not None:
                err = self.process.stderr.read() if self.process.stderr else b""
                raise RuntimeError(f"the server gave no answer: {err.decode()[-500:]}")
            ready, _, _ = select.select([self.process.stdout], [], [], 0.5)
            if ready:
                self._buffer += os.read(self.process.stdout.fileno(), 65536)
        line, _, self._buffer = self._buffer.partition(b"\n")
        message: dict[str, Any] = json.loads(line)
        return message

    def since_start(self) -> float:
        return time.perf_counter() - self.started

    def leave(self) -> int:
        """Close stdin (the client leaves) and wait for the server to exit."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(timeout=TIMEOUT_S)


def one(substrate: str, task: str, records: Path) -> dict[str, float]:
    """Time one episode server: initialize, the first tool call, the record after leaving."""
    argv = [sys.executable, "-m", "effectbench.cli", "mcp", "--pack", "clinic"]
    argv += ["--substrate", substrate, "--task", task, "--record-dir", str(records)]
    wire = Wire(argv)
    try:
        answer = wire.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "bench_mcp", "version": "1"},
            },
        )
        initialized = wire.since_start()
        if "result" not in answer:
            raise RuntimeError(f"initialize failed: {answer}")
        wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        reply = wire.request("tools/call", {"name": "task", "arguments": {}})
        first_call = wire.since_start()
        if reply.get("result", {}).get("isError"):
            raise RuntimeError(f"the task tool failed: {reply}")
        left = time.perf_counter()
        code = wire.leave()
        row = time.perf_counter() - left
    finally:
        if wire.process.poll() is None:
            wire.process.kill()
            wire.process.wait()
    written = list(records.glob("*.json"))
    # A client that leaves without a report or an abort leaves an agent_error drop (the
    # attempt's file, claimed before the episode started), never a halt.
    if code != 0 or len(written) != 1 or '"agent_error"' not in written[0].read_text():
        raise RuntimeError(f"no agent_error drop after the client left (exit {code}, {written})")
    written[0].unlink()
    return {"initialize": initialized, "first tool call": first_call, "record after leaving": row}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--substrate", default="web,desktop,remote_display")
    parser.add_argument("--task", default="clean_draft")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="effectbench-bench-mcp-") as folder:
        for substrate in args.substrate.split(","):
            figures: dict[str, list[float]] = {}
            load_before = os.getloadavg()[0]
            for _ in range(args.runs):
                for name, seconds in one(substrate, args.task, Path(folder)).items():
                    figures.setdefault(name, []).append(seconds)
            load = f"[load average {load_before:.1f} -> {os.getloadavg()[0]:.1f}]"
            for name, values in figures.items():
                print(
                    f"mcp {substrate:14s} {name:18s} median {statistics.median(values):5.2f} s"
                    f"  max {max(values):5.2f} s  (n={len(values)})  {load}",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
