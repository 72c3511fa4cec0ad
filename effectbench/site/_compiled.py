"""Compiled templates kept between local builds, sealed like every cache entry.

jinja2 compiles each template to Python code the first time a process loads it: for the
site's templates and the theme's (51 files) about a second per build, spent again by every
build (measured by hand, with a profiler, on a 1,000-submission rebuild).
:class:`SealedTemplateCode` keeps the compiled code in the cache folder
(``templates/``), one file per template, each sealed by this machine's key
(:mod:`effectbench.sealed`): compiled code is run as it is read, so a file this machine did
not write is never loaded. jinja2 itself checks that the code was compiled from the same
source, by the same jinja2 and the same Python, and compiles afresh otherwise.
"""

from __future__ import annotations

from pathlib import Path

import jinja2
from jinja2.bccache import Bucket

from effectbench.sealed import CacheSeal

__all__ = ["SealedTemplateCode"]


class SealedTemplateCode(jinja2.BytecodeCache):
    """jinja2's code cache in ``folder``, each entry sealed by ``seal``."""

    def __init__(self, folder: Path, seal: CacheSeal) -> None:
        self.folder = folder
        self.seal = seal

    def _path(self, bucket: Bucket) -> Path:
        return self.folder / f"{bucket.key}.code"

    def load_bytecode(self, bucket: Bucket) -> None:
        """Fill ``bucket`` from its sealed entry, when this machine wrote one."""
        data = self.seal.read(bucket.key, self._path(bucket))
        if data is not None:
            bucket.bytecode_from_string(data)  # jinja2 drops it if source or versions differ

    def dump_bytecode(self, bucket: Bucket) -> None:
        """Keep ``bucket``'s code; a folder that cannot be written keeps none."""
        try:
            self.seal.write(bucket.key, self._path(bucket), bucket.bytecode_to_string())
        except OSError:
            pass  # the build goes on compiling; the kept parts say the folder's problem
