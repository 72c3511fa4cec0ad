"""The ``effectbench`` command line: a thin dispatch onto library functions.

One module per command group, each with ``register(subparsers)``; the parser
it adds sets ``func(args) -> int``:

============================  =============================================
:mod:`~effectbench.cli._run`      ``reference``, ``run``, ``manifest``
:mod:`~effectbench.cli._packs`    ``packs`` (what is installed)
:mod:`~effectbench.cli._conformance`  ``pack check`` (the audit of a pack's oracle)
:mod:`~effectbench.cli._produce`  ``submit``, ``import``
:mod:`~effectbench.cli._inspect`  ``import-inspect``
:mod:`~effectbench.cli._mcp`      ``mcp`` (one episode as an MCP server)
:mod:`~effectbench.cli._sign`     ``sign``
:mod:`~effectbench.cli._commit`   ``commit``, ``draw`` (a fresh instance's seed)
:mod:`~effectbench.cli._verify`   ``verify``
:mod:`~effectbench.cli._rank`     ``rank``
:mod:`~effectbench.cli._export`   ``export`` (bundles as EEE records, ATIF, Inspect logs)
:mod:`~effectbench.cli._reproduce`  ``reproduce`` (re-run and record shipped baselines)
:mod:`~effectbench.cli._site`     ``site build``, ``site serve``
:mod:`~effectbench.cli._ledger`   ``ledger append|sign|verify|audit`` (the verification ledger)
:mod:`~effectbench.cli._monitor`  ``monitor heldout|corpus|run|verify`` (the monitor track)
============================  =============================================

The command line sits on top of every layer (engine <- verifier <- site <- CLI)
and starts fast: building the parser imports argparse and these modules only;
each command imports what it needs (pandas, pydantic, sigstore, mkdocs) when
it runs. :func:`main` is the one place where an
:class:`~effectbench.errors.EffectBenchError` becomes a message and an exit
status (``--verbose`` shows the traceback instead).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from effectbench.cli import (
    _commit,
    _conformance,
    _export,
    _inspect,
    _ledger,
    _mcp,
    _monitor,
    _packs,
    _produce,
    _rank,
    _reproduce,
    _run,
    _sign,
    _site,
    _verify,
)
from effectbench.cli._args import Parser
from effectbench.errors import EffectBenchError

GROUPS = (
    _run,
    _packs,
    _conformance,
    _produce,
    _inspect,
    _mcp,
    _sign,
    _commit,
    _verify,
    _rank,
    _export,
    _reproduce,
    _site,
    _ledger,
    _monitor,
)
"""The command modules, in help order."""


class _Version(argparse.Action):
    """``--version``: looks the installed version up only when asked."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        from effectbench._version import engine_version

        print(f"effectbench {engine_version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """Return the parser with every command."""
    parser = Parser(
        prog="effectbench",
        description="Score the true effect of automation agents (SWER beside over-halt).",
    )
    parser.add_argument("--version", action=_Version, help="print the version and exit")
    parser.add_argument(
        "--verbose", action="store_true", help="show the traceback of an error instead of a message"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in GROUPS:
        group.register(sub)
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
    except BrokenPipeError:  # the reader left (`effectbench packs | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


__all__ = ["GROUPS", "build_parser", "main"]
