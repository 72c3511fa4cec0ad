"""The pack's own arm: effect verification over every REST surface.

``effect_verified`` (the shared baseline) asks the env for the product's verifier, which on
the support desk reads the tickets endpoint only. ``effect_verified_all`` (EffectBench's
shared :class:`~effectbench.api.EffectVerifiedAll`) is the same policy with the readback of
every surface the service exposes (customers, agents, tickets, comments, credits), the top
rung of the ladder.
"""

from __future__ import annotations

from effectbench.api import EffectVerifiedAll as EffectVerifiedAll
