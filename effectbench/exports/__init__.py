"""Exports of accepted bundles into the formats the field reads (``effectbench export``).

* ``eee``: Every Eval Ever records (:mod:`.eee`), one aggregate record per board a bundle is
  on (its substrates) with its instance-level rows; a folder of bundles gives the whole board;
* ``atif``: one ATIF trajectory per episode (:mod:`.atif`);
* ``inspect``: one Inspect log per bundle, one sample per episode (:mod:`.inspect_log`).

Only bundles the verifier accepted are exported (the command line verifies them and passes
its verdict in :class:`~effectbench.exports.source.Verified`); an unsigned preview says so
in every file's metadata. Every number comes from :mod:`effectbench.metrics`, every date from
the bundle: the same bundle always exports to the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the command line's parser imports this package: keep it light
    from effectbench.exports.source import BundleSource

FORMATS = ("eee", "atif", "inspect")
"""The formats ``effectbench export --format`` writes."""


def files_of(source: BundleSource, fmt: str) -> list[tuple[str, bytes]]:
    """Return the files (relative path, bytes) of one bundle's export in ``fmt``."""
    if fmt == "eee":
        from effectbench.exports.eee import export_eee

        return export_eee(source)
    if fmt == "atif":
        from effectbench.exports.atif import export_atif

        return export_atif(source)
    if fmt == "inspect":
        from effectbench.exports.inspect_log import export_inspect

        return export_inspect(source)
    raise ValueError(f"unknown export format {fmt!r}; known: {', '.join(FORMATS)}")


def write_export(
    sources: Sequence[BundleSource],
    fmt: str,
    out: Path,
    progress: Callable[[int, int], None] | None = None,
) -> list[Path]:
    """Write the ``fmt`` export of every bundle of ``sources`` into ``out`` (absent or empty),
    all or nothing; return the files written, relative to ``out``."""
    from effectbench.exports.files import Staging

    staging = Staging(out)
    written: list[Path] = []
    try:
        for n, source in enumerate(sources, start=1):
            for relative, data in files_of(source, fmt):
                staging.write(relative, data)
                written.append(Path(relative))
            if progress is not None:
                progress(n, len(sources))
        staging.commit()
    except BaseException:
        staging.discard()
        raise
    return written


__all__ = ["FORMATS", "files_of", "write_export"]
