"""Key frames as image files: their format and their size, read from their bytes alone.

A frame of a bundle's ``frames/`` is a PNG or a WebP file named by its own sha256. This
module says what is wrong with one (:func:`frame_problem`) in plain Python, without an
image library and without decoding a pixel: the container's structure (PNG's chunks with
their CRCs, IHDR first and IEND last; WebP's RIFF chunks) and the image's size, read from
its header (PNG's IHDR, WebP's VP8, VP8L or VP8X chunk), so the verdict never depends on a
decoder and a bomb is refused before anything decodes it:

* each side at most :attr:`~verifier.limits.Limits.max_frame_side` pixels and the
  file at most :attr:`~verifier.limits.Limits.max_frame_bytes` (``receipt.frame_image``);
* at most :attr:`~verifier.limits.Limits.max_frame_pixels` decoded pixels per frame, and
  all the bundle's frames together at most
  :attr:`~verifier.limits.Limits.max_bundle_frame_pixels` (``receipt.frame_pixels``; a
  16-bit PNG's pixels count twice, as they decode to twice the bytes).

The receipt rules (:mod:`verifier.receipts`) ask this module about each frame they name.
"""

from __future__ import annotations

import hashlib
import zlib
from dataclasses import dataclass
from pathlib import Path

from effectbench.findings import CheckId
from verifier.limits import Limits

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@dataclass(frozen=True)
class Header:
    """What a frame's header says of the image it decodes to."""

    width: int
    height: int
    wide: bool = False
    """Whether a pixel decodes to 16 bits a channel (a 16-bit PNG)."""

    @property
    def pixels(self) -> int:
        """Decoded pixels, a 16-bit pixel counted twice (what a reader's decoder allocates)."""
        return self.width * self.height * (2 if self.wide else 1)


@dataclass
class FrameBudget:
    """The decoded pixels a bundle's frames may add up to, and how many they used so far."""

    limit: int
    used: int = 0
    spent: bool = False
    """Whether a frame already went over (the bundle is refused once, on that frame)."""


def _webp_header(data: bytes) -> Header | str:
    """Return a WebP file's canvas size, or what is wrong with its container (RIFF chunks)."""
    if len(data) < 20 or int.from_bytes(data[4:8], "little") != len(data) - 8:
        return "a RIFF file whose size field is not its length"
    at, size = 12, None
    while at + 8 <= len(data):
        kind, length = data[at : at + 4], int.from_bytes(data[at + 4 : at + 8], "little")
        body = data[at + 8 : at + 8 + length]
        if len(body) != length:
            return f"its {kind!r} chunk is cut short"
        if kind == b"VP8L" and length >= 5 and body[0] == 0x2F and size is None:
            bits = int.from_bytes(body[1:5], "little")
            size = ((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
        elif kind == b"VP8 " and length >= 10 and body[3:6] == b"\x9d\x01\x2a" and size is None:
            size = (
                int.from_bytes(body[6:8], "little") & 0x3FFF,
                int.from_bytes(body[8:10], "little") & 0x3FFF,
            )
        elif kind == b"VP8X" and length >= 10:
            size = (
                int.from_bytes(body[4:7], "little") + 1,
                int.from_bytes(body[7:10], "little") + 1,
            )
        at += 8 + length + (length & 1)
    if at != len(data) or size is None:
        return "no WebP image data (VP8L, VP8 or VP8X) in well-formed chunks"
    return Header(*size)


def _png_header(data: bytes) -> Header | str:
    """Return a PNG file's size and depth, or what is wrong with its chunks (lengths, CRCs,
    IHDR first, IEND last)."""
    at, first, last, header = 8, b"", b"", None
    while at + 12 <= len(data):
        length = int.from_bytes(data[at : at + 4], "big")
        kind = data[at + 4 : at + 8]
        body = data[at + 8 : at + 8 + length]
        crc = data[at + 8 + length : at + 12 + length]
        if len(crc) != 4 or zlib.crc32(kind + body).to_bytes(4, "big") != crc:
            return f"its {kind!r} chunk is cut short or fails its CRC"
        first = first or kind
        if kind == b"IHDR" and length == 13 and header is None:
            width, height = int.from_bytes(body[0:4], "big"), int.from_bytes(body[4:8], "big")
            header = Header(width, height, wide=body[8] == 16)
        last = kind
        at += 12 + length
    if at != len(data) or first != b"IHDR" or last != b"IEND" or header is None:
        return "not a whole PNG (IHDR first, IEND last, nothing after)"
    return header


def frame_problem(
    path: Path, name: str, limits: Limits, budget: FrameBudget
) -> tuple[CheckId, str] | None:
    """Say what is wrong with one frame file (its hash, its image, its size), or None.

    The image is checked as a container (WebP's RIFF chunks, PNG's chunks and CRCs) and by
    its size in pixels read from its header, in plain Python: the verdict does not depend
    on an image library, and nothing is decoded. A frame within the bounds adds its
    decoded pixels to ``budget`` (the bundle's); the frame that takes the bundle over its
    bound is refused, once.
    """
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != name.split(".", 1)[0]:
        return (
            CheckId.RECEIPT_FRAME_HASH,
            "the file's sha256 is not the one its name states (the frame was changed or "
            "replaced); a frame is named by its own hash",
        )
    header = read_header(data, name)
    if isinstance(header, str):
        return (CheckId.RECEIPT_FRAME_IMAGE, header)
    if max(header.width, header.height) > limits.max_frame_side:
        return (
            CheckId.RECEIPT_FRAME_IMAGE,
            f"{header.width}x{header.height} pixels exceed the limit of {limits.max_frame_side}",
        )
    return pixel_problem(header, limits, budget)


def read_header(data: bytes, name: str) -> Header | str:
    """Return the size a frame's bytes decode to (by its name's format), or what is wrong."""
    if name.endswith(".webp"):
        is_webp = data[:4] == b"RIFF" and data[8:12] == b"WEBP"
        return _webp_header(data) if is_webp else "not a WebP image"
    return _png_header(data) if data.startswith(PNG_MAGIC) else "not a PNG image"


def pixel_problem(
    header: Header, limits: Limits, budget: FrameBudget
) -> tuple[CheckId, str] | None:
    """``receipt.frame_pixels``: the frame's decoded pixels, and the bundle's so far."""
    size = f"{header.width}x{header.height}{' at 16 bits' if header.wide else ''}"
    if header.pixels > limits.max_frame_pixels:
        return (
            CheckId.RECEIPT_FRAME_PIXELS,
            f"{size} decodes to {header.pixels:,} pixels, over the bound of "
            f"{limits.max_frame_pixels:,} per frame (--max-frame-pixels); a screen is far "
            "smaller",
        )
    budget.used += header.pixels
    if budget.used > budget.limit and not budget.spent:
        budget.spent = True
        return (
            CheckId.RECEIPT_FRAME_PIXELS,
            f"with this {size} frame the bundle's frames decode to {budget.used:,} pixels, "
            f"over the bound of {budget.limit:,} per bundle",
        )
    return None
