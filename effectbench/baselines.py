"""The shipped baselines: scripted arms that make the joint reporting visible.

* ``screen_only`` trusts the banner (the arm the benchmark indicts);
* ``effect_verified`` gates success on the product's own record readback and
  halts when the product offers no verifier (it never gets the oracle);
* ``look_before_write`` reads the record the referral names before it writes (through its
  pack's careful script), halts when what it read contradicts the referral, writes once and
  reads every surface back;
* ``always_halt`` never acts: SWER 0 bought with over-halt;
* ``retry_on_error`` retries once on an error banner: a commit-then-timeout
  becomes a duplicate write, the harm the false-abort label warns of.

A baseline knows *what* to click through its pack's scripted ``attempt``, which the
harness hands it for the episode at hand (:func:`following`): it is told the task no
more than any system under test is (:class:`~effectbench.seam.AgentTask`), and how it
decides what to report reads only that view and the screen.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from effectbench.errors import UsageError
from effectbench.schema import AgentReport, TaskSpec
from effectbench.seam import (
    AgentTask,
    BenchmarkProvider,
    EnvHandle,
    LooksBeforeWrite,
    ProductVerifier,
    ReadsAllSurfaces,
    Screen,
    ScriptedPack,
    SystemUnderTest,
    own_baselines,
)

_SCRIPT: ContextVar[TaskSpec | None] = ContextVar("effectbench_script", default=None)


@contextmanager
def following(spec: TaskSpec) -> Iterator[None]:
    """Hand the shipped baselines the script of ``spec`` while its episode runs.

    The harness's side of the seam: the runner wraps every episode in it, so a scripted
    arm clicks through its pack's steps for the task without being told the task.
    """
    token = _SCRIPT.set(spec)
    try:
        yield
    finally:
        _SCRIPT.reset(token)


class _Baseline(ABC):
    name = ""

    def __init__(self, pack: ScriptedPack) -> None:
        self._pack = pack

    def _attempt(self, task: AgentTask, env: EnvHandle, params: Mapping[str, Any]) -> Screen:
        spec = _SCRIPT.get()
        if spec is None:
            raise UsageError(
                f"the {self.name} baseline follows its pack's script, which the harness "
                "hands it per episode: run it with effectbench.run (or inside "
                "effectbench.baselines.following(spec))"
            )
        return self._pack.attempt(env, spec, params)

    @abstractmethod
    def run(self, task: AgentTask, env: EnvHandle, params: Mapping[str, Any]) -> AgentReport:
        """Attempt the task and report (the policy is what tells baselines apart)."""


class ScreenOnly(_Baseline):
    """Act once and report what the banner says."""

    name = "screen_only"

    def run(self, task: AgentTask, env: EnvHandle, params: Mapping[str, Any]) -> AgentReport:
        """Click Save and trust the banner."""
        screen = self._attempt(task, env, params)
        ok = screen.status == "success"
        return AgentReport(reported_success=ok, halted=not ok, message=f"banner: {screen.banner}")


class EffectVerified(_Baseline):
    """Act once, then report success only if the product's readback confirms it."""

    name = "effect_verified"

    def run(self, task: AgentTask, env: EnvHandle, params: Mapping[str, Any]) -> AgentReport:
        """Click Save, read the record back through the product, halt unless confirmed."""
        verifier = env.product_effect_verifier()
        if verifier is None or task.declared_effect is None:
            return AgentReport(
                reported_success=False,
                halted=True,
                message="no product verifier or declared effect: halting rather than guess",
            )
        screen = self._attempt(task, env, params)
        reading = verifier.verify(task.declared_effect)
        if reading.confirmed:
            return AgentReport(
                reported_success=True,
                halted=False,
                message=f"effect confirmed by {verifier.name}; banner said {screen.status}",
            )
        return AgentReport(
            reported_success=False,
            halted=True,
            message=f"effect refuted by {verifier.name} ({reading.reason}); halting",
        )


class _AllSurfacesView:
    """An env view whose product verifier is its all-surfaces readback (all else the env's)."""

    def __init__(self, env: Any) -> None:
        self._env = env

    def __getattr__(self, name: str) -> Any:
        return getattr(self._env, name)

    def actions(self) -> Sequence[str]:
        """Return the env's actions."""
        names: Sequence[str] = self._env.actions()
        return names

    def act(self, action: str, **arguments: Any) -> Screen:
        """Act through the env."""
        screen: Screen = self._env.act(action, **arguments)
        return screen

    def screen(self) -> Screen:
        """Return the env's screen."""
        current: Screen = self._env.screen()
        return current

    def product_effect_verifier(self) -> ProductVerifier | None:
        """Return the all-surfaces readback (``None`` on an env that has none)."""
        env = self._env
        return env.all_surfaces_verifier() if isinstance(env, ReadsAllSurfaces) else None


class EffectVerifiedAll(EffectVerified):
    """Act once; report success only if the product's readback of every surface confirms it.

    The top rung of a pack whose product shows more than one surface: ``effect_verified``
    reads the surface the product's own verifier reads, this arm every one of them. A pack
    offers it among its own baselines (:class:`~effectbench.seam.OwnBaselines`) when its
    envs offer ``all_surfaces_verifier``.
    """

    name = "effect_verified_all"

    def run(self, task: AgentTask, env: EnvHandle, params: Mapping[str, Any]) -> AgentReport:
        """Run the effect-verified policy with the all-surfaces readback."""
        return super().run(task, _AllSurfacesView(env), params)


class LookBeforeWrite:
    """Read the record before writing; halt on a contradiction; write once; read back.

    What reading before writing means is the pack's (:class:`~effectbench.seam.LooksBeforeWrite`:
    its front end's careful script, which sees the agent's view and the env only); the policy
    is this class's. Unlike the scripted arms it is never handed the task's script
    (:func:`following`): nothing it runs on knows the task's definition. The readback is the
    product's readback of every surface, its baseline taken after the reads, just before the
    write (what a colleague saved meanwhile is theirs, not the write's), judging the declared
    effect or, where the task declares none, the effect the goal and the referral describe
    (:attr:`~effectbench.seam.Look.expected`).
    """

    name = "look_before_write"

    def __init__(self, pack: ScriptedPack) -> None:
        if not isinstance(pack, LooksBeforeWrite):
            raise UsageError(f"{type(pack).__name__} has no careful script for look_before_write")
        self._pack = pack

    def run(self, task: AgentTask, env: EnvHandle, params: Mapping[str, Any]) -> AgentReport:
        """Look, then write once and read back (``params`` is not read: the view holds it)."""
        look = self._pack.look_before_write(env, task)
        read = "read before writing: " + "; ".join(look.reads)
        if look.contradiction is not None:
            return AgentReport(
                reported_success=False,
                halted=True,
                message=f"{read}; halted without writing: {look.contradiction}",
            )
        verifier = _AllSurfacesView(env).product_effect_verifier()
        if verifier is None:
            return AgentReport(
                reported_success=False,
                halted=True,
                message=f"{read}; no product readback to check a write by: halting",
            )
        screen = look.write()
        effect = look.expected if task.declared_effect is None else task.declared_effect
        reading = verifier.verify(effect)
        after = f"wrote once (banner said {screen.status}); {verifier.name}"
        if reading.confirmed:
            return AgentReport(
                reported_success=True, halted=False, message=f"{read}; {after} confirms it"
            )
        return AgentReport(
            reported_success=False,
            halted=True,
            message=f"{read}; {after} refutes it ({reading.reason}); halting",
        )


class AlwaysHalt(_Baseline):
    """Never act."""

    name = "always_halt"

    def run(self, task: AgentTask, env: EnvHandle, params: Mapping[str, Any]) -> AgentReport:
        """Halt without touching anything."""
        return AgentReport(reported_success=False, halted=True, message="halted without acting")


class RetryOnError(_Baseline):
    """Act; on an error banner act once more; report the final banner."""

    name = "retry_on_error"

    def run(self, task: AgentTask, env: EnvHandle, params: Mapping[str, Any]) -> AgentReport:
        """Click Save, and again if the banner is an error."""
        screen = self._attempt(task, env, params)
        retried = screen.status == "error"
        if retried:
            screen = self._attempt(task, env, params)
        ok = screen.status == "success"
        note = " after one retry" if retried else ""
        return AgentReport(
            reported_success=ok, halted=not ok, message=f"banner{note}: {screen.banner}"
        )


BASELINES: dict[str, Callable[[ScriptedPack], _Baseline]] = {
    cls.name: cls for cls in (ScreenOnly, EffectVerified, AlwaysHalt, RetryOnError)
}
"""The pack-agnostic baselines by name."""

REFERENCE_BASELINES = ("screen_only", "effect_verified")


def reference_description(name: str) -> str:
    """Return the description a maintainers' reference bundle of baseline ``name`` carries.

    A bundle ranked by reproduction alone (unsigned) must show exactly what the
    baseline is: its name, no URL, no README, and this description or none.
    """
    return f"Shipped baseline {name} (reference submission)."


def get_baseline(name: str, pack: BenchmarkProvider) -> SystemUnderTest:
    """Return baseline ``name`` bound to ``pack``'s scripted attempt.

    A pack may add arms of its own (:class:`~effectbench.seam.OwnBaselines`).
    """
    known = {**BASELINES, **own_baselines(pack)}
    if name not in known:
        raise UsageError(
            f"unknown baseline {name!r} for pack {pack.name!r}; known: {', '.join(sorted(known))}"
        )
    if not isinstance(pack, ScriptedPack):
        raise UsageError(f"pack {pack.name!r} has no scripted attempt for the baselines")
    return known[name](pack)


def baseline_names(pack: object) -> list[str]:
    """Return every baseline that runs on ``pack`` or its class (shared ones, then its own)."""
    return [*BASELINES, *own_baselines(pack)]
