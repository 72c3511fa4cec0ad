"""The clinic pack: a real system of record (SQLite behind an HTTP service).

A clinic app keeps patients, encounters and billing in an SQLite file and
serves them over HTTP on 127.0.0.1 (an ephemeral port; standard library only).
Systems under test act only through that service. Each task injects one fault
at the app's persistence boundary (a partial write, a duplicate, a commit that
is rolled back after the success banner, a stale write-back, a homonym chart, a
save that reaches no table or the wrong row, a charge on the wrong account).
The harness's oracle reads the episode's database file through its own
``mode=ro`` connection, snapshots every table in ``sqlite_master`` and audits
the per-table delta: the declared effect must hold and nothing else may change.

Episodes: every trial copies a template file (built once per process) to a
fresh file, mounts it on the provider's record service and tears it down after.
An oracle that cannot read (file locked, file gone, service down) yields an
``indeterminate`` verdict; the runner drops and counts the episode.

The ladder of arms. ``screen_only`` and ``effect_verified`` are the shared
baselines (on this pack the product's own verifier that ``effect_verified``
asks for reads one REST surface, the encounters endpoint);
``effect_verified_all`` (:mod:`.arms`) reads every REST surface. Silent wrong
effects (SWER) at 10 trials, dev split (all 30 tasks in brackets):

* ``screen_only``: 170/270 = 63.0% (180/300 = 60%); misses C1, C2, C3, C4, C5,
  C6, C7 and the refusal controls (it trusts every green banner).
* ``effect_verified``: 30/270 = 11.1% (30/300 = 10%); misses C4, C5, C7, each
  time a write on a table the encounters endpoint does not show: the stale
  allergy written back to ``patients`` (C4), the charge posted twice (C5) and
  the charge on another patient's account (C7), both in ``billing``.
* ``effect_verified_all``: 0/270 = 0% (0/300); misses none.

Both verifying arms over-halt the two undeclared controls whose action is
available (20 episodes): with no contract there is nothing to verify.

Substrates. Each task exists as a variant per front end (:mod:`.frontends`):
``clinic::NAME`` on ``api`` (the JSON actions above) and ``clinic::NAME@web``
(the service's own server-rendered web app, :mod:`.web`, in headless Chromium:
the agent sees screenshots and acts with pointer and keys). The fault sits in
the record service, so both variants meet it and the one oracle judges both.
The pixel baselines (recorded coordinates on the fixed layout, waiting on screen
changes, reading the banner's colour) make the same choices as the API-level
script, so the ladder on ``web`` is the API ladder, task for task (measured at
3 trials, dev split: see ``benchmarks/bench_web.py``); an episode whose browser
fails is dropped as ``infrastructure``, never scored.

Sequestered test split and what the manifest redacts: tasks of the ``test``
split appear in the public manifest with their goal replaced by
``[sequestered]`` (by :func:`effectbench.manifest.manifest_of`), a neutral title
("Sequestered clinic task N") and their *payload wiring* replaced by
``[sequestered]`` too. The payload wiring is a pack-level manifest section,
``payload_wiring``, that says for each dev task which chart or encounter the
referral names and which trial parameter lands in which column; for a test task
nothing of that is published. Category, axes, oracle attestations and the
contract hash stay public (the contract binds its targets through parameters,
so the hash names no chart). The redaction is of the manifest only: the task
definitions ship in this package, so the split is sequestered from anyone who
reads results and the manifest, not from someone who reads the source.
"""

from __future__ import annotations

from effectbench.packs.clinic.attestation import audit_pack
from effectbench.packs.clinic.provider import NAME, ClinicProvider

__all__ = ["NAME", "ClinicProvider", "audit_pack"]
