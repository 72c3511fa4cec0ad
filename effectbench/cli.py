"""The ``effectbench`` command line: a thin dispatch onto library functions.

Each command module exposes ``register(subparsers)``; the parser it adds sets
``func(args) -> int``. :func:`main` is the one place where an
:class:`~effectbench.errors.EffectBenchError` becomes a message and an exit
status (``--verbose`` shows the traceback instead).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from typing import NoReturn

from effectbench import __version__
from effectbench.errors import EffectBenchError

COMMAND_MODULES = ("effectbench._cmd_run", "effectbench._cmd_inspect", "effectbench._cmd_mcp")
"""Modules whose ``register`` adds subcommands, in help order."""
OPTIONAL_COMMAND_MODULES = ("verifier.cli", "verifier._cmd_sign", "effectbench.site.cli")
"""Command modules of the other parts; skipped while a part is not installed."""


def positive_int(text: str) -> int:
    """Parse a count of at least 1 for argparse (a one-line error otherwise)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def print_json(data: object) -> None:
    """Print ``data`` as indented JSON on stdout."""
    print(json.dumps(data, indent=2))


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (and ``--help`` for the rest)."""

    def error(self, message: str) -> NoReturn:
        """Print ``prog: error: message`` on one line and exit with status 2."""
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """Return the parser with every registered subcommand."""
    parser = _Parser(
        prog="effectbench",
        description="Score the true effect of automation agents (SWER beside over-halt).",
    )
    parser.add_argument("--version", action="version", version=f"effectbench {__version__}")
    parser.add_argument(
        "--verbose", action="store_true", help="show the traceback of an error instead of a message"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    for name in OPTIONAL_COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and name.startswith(exc.name):
                continue
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.func(args)
        return status
    except EffectBenchError as exc:  # the one place a user-facing error becomes a message
        if args.verbose:
            raise
        print(f"effectbench: {exc.diagnostics()}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("effectbench: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
