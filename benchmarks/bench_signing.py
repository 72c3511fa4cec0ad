"""Benchmark signature verification of a bundle whose episodes.jsonl has 1,000,000 rows.

Signs a synthetic bundle with the private test Sigstore instance of
``tests/sigstore_testroot`` (loopback Fulcio and Rekor), then compares the time
to hash the bundle's files with the time of a full ``verify_bundle_signature``
(sigstore verification + statement checks + hashing every file once).

Run: ``.venv/bin/python benchmarks/bench_signing.py [--rows N] [--repeat K]``.
Prints figures; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from sigstore_testroot import GOOGLE, shared_instance  # noqa: E402

from effectbench.signatures import hash_file, sign_bundle, verify_bundle_signature  # noqa: E402

IDENTITY = "bench@example.org"


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far, in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def write_synthetic_bundle(folder: Path, rows: int) -> int:
    """Write submission.json and an ``rows``-line episodes.jsonl; return the episodes size."""
    folder.mkdir(parents=True)
    submission = {
        "effectbench_bundle_version": 1,
        "spec_version": "1.0.0",
        "signer": {"identity": IDENTITY, "issuer": GOOGLE},
    }
    (folder / "submission.json").write_text(json.dumps(submission, indent=2))
    template = (
        '{{"episode_id":"bench::mockmed::t{i}::t0","task_id":"mockmed::t{i}","arm":"bench",'
        '"trial":0,"substrate":"web","category":"control","seed":{i},'
        '"expected_effect_hash":"sha256:{h:064x}","correct_action_available":true,'
        '"agent":{{"reported_success":true,"halted":false,"message":"banner: saved"}},'
        '"oracle":{{"verdict":"confirmed","kind":"field_equals","channel":"mockmed",'
        '"observed_count":1,"before_reachable":true,"effect_correct":true,'
        '"effect_wrong_persisted":false}},"true_state":"CORRECT","outcome":"SUCCESS"}}\n'
    )
    with (folder / "episodes.jsonl").open("w", buffering=1 << 20) as handle:
        for i in range(rows):
            handle.write(template.format(i=i, h=i * 2654435761))
    return (folder / "episodes.jsonl").stat().st_size


def best_of(repeat: int, fn: object) -> float:
    """Best wall time of ``repeat`` calls to ``fn``, in seconds."""
    assert callable(fn)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    instance = shared_instance()
    with tempfile.TemporaryDirectory(prefix="bench-signing-") as tmp:
        bundle = Path(tmp) / "bundle"
        start = time.perf_counter()
        size = write_synthetic_bundle(bundle, args.rows)
        print(
            f"episodes.jsonl: {args.rows:,} rows, {size / 2**20:.1f} MiB "
            f"(written in {time.perf_counter() - start:.2f} s)"
        )

        start = time.perf_counter()
        sign_bundle(
            bundle,
            identity_token=instance.email_token(IDENTITY),
            trust_config=instance.trust_config_path,
        )
        print(
            f"sign (hash + loopback Fulcio/Rekor + verify before write): "
            f"{time.perf_counter() - start:.3f} s"
        )

        def verify() -> None:
            result = verify_bundle_signature(
                bundle, identity=IDENTITY, issuer=GOOGLE, trust_config=instance.trust_config_path
            )
            assert result.verified, result.findings

        files = [bundle / "episodes.jsonl", bundle / "submission.json"]

        def hash_all() -> None:
            for path in files:
                hash_file(path)

        rss_before = peak_rss_mib()
        start = time.perf_counter()
        verify()  # first call parses the trust config
        cold = time.perf_counter() - start
        hash_times, verify_times = [], []
        for _ in range(args.repeat):  # interleaved, so both see the same page cache and load
            hash_times.append(best_of(1, hash_all))
            verify_times.append(best_of(1, verify))
        hash_s, verify_s = min(hash_times), min(verify_times)
        print(
            f"hash of the signed files (best of {args.repeat}): {hash_s * 1000:.1f} ms "
            f"({size / 2**20 / hash_s:.0f} MiB/s)"
        )
        print(
            f"verify_bundle_signature (best of {args.repeat}): {verify_s * 1000:.1f} ms "
            f"(first call, parsing the trust root: {cold * 1000:.1f} ms)"
        )
        print(f"overhead beyond hashing: {(verify_s - hash_s) * 1000:.2f} ms")
        print(
            f"peak RSS: {rss_before:.0f} MiB before verifying, {peak_rss_mib():.0f} MiB after "
            f"(the {size / 2**20:.0f} MiB file is never held in memory)"
        )

        small = Path(tmp) / "small"
        write_synthetic_bundle(small, 10)
        sign_bundle(
            small,
            identity_token=instance.email_token(IDENTITY),
            trust_config=instance.trust_config_path,
        )
        fixed = best_of(
            20 * args.repeat,
            lambda: verify_bundle_signature(
                small, identity=IDENTITY, issuer=GOOGLE, trust_config=instance.trust_config_path
            ),
        )
        print(f"fixed cost (10-row bundle, hashing negligible): {fixed * 1000:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
