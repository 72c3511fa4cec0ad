"""``python -m effectbench.cli``: the same as the ``effectbench`` command."""

from __future__ import annotations

import sys

from effectbench.cli import main

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
