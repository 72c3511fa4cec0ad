"""Key frames as image files: their format and their size, read from their bytes alone.

A frame of a bundle's ``frames/`` is a PNG or a WebP file named by its own sha256. This
module says what is wrong with one (:func:`frame_problem`) in plain Python, without an
image library and without decoding a pixel: the container's structure (PNG's chunks with
their CRCs, IHDR first and IEND last; WebP's RIFF chunks) and the image's size, read from
its header (PNG's IHDR, WebP's VP8, VP8L or VP8X chunk), so a bomb is refused before
anything decodes it:

* each side at least 1 and at most :attr:`~verifier.limits.Limits.max_frame_side` pixels,
  the file at most :attr:`~verifier.limits.Limits.max_frame_bytes`, and its ancillary
  chunks (PNG's text, zTXt, iCCP and other lower-case chunks; WebP's ICCP, EXIF, XMP and
  unknown chunks) at most :attr:`~verifier.limits.Limits.max_frame_metadata_bytes`
  together (``receipt.frame_image``);
* at most :attr:`~verifier.limits.Limits.max_frame_pixels` decoded pixels per frame, and
  all the bundle's frames together at most
  :attr:`~verifier.limits.Limits.max_bundle_frame_pixels` (``receipt.frame_pixels``; a
  16-bit PNG's pixels count twice, as they decode to twice the bytes).

A frame within those bounds is then decoded, once, by :func:`decode_problem` (Pillow, the
library the site re-encodes frames with), in a child process held to a memory limit
(:attr:`~verifier.limits.Limits.frame_decode_memory`, the address space) and a time limit
(:attr:`~verifier.limits.Limits.frame_decode_seconds` per frame): a frame that does not
decode, decodes to another size than its header states, or whose decoded metadata (text,
ICC profile, EXIF, XMP) exceed the metadata bound is refused (``receipt.frame_image``), and
so is one the child cannot decode within its limits. :func:`decode_frames` decodes a
bundle's frames in batches of :data:`DECODE_BATCH`, one child per batch; the site publishes
frames of bundles this check passed only.

The receipt rules (:mod:`verifier.receipts`) ask this module about each frame they name.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import selectors
import subprocess
import sys
import time
import zlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from effectbench.findings import CheckId
from verifier.limits import Limits

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
WEBP_IMAGE_CHUNKS = frozenset({b"VP8 ", b"VP8L", b"VP8X", b"ALPH", b"ANIM", b"ANMF"})
"""WebP chunks that hold the image itself; every other chunk is metadata (ICCP, EXIF, XMP)."""
DECODE_BATCH = 512
"""Frames one decoding child decodes at most (a child costs about 0.1 s to start)."""
DECODED_KEPT = 100_000
"""Frames whose decoding verdict a verifying process keeps (by name, the file's sha256, and
the limits), for the next bundle holding the same screen: a board's bundles share many."""
_decoded: OrderedDict[tuple[str, int, int, int], str | None] = OrderedDict()


@dataclass(frozen=True)
class Header:
    """What a frame's header says of the image it decodes to."""

    width: int
    height: int
    wide: bool = False
    """Whether a pixel decodes to 16 bits a channel (a 16-bit PNG)."""
    metadata: int = 0
    """Bytes of the file's ancillary chunks (text, ICC profile, EXIF, XMP, unknown ones)."""

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
    at, size, metadata = 12, None, 0
    while at + 8 <= len(data):
        kind, length = data[at : at + 4], int.from_bytes(data[at + 4 : at + 8], "little")
        body = data[at + 8 : at + 8 + length]
        if len(body) != length:
            return f"its {kind!r} chunk is cut short"
        if kind not in WEBP_IMAGE_CHUNKS:
            metadata += length
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
    return Header(*size, metadata=metadata)


def _png_header(data: bytes) -> Header | str:
    """Return a PNG file's size and depth, or what is wrong with its chunks (lengths, CRCs,
    IHDR first, IEND last)."""
    at, first, last, header, metadata = 8, b"", b"", None, 0
    while at + 12 <= len(data):
        length = int.from_bytes(data[at : at + 4], "big")
        kind = data[at + 4 : at + 8]
        body = data[at + 8 : at + 8 + length]
        crc = data[at + 8 + length : at + 12 + length]
        if len(crc) != 4 or zlib.crc32(kind + body).to_bytes(4, "big") != crc:
            return f"its {kind!r} chunk is cut short or fails its CRC"
        first = first or kind
        if kind[:1].islower():  # an ancillary chunk (PNG's rule: a lower-case first letter)
            metadata += length
        if kind == b"IHDR" and length == 13 and header is None:
            width, height = int.from_bytes(body[0:4], "big"), int.from_bytes(body[4:8], "big")
            header = Header(width, height, wide=body[8] == 16)
        last = kind
        at += 12 + length
    if at != len(data) or first != b"IHDR" or last != b"IEND" or header is None:
        return "not a whole PNG (IHDR first, IEND last, nothing after)"
    return Header(header.width, header.height, header.wide, metadata)


Problem = tuple[CheckId, str]
"""A frame's finding: its check id and what is wrong."""


def frame_header(path: Path, name: str, limits: Limits, budget: FrameBudget) -> Problem | Header:
    """Return one frame file's header when its hash, container and size are within the
    bounds, else what is wrong with it.

    The image is checked as a container (WebP's RIFF chunks, PNG's chunks and CRCs), by its
    size in pixels and by its metadata's bytes, read from its header and chunks in plain
    Python: nothing is decoded here (:func:`decode_frames` decodes what passes). A frame
    within the bounds adds its decoded pixels to ``budget`` (the bundle's); the frame that
    takes the bundle over its bound is refused, once.
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
    size = f"{header.width}x{header.height} pixels"
    if max(header.width, header.height) > limits.max_frame_side:
        return (CheckId.RECEIPT_FRAME_IMAGE, f"{size} exceed the limit of {limits.max_frame_side}")
    if min(header.width, header.height) < 1:
        return (CheckId.RECEIPT_FRAME_IMAGE, f"{size}: an image has at least one pixel a side")
    if header.metadata > limits.max_frame_metadata_bytes:
        return (
            CheckId.RECEIPT_FRAME_IMAGE,
            f"{header.metadata:,} bytes of ancillary chunks (text, ICC profile, EXIF, XMP), "
            f"over the bound of {limits.max_frame_metadata_bytes:,} "
            "(--max-frame-metadata-bytes); a screenshot needs none",
        )
    problem = pixel_problem(header, limits, budget)
    return header if problem is None else problem


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


def decode_problem(data: bytes, name: str, header: Header, metadata_bound: int) -> str | None:
    """Decode one frame (Pillow, in the format its name states) and say what is wrong, or None.

    The one decoding rule: the frame decodes whole, to the size its header states, and its
    decoded metadata (text chunks, ICC profile, EXIF, XMP) are at most ``metadata_bound``
    bytes. Run by the decoding child of :func:`decode_frames`, under its limits.
    """
    from PIL import Image

    fmt = "WEBP" if name.endswith(".webp") else "PNG"
    want = f"{header.width}x{header.height}"
    try:
        with Image.open(io.BytesIO(data), formats=[fmt]) as image:
            for when in ("as opened", "once decoded"):
                if when == "once decoded":
                    image.load()  # the pixels, and a PNG's chunks after them
                got = f"{image.size[0]}x{image.size[1]}"
                if got != want:
                    return f"it is {got} pixels {when}; its header says {want}"
            # what the decoder read besides pixels: text chunks, ICC profile, EXIF, XMP
            meta = sum(len(v) for v in image.info.values() if isinstance(v, bytes | str))
    except Exception as exc:  # noqa: BLE001 - whatever the decoder raises, the frame is refused
        return f"does not decode as {fmt}: {type(exc).__name__}: {str(exc)[:160]}"
    if meta > metadata_bound:
        return (
            f"its metadata decode to {meta:,} bytes (text, ICC profile, EXIF, XMP), over the "
            f"bound of {metadata_bound:,}"
        )
    return None


def _limit_self(memory: int, cpu_seconds: int) -> None:
    """Hold this process (the decoding child) to ``memory`` bytes of address space and
    ``cpu_seconds`` of CPU time."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))


def _child() -> None:
    """The decoding child: read a batch from stdin, print one JSON line per frame, in order."""
    job = json.loads(sys.stdin.buffer.read())
    from PIL import Image  # imported before the limit, so the limit bounds the decoding only

    Image.MAX_IMAGE_PIXELS = None  # the header was bounded; the memory limit holds the rest
    _limit_self(job["memory"], job["cpu"])
    for path, name, width, height, wide in job["frames"]:
        try:
            data = Path(path).read_bytes()
            said = decode_problem(data, name, Header(width, height, wide), job["metadata"])
        except MemoryError:
            said = "decoding it needs more memory than the decoder's limit"
        sys.stdout.write(json.dumps({"problem": said}) + "\n")
        sys.stdout.flush()


@dataclass(frozen=True)
class ToDecode:
    """One frame whose header passed, waiting to be decoded."""

    path: Path
    name: str
    header: Header


def _child_command() -> tuple[list[str], dict[str, str]]:
    """The decoding child's command: this interpreter, this module, found where this process
    found it (its import path)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return [sys.executable, "-m", "verifier.frames"], env


def _decode_batch(batch: Sequence[ToDecode], limits: Limits) -> list[tuple[str | None, bool]]:
    """Decode ``batch`` in children, one at a time: a child that dies or runs out of time on
    a frame has that frame refused, and the frames after it go to a new child. Each verdict
    comes with whether the decoder gave it (False: the child stopped on that frame)."""
    said: list[tuple[str | None, bool]] = []
    command, env = _child_command()
    while len(said) < len(batch):
        rest = batch[len(said) :]
        job: dict[str, Any] = {
            "memory": limits.frame_decode_memory,
            "cpu": int(limits.frame_decode_seconds * len(rest)) + 5,
            "metadata": limits.max_frame_metadata_bytes,
            "frames": [
                [str(f.path), f.name, f.header.width, f.header.height, f.header.wide] for f in rest
            ],
        }
        given, stopped = _run_child(command, env, json.dumps(job).encode(), len(rest), limits)
        said.extend((v, True) for v in given)
        if stopped is not None:
            said.append((stopped, False))
    return said


def _run_child(
    command: list[str], env: dict[str, str], job: bytes, n: int, limits: Limits
) -> tuple[list[str | None], str | None]:
    """Run one decoding child on ``job`` (``n`` frames); return the verdicts it gave, and
    for the frame it stopped on (died, or over the time limit) that frame's refusal."""
    child = subprocess.Popen(  # noqa: S603 - this interpreter, this module
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        try:
            child.stdin.write(job)
            child.stdin.close()
        except BrokenPipeError:
            pass
        return _read_verdicts(child, n, limits)
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
        child.stdout.close()


def _read_verdicts(
    child: subprocess.Popen[bytes], n: int, limits: Limits
) -> tuple[list[str | None], str | None]:
    """Read a decoding child's verdicts, one line a frame, each within the time limit; and
    the refusal of the frame it stopped on, if it stopped."""
    assert child.stdout is not None
    out: list[str | None] = []
    # the child's start (Python, Pillow) is given the time of one frame besides
    deadline = time.monotonic() + 2 * limits.frame_decode_seconds
    pending = b""
    with selectors.DefaultSelector() as sel:
        sel.register(child.stdout, selectors.EVENT_READ)
        while len(out) < n:
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(timeout=left):
                return out, (
                    f"decoding it took longer than the limit of {limits.frame_decode_seconds} s"
                )
            chunk = os.read(child.stdout.fileno(), 65536)
            if not chunk:
                code = child.wait()
                return out, (
                    "the decoder stopped on it (over its limit of "
                    f"{limits.frame_decode_memory // (1024 * 1024)} MiB of memory or of CPU "
                    f"time, or crashed; exit status {code})"
                )
            pending += chunk
            while b"\n" in pending and len(out) < n:
                line, pending = pending.split(b"\n", 1)
                out.append(json.loads(line)["problem"])
                deadline = time.monotonic() + limits.frame_decode_seconds
    return out, None


def decode_frames(frames: Sequence[ToDecode], limits: Limits) -> list[str | None]:
    """Decode every frame of ``frames`` (:func:`decode_problem`) in child processes held to
    the memory and time limits, :data:`DECODE_BATCH` frames a child; return, in order, what
    is wrong with each (None: it decodes as its header says).

    A verdict the decoder gave is kept for the process's next bundles (the last
    :data:`DECODED_KEPT`, by the frame's name, its sha256, and the limits); a frame the child
    stopped on (time, memory) is decoded again when asked again.
    """
    bounds = (limits.max_frame_metadata_bytes, limits.frame_decode_memory)
    keys = [(f.name, *bounds, limits.frame_decode_seconds) for f in frames]
    new = [i for i, key in enumerate(keys) if key not in _decoded]
    fresh: list[tuple[str | None, bool]] = []
    for start in range(0, len(new), DECODE_BATCH):
        batch = [frames[i] for i in new[start : start + DECODE_BATCH]]
        fresh.extend(_decode_batch(batch, limits))
    made = dict(zip(new, fresh, strict=True))
    said: list[str | None] = []
    for i, key in enumerate(keys):
        if i in made:
            verdict, given = made[i]
            if given:
                _decoded[key] = verdict
        else:
            verdict = _decoded[key]
        if key in _decoded:
            _decoded.move_to_end(key)  # kept the longest: the most recently asked for
        said.append(verdict)
    while len(_decoded) > DECODED_KEPT:
        _decoded.popitem(last=False)
    return said


if __name__ == "__main__":
    _child()
