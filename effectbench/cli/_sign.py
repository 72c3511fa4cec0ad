"""Command ``sign``: sign a submission bundle, or a monitor bundle, with Sigstore (keyless)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

TOKEN_ENV = "SIGSTORE_IDENTITY_TOKEN"
"""Environment variable read when ``--identity-token`` is not given (as sigstore's CLI does)."""


def _cmd_sign(args: argparse.Namespace) -> int:
    from effectbench.signatures import load_policy, sign_bundle_checked  # sigstore: heavy

    token = args.identity_token or os.environ.get(TOKEN_ENV) or None
    folder = Path(args.dir)
    kind: dict[str, Any] = {}
    if (folder / "monitor.json").is_file() and not (folder / "submission.json").exists():
        from effectbench.monitors.bundle import MONITOR_FILE, PREDICATE_TYPE

        kind = {"manifest": MONITOR_FILE, "predicate_type": PREDICATE_TYPE}
    path, check = sign_bundle_checked(
        folder, identity_token=token, trust_config=args.trust_config, **kind
    )
    signer = check.signer
    assert signer is not None  # sign_bundle_checked raises unless the signature verified
    print(f"signed {args.dir} as {signer.identity} (issuer {signer.issuer}) at {signer.signed_at}")
    print(f"wrote {path}")
    policy = load_policy()
    if not policy.accepts(signer.issuer):
        print(
            f"effectbench: warning: the leaderboard does not rank signatures from issuer "
            f"{signer.issuer} (accepted: {', '.join(sorted(policy.accepted_issuers))})",
            file=sys.stderr,
        )
    return 0


def register(sub: Any) -> None:
    """Add ``sign``."""
    p = sub.add_parser(
        "sign",
        help="sign a submission or monitor bundle with Sigstore (writes submission.sigstore.json)",
        description=(
            "Sign every file of a submission bundle with Sigstore keyless signing. The identity "
            "comes from --identity-token, else $SIGSTORE_IDENTITY_TOKEN, else ambient CI "
            "credentials (GitHub Actions with id-token: write), else the browser sign-in. "
            "The token's identity must be the signer declared in submission.json (a monitor "
            "bundle's: monitor.json)."
        ),
    )
    p.add_argument(
        "dir", metavar="DIR", help="the bundle folder (holds submission.json or monitor.json)"
    )
    p.add_argument(
        "--identity-token",
        metavar="TOKEN",
        help=f"an OIDC identity token to sign with (default: ${TOKEN_ENV}, else ambient "
        "credentials, else the browser sign-in)",
    )
    p.add_argument(
        "--trust-config",
        metavar="FILE",
        type=Path,
        help="a sigstore ClientTrustConfig for a private instance (default: public good)",
    )
    p.set_defaults(func=_cmd_sign)
