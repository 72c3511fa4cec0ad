"""``effectbench pack check``: a conformance audit of a pack's oracle (SPEC 5.2.1).

A pack passes it before its board is published. :func:`check_pack` returns a
:class:`Report` whose findings each carry an id of the one registry
(:class:`~effectbench.conformance.ids.AuditId`, documented in ``docs/pack-authors.md``)::

    from effectbench.conformance import check_pack
    from effectbench.packs import get_pack

    report = check_pack(get_pack("mockmed"))
    assert report.passed, [f.line() for f in report.findings]
"""

from __future__ import annotations

from effectbench.conformance.check import TRIALS, Finding, Report, check_pack
from effectbench.conformance.ids import AuditId

__all__ = ["TRIALS", "AuditId", "Finding", "Report", "check_pack"]
