"""Commands ``ledger append|sign|verify|audit``: the verification ledger the board CI keeps
(:mod:`verifier.ledger`, :mod:`effectbench.site._ledger`), and options ``site build`` reads
it by."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from effectbench.cli._args import add_record_options, positive_int, record_policy
from effectbench.errors import UsageError

LEDGER_DEFAULT = "ledger"
"""The ledger's folder (beside ``submissions/`` in the repository)."""


def add_ledger_options(parser: argparse.ArgumentParser, *, build: bool = False) -> None:
    """Add where the ledger is and whose checkpoints count (``site build`` and ``ledger``)."""
    parser.add_argument(
        "--ledger",
        default=LEDGER_DEFAULT,
        metavar="DIR",
        help="the verification ledger's folder (default: %(default)s)"
        + ("; absent, or --no-ledger: every bundle verified in full" if build else ""),
    )
    if build:
        parser.add_argument(
            "--no-ledger",
            action="store_true",
            help="verify every bundle in full, whatever the ledger holds",
        )
    parser.add_argument(
        "--ledger-signer",
        nargs=2,
        action="append",
        default=[],
        metavar=("IDENTITY", "ISSUER"),
        help="also accept ledger checkpoints signed by IDENTITY under OIDC issuer ISSUER "
        "(repeatable; beside verifier/record_signers.json, the board CI's identities)",
    )
    parser.add_argument(
        "--ledger-trust-config",
        metavar="FILE",
        help="check the checkpoint's signature against this Sigstore trust configuration (a "
        "private instance, e.g. the tests'); default: --trust-config, else the pinned root",
    )
    parser.add_argument(
        "--previous-checkpoint",
        metavar="FILE",
        help="the last published signed checkpoint: the ledger must extend it (a smaller or "
        "other tree is refused); this machine's last accepted checkpoint counts too",
    )


def _file(value: str | None, option: str) -> Path | None:
    if value is None:
        return None
    path = Path(value)
    if not path.is_file():
        raise UsageError(f"{option} {value} is not a file")
    return path.resolve()


def ledger_check(args: argparse.Namespace) -> Any:
    """The :class:`effectbench.site._ledger.LedgerCheck` of the options
    :func:`add_ledger_options` added; None when the build takes no ledger."""
    if getattr(args, "no_ledger", False):
        return None
    folder = Path(args.ledger)
    if not folder.exists():
        if args.ledger != LEDGER_DEFAULT:
            raise UsageError(f"--ledger {args.ledger} is not a folder")
        return None  # no ledger (a fresh fork): every bundle verified in full
    if not folder.is_dir():
        raise UsageError(f"--ledger {args.ledger} is not a folder")
    from effectbench.site._ledger import LedgerCheck

    trust = _file(
        args.ledger_trust_config or getattr(args, "trust_config", None), "--ledger-trust-config"
    )
    return LedgerCheck(
        folder=folder,
        signers=tuple((identity, issuer) for identity, issuer in args.ledger_signer),
        trust_config=trust,
        previous=_file(args.previous_checkpoint, "--previous-checkpoint"),
    )


def _setup(args: argparse.Namespace) -> Any:
    from effectbench.site._ledger import VerifySetup

    return VerifySetup(
        allow_unsigned=args.allow_unsigned,
        trust_config=_file(args.trust_config, "--trust-config"),
        records=record_policy(args),
    )


def _bundles(submissions: str) -> list[Path]:
    from effectbench.errors import DataError
    from verifier.api import bundle_folders

    path = Path(submissions)
    if not path.is_dir():
        raise DataError("the submissions folder does not exist", file=submissions)
    return bundle_folders(path)


def _cmd_append(args: argparse.Namespace) -> int:
    from effectbench.site._ledger import append_summaries

    folder = Path(args.ledger)
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"--ledger {args.ledger} is not a folder")
    added = append_summaries(folder, _bundles(args.submissions), _setup(args))
    print(f"{added} summary(ies) appended to {folder}; sign a checkpoint: effectbench ledger sign")
    return 0


def _cmd_sign(args: argparse.Namespace) -> int:
    from datetime import timedelta

    from effectbench.site._ledger import sign_checkpoint

    folder = Path(args.ledger)
    if not folder.is_dir():
        raise UsageError(f"--ledger {args.ledger} is not a folder")
    point = sign_checkpoint(
        folder,
        signers=tuple((i, s) for i, s in args.ledger_signer),
        identity_token=args.identity_token,
        trust_config=_file(args.trust_config, "--trust-config"),
        lifetime=timedelta(days=args.days),
    )
    print(
        f"checkpoint of {point.size} summaries, root {point.root_text}, signed by "
        f"{point.signer}, expires {point.expires:%Y-%m-%d}"
    )
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    from effectbench.site._digests import FileDigests
    from effectbench.site._ledger import LedgerCheck, policy_digest, verifier_version
    from effectbench.site._reports import _file_digests
    from verifier.ledger import Refusal

    check: LedgerCheck | None = ledger_check(args)
    if check is None:
        raise UsageError(f"--ledger {args.ledger}: no ledger there")
    ledger = check.open()
    if ledger is None:
        for note in check.notes or [f"{args.ledger}: no ledger (no entries, no checkpoint)"]:
            print(note)
        return 1
    point = ledger.checkpoint
    print(
        f"checkpoint: {point.size} summaries, root {point.root_text}, signed by {point.signer} "
        f"at {point.signed_at}, expires {point.expires:%Y-%m-%d %H:%M} UTC"
    )
    if args.submissions is None:
        return 0
    setup = _setup(args)
    version = verifier_version()
    policy = policy_digest(
        allow_unsigned=setup.allow_unsigned, trust_config=setup.trust_config, records=setup.records
    )
    digests = FileDigests()
    refused = 0
    for bundle in _bundles(args.submissions):
        got = ledger.trusted(bundle.name, _file_digests(bundle, digests), version, policy)
        if isinstance(got, Refusal):
            refused += 1
            print(f"{bundle.name}: {got}")
        elif got is None:
            print(f"{bundle.name}: not in the ledger (a build verifies it in full)")
        else:
            print(f"{bundle.name}: matches entry {got[0].index}")
    return 1 if refused else 0


def _cmd_audit(args: argparse.Namespace) -> int:
    from effectbench.site._ledger import LedgerCheck, audit

    check: LedgerCheck | None = ledger_check(args)
    bundles = _bundles(args.submissions)
    bad = audit(bundles, _setup(args), check)
    print(f"audit: {len(bundles)} bundle(s) verified in full, {bad} disagreement(s)")
    return 1 if bad else 0


def register(sub: Any) -> None:
    """Add ``ledger append``, ``ledger sign``, ``ledger verify`` and ``ledger audit``."""
    ledger = sub.add_parser(
        "ledger", help="the verification ledger: the board CI's signed verification summaries"
    )
    ledger_sub = ledger.add_subparsers(
        dest="ledger_command", required=True, metavar="LEDGER_COMMAND"
    )

    def common(p: argparse.ArgumentParser, *, verify: bool) -> None:
        add_ledger_options(p)
        if verify:
            p.add_argument(
                "--allow-unsigned",
                action="store_true",
                help="verify as a local preview build does (a summary records it)",
            )
            add_record_options(p, force=False)
        p.add_argument(
            "--trust-config",
            metavar="FILE",
            help="a private Sigstore instance's trust configuration (tests); default: production",
        )

    p = ledger_sub.add_parser(
        "append",
        help="verify in full every bundle the ledger has no current summary of and append one "
        "summary each (the board CI, after merge)",
    )
    p.add_argument("submissions", nargs="?", default="submissions", help="the folder of bundles")
    common(p, verify=True)
    p.set_defaults(func=_cmd_append)

    p = ledger_sub.add_parser(
        "sign", help="sign a checkpoint over every summary with Sigstore (the board CI's identity)"
    )
    common(p, verify=False)
    p.add_argument("--identity-token", metavar="TOKEN", help="an OIDC identity token to sign with")
    p.add_argument(
        "--days",
        type=positive_int,
        default=30,
        help="days until builds refuse the checkpoint (default: %(default)s)",
    )
    p.set_defaults(func=_cmd_sign)

    p = ledger_sub.add_parser(
        "verify",
        help="check the checkpoint's signature, root and consistency; with --submissions, "
        "each bundle against its summary",
    )
    p.add_argument("--submissions", metavar="DIR", help="also hold these bundles to the ledger")
    common(p, verify=True)
    p.set_defaults(func=_cmd_verify)

    p = ledger_sub.add_parser(
        "audit",
        help="verify every bundle in full and hold each against the ledger (make audit)",
    )
    p.add_argument("submissions", nargs="?", default="submissions", help="the folder of bundles")
    common(p, verify=True)
    p.set_defaults(func=_cmd_audit)
