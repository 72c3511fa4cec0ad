"""The key frames the site publishes: re-encoded, never larger than :data:`MAX_SIDE`.

A frame in a bundle is the submitter's file; the verifier has bounded its decoded pixels
(``receipt.frame_pixels``) and decoded it once, in a child process under a memory and a time
limit (``receipt.frame_image``, :func:`verifier.frames.decode_problem`): the site shows frames
of bundles whose receipt check passed only, and relies on that decision. It never publishes
the file itself: every frame it shows is decoded here and written anew in its own format
(lossless WebP, or PNG), scaled down to fit :data:`MAX_SIDE` x :data:`MAX_SIDE` when larger,
as 8-bit pixels. Should that still fail, the error is the build's per-bundle guard's
(:mod:`effectbench.site.build`): that bundle is withheld, the build goes on. A reader's
browser therefore decodes at most that many pixels per frame, whatever a bundle holds. A
screen of the benchmark (1024x640, 1024x768, 1366x768) is published at its own size.
Renditions are cached by the frame's name (its hash) and the bound.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

MAX_SIDE = 2048
"""Pixels of a published frame's width and of its height, at most."""
RENDITION = f"site-frame-{MAX_SIDE}-3"
"""What a cached rendition is keyed by besides the frame (bump when the encoding changes)."""


def rendition(source: Path, cache: Path) -> Path:
    """Return the site's copy of the frame ``source`` (made once, kept in ``cache``): a frame
    of a bundle the verifier accepted, its frames decoded there (raises what Pillow raises
    should it not decode after all)."""
    from PIL import Image

    name = source.name
    target = cache / RENDITION / name
    if target.is_file():
        return target
    data = source.read_bytes()
    with Image.open(
        io.BytesIO(data), formats=["WEBP" if name.endswith(".webp") else "PNG"]
    ) as image:
        image.thumbnail((MAX_SIDE, MAX_SIDE))  # only ever smaller, aspect kept
        frame = image.convert("RGBA" if "A" in image.getbands() else "RGB")
        out = io.BytesIO()
        if name.endswith(".webp"):
            # lossless; effort 75 of 100 (100 encodes far slower for files about 1% smaller)
            # and method 2 of 6 (on the shipped frames: about 0.6x method 4's time, no larger;
            # benchmarks/bench_frames.py)
            frame.save(out, "WEBP", lossless=True, quality=75, method=2)
        else:
            frame.save(out, "PNG", optimize=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{name}.{os.getpid()}.tmp")
    tmp.write_bytes(out.getvalue())
    tmp.replace(target)
    return target
