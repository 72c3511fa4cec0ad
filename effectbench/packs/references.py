"""The maintainers' reference set: which shipped baselines run on which built-in pack, substrate
and seed to make the reference bundles in ``submissions/`` (``python -m verifier.references
--remake``). The board's own data about its packs, kept with them, so engine code names no
pack; :func:`effectbench.produce.reference_bundle` runs one.
"""

from __future__ import annotations

from effectbench.produce import ReferenceSpec

SCREEN_TRIALS = 3
"""Trials of a reference on a screen substrate: the fewest a ranked entry has
(``pack.min_trials``); each screen episode costs a browser or a display."""

GENERATED_TRIALS = 3
"""Trials of a reference on a generated catalogue: the fewest a ranked entry has. Repeating a
task adds little for a scripted arm (its outcome repeats); the catalogue's many tasks carry the
evidence instead."""

REFERENCE_FRESH_SEED = "reference-fresh-1"
"""The seed of the references drawn on a fresh instance of the generated clinic: beside the
same arms on the public dev seed, they put a contamination delta on the board (a scripted arm
cannot have tuned to either, so its delta is what no contamination looks like). Published and
not committed, so the board flags them ``fresh-uncommitted``."""

_CLINIC_ARMS = (  # the ladder of every pack with a real system of record
    ("screen-only", "screen_only"),
    ("effect-verified", "effect_verified"),
    ("effect-verified-all", "effect_verified_all"),
)

REFERENCE_SET: tuple[ReferenceSpec, ...] = (
    ReferenceSpec("always-halt", "mockmed", "always_halt"),
    ReferenceSpec("effect-verified", "mockmed", "effect_verified"),
    ReferenceSpec("retry-on-error", "mockmed", "retry_on_error"),
    ReferenceSpec("screen-only", "mockmed", "screen_only"),
    *(ReferenceSpec(f"{slug}-clinic", "clinic", arm) for slug, arm in _CLINIC_ARMS),
    *(
        ReferenceSpec(
            f"{slug}-clinic-{screen.replace('_', '-')}",
            "clinic",
            arm,
            SCREEN_TRIALS,
            substrate=screen,
        )
        for screen in ("web", "desktop", "remote_display")
        for slug, arm in _CLINIC_ARMS
    ),
    *(ReferenceSpec(f"{slug}-ticketing", "ticketing", arm) for slug, arm in _CLINIC_ARMS),
    *(
        ReferenceSpec(f"{slug}-ticketing-web", "ticketing", arm, SCREEN_TRIALS, substrate="web")
        for slug, arm in _CLINIC_ARMS
    ),
    *(
        ReferenceSpec(f"{slug}-clinic-generated", "clinic-generated", arm, GENERATED_TRIALS)
        for slug, arm in _CLINIC_ARMS
    ),
    *(
        ReferenceSpec(
            f"{slug}-clinic-generated-{screen}",
            "clinic-generated",
            arm,
            SCREEN_TRIALS,
            substrate=screen,
        )
        for screen in ("web",)
        for slug, arm in _CLINIC_ARMS
    ),
    *(
        ReferenceSpec(
            f"{slug}-clinic-generated-fresh",
            "clinic-generated",
            arm,
            GENERATED_TRIALS,
            seed=REFERENCE_FRESH_SEED,
        )
        for slug, arm in _CLINIC_ARMS
    ),
    *(
        ReferenceSpec(f"look-before-write-{pack}", pack, "look_before_write", trials)
        for pack, trials in (
            ("clinic", 10),
            ("ticketing", 10),
            ("clinic-generated", GENERATED_TRIALS),
        )
    ),
)
"""The reference bundles in ``submissions/`` (re-made by ``python -m verifier.references
--remake``): MockMed's four baselines, the clinic's three arms through its API and through
each of its screens (web, desktop, remote display), the ticketing pack's three arms through
its API and its web app, so every substrate of both systems of record has a ladder on the
board (``--remake --only '*-ticketing*'`` makes the ticketing pack's alone), and the three
arms on the generated clinic catalogue: every task through the API, the declared screen sample
(:func:`effectbench.packs.clinic.generated_pack.screen_sample`) through the web app; and the
careful arm ``look_before_write`` through the API of the clinic, the ticketing pack and the
generated clinic (its pack's careful script is the API's only)."""
