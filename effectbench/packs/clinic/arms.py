"""The clinic's own arm: effect verification over every REST surface.

``effect_verified`` (the shared baseline) asks the env for the product's verifier, which on
the clinic reads the encounters endpoint only. ``effect_verified_all``
(:class:`effectbench.baselines.EffectVerifiedAll`) is the same policy with the readback of
every surface the service exposes (patients, encounters, billing), the top rung of the ladder.
"""

from __future__ import annotations

from effectbench.baselines import EffectVerifiedAll as EffectVerifiedAll
