"""Benchmark verifying the shipped bundles from their reproduction records, in one process.

Each bundle of ``submissions/`` is verified in turn, in this process, as the deploy job's build
verifies it (every check, receipts included; screen bundles from their records in
``reproductions/``, signed by the deploy workflow's identity), and its seconds are printed, then
the total, the CPU seconds of this process and of the children it waited for (the decoding
children of :mod:`verifier.frames`; CPU seconds vary less than wall time when others share the
machine) and the load average before and after. The packs' audits come from this machine's
audit cache, so a first run also pays for them: run twice and read the second for the checks
alone.

    .venv/bin/python benchmarks/bench_verify_shipped.py [--bundles N]
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

from verifier.api import VerifyOptions, verify_bundle
from verifier.records import RecordPolicy

ROOT = Path(__file__).resolve().parents[1]
DEPLOY_SIGNER = (
    "https://github.com/board/effectbench/.github/workflows/deploy-site.yml@refs/heads/main",
    "https://token.actions.githubusercontent.com",
)
"""The identity the shipped records are signed with (what the deploy job's build accepts)."""


def _load() -> str:
    return Path("/proc/loadavg").read_text().strip()


def _cpu() -> float:
    """CPU seconds (user and system) of this process and of its waited-for children."""
    own, children = (
        resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundles", type=int, default=0, help="the first N bundles (0: all)")
    args = parser.parse_args()
    bundles = sorted(p for p in (ROOT / "submissions").iterdir() if p.is_dir())
    if args.bundles > 0:
        bundles = bundles[: args.bundles]
    policy = RecordPolicy(records=ROOT / "reproductions", signers=(DEPLOY_SIGNER,))
    options = VerifyOptions(folder_rule=True, records=policy)
    print(f"load average before: {_load()}")
    total, cpu = 0.0, _cpu()
    for bundle in bundles:
        started = time.perf_counter()
        report = verify_bundle(bundle, options)
        spent = time.perf_counter() - started
        total += spent
        print(f"  {spent:6.2f} s  {report.status.value:8s} {bundle.name}")
    print(f"{len(bundles)} bundles verified in {total:.1f} s, {_cpu() - cpu:.1f} CPU s")
    print(f"load average after: {_load()}")


if __name__ == "__main__":
    main()
