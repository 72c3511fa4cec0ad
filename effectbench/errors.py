"""Errors that reach a user as a message, never as a traceback.

The hierarchy::

    EffectBenchError            base; ``diagnostics()`` is the text a user sees
    ├── UsageError              a bad flag or argument (exit status 2)
    ├── DataError               unreadable or malformed input (file, line, field)
    ├── SiteBuildError          the static site could not be built
    ├── SigningError            a bundle could not be signed
    ├── RunStopped              an executor could not go on (the journal keeps every row)
    └── InfrastructureError     the harness or its infrastructure failed during an episode

The command line catches :class:`EffectBenchError` once, prints
``diagnostics()`` to stderr and exits with ``exit_code``.
"""

from __future__ import annotations


class EffectBenchError(Exception):
    """Base of every error a user can cause or fix."""

    exit_code: int = 1

    def diagnostics(self) -> str:
        """Return the message shown to the user."""
        return str(self)


class UsageError(EffectBenchError):
    """A command-line argument was wrong (unknown name, out-of-range number)."""

    exit_code = 2


class DataError(EffectBenchError):
    """An input file could not be read or did not have the expected shape."""

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.field = field

    def diagnostics(self) -> str:
        """Return ``file:line: field: message`` with whatever location is known."""
        where = ""
        if self.file:
            where = self.file + (f":{self.line}" if self.line is not None else "") + ": "
        if self.field:
            where += f"{self.field}: "
        return where + self.message


class SiteBuildError(EffectBenchError):
    """The leaderboard site could not be built."""


class SigningError(EffectBenchError):
    """A submission bundle could not be signed."""


class RunStopped(EffectBenchError):
    """The executor could not go on; every finished row is in the journal (exit status 2)."""

    exit_code = 2


class InfrastructureError(EffectBenchError):
    """The harness or its infrastructure failed (service, browser, display, worker).

    Raised by the harness only, never accepted from a system under test: the
    runner retries the episode a bounded number of times and otherwise drops it
    with reason ``infrastructure``; it is never scored as the agent's halt.
    """
