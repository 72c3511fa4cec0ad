"""Size limits of what the verifier reads; the defaults fit a 1,000,000-row bundle."""

from __future__ import annotations

from dataclasses import dataclass

from effectbench.filenames import MAX_LINE_BYTES

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB


@dataclass(frozen=True)
class Limits:
    """Upper bounds on a bundle's files; anything larger is refused (``structure.*``)."""

    max_rows: int = 1_000_000
    """Episode rows per bundle."""
    max_line_bytes: int = MAX_LINE_BYTES
    """Bytes of one ``episodes.jsonl`` line (a row is about 1-2 KiB)."""
    max_episodes_bytes: int = 4 * GIB
    """Bytes of ``episodes.jsonl``."""
    max_submission_bytes: int = 16 * MIB
    """Bytes of ``submission.json``."""
    max_readme_bytes: int = 1 * MIB
    """Bytes of the submitter's ``README.md``."""
    max_signature_bytes: int = 1 * MIB
    """Bytes of ``submission.sigstore.json``."""
    max_receipt_line_bytes: int = 16 * MIB
    """Bytes of one ``receipts.jsonl`` line (a receipt is a few KiB; its change set grows with
    what the agent changed)."""
    max_receipts_bytes: int = 16 * GIB
    """Bytes of ``receipts.jsonl``."""
    max_frame_bytes: int = 4 * MIB
    """Bytes of one key frame (a lossless WebP screenshot is 3-15 KiB)."""
    max_frame_side: int = 8192
    """Pixels of a key frame's width and of its height."""
    max_frame_pixels: int = 4096 * 4096
    """Decoded pixels of one key frame, read from its header (a 16-bit PNG's count twice):
    64 MiB as 8-bit RGBA, where a 1024x768 screen is 0.8 million pixels."""
    max_frame_metadata_bytes: int = 64 * KIB
    """Bytes of one key frame's ancillary chunks together (PNG's text, zTXt, iCCP and other
    lower-case chunks; WebP's ICCP, EXIF, XMP), as stored and as decoded: a screenshot the
    harness writes holds none."""
    frame_decode_memory: int = 1 * GIB
    """Bytes of address space the child process that decodes a bundle's frames may use (the
    interpreter and Pillow included: a frame within the pixel bound decodes in 128 MiB)."""
    frame_decode_seconds: int = 10
    """Seconds the decoding child may take per frame (a screen decodes in a few ms)."""
    max_bundle_frame_pixels: int = 1 << 32
    """Decoded pixels of all a bundle's key frames together (about 6,000 screens of
    1024x640), so verifying, building and reading a bundle's frames stay bounded."""
    max_document_bytes: int = 512 * MIB
    """Bytes of an upstream single-document submission (parsed whole)."""
    max_reproduce_rows: int = 20_000
    """Episodes the ``reproduce`` check may re-run (tasks of the split x trials per task, or
    the sample of a screen bundle), bounded before the re-run starts: about 10 s on MockMed,
    6 min on the clinic's API level; a larger baseline bundle is refused. The one budget
    (``--max-reproduce-rows``): a screen sample stays within it."""
    reproduce_screen_rows: int = 12
    """Screen-substrate rows the ``reproduce`` check re-runs of a listed reference bundle;
    beyond that a sample of this size, chosen from its listed content hash (each costs a
    browser episode). Any other bundle that claims a shipped baseline re-runs every row
    (:func:`verifier.reproduce.rerun_pairs`)."""
