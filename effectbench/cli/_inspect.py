"""Command ``import-inspect``: an inspect_ai log of an EffectBench task becomes a bundle.

This module imports nothing of inspect_ai, so the command is listed without the
optional extra; run without it, it says which extra to install (exit 2).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from effectbench.cli._produce import (
    add_declaration_arguments,
    add_harness_arguments,
    declared_harness,
    declared_model,
    print_standing,
    read_declaration,
)
from effectbench.errors import UsageError
from effectbench.extras import missing

EXTRA_MESSAGE = str(missing("inspect", "inspect-ai", "import-inspect"))


def _cmd_import_inspect(args: argparse.Namespace) -> int:
    signer, readme = read_declaration(args)
    model = declared_model(args.model)
    try:
        from effectbench.integrations.inspect_ai.importer import import_log
    except ModuleNotFoundError as exc:
        if exc.name == "inspect_ai" or (exc.name or "").startswith("inspect_ai."):
            raise UsageError(EXTRA_MESSAGE) from None
        raise
    imported = import_log(
        args.log,
        args.out,
        name=args.name,
        description=args.description,
        url=args.url,
        signer=signer,
        readme=readme,
        harness=lambda known: declared_harness(args, known),
        model=model,
    )
    print(imported.folder)
    print_standing(imported.folder, imported.run, imported.results)
    return 0


def register(sub: Any) -> None:
    """Add ``import-inspect``."""
    p = sub.add_parser(
        "import-inspect",
        help="convert an inspect_ai log of an EffectBench task into a submission bundle",
    )
    p.add_argument("log", type=Path, metavar="LOG.eval", help="the inspect log (.eval or .json)")
    p.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="DIR",
        help="parent folder; the bundle is DIR/<date>_<slug of the name>",
    )
    p.add_argument("--name", help="the system's display name (default: the log's model)")
    p.add_argument("--description", help="one paragraph on the system (default: model and task)")
    p.add_argument("--url", default="", help="where to learn more (paper, repository)")
    add_declaration_arguments(p)
    add_harness_arguments(
        p,
        "Default: inspect_ai at the log's version, its configuration's hash",
        "(default: the log's model)",
    )
    p.set_defaults(func=_cmd_import_inspect)
