"""Benchmark the site's re-encoding of key frames (:mod:`effectbench.site._frames`).

Every frame the site publishes is decoded and written anew as lossless WebP. This times that
encoding on a sample of the shipped bundles' frames, for the site's setting (effort 75,
method 2) beside the others worth weighing, and prints seconds and the total size of each,
with the load average (the machine may be shared). Each setting's time is the best of
``--repeats`` passes over the same decoded frames.

    .venv/bin/python benchmarks/bench_frames.py [--frames 120] [--repeats 2]
"""

from __future__ import annotations

import argparse
import io
import time
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = ((75, 4), (75, 3), (75, 2), (50, 2), (100, 1))
"""(quality, method) pairs of lossless WebP: the site's earlier setting first, its own third."""


def _load() -> str:
    return Path("/proc/loadavg").read_text().strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=120, help="frames in the sample")
    parser.add_argument("--repeats", type=int, default=2, help="passes per setting")
    args = parser.parse_args()
    every = sorted((ROOT / "submissions").glob("*/frames/*.webp"))
    step = max(1, len(every) // max(1, args.frames))
    sample = every[::step][: args.frames]
    frames = []
    for path in sample:
        with Image.open(path) as image:
            frames.append(image.convert("RGB"))
    print(f"{len(frames)} of the {len(every)} shipped frames; load average {_load()}")
    for quality, method in SETTINGS:
        best, size = float("inf"), 0
        for _ in range(max(1, args.repeats)):
            started, size = time.perf_counter(), 0
            for frame in frames:
                out = io.BytesIO()
                frame.save(out, "WEBP", lossless=True, quality=quality, method=method)
                size += len(out.getvalue())
            best = min(best, time.perf_counter() - started)
        print(f"  quality {quality:3d} method {method}: {best:6.2f} s, {size / 1024:8.0f} KiB")
    print(f"load average after: {_load()}")


if __name__ == "__main__":
    main()
