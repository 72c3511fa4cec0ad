"""Commands ``commit`` and ``draw``: commit to a system before its fresh instance exists, then
draw the instance's seed from the commitment's log entry and its one beacon round."""

from __future__ import annotations

import argparse
import json
import os
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from effectbench.cli._sign import TOKEN_ENV
from effectbench.errors import DataError, UsageError

DRAND_RELAY = "https://api.drand.sh"
"""Where ``draw`` fetches a round by default (any drand HTTP relay serves the same rounds)."""
FETCH_TIMEOUT_S = 20
"""Seconds ``draw`` waits for a relay's answer."""
ROUND_MAX_BYTES = 4096
"""A relay's answer longer than this is not a round."""


def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    except ValueError:
        raise DataError(f"not JSON (expected {what})", file=str(path)) from None


def _chain(path: Path | None) -> Any:
    from effectbench.instances import BeaconChain
    from verifier.commitment import PINNED_CHAIN

    return BeaconChain.from_file(path or PINNED_CHAIN)


def _now() -> int:
    """Seconds since the epoch (tests put the clock at a round's publication)."""
    return int(time.time())


def _utc(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def harness_of(args: argparse.Namespace) -> str:
    """The harness ``--baseline`` or ``--sut`` names (``instances.harness_name``)."""
    from effectbench.instances import harness_name

    baseline, sut = getattr(args, "baseline", None), getattr(args, "sut", None)
    if baseline and sut:
        raise UsageError("--baseline and --sut: name one harness")
    try:
        return harness_name(baseline, sut)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _cmd_commit(args: argparse.Namespace) -> int:
    from effectbench.instances import (
        commitment_round,
        commitment_statement,
        configuration_digest,
        configuration_file_digest,
        log_entry,
    )
    from effectbench.packs import get_pack, instance_packs
    from effectbench.seam import DrawsInstances
    from effectbench.signatures.sign import sign_statement

    drawing = instance_packs()
    if args.pack is None and not drawing:
        raise UsageError("--pack: no installed pack draws instances from a seed")
    name = args.pack or drawing[0]
    pack = get_pack(name)
    if not isinstance(pack, DrawsInstances):
        raise UsageError(
            f"--pack {name}: it draws no instances (these do: {', '.join(drawing) or 'none'})"
        )
    if args.out.exists():
        raise UsageError(f"{args.out} exists; name a new file")
    from effectbench.cli._produce import declared_model

    declared_model(args.model)  # the bundle records it as PROVIDER/ID: refused now, not then
    chain = _chain(args.beacon_chain)
    digest = configuration_digest(
        harness_of(args), args.model or "", configuration_file_digest(args.config)
    )
    from sigstore import dsse

    statement = commitment_statement(args.name, digest, pack.name)
    token = args.identity_token or os.environ.get(TOKEN_ENV) or None
    raw, identities, issuer = sign_statement(
        dsse.Statement(json.dumps(statement).encode()),
        identity_token=token,
        trust_config=args.trust_config,
    )
    args.out.write_bytes(raw)
    entry = log_entry(json.loads(raw))
    print(f"committed {args.name!r} ({digest}) as {', '.join(identities)} (issuer {issuer})")
    print(f"log index {entry.log_index}, integrated at {entry.integrated_time}")
    print(f"wrote {args.out}")
    at = commitment_round(entry, chain)
    print(
        f"the seed is drawn from beacon round {at} (published {_utc(chain.round_time(at))}), "
        "no other: effectbench draw, then submit with --config and --model as committed"
    )
    return 0


def fetch_round(relay: str, chain_hash: str, number: int) -> Any:
    """Round ``number`` of chain ``chain_hash`` as a drand relay serves it (JSON). Raises
    :class:`DataError` saying what failed."""
    url = f"{relay.rstrip('/')}/{chain_hash}/public/{number}"
    if not url.startswith(("https://", "http://")):
        raise UsageError(f"--relay {relay}: an http(s) URL")
    try:
        with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT_S) as answer:  # noqa: S310
            body = answer.read(ROUND_MAX_BYTES + 1)
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise DataError(
            f"cannot fetch round {number} ({reason}); offline, save the round's JSON from any "
            "drand relay and pass it with --beacon FILE",
            file=url,
        ) from None
    if len(body) > ROUND_MAX_BYTES:
        raise DataError("the relay's answer is not a round (too long)", file=url)
    try:
        return json.loads(body)
    except ValueError:
        raise DataError("the relay's answer is not JSON", file=url) from None


def _cmd_draw(args: argparse.Namespace) -> int:
    from effectbench.instances import (
        Beacon,
        beacon_problem,
        commitment_round,
        derived_seed,
        log_entry,
        round_problem,
    )

    commitment = _read_json(args.commitment, "a Sigstore bundle")
    try:
        entry = log_entry(commitment)
    except ValueError as exc:
        raise DataError(str(exc), file=str(args.commitment)) from None
    chain = _chain(args.beacon_chain)
    want = commitment_round(entry, chain)
    if args.beacon is not None:
        source = str(args.beacon)
        data = _read_json(args.beacon, "a beacon round")
    else:
        wait = chain.round_time(want) - _now()
        if wait > 0:
            raise DataError(
                f"round {want} is published at {_utc(chain.round_time(want))}, in {wait} s: "
                "run draw again then",
                file=str(args.commitment),
            )
        source = f"{args.relay}/{chain.chain_hash}/public/{want}"
        data = fetch_round(args.relay, chain.chain_hash, want)
    try:
        beacon = Beacon.from_json(data, chain.chain_hash)
    except ValueError as exc:
        raise DataError(str(exc), file=source) from None
    problem = beacon_problem(beacon, chain)
    if problem is not None:
        raise DataError(problem, file=source)
    misplaced = round_problem(entry, beacon, chain)
    if misplaced is not None:
        raise DataError(misplaced[1], file=source, field="round")
    if args.save is not None:
        if args.save.exists():
            raise UsageError(f"{args.save} exists; name a new file")
        args.save.write_text(json.dumps(beacon.to_json(), indent=2) + "\n", encoding="utf-8")
    print(derived_seed(entry, beacon))
    return 0


def _chain_option(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--beacon-chain",
        type=Path,
        metavar="FILE",
        help=f"the beacon chain {what} (drand's /info JSON; default: the verifier's pinned "
        "quicknet chain; tests name a private one)",
    )


def register(sub: Any) -> None:
    """Add ``commit`` and ``draw``."""
    p = sub.add_parser(
        "commit",
        help="commit to a system and configuration before drawing a fresh instance (Sigstore)",
        description=(
            "Sign a commitment naming the system and the digest of its configuration (harness, "
            "model, configuration file), keyless with Sigstore (logged in the transparency "
            "log), and write it to --out. The fresh instance's seed is drawn later from its log "
            "entry and the first beacon round published after it (effectbench draw)."
        ),
    )
    p.add_argument("--name", required=True, help="the system's name, as the bundle will give it")
    p.add_argument(
        "--config", required=True, type=Path, metavar="FILE", help="the configuration file"
    )
    p.add_argument("--baseline", metavar="NAME", help="the harness: a shipped baseline")
    p.add_argument("--sut", metavar="MODULE:ATTR", help="the harness: your SystemUnderTest")
    p.add_argument(
        "--model", metavar="PROVIDER/ID", help="the model the system calls (default: none)"
    )
    p.add_argument(
        "--pack",
        help="the generated pack to run: {instance_packs} (default: the first of them)",
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
    _chain_option(p, "whose round the seed is drawn from")
    p.set_defaults(func=_cmd_commit)
    d = sub.add_parser(
        "draw",
        help="print a fresh instance's seed: the commitment's log entry and its beacon round",
        description=(
            "Print the seed of a commitment's fresh instance. Its round is the first published "
            "after the commitment's integrated time plus a stated delay; draw fetches it from a "
            "drand relay, or reads it from --beacon FILE offline, verifies it and derives the "
            "seed."
        ),
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
        type=Path,
        metavar="FILE",
        help="the round, saved (drand's JSON or draw --save's); default: fetch it from --relay",
    )
    d.add_argument(
        "--relay",
        default=DRAND_RELAY,
        metavar="URL",
        help="the drand HTTP relay to fetch the round from (default: %(default)s)",
    )
    d.add_argument(
        "--save",
        type=Path,
        metavar="FILE",
        help="write the verified round there (a new file), for submit --beacon",
    )
    _chain_option(d, "the round is verified under")
    d.set_defaults(func=_cmd_draw)
