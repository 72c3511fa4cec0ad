"""The key frames the site publishes: re-encoded, never larger than :data:`MAX_SIDE`.

A frame in a bundle is the submitter's file; the verifier has bounded its decoded pixels
(``receipt.frame_pixels``). The site never publishes that file itself: every frame it
shows is decoded here once (after its header was read again and found within the
verifier's bound: nothing else is decoded) and written anew in its own format (lossless
WebP, or PNG), scaled down to fit :data:`MAX_SIDE` x :data:`MAX_SIDE` when larger, as 8-bit
pixels. A reader's browser therefore decodes at most that many pixels per frame, whatever
a bundle holds. A screen of the benchmark (1024x640, 1024x768, 1366x768) is published at
its own size. Renditions are cached by the frame's name (its hash) and the bound.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

from verifier.frames import read_header
from verifier.limits import Limits

MAX_SIDE = 2048
"""Pixels of a published frame's width and of its height, at most."""
RENDITION = f"site-frame-{MAX_SIDE}-3"
"""What a cached rendition is keyed by besides the frame (bump when the encoding changes)."""


def rendition(source: Path, cache: Path, limits: Limits | None = None) -> Path | None:
    """Return the site's copy of the frame ``source`` (made once, kept in ``cache``).

    None when the frame's header is not an image within ``limits`` (the verifier refuses
    such a bundle; the site checks again before decoding anything).
    """
    from PIL import Image

    bound = limits or Limits()
    name = source.name
    target = cache / RENDITION / name
    if target.is_file():
        return target
    data = source.read_bytes()
    header = read_header(data, name)
    if isinstance(header, str) or header.pixels > bound.max_frame_pixels:
        return None
    if max(header.width, header.height) > bound.max_frame_side:
        return None
    with Image.open(io.BytesIO(data)) as image:
        if image.size != (header.width, header.height):
            return None  # the decoder reads another size than the header said: not shown
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
