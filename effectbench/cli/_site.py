"""Commands ``site build`` and ``site serve``: the leaderboard site, built and previewed."""

from __future__ import annotations

import argparse
import contextlib
import errno
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from effectbench.cli._args import (
    add_accepted,
    add_record_options,
    port_number,
    positive_int,
    record_policy,
    use_accepted,
)
from effectbench.cli._ledger import add_ledger_options, ledger_check
from effectbench.cli._progress import bar, wanted
from effectbench.errors import UsageError
from effectbench.filenames import site_cache_home

if TYPE_CHECKING:
    import http.server


def _mkdocs_logging(verbose: bool) -> None:
    import logging

    # The mkdocs CLI installs this handler itself; in-process we do it so warnings show.
    logger = logging.getLogger("mkdocs")
    if not any(getattr(h, "_effectbench", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("mkdocs %(levelname)s: %(message)s"))
        handler._effectbench = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
    logger.setLevel(logging.INFO if verbose else logging.WARNING)


def _cmd_build(args: argparse.Namespace) -> int:
    from effectbench.kit.audit import audits_live
    from effectbench.site import build_site

    root = Path(args.root).resolve()
    trust_config = None
    if args.trust_config is not None:
        trust_config = Path(args.trust_config).resolve()
        if not trust_config.is_file():
            raise UsageError(f"--trust-config {args.trust_config} is not a file")
    if args.held_labels is not None and not Path(args.held_labels).is_dir():
        raise UsageError(f"--held-labels {args.held_labels} is not a folder")
    use_accepted(args.accepted)
    _mkdocs_logging(args.verbose)
    live = audits_live() if args.fresh else contextlib.nullcontext()
    with live, bar("building the site", wanted()) as progress:
        summary = build_site(
            Path(args.submissions),
            Path(args.out),
            root=root,
            allow_unsigned=args.allow_unsigned,
            cache_dir=Path(args.cache_dir) if args.cache_dir else None,
            cache_reports=not args.fresh,
            workers=args.workers,
            trust_config=trust_config,
            records=record_policy(args),
            force_reproduce=args.reproduce,
            progress=progress,
            held_labels=Path(args.held_labels) if args.held_labels else None,
            ledger=ledger_check(args),
        )
    for line in summary.lines():
        print(line)
    return 0


def _server(host: str, port: int, directory: Path) -> http.server.ThreadingHTTPServer:
    """Bind the preview server, turning every binding failure into a one-line usage error."""
    import functools
    import http.server
    import socket

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(directory))
    try:
        return http.server.ThreadingHTTPServer((host, port), handler)
    except socket.gaierror as exc:
        raise UsageError(
            f"--host {host}: not an address of this machine ({exc.strerror})"
        ) from None
    except OverflowError:  # defensive: port_number already refuses these
        raise UsageError(f"--port {port}: a port is 0 to 65535") from None
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            reason = "is in use; choose another --port (0 picks a free one)"
        elif exc.errno == errno.EACCES:
            reason = "needs privileges; choose a --port above 1023"
        elif exc.errno == errno.EADDRNOTAVAIL:
            raise UsageError(f"--host {host}: not an address of this machine") from None
        else:
            reason = f"cannot be bound ({exc.strerror or exc})"
        raise UsageError(f"--port {port} on {host} {reason}") from None


def _cmd_serve(args: argparse.Namespace) -> int:
    directory = Path(args.dir)
    if not (directory / "index.html").is_file():
        raise UsageError(f"{directory}/index.html not found: run `effectbench site build` first")
    with _server(args.host, args.port, directory) as server:
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
    p.add_argument(
        "--submissions", default="submissions", metavar="DIR", help="the folder of bundles"
    )
    p.add_argument("--out", default="public", metavar="DIR", help="where the site goes")
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
        "--held-labels",
        metavar="DIR",
        help="the board's held test labels (labels-test.json): the monitors board then shows "
        "each monitor's held-out recall, plain and on the monitored slice (totals only)",
    )
    add_accepted(p)
    p.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="chart SVGs, verifier reports and the monitor corpus, by content (default: "
        f"{site_cache_home()}, under $XDG_CACHE_HOME or ~/.cache)",
    )
    p.add_argument(
        "--fresh",
        action="store_true",
        help="verify every bundle again instead of reusing reports of byte-identical bundles, "
        "make the monitor corpus again, and audit every pack again instead of adopting this "
        "machine's earlier audits",
    )
    p.add_argument(
        "--workers",
        type=positive_int,
        metavar="N",
        help="worker processes for verification and charts (default: the CPUs, at most 4; "
        "1 keeps the build in one process)",
    )
    add_record_options(p)
    add_ledger_options(p, build=True)
    p.set_defaults(func=_cmd_build)

    p = site_sub.add_parser("serve", help="serve the built site on 127.0.0.1 for a local preview")
    p.add_argument("--dir", default="public", metavar="DIR", help="the built site")
    p.add_argument("--host", default="127.0.0.1", help="the address to listen on")
    p.add_argument(
        "--port", type=port_number, default=8000, help="the port to listen on (0: a free one)"
    )
    p.set_defaults(func=_cmd_serve)
