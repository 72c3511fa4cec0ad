"""``effectbench mcp``: one episode as an MCP server over stdio."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from effectbench.errors import UsageError
from effectbench.mcp import VOCABULARY_NAMES


def _cmd_mcp(args: argparse.Namespace) -> int:
    from effectbench.extras import require
    from effectbench.mcp.front import serve

    require("mcp", "mcp", what="effectbench mcp")  # found, not imported: initialize comes first
    if args.trial < 0:
        raise UsageError(f"--trial must be 0 or more, got {args.trial}")
    serve(lambda: _prepare(args))  # initialize is answered while _prepare runs
    return 0


def _prepare(args: argparse.Namespace) -> Callable[[], None]:
    """Build the pack, check the task, start the episode; return the call that serves it."""
    import asyncio

    from effectbench.packs import get_pack
    from effectbench.variants import choose, named_tasks

    pack = get_pack(args.pack)
    (substrate,) = choose(pack, args.substrate) if "," not in args.substrate else (None,)
    if substrate is None or not substrate.is_screen:
        raise UsageError(
            f"--substrate {args.substrate!r}: the MCP server serves one screen substrate "
            "(web, desktop or remote_display)"
        )
    named = named_tasks(pack, args.task, (substrate,))
    task = next((t for t in named if t.substrate is substrate), None)
    if task is None:
        raise UsageError(f"pack {pack.name!r} has no task {args.task!r} on {substrate.value}")
    from effectbench.mcp.server import EpisodeServer

    episode = EpisodeServer(
        pack,
        task,
        args.trial,
        Path(args.record_dir),
        timeout_s=args.timeout,
        name=args.system,
        vocabulary=args.vocabulary,
    )
    # the attempt's file first (a client that leaves from now on leaves its drop; a cell
    # whose attempt completed is refused here, in one line), then the episode is provisioned
    # while the SDK is imported; the SDK serves once this returns
    episode.claim()
    episode.start()
    try:
        from effectbench.mcp.app import build, serve

        app = build(episode)
    except BaseException:
        episode.stop()
        raise
    return lambda: asyncio.run(serve(app, episode))


def register(sub: Any) -> None:
    """Add ``mcp``."""
    p = sub.add_parser("mcp", help="serve one episode as an MCP server over stdio")
    p.add_argument("--pack", default="clinic", help="the task pack: {packs}")
    p.add_argument("--substrate", default="web", help="web (desktop, remote_display if offered)")
    p.add_argument("--task", required=True, help="a task id (clinic::NAME@web) or its NAME")
    p.add_argument("--trial", type=int, default=0, help="the trial (its seed and payload)")
    p.add_argument(
        "--record-dir",
        default="effectbench-records",
        help="where the attempt is kept (one file per attempt, never overwritten)",
    )
    p.add_argument("--timeout", type=float, default=900.0, help="seconds until a silent halt")
    p.add_argument("--system", default="mcp-agent", help="the system's name in the row (its arm)")
    p.add_argument(
        "--vocabulary",
        choices=VOCABULARY_NAMES,
        default=VOCABULARY_NAMES[0],
        help="whose names and schema the computer actions have: Anthropic's computer tool, "
        "OpenAI's computer_call actions or OSWorld's computer_13",
    )
    p.set_defaults(func=_cmd_mcp)
