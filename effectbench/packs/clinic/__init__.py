"""The clinic pack: a real system of record (SQLite behind an HTTP service) on four substrates.

Patients, encounters and billing live in an SQLite file per episode, served over HTTP on
127.0.0.1; each task injects one fault at the service's persistence boundary, and the
harness's oracle audits every table's change set through its own read-only connection. Every
task exists once per front end (:mod:`.frontends`: JSON actions, web app, GTK app, GTK app
over VNC), all over the same faulty service, so one oracle judges every substrate. The pack is
built on the pack kit (:mod:`effectbench.kit`) and keeps only its domain: the schema and seed
(:mod:`.db`), the tasks (:mod:`.tasks`), the faults at its save path (:mod:`.store`), its
routes and pages (:mod:`.service`, :mod:`.web`), its desktop app (:mod:`.desktop`) and what
its audit probes target (:mod:`.audit`). The substrates, the ladder of arms measured on each
and what the manifest sequesters are in ``docs/clinic.md``.
"""

from __future__ import annotations

from effectbench.packs.clinic.attestation import audit_pack
from effectbench.packs.clinic.provider import NAME, ClinicProvider

__all__ = ["NAME", "ClinicProvider", "audit_pack"]
