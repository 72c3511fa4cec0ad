"""What the vendor agent loops share: retries, outages, usage and cost, recorded sessions.

The loops (``anthropic_computer_agent.py``, ``openai_computer_agent.py``) play one
EffectBench episode through ``effectbench mcp``. Around each model call:

* :func:`call_with_retries`: a transient failure of the model's API (rate limit,
  overload, a 5xx, a dropped connection) is tried again with exponential backoff
  and jitter; a failure that persists, or one that is not transient (a bad key), is
  an :class:`Outage`. The loop then ends the episode with ``abort``: the harness
  around the agent failed, an ``agent_error`` drop to run again, never a halt.
* :class:`Meter`: each call's tokens and cost (from :data:`PRICES` or ``--price``),
  handed to ``report`` as the model calls the row carries.
* :class:`ReplayedError` and :func:`load_trace`: a recorded session stands in for the
  vendor's client (``--dry-run TRACE``), so the loops run offline: no key, no network.
"""

from __future__ import annotations

import json
import math
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mcp_screen_agent import McpEpisode  # noqa: E402

T = TypeVar("T")

RETRIES = 5
"""How many more times a transient failure is tried (about a minute of backoff in all)."""
BACKOFF_S = 1.0
"""The first wait; each next one doubles, up to :data:`BACKOFF_CAP_S`, with jitter."""
BACKOFF_CAP_S = 30.0
ABORTED = 3
"""The loop's exit status after it ended the episode with ``abort`` (0: it reported)."""
TRANSIENT_STATUS = frozenset((408, 409, 429, 500, 502, 503, 504, 529))
"""HTTP statuses a model API answers while it is overloaded or briefly failing."""

PRICES: dict[str, tuple[float, float]] = {
    "claude-opus-4-7": (5.0, 25.0),
    "claude-opus-4-6": (5.0, 25.0),
    "claude-opus-4-5": (5.0, 25.0),
    "claude-sonnet-4-6": (3.0, 15.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-opus-4": (15.0, 75.0),
    "computer-use-preview": (3.0, 12.0),
}
"""USD per million input and output tokens, by model name prefix (check your vendor's
price list; ``--price IN,OUT`` overrides, and is needed for a model not listed)."""


ABORTED_PREFIX = "aborted: "
"""How a loop's ending starts when it aborted the episode."""


class Outage(Exception):
    """The model's API failed for good: the episode is aborted (``agent_error``)."""


class ReplayedError(Exception):
    """A model API failure in a recorded session (what the vendor's client raises)."""

    def __init__(self, status_code: int, message: str) -> None:
        super().__init__(f"HTTP {status_code}: {message}")
        self.status_code = status_code


def is_transient(exc: BaseException) -> bool:
    """Whether a failed call is worth trying again (overload, rate limit, 5xx, network)."""
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status in TRANSIENT_STATUS
    name = type(exc).__name__
    return (
        isinstance(exc, ConnectionError | TimeoutError)
        or "Connection" in name
        or ("Timeout" in name)
    )


def describe(exc: BaseException) -> str:
    """One line on a failed call, for ``abort``'s reason."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}"[:500]


def call_with_retries(
    call: Callable[[], T],
    *,
    retries: int = RETRIES,
    sleep: Callable[[float], None] = time.sleep,
    log: Callable[[str], None] | None = None,
) -> T:
    """Return ``call()``, trying a transient failure again after a growing wait.

    A failure that is not transient, or one still there after ``retries`` more tries,
    raises :class:`Outage` (chained to the last failure).
    """
    for attempt in range(retries + 1):
        try:
            return call()
        except Exception as exc:  # noqa: BLE001 - every failure is judged, none hidden
            if not is_transient(exc) or attempt == retries:
                tries = f" after {attempt + 1} tries" if attempt else ""
                raise Outage(f"the model API failed{tries}: {describe(exc)}") from exc
            delay = min(BACKOFF_CAP_S, BACKOFF_S * 2**attempt) * random.uniform(0.5, 1.0)
            if log is not None:
                log(f"model API: {describe(exc)}; trying again in {delay:.1f} s")
            sleep(delay)
    raise AssertionError("unreachable")  # pragma: no cover


def price_of(model: str, given: str | None) -> tuple[float, float]:
    """Return the USD per million input and output tokens of ``model``.

    ``given`` is ``--price IN,OUT``; without it the model must be in :data:`PRICES`.
    """
    if given:
        try:
            price_in, price_out = (float(v) for v in given.split(","))
        except ValueError:
            raise SystemExit(
                f"--price takes IN,OUT in USD per million tokens, got {given!r}"
            ) from None
        return price_in, price_out
    known = max((p for p in PRICES if model.startswith(p)), key=len, default=None)
    if known is None:
        raise SystemExit(
            f"no price known for model {model!r}: give --price IN,OUT (USD per million input "
            "and output tokens), so the row carries the episode's cost"
        )
    return PRICES[known]


@dataclass
class Meter:
    """The model calls of one episode, as ``report`` lists them (the row's cost)."""

    model: str
    price_in: float
    price_out: float
    calls: list[dict[str, Any]] = field(default_factory=list)

    def add(self, input_tokens: int, output_tokens: int, latency_s: float, note: str = "") -> None:
        """Record one call's usage and what it cost."""
        cost = (input_tokens * self.price_in + output_tokens * self.price_out) / 1_000_000
        self.calls.append(
            {
                "model": self.model,
                "input_tokens": int(input_tokens),
                "output_tokens": int(output_tokens),
                "cost_usd": round(cost, 8),
                "latency_s": round(max(0.0, latency_s), 6),
                "note": note,
            }
        )

    @property
    def cost_usd(self) -> float:
        """What the episode's model calls cost in all."""
        return round(math.fsum(float(c["cost_usd"]) for c in self.calls), 8)


def load_trace(path: str) -> dict[str, Any]:
    """Read a recorded session (``--dry-run``); a missing or broken file stops the loop."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"{path}: not a recorded session ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("turns"), list):
        raise SystemExit(f"{path}: a recorded session holds a list of turns")
    return data


class Replay:
    """The turns of a recorded session, answered in order (a turn may be a failure)."""

    def __init__(self, trace: dict[str, Any]) -> None:
        self.turns = list(trace["turns"])
        self.requests: list[dict[str, Any]] = []
        """Every request the loop made, for tests to look at."""

    def next_turn(self, request: dict[str, Any]) -> dict[str, Any]:
        """Return the next recorded answer to ``request`` (raising a recorded failure)."""
        self.requests.append(request)
        if not self.turns:
            raise ReplayedError(599, "the recorded session has no more turns")
        turn = self.turns.pop(0)
        error = turn.get("error")
        if error is not None:
            raise ReplayedError(int(error["status"]), str(error["message"]))
        answer: dict[str, Any] = turn["response"]
        return answer


def mcp_command(args: Any, vocabulary: str) -> list[str]:
    """``effectbench mcp`` for the loop's options (clinic pack, one task and trial)."""
    command = [sys.executable, "-m", "effectbench.cli", "mcp", "--pack", "clinic"]
    command += ["--substrate", args.substrate, "--task", args.task, "--trial", str(args.trial)]
    command += ["--record-dir", args.record_dir, "--system", args.system]
    return [*command, "--vocabulary", vocabulary]


def say(text: str) -> None:
    """Progress for the person running the loop (on stderr: stdout is the ending)."""
    print(text, file=sys.stderr, flush=True)


def common_options(parser: Any, system: str, model: str) -> None:
    """The options both loops take."""
    parser.add_argument("--task", help="a clinic task name or id (clean_draft)")
    parser.add_argument("--trial", type=int, default=0)
    parser.add_argument("--substrate", default="web", help="web, desktop or remote_display")
    parser.add_argument("--record-dir", default="effectbench-records")
    parser.add_argument("--system", default=system, help="the system's name on the board")
    parser.add_argument("--model", default=model)
    parser.add_argument("--price", metavar="IN,OUT", help="USD per million tokens (see PRICES)")
    parser.add_argument("--max-turns", type=int, default=60)
    parser.add_argument(
        "--history", type=int, default=3, help="screenshots kept in the model's context"
    )
    parser.add_argument("--dry-run", metavar="TRACE", help="replay a recorded session offline")


def trace_cell(args: Any, trace: dict[str, Any]) -> None:
    """Take the task, trial and substrate of a recorded session unless given."""
    args.task = args.task or trace["task"]
    if args.trial == 0 and "trial" in trace:
        args.trial = int(trace["trial"])
    if args.substrate == "web" and "substrate" in trace:
        args.substrate = str(trace["substrate"])


def no_wait(seconds: float) -> None:
    """A replay does not wait out backoff delays (the loop still computes them)."""


def plain(reply: Any) -> dict[str, Any]:
    """A reply as plain data (the vendors' objects dump themselves; a replay is data)."""
    data: dict[str, Any] = reply.model_dump() if hasattr(reply, "model_dump") else reply
    return data


def ask(create: Callable[..., Any], request: dict[str, Any]) -> dict[str, Any]:
    """One call of the model's API, its answer as plain data."""
    return plain(create(**request))


def report(
    episode: McpEpisode, meter: Meter, success: bool, message: str, halted: bool | None = None
) -> str:
    """End the episode with ``report``, listing the metered model calls (the row's cost)."""
    halted = (not success) if halted is None else halted
    arguments = {"success": success, "halted": halted, "message": message}
    episode.call("report", {**arguments, "model_calls": meter.calls})
    return f"reported {'success' if success else 'halted'} (${meter.cost_usd:.4f} of model calls)"


def client_for(
    parser: Any,
    args: Any,
    replay: Callable[[dict[str, Any]], Any],
    connect: Callable[[], Any],
    sleep: Callable[[float], None] | None,
) -> tuple[Any, Callable[[float], None]]:
    """Return the model's client and how to wait: a recorded session's with ``--dry-run``
    (taking its task, trial, model and price), else the vendor's own."""
    if args.dry_run:
        trace = load_trace(args.dry_run)
        trace_cell(args, trace)
        args.model = trace.get("model", args.model)
        args.price = args.price or trace.get("price")
        client, wait = replay(trace), sleep or no_wait
    else:
        if not args.task:
            parser.error("--task is required unless --dry-run")
        client, wait = connect(), sleep or time.sleep
    price_of(args.model, args.price)  # an unpriced model stops before any episode
    return client, wait


def play(
    args: Any,
    vocabulary: str,
    loop: Callable[..., str],
    client: Any,
    wait: Callable[[float], None],
) -> int:
    """Start the episode's MCP server, run ``loop`` on it, and print how it ended.

    Return the exit status: 0 when the model reported (success or a halt),
    :data:`ABORTED` when the loop aborted the episode (a script running many episodes
    sees which ones to run again).
    """
    episode = McpEpisode(mcp_command(args, vocabulary))
    try:
        ended = loop(client, episode, args, sleep=wait)
        print(ended)
    finally:
        episode.close()
    return ABORTED if ended.startswith(ABORTED_PREFIX) else 0


__all__: Sequence[str] = (
    "ABORTED",
    "ABORTED_PREFIX",
    "Meter",
    "Outage",
    "Replay",
    "ReplayedError",
    "ask",
    "call_with_retries",
    "client_for",
    "common_options",
    "load_trace",
    "mcp_command",
    "play",
    "price_of",
    "report",
)
