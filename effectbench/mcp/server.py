"""The MCP episode server: the runner's own episode, driven by a remote agent.

The episode runs on one dedicated thread (screens such as the shared browser
are bound to the thread that made them) through the runner's
:func:`~effectbench.runner.run_episode`, so provisioning, the oracle's
snapshots, the health check, the labelling and the row are exactly those of an
in-process run. The system under test in that run is :class:`RemoteAgent`: it
waits for the client's tool calls, performs each on the episode's
:class:`~effectbench.computer.ComputerEnv` (through the Anthropic translator,
so a malformed action is a tool error, never a crash) and returns when the
client reports, disconnects, or the episode times out (both a recorded halt).

Tool errors (``isError`` results): a malformed or refused action, a
success report before any action, a second report, any call after the report.
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

from effectbench.computer import AccessibleComputerEnv, ActionError, ComputerEnv, checks
from effectbench.computer.vendors import anthropic
from effectbench.mcp.paths import record_path as record_path
from effectbench.runner import run_episode
from effectbench.schema import AgentReport, TaskSpec
from effectbench.seam import AgentTask, BenchmarkProvider

EPISODE_TIMEOUT_S = 900.0
"""An episode whose client neither reports nor disconnects within this is a recorded halt."""
ACTIONS = tuple(a for a in anthropic.ACTIONS[anthropic.COMPUTER_20251124] if a != "screenshot")
"""The computer actions offered as tools, under Anthropic's names."""


class EpisodeOver(Exception):
    """The episode was reported (or ended); no further call is served."""


@dataclass
class _Call:
    name: str
    arguments: dict[str, Any]
    future: concurrent.futures.Future[Any]


_STOP = "__stop__"


class RemoteAgent:
    """The system under test of an MCP episode: whatever the client's calls do."""

    name = "mcp"

    def __init__(self, name: str, timeout_s: float = EPISODE_TIMEOUT_S) -> None:
        self.name = name
        self.calls: queue.Queue[_Call] = queue.Queue()
        self.timeout_s = timeout_s
        self.acted = False

    def run(self, task: AgentTask, env: Any, params: Mapping[str, Any]) -> AgentReport:
        """Serve the client's calls on ``env`` until it reports, leaves or times out."""
        deadline = time.monotonic() + self.timeout_s
        while True:
            try:
                call = self.calls.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return AgentReport(
                    reported_success=False,
                    halted=True,
                    message=f"no report within {self.timeout_s:g} s: the episode timed out",
                )
            if call.name == _STOP:
                call.future.set_result(None)
                return AgentReport(
                    reported_success=False,
                    halted=True,
                    message="the client disconnected before reporting",
                )
            try:
                result = self._serve(env, call)
            except Exception as exc:  # noqa: BLE001 - every failure goes back to the client
                call.future.set_exception(exc)
                continue
            if isinstance(result, AgentReport):
                call.future.set_result("reported")
                return result
            call.future.set_result(result)

    def _serve(self, env: ComputerEnv, call: _Call) -> Any:
        if call.name == "report":
            args = call.arguments
            success, halted = bool(args.get("success")), bool(args.get("halted"))
            if success and halted:
                raise ActionError("a report is either success or halted, not both")
            if success and not self.acted:
                raise ActionError("nothing has been done yet: act before reporting success")
            return AgentReport(
                reported_success=success,
                halted=halted,
                message=str(args.get("message", ""))[:2000],
            )
        if call.name == "screenshot":
            return ("image", env.screenshot())
        if call.name == "display":
            return ("display", (env.display.width, env.display.height))
        if call.name in A11Y_TOOLS:
            return self._a11y(env, call)
        out = anthropic.run(env, {"action": call.name, **call.arguments})
        self.acted = True
        if out.image is not None:
            return ("image", out.image)
        return ("text", out.text or "")

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
        self.acted = True
        return ("text", "done")


A11Y_TOOLS = ("a11y_tree", "a11y_action", "a11y_set_text")
"""The extra tools of an episode whose env exposes its accessibility tree (desktop)."""


class EpisodeServer:
    """One episode: its thread, its queue of calls, and where its row goes."""

    def __init__(
        self,
        pack: BenchmarkProvider,
        task: TaskSpec,
        trial: int,
        record_dir: Path,
        *,
        timeout_s: float = EPISODE_TIMEOUT_S,
        name: str = "mcp-agent",
    ) -> None:
        self.pack, self.task, self.trial = pack, task, trial
        self.record_dir = record_dir
        self.params = pack.trial_params(task, trial)
        self.agent_task = AgentTask.from_spec(task, self.params)
        self.agent = RemoteAgent(name, timeout_s)
        self.reported = threading.Event()
        self.finished = threading.Event()
        self.outcome: Any = None
        self._thread = threading.Thread(target=self._episode, name="effectbench-episode")

    def start(self) -> None:
        """Provision the episode and start serving it (on its own thread)."""
        self._thread.start()

    def _episode(self) -> None:
        try:
            self.outcome = run_episode(self.agent, self.pack, self.task, self.trial, self.trial)
            self._record(self.outcome)
        finally:
            self.finished.set()
            self._drain()
            from effectbench.screens.browser import close_shared_browser

            close_shared_browser()  # the browser this thread launched, if any

    def _drain(self) -> None:
        while True:
            try:
                call = self.agent.calls.get_nowait()
            except queue.Empty:
                return
            if not call.future.done():
                call.future.set_exception(EpisodeOver("the episode is over"))

    def _record(self, outcome: Any) -> None:
        from effectbench.mcp.records import write_record

        write_record(self.record_dir, self.task.task_id, self.trial, outcome)

    async def task_info(self) -> dict[str, Any]:
        """What the agent is told: the goal, the declared effect, the referral, the display."""
        _, (width, height) = await self.call("display", {})
        t = self.agent_task
        effect = (
            None
            if t.declared_effect is None
            else [e.model_dump(mode="json") for e in t.declared_effect]
        )
        return {
            "task_id": t.task_id,
            "title": t.title,
            "goal": t.goal,
            "substrate": t.substrate.value,
            "declared_effect": effect,
            "referral": dict(self.params),
            "display": {"width": width, "height": height},
        }

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """Hand one tool call to the episode thread and wait for its answer."""
        if self.reported.is_set() or self.finished.is_set():
            raise EpisodeOver("the episode has already been reported; start a new one")
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.agent.calls.put(_Call(name, arguments, future))
        result = await asyncio.wrap_future(future)
        if result == "reported":
            self.reported.set()
        return result

    def stop(self, timeout: float = 60.0) -> None:
        """End the episode (a client gone without a report is a halt) and wait for its row."""
        if not self.finished.is_set():
            self.agent.calls.put(_Call(_STOP, {}, concurrent.futures.Future()))
        self._thread.join(timeout)
