"""PNG encoding and decoding of 8-bit RGB screenshots (zlib and numpy only).

Screens are captured as raw pixels (XGetImage, an RFB framebuffer) and handed
to agents as PNG. :func:`encode` writes filter type 0 rows (fast; screenshots
of flat UIs compress well anyway). :func:`decode` reads 8-bit RGB or RGBA PNGs
with the filters an encoder uses on screenshots (none, sub, up, average,
Paeth), so a pixel baseline can read what any env returns.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np
from numpy.typing import NDArray

from effectbench.errors import DataError

SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def encode(rgb: NDArray[np.uint8]) -> bytes:
    """Return ``rgb`` (height x width x 3, uint8) as PNG bytes."""
    height, width, _ = rgb.shape
    rows = np.zeros((height, width * 3 + 1), dtype=np.uint8)
    rows[:, 1:] = rgb.reshape(height, width * 3)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        SIGNATURE
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(rows.tobytes(), 1))
        + _chunk(b"IEND", b"")
    )


def _paeth_row(line: NDArray[np.int16], prior: NDArray[np.int16], bpp: int) -> None:
    for i in range(line.size):
        a = int(line[i - bpp]) if i >= bpp else 0
        b = int(prior[i])
        c = int(prior[i - bpp]) if i >= bpp else 0
        p = a + b - c
        pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
        pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
        line[i] = (line[i] + pred) & 0xFF


def decode(data: bytes) -> NDArray[np.uint8]:
    """Return the pixels of an 8-bit RGB/RGBA PNG as height x width x 3 uint8."""
    if not data.startswith(SIGNATURE):
        raise DataError("not a PNG image")
    pos, idat, header = len(SIGNATURE), b"", b""
    while pos + 8 <= len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    if len(header) != 13:
        raise DataError("PNG has no header")
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    if depth != 8 or colour not in (2, 6) or interlace:
        raise DataError("only 8-bit RGB/RGBA non-interlaced PNGs are read")
    bpp = 3 if colour == 2 else 4
    stride = width * bpp
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(height, stride + 1)
    filters = raw[:, 0]
    pixels = raw[:, 1:].astype(np.int16)
    if filters.any():
        prior = np.zeros(stride, dtype=np.int16)
        for y in range(height):
            line = pixels[y]
            kind = int(filters[y])
            if kind == 1:
                for start in range(bpp):
                    line[start::bpp] = np.cumsum(line[start::bpp]) & 0xFF
            elif kind == 2:
                line[:] = (line + prior) & 0xFF
            elif kind == 3:
                for i in range(stride):
                    left = int(line[i - bpp]) if i >= bpp else 0
                    line[i] = (line[i] + (left + int(prior[i])) // 2) & 0xFF
            elif kind == 4:
                _paeth_row(line, prior, bpp)
            prior = line
    image = pixels.astype(np.uint8).reshape(height, width, bpp)
    return np.ascontiguousarray(image[:, :, :3])
