"""The MCP server's first second: answer ``initialize`` at once, prepare the episode meanwhile.

A client starting ``effectbench mcp`` waits for its ``initialize`` answer before
anything else. Building the answer needs nothing but constants; importing the
``mcp`` SDK (about 0.6 s of CPU), the pack and the app and provisioning the
episode need seconds. So :func:`serve` answers a well-formed ``initialize``
itself, from this module's constants (standard library only), while a
background thread prepares the episode and the SDK's server. Every message the
client sent meanwhile, the ``initialize`` included, is then handed to the SDK's
own stdio transport in order, through a pipe on fd 0; the SDK's messages come
back through a pipe on fd 1 and go to the client, except its answer to that
``initialize``, which the client already has. From then on the SDK serves the
connection as if it had been there from the start.

:func:`initialize_result` is the answer; a test holds it equal to the SDK's own
answer for the same request. A first request that is not a well-formed
``initialize`` (another protocol era, a malformed one) waits for the SDK.

If the client leaves before the episode is prepared, the SDK still gets every
message and the end of input, so the episode ends as the ``agent_error`` drop of a
client that left, as it would have had the SDK answered first. A client killed
outright (its end of the wire closed) gets nothing more: what the SDK says after that
is read and dropped, never a traceback.
"""

from __future__ import annotations

import json
import os
import select
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any

SERVER_NAME = "effectbench-episode"
INSTRUCTIONS = (
    "One EffectBench episode. Call `task` for the goal, the referral, the display and the "
    "action vocabulary; look with `screenshot`; act with the computer actions (coordinates in "
    "the display `task` names). End with `report` exactly once (success, or halted; list the "
    "model calls you made to carry their cost), or with `abort` when your own harness failed "
    "(a model API outage, a crash): that drops the episode to be run again, never a halt. "
    "The score is the record's true state, read by an oracle you cannot reach."
)
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""The protocol versions reached through ``initialize``; an unknown request gets the last."""
CAPABILITIES: dict[str, Any] = {
    "prompts": {"listChanged": False},
    "resources": {"listChanged": False, "subscribe": False},
    "tools": {"listChanged": False},
}
"""What the SDK's server with this episode's tools declares."""
_END = b'{"effectbench-front": "end"}\n'
MISMATCH = "effectbench mcp: the SDK answers initialize otherwise than this server did"
"""Written on stderr when the SDK's answer to the replayed ``initialize`` differs (a test fails)."""
MAX_PENDING = 1 << 20
"""Bytes of an unfinished line held here; more is passed on in pieces (never accumulated)."""
POLL_S = 0.1
"""How often a pump waiting for input looks whether it is told to stop."""
"""Written on fd 1 after the SDK has finished: everything before it has been forwarded."""


def version() -> str:
    """The server's version in ``serverInfo``: EffectBench's."""
    from effectbench import __version__

    return str(__version__)


def early_initialize(message: Mapping[str, Any]) -> bool:
    """Say whether ``message`` is an ``initialize`` request this module answers itself.

    Only a request whose parameters hold what the SDK requires (a protocol
    version, capabilities whose entries are objects, a client name and version)
    is answered early; any other first request is left to the SDK.
    """
    params = message.get("params")
    if message.get("method") != "initialize" or "id" not in message or not isinstance(params, dict):
        return False
    client, capabilities = params.get("clientInfo"), params.get("capabilities")
    return (
        isinstance(params.get("protocolVersion"), str)
        and isinstance(capabilities, dict)
        and all(isinstance(v, dict) for v in capabilities.values())
        and isinstance(client, dict)
        and isinstance(client.get("name"), str)
        and isinstance(client.get("version"), str)
        and isinstance(params.get("_meta", {}), dict)
    )


def initialize_result(protocol_version: str) -> dict[str, Any]:
    """The ``initialize`` result for a client asking for ``protocol_version``."""
    chosen = protocol_version if protocol_version in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
    return {
        "capabilities": CAPABILITIES,
        "instructions": INSTRUCTIONS,
        "protocolVersion": chosen,
        "serverInfo": {"name": SERVER_NAME, "version": version()},
    }


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _lines(fd: int, stop: threading.Event) -> Any:
    """Yield each line read from ``fd`` (the last one even without its newline) until ``stop``."""
    pending = b""
    while not stop.is_set():
        ready, _, _ = select.select([fd], [], [], POLL_S)
        if not ready:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            if pending:
                yield pending
            return
        pending += chunk
        *whole, pending = pending.split(b"\n")
        for line in whole:
            yield line + b"\n"
        if len(pending) > MAX_PENDING:  # a line too long to hold: passed on as it comes, the
            yield pending  # transport behind answers it with an error and skips the rest
            pending = b""


class _Front:
    """The two pumps between the client's wire and the SDK's pipes."""

    def __init__(self, wire_in: int, wire_out: int, to_sdk: int, from_sdk: int) -> None:
        self.wire_in, self.wire_out = wire_in, wire_out
        self.to_sdk, self.from_sdk = to_sdk, from_sdk
        self.answered: Any = None
        """The id of the ``initialize`` answered here (its SDK answer is dropped)."""
        self.sent: dict[str, Any] = {}
        """The result answered here, compared with the SDK's own when it comes."""
        self.stop = threading.Event()
        self.gone = False
        """Whether the client's end of the wire is closed (nothing more reaches it)."""
        self._lock = threading.Lock()
        self._decided = False

    def pump_in(self) -> None:
        """Client -> SDK: answer the first ``initialize`` here, pass every line on."""
        try:
            for line in _lines(self.wire_in, self.stop):
                if not self._decided:
                    self._first(line)
                _write_all(self.to_sdk, line)
        except OSError:
            pass  # the SDK is gone: nothing more to deliver
        finally:
            os.close(self.to_sdk)  # the end of input reaches the SDK: the episode ends

    def _first(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            return
        if not isinstance(message, dict) or "method" not in message or "id" not in message:
            return  # a notification (or noise) before the first request
        self._decided = True
        if early_initialize(message):
            self.sent = initialize_result(message["params"]["protocolVersion"])
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": self.sent}
            data = json.dumps(answer, separators=(",", ":")).encode() + b"\n"
            self.answered = message["id"]
            self._forward(data)

    def pump_out(self) -> None:
        """SDK -> client: every message but the SDK's answer to an early ``initialize``."""
        dropped = False
        for line in _lines(self.from_sdk, self.stop):
            if line == _END:
                return
            if not dropped and self.answered is not None:
                try:
                    message = json.loads(line)
                except ValueError:
                    message = None
                if isinstance(message, dict) and message.get("id") == self.answered:
                    dropped = True
                    if message.get("result") != self.sent:  # the SDK answers otherwise: say so
                        _write_all(2, f"{MISMATCH}: {line.decode()[:2000]}".encode() + b"\n")
                    continue
            self._forward(line)

    def _forward(self, line: bytes) -> None:
        """Pass one of the SDK's messages to the client; a client gone drops it silently.

        A client killed mid-episode closes its end of the wire: writing to it fails
        (``EPIPE``). Nobody is left to read what the SDK says, so every later message is
        dropped too (still read from the SDK, which never blocks on a full pipe); the
        episode ends through the end of the client's input, as when a client leaves.
        """
        if self.gone:
            return
        try:
            with self._lock:
                _write_all(self.wire_out, line)
        except OSError:
            self.gone = True


def serve(prepare: Callable[[], Callable[[], None]]) -> None:
    """Serve MCP on stdio: answer ``initialize`` now, run what ``prepare`` returns when ready.

    ``prepare`` runs on a background thread (import, validate, start the
    episode) and returns the blocking call that serves the SDK's stdio server on
    fd 0 and fd 1 until the end of input. An error it raises is raised here,
    with fd 0 and fd 1 restored (a usage error still ends with its one line).
    """
    saved_in, saved_out = os.dup(0), os.dup(1)
    wire_in, wire_out = os.dup(0), os.dup(1)
    sdk_in, to_sdk = os.pipe()
    from_sdk, sdk_out = os.pipe()
    sys.stdout.flush()
    os.dup2(sdk_in, 0)
    os.close(sdk_in)
    os.dup2(2, 1)  # while preparing, a stray print goes to stderr, never to the client
    front = _Front(wire_in, wire_out, to_sdk, from_sdk)
    pumps = [
        threading.Thread(target=front.pump_in, name="mcp-front-in", daemon=True),
        threading.Thread(target=front.pump_out, name="mcp-front-out", daemon=True),
    ]
    for pump in pumps:
        pump.start()
    outcome: list[Callable[[], None] | BaseException] = []

    def _prepare() -> None:
        try:
            outcome.append(prepare())
        except BaseException as exc:  # noqa: BLE001 - raised again on the calling thread
            outcome.append(exc)

    preparing = threading.Thread(target=_prepare, name="mcp-prepare")
    preparing.start()
    preparing.join()
    try:
        if isinstance(outcome[0], BaseException):
            raise outcome[0]
        sys.stdout.flush()
        os.dup2(sdk_out, 1)
        outcome[0]()
        _write_all(1, _END)  # the SDK has written its last message to fd 1 by now
        pumps[1].join()
    finally:
        sys.stdout.flush()
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(sdk_out)  # a pump_out still reading (after a failure) meets the end now
        front.stop.set()
        for pump in pumps:
            pump.join()
        for fd in (saved_in, saved_out, wire_in, wire_out, from_sdk):
            os.close(fd)
