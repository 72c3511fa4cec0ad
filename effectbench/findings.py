"""What a verification check reports: a stable check id, where, and what a submitter can do.

:class:`Finding` is shared by the verifier (``verifier/``) and the signature
checks of :mod:`effectbench.signatures`, which signing also runs before it
writes a signature; it lives on the engine side so both can use it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Finding:
    """One reason a submission is refused (or a note on it)."""

    check: str
    """Stable check id, ``family.rule`` (for example ``rescore.outcome``)."""
    message: str
    """What is wrong and what to do about it, in a sentence."""
    file: str | None = None
    """The bundle-relative file the finding is about."""
    line: int | None = None
    """1-based line (for ``episodes.jsonl``, the row) where it applies."""
    field: str | None = None
    """Dotted field path inside the row or document."""
