"""Benchmark the site build's verify stage with and without the verification ledger.

Writes N bundles (MockMed shipped baselines at 10 trials, 90 rows with receipts each, under
distinct folder names; unsigned, so verified as previews), then times the verify stage as
``site build`` runs it (:func:`effectbench.site._reports.verify_submissions` on the build's
pool of workers, no report cache: a cold CI build):

* without a ledger: every bundle verified in full, as before;
* with a ledger whose checkpoint the private Sigstore test instance (``tests/sigstore_testroot``)
  signed: every bundle's files hashed against its summary, the checkpoint verified, and a
  sample of 20 verified in full.

Appending the summaries (one full verification each, the board CI's job, done once per
bundle) is timed apart, as is ``ledger audit`` (``make audit``) when ``--audit`` is given.
Prints the wall and CPU seconds of each and the load average before and after (the machine's
two cores are shared).

    .venv/bin/python benchmarks/bench_ledger.py [--n 400] [--workers 2] [--audit]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from sigstore_testroot import GITHUB_ACTIONS, shared_instance  # noqa: E402

from effectbench import SPEC_VERSION  # noqa: E402
from effectbench.baselines import get_baseline  # noqa: E402
from effectbench.bundle import Submission, write_bundle  # noqa: E402
from effectbench.manifest import fingerprint  # noqa: E402
from effectbench.metrics import episode_frame, summarize  # noqa: E402
from effectbench.packs import get_pack  # noqa: E402
from effectbench.run.runner import evaluate  # noqa: E402
from effectbench.site._ledger import (  # noqa: E402
    LedgerCheck,
    VerifySetup,
    append_summaries,
    audit,
    sign_checkpoint,
)
from effectbench.site._pool import Workers  # noqa: E402
from effectbench.site._reports import verify_submissions  # noqa: E402

CI = "https://github.com/board/effectbench/.github/workflows/deploy-site.yml@refs/heads/main"
BASELINES = ("retry_on_error", "effect_verified", "screen_only", "always_halt")
TRIALS = 10


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _loadavg() -> str:
    return Path("/proc/loadavg").read_text().strip()


def _material(base: Path) -> list[Path]:
    pack = get_pack("mockmed")
    out = []
    for name in BASELINES:
        run = evaluate(get_baseline(name, pack), pack, trials=TRIALS)
        rows = list(run.rows)
        sub = Submission.model_validate(
            {
                "spec_version": SPEC_VERSION,
                "system": {"name": f"{name} (bench)", "description": "", "baseline": None},
                "signer": None,
                "pack": {"name": pack.name, "fingerprint": fingerprint(pack.manifest())},
                "trials_per_task": TRIALS,
                "seeds": list(range(TRIALS)),
                "environment": {"python": "3.11", "platform": "Linux"},
                "results": summarize(episode_frame([r.to_row() for r in rows])).model_dump(),
            }
        )
        out.append(write_bundle(base / name, sub, rows))
    return out


def _bundles(subs: Path, n: int, material: list[Path]) -> None:
    for i in range(n):
        src = material[i % len(material)]
        dst = subs / f"2026-{1 + i // 900 % 12:02d}-{1 + i // 30 % 28:02d}_bench-{i:05d}"
        shutil.copytree(src, dst)
        (dst / "README.md").write_text(f"# bench submission {i}\n", encoding="utf-8")


def _timed(label: str, fn: object) -> object:
    wall, cpu = time.perf_counter(), _cpu()
    result = fn()  # type: ignore[operator]
    print(f"{label}: {time.perf_counter() - wall:.2f} s wall, {_cpu() - cpu:.2f} s CPU", flush=True)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=400, help="bundles (default: %(default)s)")
    parser.add_argument("--workers", type=int, default=2, help="build workers (default: 2)")
    parser.add_argument("--audit", action="store_true", help="also time ledger audit")
    args = parser.parse_args()
    instance = shared_instance()
    trust = instance.trust_config_path
    print(f"load average before: {_loadavg()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-ledger-") as tmp:
        base = Path(tmp)
        os.environ["XDG_CACHE_HOME"] = str(base / "cache-home")
        subs = base / "submissions"
        _bundles(subs, args.n, _material(base / "material"))
        bundles = sorted(p for p in subs.iterdir() if p.is_dir())
        size = sum(f.stat().st_size for f in subs.rglob("*") if f.is_file())
        print(f"{args.n} bundles, {size / 2**20:.1f} MiB", flush=True)
        setup = VerifySetup(allow_unsigned=True, trust_config=trust)
        ledger = base / "ledger"
        _timed(
            "ledger append (the board CI, once per bundle)",
            lambda: append_summaries(ledger, bundles, setup, tell=lambda _: None),
        )
        token = instance.github_actions_token(CI.removeprefix("https://github.com/"))
        _timed(
            "ledger sign",
            lambda: sign_checkpoint(
                ledger,
                signers=((CI, GITHUB_ACTIONS),),
                identity_token=token,
                trust_config=trust,
                lifetime=timedelta(days=1),
            ),
        )

        def stage(check: LedgerCheck | None) -> int:
            with Workers(args.workers) as pool:
                got = verify_submissions(
                    subs, allow_unsigned=True, trust_config=trust, workers=pool, ledger=check
                )
            return len(got)

        _timed("verify stage without a ledger (every bundle in full)", lambda: stage(None))
        check = LedgerCheck(folder=ledger, signers=((CI, GITHUB_ACTIONS),), trust_config=trust)
        _timed("verify stage with the ledger (k = 20 in full)", lambda: stage(check))
        for note in check.notes:
            print(f"  {note}")
        if args.audit:
            again = LedgerCheck(folder=ledger, signers=((CI, GITHUB_ACTIONS),), trust_config=trust)
            bad = _timed(
                "ledger audit (make audit: every bundle in full, one process)",
                lambda: audit(bundles, setup, again, tell=lambda _: None),
            )
            print(f"  audit disagreements: {bad}")
    print(f"load average after: {_loadavg()}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
