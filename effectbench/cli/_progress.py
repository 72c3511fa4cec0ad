"""Progress on a terminal for the commands that take long (verify, rank, site build, reproduce).

A bar on stderr, redrawn in place and gone when the work ends, only when stderr is a
terminal and the command does not print JSON: a CI log, a pipe and ``--json`` stay quiet.
(``run`` and ``pack check`` have their own reports: episodes, not bundles.)
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

Tell = Callable[[int, int], None]
"""Told ``(done, total)`` as the work goes on."""


def wanted(json_output: bool = False) -> bool:
    """Whether a bar is shown: stderr is a terminal and the output is not JSON."""
    return not json_output and sys.stderr.isatty()


@contextmanager
def bar(label: str, enabled: bool) -> Iterator[Tell | None]:
    """Yield a function that moves a bar titled ``label`` on stderr (None when not shown)."""
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    with Progress(
        label,
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        transient=True,
        console=Console(stderr=True),
    ) as shown:
        task = shown.add_task(label, total=None)

        def tell(done: int, total: int) -> None:
            shown.update(task, completed=done, total=total)

        yield tell
