"""Commands ``commit`` and ``draw``: commit to a system before its fresh instance exists, then
draw the instance's seed from the commitment's log entry and a later beacon round."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from effectbench.cli._sign import TOKEN_ENV
from effectbench.errors import DataError, UsageError


def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    except ValueError:
        raise DataError(f"not JSON (expected {what})", file=str(path)) from None


def _cmd_commit(args: argparse.Namespace) -> int:
    from effectbench.instances import (
        BeaconChain,
        commitment_statement,
        configuration_digest,
        log_entry,
    )
    from effectbench.packs import get_pack
    from effectbench.seam import DrawsInstances
    from effectbench.signatures.sign import sign_statement

    pack = get_pack(args.pack)
    if not isinstance(pack, DrawsInstances):
        raise UsageError(f"--pack {args.pack}: it draws no instances (clinic-generated does)")
    if args.out.exists():
        raise UsageError(f"{args.out} exists; name a new file")
    from sigstore import dsse

    statement = commitment_statement(args.name, configuration_digest(args.config), pack.name)
    token = args.identity_token or os.environ.get(TOKEN_ENV) or None
    raw, identities, issuer = sign_statement(
        dsse.Statement(json.dumps(statement).encode()),
        identity_token=token,
        trust_config=args.trust_config,
    )
    args.out.write_bytes(raw)
    entry = log_entry(json.loads(raw))
    print(
        f"committed {args.name!r} ({statement['predicate']['configuration_digest']}) as "
        f"{', '.join(identities)} (issuer {issuer})"
    )
    print(f"log index {entry.log_index}, integrated at {entry.integrated_time}")
    print(f"wrote {args.out}")
    if args.beacon_chain is not None:
        chain = BeaconChain.from_file(args.beacon_chain)
        print(f"draw the seed from beacon round {chain.first_round_after(entry.integrated_time)} "
              "or later (effectbench draw)")  # fmt: skip
    return 0


def _cmd_draw(args: argparse.Namespace) -> int:
    from effectbench.instances import (
        Beacon,
        BeaconChain,
        beacon_problem,
        derived_seed,
        early_round,
        log_entry,
    )

    commitment = _read_json(args.commitment, "a Sigstore bundle")
    try:
        entry = log_entry(commitment)
        beacon = Beacon.from_json(_read_json(args.beacon, "a beacon round"))
    except ValueError as exc:
        raise DataError(str(exc), file=str(args.beacon)) from None
    chain = BeaconChain.from_file(args.beacon_chain)
    problem = beacon_problem(beacon, chain)
    if problem is not None:
        raise DataError(problem, file=str(args.beacon))
    early = early_round(entry, beacon, chain)
    if early is not None:
        first = chain.first_round_after(entry.integrated_time)
        raise DataError(f"{early}; wait for round {first}", file=str(args.beacon), field="round")
    print(derived_seed(entry, beacon))
    return 0


def register(sub: Any) -> None:
    """Add ``commit`` and ``draw``."""
    p = sub.add_parser(
        "commit",
        help="commit to a system and configuration before drawing a fresh instance (Sigstore)",
        description=(
            "Sign a commitment naming the system and the digest of its configuration file, "
            "keyless with Sigstore (logged in the transparency log), and write it to --out. "
            "The fresh instance's seed is drawn later from its log entry and a beacon round "
            "published after it (effectbench draw)."
        ),
    )
    p.add_argument("--name", required=True, help="the system's name, as the bundle will give it")
    p.add_argument(
        "--config", required=True, type=Path, metavar="FILE", help="the configuration file"
    )
    p.add_argument(
        "--pack",
        default="clinic-generated",
        help="the generated pack to run (default: clinic-generated)",
    )
    p.add_argument("--out", required=True, type=Path, metavar="FILE", help="where to write it")
    p.add_argument(
        "--identity-token",
        metavar="TOKEN",
        help=f"an OIDC identity token to sign with (else ${TOKEN_ENV}, ambient credentials or "
        "the browser sign-in)",
    )
    p.add_argument(
        "--trust-config",
        type=Path,
        metavar="FILE",
        help="a sigstore ClientTrustConfig for a private instance (else the public good one)",
    )
    p.add_argument(
        "--beacon-chain",
        type=Path,
        metavar="FILE",
        help="the beacon chain (JSON public_key, genesis_time, period): print which round to "
        "wait for",
    )
    p.set_defaults(func=_cmd_commit)
    d = sub.add_parser(
        "draw",
        help="print a fresh instance's seed: the commitment's log entry and a later beacon round",
    )
    d.add_argument(
        "--commitment",
        required=True,
        type=Path,
        metavar="FILE",
        help="the signed commitment (effectbench commit)",
    )
    d.add_argument(
        "--beacon",
        required=True,
        type=Path,
        metavar="FILE",
        help="the beacon round (JSON chain, round, signature, randomness)",
    )
    d.add_argument(
        "--beacon-chain",
        required=True,
        type=Path,
        metavar="FILE",
        help="the chain the round is verified under (JSON public_key, genesis_time, period)",
    )
    d.set_defaults(func=_cmd_draw)
