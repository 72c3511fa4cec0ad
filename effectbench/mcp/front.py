"""The MCP server's first second: answer at once what needs no SDK, prepare the rest meanwhile.

A client starting ``effectbench mcp`` waits for its ``initialize`` answer, then
(an agent's first steps) for the tool list and the ``task`` tool's answer.
Importing the ``mcp`` SDK (about 0.8 s of CPU) and provisioning the episode (a
browser, an X display) take seconds; none of these three answers needs either.
So :func:`serve` first runs ``plan`` (find the task, claim the attempt's file,
work out the tools and the ``task`` answer: :class:`Early`), then answers a
well-formed ``initialize`` itself (:func:`initialize_result`, from this module's
constants), and ``tools/list`` and ``task`` calls from the plan, while a background
thread provisions the episode and builds the SDK's server (``start``). Every
message the client sent meanwhile, the ones answered here included, is then
handed to the SDK's own stdio transport in order, through a pipe on fd 0; the
SDK's messages come back through a pipe on fd 1 and go to the client, except its
answers to the requests already answered here, each compared with the answer
given (a difference is written on stderr: :data:`MISMATCH`; a test fails). From
then on the SDK serves the connection as if it had been there from the start.

The attempt's file exists before ``initialize`` is answered, so a client that
leaves at any moment after it, however soon its side kills this process, leaves
the ``agent_error`` drop of a client that left. A first request that is not a
well-formed ``initialize`` (another protocol era, a malformed one) is left to the
SDK, and so is everything after it.

If the client leaves before the episode is prepared, the SDK still gets every
message and the end of input, so the episode ends as the ``agent_error`` drop of a
client that left, as it would have had the SDK answered first. A client killed
outright (its end of the wire closed) gets nothing more: what the SDK says after that
is read and dropped, never a traceback.

A plan refused for the user's reason (a cell whose attempt already completed, a task the
pack lacks) is told to the client as an MCP error on its first request (:func:`refuse`),
and on stderr in one line.
"""

from __future__ import annotations

import json
import os
import select
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from effectbench.errors import UsageError
from effectbench.mcp.shape import MAX_MESSAGE_BYTES, too_deep

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
CAPABILITIES: dict[str, Any] = {"tools": {"listChanged": False}}
"""What the SDK's server with this episode's tools declares."""
_END = b'{"effectbench-front": "end"}\n'
"""Written on fd 1 after the SDK has finished: everything before it has been forwarded."""
MISMATCH = "effectbench mcp: the SDK answers a request otherwise than this server did"
"""Written on stderr when the SDK's answer to a request answered early differs (a test fails)."""
MAX_PENDING = 1 << 20
"""Bytes of an unfinished line held here; more is passed on in pieces (never accumulated)."""
POLL_S = 0.1
"""How often a pump waiting for input looks whether it is told to stop."""


@dataclass(frozen=True)
class Early:
    """What the front answers before the SDK serves, besides ``initialize``."""

    tools: dict[str, Any]
    """The ``tools/list`` result."""
    task: dict[str, Any] | None
    """The ``task`` tool's result, when it is known before the episode is provisioned."""


def version() -> str:
    """The server's version in ``serverInfo``: EffectBench's."""
    from effectbench._version import engine_version

    return str(engine_version())


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


def _request(line: bytes) -> dict[str, Any] | None:
    """Return ``line`` as a JSON-RPC 2.0 request with a usable id, or None.

    A line over the wire's bounds is never parsed here: the transport behind answers it.
    """
    if len(line) > MAX_MESSAGE_BYTES or too_deep(line):
        return None
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    ident = message.get("id")
    if not isinstance(message.get("method"), str) or not isinstance(ident, str | int):
        return None
    return None if isinstance(ident, bool) else message


def early_result(early: Early, message: Mapping[str, Any]) -> dict[str, Any] | None:
    """Return the result :class:`Early` gives ``message`` (a request), or None (the SDK's)."""
    params = message.get("params")
    if message["method"] == "tools/list":
        first_page = params is None or (isinstance(params, dict) and "cursor" not in params)
        return early.tools if first_page else None
    if message["method"] == "tools/call" and isinstance(params, dict):
        if params.get("name") == "task" and params.get("arguments") in (None, {}):
            return early.task
    return None


class _Front:
    """The two pumps between the client's wire and the SDK's pipes."""

    def __init__(
        self,
        wire_in: int,
        wire_out: int,
        to_sdk: int,
        from_sdk: int,
        early: Early | None,
        client: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.wire_in, self.wire_out = wire_in, wire_out
        self.to_sdk, self.from_sdk = to_sdk, from_sdk
        self.early = early
        self.client = client
        """Told the ``clientInfo`` of the client's ``initialize`` (the harness it is)."""
        self.answered: dict[str | int, Any] = {}
        """The result answered here to each request, by id (the SDK's answer is dropped,
        compared with it)."""
        self.serving = threading.Event()
        """Set once the SDK serves: every later request is its to answer."""
        self.stop = threading.Event()
        self.gone = False
        """Whether the client's end of the wire is closed (nothing more reaches it)."""
        self._lock = threading.Lock()
        self._phase = "first"
        """``first`` (no request yet), ``early`` (initialize answered here) or ``sdk``."""

    def pump_in(self) -> None:
        """Client -> SDK: answer what can be answered here, pass every line on."""
        try:
            for line in _lines(self.wire_in, self.stop):
                if self._phase != "sdk" and not self.serving.is_set():
                    self._answer_early(line)
                _write_all(self.to_sdk, line)
        except OSError:
            pass  # the SDK is gone: nothing more to deliver
        finally:
            os.close(self.to_sdk)  # the end of input reaches the SDK: the episode ends

    def _answer_early(self, line: bytes) -> None:
        message = _request(line)
        if message is None:
            return  # a notification, a response or noise: the SDK's
        result: dict[str, Any] | None = None
        if self._phase == "first":
            self._phase = "early" if early_initialize(message) else "sdk"
            info = (
                message.get("params", {}).get("clientInfo")
                if message.get("method") == ("initialize")
                else None
            )
            if self.client is not None and isinstance(info, dict):
                self.client(info)
            if self._phase == "early":
                result = initialize_result(message["params"]["protocolVersion"])
        elif self.early is not None:
            result = early_result(self.early, message)
        if result is None:
            return
        with self._lock:
            self.answered[message["id"]] = result  # before the SDK can see the request
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        self._forward(json.dumps(answer, separators=(",", ":")).encode() + b"\n")

    def pump_out(self) -> None:
        """SDK -> client: every message but the SDK's answers to requests answered here."""
        for line in _lines(self.from_sdk, self.stop):
            if line == _END:
                return
            if self.answered and self._drop(line):
                continue
            self._forward(line)

    def _drop(self, line: bytes) -> bool:
        """Say whether ``line`` answers a request answered here (comparing the answers)."""
        try:
            message = json.loads(line)
        except ValueError:
            return False
        if not isinstance(message, dict) or "method" in message:
            return False
        ident = message.get("id")
        if not isinstance(ident, str | int) or isinstance(ident, bool):
            return False
        with self._lock:
            sent = self.answered.pop(ident, None)
        if sent is None:
            return False
        if message.get("result") != sent:  # the SDK answers otherwise: say so
            _write_all(2, f"{MISMATCH}: {line.decode()[:2000]}".encode() + b"\n")
        return True

    def _forward(self, line: bytes) -> None:
        """Pass one message to the client; a client gone drops it silently.

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


REFUSED = -32600
"""The JSON-RPC error code of every request to a server that cannot serve its episode."""


def refuse(why: str) -> None:
    """Tell the client on stdio why this server serves no episode, until it closes its end.

    ``initialize`` is answered (its instructions say why), so the client's handshake
    completes and its first request meets a JSON-RPC error whose message is ``why`` (a cell
    whose attempt completed names that attempt), never a closed connection.
    """
    try:
        for line in _lines(0, threading.Event()):
            message = _request(line)
            if message is None:
                continue
            answer: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
            if early_initialize(message):
                result = initialize_result(str(message["params"]["protocolVersion"]))
                answer["result"] = {**result, "instructions": f"No episode is served: {why}"}
            else:
                answer["error"] = {"code": REFUSED, "message": why}
            _write_all(1, json.dumps(answer).encode() + b"\n")
    except OSError:  # no client on the other end (closed stdio): the one line on stderr
        return


def serve(
    plan: Callable[[], Early | None],
    start: Callable[[], Callable[[], None]],
    client: Callable[[dict[str, Any]], None] | None = None,
) -> None:
    """Serve MCP on stdio: ``plan`` first, then answer early, run what ``start`` returns.

    ``plan`` runs before anything is answered (the attempt's file is claimed there) and
    returns what the front answers besides ``initialize`` (None: nothing more).
    ``start`` then runs on a background thread (provision, import the SDK, build its
    server) and returns the blocking call that serves the SDK's stdio server on fd 0 and
    fd 1 until the end of input; ``client`` is told the ``clientInfo`` the client's
    ``initialize`` gives. An error either raises is raised here, with fd 0 and
    fd 1 restored (a usage error still ends with its one line).
    """
    saved_in, saved_out = os.dup(0), os.dup(1)
    sys.stdout.flush()
    os.dup2(2, 1)  # while preparing, a stray print goes to stderr, never to the client
    try:
        early = plan()
    except BaseException as exc:
        os.dup2(saved_out, 1)
        for fd in (saved_in, saved_out):
            os.close(fd)
        if isinstance(exc, UsageError) and not os.isatty(0):  # a client, not a terminal:
            refuse(exc.diagnostics())  # it is told why, as an MCP error
        raise
    wire_in, wire_out = os.dup(saved_in), os.dup(saved_out)
    sdk_in, to_sdk = os.pipe()
    from_sdk, sdk_out = os.pipe()
    os.dup2(sdk_in, 0)
    os.close(sdk_in)
    front = _Front(wire_in, wire_out, to_sdk, from_sdk, early, client)
    pumps = [
        threading.Thread(target=front.pump_in, name="mcp-front-in", daemon=True),
        threading.Thread(target=front.pump_out, name="mcp-front-out", daemon=True),
    ]
    for pump in pumps:
        pump.start()
    outcome: list[Callable[[], None] | BaseException] = []

    def _start() -> None:
        try:
            outcome.append(start())
        except BaseException as exc:  # noqa: BLE001 - raised again on the calling thread
            outcome.append(exc)

    starting = threading.Thread(target=_start, name="mcp-start")
    starting.start()
    starting.join()
    try:
        if isinstance(outcome[0], BaseException):
            raise outcome[0]
        sys.stdout.flush()
        os.dup2(sdk_out, 1)
        front.serving.set()
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
