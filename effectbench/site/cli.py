"""``effectbench site build`` and ``effectbench site serve``."""

from __future__ import annotations

import argparse
import functools
import http.server
import logging
import sys
from pathlib import Path
from typing import Any

from effectbench.cli import positive_int
from effectbench.errors import UsageError


def _mkdocs_logging(verbose: bool) -> None:
    # The mkdocs CLI installs this handler itself; in-process we do it so warnings show.
    logger = logging.getLogger("mkdocs")
    if not any(getattr(h, "_effectbench", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("mkdocs %(levelname)s: %(message)s"))
        handler._effectbench = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
    logger.setLevel(logging.INFO if verbose else logging.WARNING)


def _cmd_build(args: argparse.Namespace) -> int:
    from effectbench.site.build import build_site

    root = Path(args.root).resolve()
    trust_config = None
    if args.trust_config is not None:
        trust_config = Path(args.trust_config).resolve()
        if not trust_config.is_file():
            raise UsageError(f"--trust-config {args.trust_config} is not a file")
    _mkdocs_logging(args.verbose)
    summary = build_site(
        Path(args.submissions),
        Path(args.out),
        root=root,
        allow_unsigned=args.allow_unsigned,
        cache_dir=Path(args.cache_dir) if args.cache_dir else None,
        cache_reports=not args.fresh,
        workers=args.workers,
        trust_config=trust_config,
    )
    for line in summary.lines():
        print(line)
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    directory = Path(args.dir)
    if not (directory / "index.html").is_file():
        raise UsageError(f"{directory}/index.html not found: run `effectbench site build` first")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(directory))
    with http.server.ThreadingHTTPServer((args.host, args.port), handler) as server:
        port = server.server_address[1]
        print(f"serving {directory} on http://{args.host}:{port}/ (Ctrl-C stops)", flush=True)
        server.serve_forever()
    return 0


def register(sub: Any) -> None:
    """Add ``site build`` and ``site serve``."""
    site = sub.add_parser("site", help="build or preview the static leaderboard site")
    site_sub = site.add_subparsers(dest="site_command", required=True, metavar="SITE_COMMAND")

    p = site_sub.add_parser(
        "build", help="verify every bundle and build the site (into a temp folder, then swap)"
    )
    p.add_argument("--submissions", default="submissions", metavar="DIR")
    p.add_argument("--out", default="public", metavar="DIR")
    p.add_argument(
        "--root", default=".", metavar="DIR", help="repository root (mkdocs.yml, SPEC.md, site/)"
    )
    p.add_argument(
        "--allow-unsigned",
        action="store_true",
        help="show unsigned bundles as unranked previews (local preview only)",
    )
    p.add_argument(
        "--trust-config",
        metavar="FILE",
        help="verify signatures against this Sigstore trust configuration (a private "
        "instance, e.g. the tests'); default: the verifier's pinned production root",
    )
    p.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="chart SVGs and verifier reports, by content (default .cache/effectbench-site)",
    )
    p.add_argument(
        "--fresh",
        action="store_true",
        help="verify every bundle again instead of reusing reports of byte-identical bundles",
    )
    p.add_argument(
        "--workers",
        type=positive_int,
        metavar="N",
        help="worker processes for verification and charts (default: the CPUs, at most 4; "
        "1 keeps the build in one process)",
    )
    p.set_defaults(func=_cmd_build)

    p = site_sub.add_parser("serve", help="serve the built site on 127.0.0.1 for a local preview")
    p.add_argument("--dir", default="public", metavar="DIR")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.set_defaults(func=_cmd_serve)
