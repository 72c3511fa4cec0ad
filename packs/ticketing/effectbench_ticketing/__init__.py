"""EffectBench's ticketing pack: a support desk on PostgreSQL, on the api and web substrates.

Customers, agents, tickets, comments and SLA credits live in a private PostgreSQL cluster the
pack starts (Unix socket only); every episode gets a fresh database cloned from a template.
Agents act only through the desk's HTTP service (its JSON actions, or its web app in headless
Chromium); each task injects one fault in that app layer, and the harness's oracle audits
every table's change set through a read-only role of its own. It is built on the pack kit that
``effectbench.api`` exports and keeps only its domain. Installed, it is the pack ``ticketing``::

    effectbench run --pack ticketing --baseline screen_only

The tasks, the substrates and the ladder of arms measured on each are in ``docs/ticketing.md``.
"""

from __future__ import annotations

from effectbench_ticketing.provider import NAME, TicketingProvider

__all__ = ["NAME", "TicketingProvider"]
