"""``effectbench mcp``: one episode as an MCP server over stdio."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from effectbench.cli._args import FIRST_PACK, pack_arg
from effectbench.errors import UsageError
from effectbench.mcp import VOCABULARY_NAMES

if TYPE_CHECKING:
    from effectbench.mcp.front import Early
    from effectbench.mcp.server import EpisodeServer


def _cmd_mcp(args: argparse.Namespace) -> int:
    from effectbench.extras import require
    from effectbench.mcp.front import serve

    require("mcp", "mcp", what="effectbench mcp")  # found, not imported: the SDK comes last
    if args.trial < 0:
        raise UsageError(f"--trial must be 0 or more, got {args.trial}")
    planned: list[EpisodeServer] = []

    def plan() -> Early:
        episode, early = _plan(args)
        planned.append(episode)
        return early

    serve(plan, lambda: _start(planned[0]), client=lambda info: planned[0].driven_by(info))
    # the early answers are given while _start runs
    return 0


def _plan(args: argparse.Namespace) -> tuple[EpisodeServer, Early]:
    """Find the task, claim the attempt's file; return the episode and the early answers.

    The attempt's file exists before the client is answered at all: a client that leaves
    after ``initialize`` leaves its drop, however soon it kills the server. A cell whose
    attempt completed is refused here, in one line.
    """
    from effectbench.mcp.front import Early
    from effectbench.mcp.server import EpisodeServer
    from effectbench.mcp.tools import listing
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
    episode = EpisodeServer(
        pack,
        task,
        args.trial,
        Path(args.record_dir),
        timeout_s=args.timeout,
        name=args.system,
        vocabulary=args.vocabulary,
    )
    episode.claim()
    return episode, Early(tools=listing(episode.tools), task=episode.task_answer())


def _start(episode: EpisodeServer) -> Callable[[], None]:
    """Provision the episode (its own thread) while the SDK is imported; return the call
    that serves it."""
    import asyncio

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
    p.add_argument(
        "--pack",
        default=FIRST_PACK,
        type=pack_arg,
        help="the task pack: {packs}",
    )
    p.add_argument("--substrate", default="web", help="web (desktop, remote_display if offered)")
    p.add_argument("--task", required=True, help="a task id (PACK::NAME@web) or its NAME")
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
