"""How much of a corpus's dev labels its metadata alone gives away (issue 32's leak probe).

Usage: ``python scripts/monitor_probe.py CORPUS_DIR [--drop PREFIX ...] [--pack NAME]``

Prints the AUROC of :func:`effectbench.monitors.probe.probe` (a naive Bayes model on each
episode's metadata alone, folds grouped by situation) on the dev split, over all pairs and
within the board's (category x substrate) cells, with the load average beside the figures.
Near 0.5 is what the corpus should give.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from effectbench.monitors.probe import probe


def main() -> None:
    """Print the probe's figures for one corpus."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--drop", action="append", default=[], metavar="PREFIX")
    parser.add_argument("--pack", help="only the episodes of this pack's tasks")
    args = parser.parse_args()
    result = probe(args.corpus, args.drop, args.pack)
    load = Path("/proc/loadavg").read_text().split()[:3]
    dropped = f" without {', '.join(args.drop)}" if args.drop else ""
    of = f" of pack {args.pack}" if args.pack else ""
    print(
        f"metadata-only classifier{dropped}, {result.episodes} scored dev episodes of "
        f"{result.situations} situations{of}:"
    )
    print(
        f"  AUROC over all pairs {result.overall}; within (category x substrate) cells "
        f"{result.within_cells}"
    )
    print(f"  load average {' '.join(load)}")


if __name__ == "__main__":
    main()
