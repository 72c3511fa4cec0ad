"""The MCP episode server: the runner's own episode, driven by a remote agent.

The episode runs on one dedicated thread (screens such as the shared browser
are bound to the thread that made them) through the runner's
:func:`~effectbench.run.runner.run_episode`, so provisioning, the oracle's
snapshots, the health check, the labelling and the row are exactly those of an
in-process run. The system under test in that run is :class:`RemoteAgent`: it
waits for the client's tool calls, performs each on the episode's
:class:`~effectbench.computer.ComputerEnv` (through the chosen vendor's
translator, :mod:`.vocabulary`, so a malformed action is a tool error, never a
crash) and returns when the client ends the episode.

An episode ends in one of three ways (:mod:`effectbench.attempts`):

* ``report`` (or ``DONE``/``FAIL`` in ``computer_13``): the agent reported or
  halted, with the model calls it made if it says (their cost goes into the row,
  marked as reported by the submitter); the episode is judged and scored; a client
  silent for the whole episode timeout is a halt too;
* ``abort(reason)``, or a client that leaves before ending the episode: the harness
  around the agent failed, an ``agent_error`` drop, never a halt;
* the benchmark's harness failed (provisioning, a dead screen): ``infrastructure``.

Every attempt has its own file in the record directory (:mod:`.records`),
claimed before provisioning starts and holding an ``agent_error`` drop until the
episode ends, so a server killed at any moment (the ``mcp`` SDK's client kills
its server two seconds after leaving) leaves a drop, never nothing and never a
halt. A client that leaves has its drop written at once, before the episode is
torn down. ``report`` and ``abort`` are answered once the attempt's file holds
the outcome.

The harness answers tool calls and records the claim, nothing else: no answer
depends on the record or on what the agent did so far (a success reported
before any action is recorded as claimed, and scored as the phantom it is, as
through every other door). Tool errors (``isError`` results) come from a call's
own arguments (a malformed or refused action, a report both successful and
halted) or from a call after the episode's end.

A call the client gave up on (its request cancelled, or the client gone) is
never performed, and its answer is never set: the episode thread skips it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import json
import queue
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from effectbench.computer import AccessibleComputerEnv, ActionError, ComputerEnv, Display, checks
from effectbench.frontends import ShowsDisplay
from effectbench.mcp.records import claim_attempt, finish_attempt
from effectbench.mcp.tools import (
    A11Y_TOOLS,
    MAX_REPORTED_CALLS,
    OWN_TOOLS,
    VERIFY_TOOL,
    ReportedCall,
    episode_tools,
    text_result,
)
from effectbench.mcp.vocabulary import DEFAULT, VOCABULARIES, Vocabulary
from effectbench.run.runner import INFRA_RETRIES, DroppedEpisode, run_episode
from effectbench.run.view import handle_for
from effectbench.schema import (
    COST_REPORTED_KEY,
    COST_REPORTED_VALUE,
    HARNESS_KEY,
    AgentReport,
    DropReason,
    EpisodeRecord,
    ModelCall,
    Substrate,
    TaskSpec,
)
from effectbench.seam import (
    AgentDisplay,
    AgentError,
    AgentTask,
    Attempt,
    BenchmarkProvider,
    ChecksFrontEnds,
    ProductVerifier,
)

EPISODE_TIMEOUT_S = 900.0
"""An episode whose client neither ends it nor disconnects within this is a recorded halt."""
LEFT = "the client disconnected before reporting"
"""The detail of the drop of an episode whose client left without ending it."""
NO_READBACK = "this episode's product offers no readback"


class HarnessFailure(Exception):
    """The harness broke a promise it made the agent (the episode is dropped as
    ``infrastructure``, never the agent's)."""


class EpisodeOver(Exception):
    """The episode was ended; no further call is served."""


def model_calls(reported: list[Mapping[str, Any]]) -> tuple[ModelCall, ...]:
    """Return ``report``'s model calls as the row's, numbered in order (refusing bad ones)."""
    if len(reported) > MAX_REPORTED_CALLS:
        raise ActionError(f"a report lists at most {MAX_REPORTED_CALLS} model calls")
    calls = []
    for i, data in enumerate(reported):
        call = ReportedCall.model_validate(data)
        calls.append(ModelCall(index=i, **call.model_dump()))
    return tuple(calls)


ENDED = {
    "report": "report recorded; the episode is over",
    "abort": "abort recorded; the episode is over (it is never scored; run it again)",
}
"""The answer to each ending call: a receipt of the call, never a word on the outcome."""


def settle(future: concurrent.futures.Future[Any], answer: Any) -> None:
    """Give ``future`` its answer (an exception is raised to the caller), unless it has one.

    A future the client's side cancelled (its request was cancelled, or the client
    left) already has its ending: setting another would raise ``InvalidStateError``.
    """
    try:
        if isinstance(answer, BaseException):
            future.set_exception(answer)
        else:
            future.set_result(answer)
    except concurrent.futures.InvalidStateError:
        pass  # cancelled or answered meanwhile: nobody waits for this answer


@dataclass
class _Call:
    name: str
    arguments: dict[str, Any]
    future: concurrent.futures.Future[Any]


_STOP = "__stop__"
ENDINGS = ("report", "abort")
"""The calls that end an episode (besides ``DONE``/``FAIL`` of ``computer_13``)."""


class RemoteAgent:
    """The system under test of an MCP episode: whatever the client's calls do."""

    name = "mcp"

    def __init__(
        self,
        name: str,
        timeout_s: float = EPISODE_TIMEOUT_S,
        vocabulary: Vocabulary = VOCABULARIES[DEFAULT],
        display: Display | None = None,
    ) -> None:
        self.name = name
        self.display = display
        """The display the agent was told before the episode was provisioned, if it was."""
        self.harness_failure: str | None = None
        """What promise the harness broke (then the episode is an ``infrastructure`` drop)."""
        self.calls: queue.Queue[_Call] = queue.Queue()
        self.timeout_s = timeout_s
        self.vocabulary = vocabulary
        self.started = False
        """Whether the agent was ever handed the episode (then it cannot be re-provisioned)."""
        self.ending: str | None = None
        """How the agent ended the episode: report, abort, left or timeout (first one wins)."""
        self.pending: concurrent.futures.Future[Any] | None = None
        """The ending call's answer, given once the attempt's file holds the outcome."""
        self.verifier: ProductVerifier | None = None
        self.readback_error = NO_READBACK
        self._lock = threading.Lock()

    def end(self, how: str) -> bool:
        """Claim the episode's ending; False when it already ended another way."""
        with self._lock:
            if self.ending is not None:
                return False
            self.ending = how
            return True

    def run(self, task: AgentTask, env: Any, params: Mapping[str, Any]) -> AgentReport | Attempt:
        """Serve the client's calls on ``env`` until it ends the episode, leaves or times out."""
        if self.display is not None and env.display != self.display:
            self.harness_failure = (
                f"the agent was told a {self.display.width}x{self.display.height} display, the "
                f"episode's screen is {env.display.width}x{env.display.height}"
            )
            raise HarnessFailure(self.harness_failure)
        self.started = True
        offer = getattr(env, "product_effect_verifier", None)
        if task.declared_effect is not None and callable(offer):
            try:  # taken before the agent acts: it reads its baseline now
                self.verifier = offer()
            except Exception as exc:  # noqa: BLE001 - the readback is then refused, saying why
                self.readback_error = f"{NO_READBACK} now ({type(exc).__name__}: {exc})"
        deadline = time.monotonic() + self.timeout_s
        while True:
            try:
                call = self.calls.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                if not self.end("timeout"):
                    continue  # the client left meanwhile: its stop call is queued
                return AgentReport(
                    reported_success=False,
                    halted=True,
                    message=f"no report within {self.timeout_s:g} s: the episode timed out",
                )
            if call.name == _STOP:
                settle(call.future, None)
                self.end("left")
                raise AgentError(LEFT)
            if not call.future.set_running_or_notify_cancel():
                continue  # the client gave up on this call: it is never performed
            try:
                result = self._serve(task, env, call)
            except Exception as exc:  # noqa: BLE001 - every failure goes back to the client
                settle(call.future, exc)
                continue
            if isinstance(result, Attempt | AgentError):
                if not self.end("report" if isinstance(result, Attempt) else "abort"):
                    settle(call.future, EpisodeOver("the episode is over"))
                    raise AgentError(LEFT)
                self.pending = call.future
                if isinstance(result, AgentError):
                    raise result
                return result
            settle(call.future, result)

    def _report(self, report: AgentReport, calls: tuple[ModelCall, ...] = ()) -> Attempt:
        if report.reported_success and report.halted:
            raise ActionError("a report is either success or halted, not both")
        return Attempt(report=report, model_calls=calls)

    def _serve(self, task: AgentTask, env: ComputerEnv, call: _Call) -> Any:
        args = call.arguments
        if call.name == "report":
            report = AgentReport(
                reported_success=bool(args.get("success")),
                halted=bool(args.get("halted")),
                message=str(args.get("message", ""))[:2000],
            )
            return self._report(report, model_calls(args.get("model_calls") or []))
        if call.name == "abort":
            reason = str(args.get("reason", "")).strip()[:2000]
            if not reason:
                raise ActionError("abort needs a reason (what failed around the agent)")
            return AgentError(f"the agent aborted: {reason}")
        if call.name == "screenshot":
            return ("image", env.screenshot())
        if call.name == "display":
            return ("display", (env.display.width, env.display.height))
        if call.name == VERIFY_TOOL:
            return self._readback(task)
        if call.name in A11Y_TOOLS:
            return self._a11y(env, call)
        if self.vocabulary.tool(call.name) is None:
            raise ActionError(f"no action {call.name!r} in the {self.vocabulary.name} vocabulary")
        out = self.vocabulary.perform(env, call.name, args)
        if out.report is not None:  # computer_13's DONE and FAIL
            return self._report(out.report)
        if out.image is not None:
            return ("image", out.image)
        return ("text", out.text or "")

    def _readback(self, task: AgentTask) -> tuple[str, str]:
        if self.verifier is None or task.declared_effect is None:
            raise ActionError(self.readback_error)
        reading = self.verifier.verify(task.declared_effect)
        answer = {"verifier": self.verifier.name, **reading.to_json()}
        return ("text", json.dumps(answer, sort_keys=True))

    def _a11y(self, env: Any, call: _Call) -> tuple[str, str]:
        """The desktop's accessibility tools; any other substrate has none to give."""
        if not isinstance(env, AccessibleComputerEnv):
            raise ActionError(f"{call.name}: this substrate exposes no accessibility tree")
        args = call.arguments
        if call.name == "a11y_tree":
            return ("text", json.dumps(dataclasses.asdict(env.a11y_tree()), sort_keys=True))
        node, action, text = args.get("node"), args.get("action", "click"), args.get("text")
        if not isinstance(node, str):
            raise ActionError(f"{call.name} needs a node id from a11y_tree")
        if call.name == "a11y_action":
            env.a11y_action(node, str(action))
        elif isinstance(text, str):
            env.a11y_set_text(node, checks.text(text))  # the text rule `type` applies
        else:
            raise ActionError("a11y_set_text needs text")
        return ("text", "done")


def promised_display(pack: BenchmarkProvider, substrate: Substrate) -> Display | None:
    """Return the display every episode of ``pack`` on ``substrate`` shows, when its front end
    says so before one is provisioned (else None: the provisioned screen says it)."""
    if not isinstance(pack, ChecksFrontEnds):
        return None
    front = pack.front_end(substrate)
    return front.display if isinstance(front, ShowsDisplay) else None


class EpisodeServer:
    """One episode: its thread, its queue of calls, and the file its attempt is kept in."""

    def __init__(
        self,
        pack: BenchmarkProvider,
        task: TaskSpec,
        trial: int,
        record_dir: Path,
        *,
        timeout_s: float = EPISODE_TIMEOUT_S,
        name: str = "mcp-agent",
        vocabulary: str = DEFAULT,
    ) -> None:
        self.pack, self.task, self.trial = pack, task, trial
        self.record_dir = record_dir
        self.name = name
        self.params = pack.trial_params(task, trial)
        self.vocabulary = VOCABULARIES[vocabulary]
        self.display = promised_display(pack, task.substrate)
        """The display known before provisioning (``task`` answers at once), if the front end
        says it."""
        self.tools = episode_tools(
            self.vocabulary,
            readback=task.effect_declared,
            a11y=task.substrate is Substrate.DESKTOP,
        )
        """The episode's tools, in the order ``tools/list`` gives them."""
        self.agent_task = AgentTask.of_episode(
            task,
            self.params,
            handle_for(task.task_id, trial),
            vocabulary=[tool.name for tool in self.tools if tool.name not in OWN_TOOLS],
        )
        """What the agent is told; the runner builds the same view (this process's secret)."""
        self.agent = RemoteAgent(name, timeout_s, self.vocabulary, self.display)
        self.ended = threading.Event()
        self.finished = threading.Event()
        self.outcome: EpisodeRecord | DroppedEpisode | None = None
        self.attempt = 0
        self.path: Path | None = None
        self.client: dict[str, str] | None = None
        """The MCP client driving the episode (its ``initialize``'s name and version): the
        harness every row of the episode records (:data:`~effectbench.schema.HARNESS_KEY`)."""
        self._write = threading.Lock()
        self._final = False
        self._thread = threading.Thread(target=self._episode, name="effectbench-episode")

    def claim(self) -> Path:
        """Claim this attempt's file (an ``agent_error`` drop until the episode ends).

        Refused with a :class:`~effectbench.errors.UsageError` when an attempt of the
        cell already completed. :meth:`start` claims it if this was not called.
        """
        if self.path is None:
            self.attempt, self.path = claim_attempt(
                self.record_dir, self.name, self.task.task_id, self.trial
            )
        return self.path

    def driven_by(self, info: Mapping[str, Any]) -> None:
        """Note the client an ``initialize`` named (``clientInfo``: a name and a version)."""
        name, version = info.get("name"), info.get("version")
        if isinstance(name, str):
            self.client = {"name": name, "version": version if isinstance(version, str) else ""}

    def start(self) -> None:
        """Claim the attempt's file, then provision the episode and serve it (its own thread)."""
        self.claim()
        self._thread.start()

    def _run(self) -> EpisodeRecord | DroppedEpisode:
        outcome = None
        for _ in range(1 + max(0, INFRA_RETRIES)):
            # an agent that acted cannot be replayed: only a provisioning is tried again
            outcome = run_episode(
                self.agent, self.pack, self.task, self.trial, self.trial, infra_retries=0
            )
            again = isinstance(outcome, DroppedEpisode) and outcome.reason is (
                DropReason.INFRASTRUCTURE
            )
            if not again or self.agent.started or self.agent.ending is not None:
                break
        assert outcome is not None
        if self.agent.harness_failure is not None:
            failed = self.agent.harness_failure
            return DroppedEpisode(self.task.task_id, self.trial, DropReason.INFRASTRUCTURE, failed)
        if isinstance(outcome, EpisodeRecord) and (outcome.model_calls or self.client):
            marked = dict(outcome.env_fingerprint)
            if outcome.model_calls:
                marked[COST_REPORTED_KEY] = COST_REPORTED_VALUE
            if self.client is not None:
                marked[HARNESS_KEY] = dict(self.client)
            outcome = outcome.model_copy(update={"env_fingerprint": marked})
        return outcome

    def _episode(self) -> None:
        outcome: EpisodeRecord | DroppedEpisode | None = None
        try:
            outcome = self._run()
        except Exception as exc:  # noqa: BLE001 - the server's own failure, never the agent's
            outcome = DroppedEpisode(
                self.task.task_id,
                self.trial,
                DropReason.INFRASTRUCTURE,
                f"the episode server failed: {type(exc).__name__}: {exc}",
            )
        finally:
            if outcome is not None:
                self._record(outcome, final=True)
            self.outcome = outcome
            self.finished.set()
            self._answer_ending(outcome)
            self._drain()
            from effectbench.screens.browser import close_shared_browser

            close_shared_browser()  # the browser this thread launched, if any

    def _answer_ending(self, outcome: EpisodeRecord | DroppedEpisode | None) -> None:
        future = self.agent.pending
        if future is None:
            return
        if outcome is None:
            settle(future, EpisodeOver("the episode could not be recorded"))
        else:  # the same answer whatever the outcome: the agent is never told how it went
            settle(future, ("ended", ENDED[self.agent.ending or "report"]))

    def _drain(self) -> None:
        while True:
            try:
                call = self.agent.calls.get_nowait()
            except queue.Empty:
                return
            settle(call.future, EpisodeOver("the episode is over"))

    def _record(self, outcome: EpisodeRecord | DroppedEpisode, *, final: bool) -> None:
        with self._write:
            if self._final or self.path is None:
                return
            finish_attempt(self.path, self.name, self.attempt, outcome)
            self._final = final

    def describe(self, display: Display) -> dict[str, Any]:
        """What the agent is told (SPEC 5.2.1): exactly the closed view, its display sized."""
        surface = self.agent_task.display.surface
        sized = AgentDisplay(surface, display.width, display.height)
        return dataclasses.replace(self.agent_task, display=sized).to_json()

    def task_answer(self) -> dict[str, Any] | None:
        """The ``task`` tool's answer when it is known before provisioning (else None)."""
        if self.display is None:
            return None
        return text_result(json.dumps(self.describe(self.display), sort_keys=True))

    async def task_info(self) -> dict[str, Any]:
        """What ``task`` answers: at once when the display is known, else once provisioned."""
        if self.display is not None:
            return self.describe(self.display)
        _, (width, height) = await self.call("display", {})
        return self.describe(Display(width, height))

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """Hand one tool call to the episode thread and wait for its answer."""
        if self.ended.is_set() or self.finished.is_set():
            raise EpisodeOver("the episode has already ended; start a new one")
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.agent.calls.put(_Call(name, arguments, future))
        result = await asyncio.wrap_future(future)
        if isinstance(result, tuple) and result[0] == "ended":
            self.ended.set()
        return result

    def stop(self, timeout: float = 60.0) -> None:
        """The client left: end the episode and wait for its teardown.

        A client gone before ending the episode leaves an ``agent_error`` drop, written
        here before anything is torn down (the client's side may kill this process soon).
        """
        if not self.finished.is_set():
            if self.agent.end("left"):
                drop = DroppedEpisode(self.task.task_id, self.trial, DropReason.AGENT_ERROR, LEFT)
                self._record(drop, final=False)
            self.agent.calls.put(_Call(_STOP, {}, concurrent.futures.Future()))
        if self._thread.ident is not None:  # started (an episode never started has no thread)
            self._thread.join(timeout)
