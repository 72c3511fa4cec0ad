"""An example system under test for the MockMed anchor: act once, verify, never retry blindly.

Run it from the repository root::

    .venv/bin/effectbench run --sut examples.careful_agent:CarefulAgent --trials 10
    .venv/bin/effectbench submit --sut examples.careful_agent:CarefulAgent \\
        --name "Careful agent" --out submissions/

It shows the seam a real agent plugs into: it reads the goal and the trial's
parameters, acts only through the environment handle, checks its work with the
product's own readback verifier when one is offered, and returns an
:class:`~effectbench.seam.Attempt`. A real agent would list the model calls it
made in ``model_calls`` so its rows carry their cost.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from effectbench import AgentReport, AgentTask, Attempt, EnvHandle


class CarefulAgent:
    """Saves the encounter with its idempotency key and trusts only a verified readback."""

    name = "careful_agent"

    def run(self, task: AgentTask, env: EnvHandle, params: Mapping[str, Any]) -> Attempt:
        """Save, verify, and retry only when the record is verifiably absent."""
        verifier = env.product_effect_verifier()
        if verifier is None or task.declared_effect is None:
            return self._halt("nothing to check my work with; a human should finish this")
        for _ in range(2):
            screen = env.act(
                "save_encounter",
                patient_id=params["patient_id"],
                type=params["encounter_type"],
                note=params["note"],
                idempotency_key=params["idempotency_key"],  # a retry cannot double-write
            )
            reading = verifier.verify(task.declared_effect)
            if reading.confirmed:
                return Attempt(
                    report=AgentReport(
                        reported_success=True,
                        halted=False,
                        message=f"saved and read back (banner: {screen.banner})",
                    )
                )
            if not reading.absent:
                return self._halt(f"the record is wrong, not missing: {reading.reason}")
        return self._halt(f"still not saved after a keyed retry: {reading.reason}")

    @staticmethod
    def _halt(why: str) -> Attempt:
        return Attempt(report=AgentReport(reported_success=False, halted=True, message=why))
