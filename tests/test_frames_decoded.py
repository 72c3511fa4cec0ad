"""Key frames decoded once, in the verifier; a site build that one bundle cannot stop.

Real images made here with Pillow (and their bytes cut or edited), real MockMed bundles with
receipts, real verification, real site builds. What must hold: a frame that passes the header
check but does not decode (garbage or cut image data, 0x0, a zTXt or iCCP chunk over Pillow's
limit, a WebP whose VP8X canvas differs from its bitstream), or whose metadata exceed the bound,
is refused (``receipt.frame_image``); the decoding child's memory and time limits refuse a frame
it cannot finish, and the frames after it are still decoded; a site build over a folder holding
such (unsigned preview) bundles beside good ones finishes with the good ones published; a bundle
the build cannot render (its frame replaced after it was verified) is withheld with
``ranking.unrendered`` on the refused page and the build goes on.
"""

from __future__ import annotations

import hashlib
import io
import shutil
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from support.bundles import copy_bundle, edit_receipts, make_bundle, read_receipts

from effectbench.errors import SiteBuildError
from effectbench.site import build_site
from effectbench.site._receipts import FRAME_OUTCOMES
from verifier.api import VerifyOptions, verify_bundle, verify_path
from verifier.frames import DECODE_BATCH, FrameBudget, Header, ToDecode, decode_frames, frame_header
from verifier.limits import Limits

ROOT = Path(__file__).resolve().parents[1]
UNSIGNED = VerifyOptions(allow_unsigned=True, reproduce=False)


# -- frames, made here --------------------------------------------------------------------------


def _chunk(kind: bytes, body: bytes) -> bytes:
    return len(body).to_bytes(4, "big") + kind + body + zlib.crc32(kind + body).to_bytes(4, "big")


def _png(size: tuple[int, int] = (64, 40)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (20, 120, 40)).save(out, "PNG")
    return out.getvalue()


def _webp(size: tuple[int, int] = (64, 40)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (20, 120, 40)).save(out, "WEBP", lossless=True)
    return out.getvalue()


def _chunks(png: bytes) -> list[tuple[bytes, bytes]]:
    at, out = 8, []
    while at < len(png):
        n = int.from_bytes(png[at : at + 4], "big")
        out.append((png[at + 4 : at + 8], png[at + 8 : at + 8 + n]))
        at += 12 + n
    return out


def _joined(chunks: list[tuple[bytes, bytes]]) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + b"".join(_chunk(k, b) for k, b in chunks)


def _idat(edit: Callable[[bytes], bytes]) -> bytes:
    """A PNG whose image data is ``edit``ed (chunks and CRCs still whole)."""
    return _joined([(k, edit(b) if k == b"IDAT" else b) for k, b in _chunks(_png())])


def _zero() -> bytes:
    (ihdr, body), *rest = _chunks(_png())
    return _joined([(ihdr, bytes(8) + body[8:]), *rest])


def _beside_ihdr(kind: bytes, body: bytes) -> bytes:
    first, *rest = _chunks(_png())
    return _joined([first, (kind, body), *rest])


def _over_pillows_limit(kind: bytes, keyword: bytes) -> bytes:
    """A compressed ancillary chunk of 2 KiB that inflates to 2 MiB (Pillow's limit: 1 MiB)."""
    return _beside_ihdr(kind, keyword + b"\x00\x00" + zlib.compress(b"a" * (2 << 20), 9))


def _vp8x_canvas(canvas: tuple[int, int] = (100, 100)) -> bytes:
    """A lossless 64x40 WebP bitstream under a VP8X chunk stating a 100x100 canvas."""
    inner = _webp()[12:]
    w, h = canvas
    vp8x = bytes(4) + (w - 1).to_bytes(3, "little") + (h - 1).to_bytes(3, "little")
    body = b"WEBP" + b"VP8X" + len(vp8x).to_bytes(4, "little") + vp8x + inner
    return b"RIFF" + len(body).to_bytes(4, "little") + body


MALFORMED: dict[str, tuple[Callable[[], bytes], str]] = {
    "garbage image data": (lambda: _idat(lambda b: bytes(len(b))), "png"),
    "cut image data": (lambda: _idat(lambda b: b[: len(b) // 2]), "png"),
    "0x0": (_zero, "png"),
    "a zTXt chunk over Pillow's limit": (lambda: _over_pillows_limit(b"zTXt", b"Comment"), "png"),
    "an iCCP chunk over Pillow's limit": (lambda: _over_pillows_limit(b"iCCP", b"icc"), "png"),
    "a WebP whose VP8X canvas differs from its bitstream": (_vp8x_canvas, "webp"),
    "a tEXt chunk over the metadata bound": (
        lambda: _beside_ihdr(b"tEXt", b"Comment\x00" + b"a" * (65 << 10)),
        "png",
    ),
}
"""Frames whose header is within the size bounds and which are refused all the same."""


def _named(data: bytes, kind: str) -> str:
    return f"{hashlib.sha256(data).hexdigest()}.{kind}"


def _with_frame(bundle: Path, data: bytes, kind: str) -> str:
    """Put a frame into ``bundle`` and name it in the first receipt whose frames the site
    shows (a silent wrong effect, an over-halt, a wrong record); return its name."""
    name = _named(data, kind)
    (bundle / "frames").mkdir(exist_ok=True)
    (bundle / "frames" / name).write_bytes(data)

    def refer(receipts: list[dict[str, Any]]) -> None:
        shown = next(r for r in receipts if r["truth"]["outcome"] in FRAME_OUTCOMES)
        shown["frames"] = [{"name": name, "role": "first", "t": 0.0}]

    edit_receipts(bundle, refer)
    return name


@pytest.fixture(scope="module")
def mock(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A custom system's MockMed bundle with receipts (screen_only's rows, not a baseline)."""
    return make_bundle(tmp_path_factory.mktemp("mock") / "b", declare_baseline=False)


# -- the verifier -------------------------------------------------------------------------------


@pytest.mark.parametrize(("make", "kind"), MALFORMED.values(), ids=list(MALFORMED))
def test_a_frame_that_does_not_decode_as_its_header_says_is_refused(
    mock: Path, tmp_path: Path, make: Callable[[], bytes], kind: str
) -> None:
    data = make()
    name = _named(data, kind)
    assert not isinstance(frame_header(_file(tmp_path, name, data), name, Limits(), _budget()), str)
    bundle = copy_bundle(mock, tmp_path / "b")
    _with_frame(bundle, data, kind)
    report = verify_bundle(bundle, UNSIGNED)
    assert report.status.value == "refused"
    assert report.finding_ids() == {"receipt.frame_image"}, report.finding_ids()
    (finding,) = [f for c in report.checks for f in c.findings]
    assert finding.file == f"frames/{name}", finding


def test_a_good_frame_of_each_format_is_decoded_and_accepted(mock: Path, tmp_path: Path) -> None:
    for kind, data in (("webp", _webp((1024, 640))), ("png", _png((1024, 640)))):
        bundle = copy_bundle(mock, tmp_path / kind)
        _with_frame(bundle, data, kind)
        assert verify_bundle(bundle, UNSIGNED).finding_ids() == set(), kind


def _file(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


def _budget() -> FrameBudget:
    return FrameBudget(Limits().max_bundle_frame_pixels)


def _queued(folder: Path, frames: list[tuple[bytes, str]]) -> list[ToDecode]:
    out = []
    for data, kind in frames:
        name = _named(data, kind)
        header = frame_header(_file(folder, name, data), name, Limits(), _budget())
        assert isinstance(header, Header), header
        out.append(ToDecode(folder / name, name, header))
    return out


def test_the_decoding_childs_limits_refuse_a_frame_and_the_rest_are_still_decoded(
    tmp_path: Path,
) -> None:
    """A 4000x4000 frame needs 48 MiB decoded: under a memory limit the decoding child cannot
    grant it is refused, and the good frames after it are decoded by a new child; with no time
    to decode, each frame is refused for its time."""
    big = _png((4000, 4000))
    frames = _queued(tmp_path, [(_webp(), "webp"), (big, "png"), (_png((10, 10)), "png")])
    assert decode_frames(frames, Limits()) == [None, None, None]
    tight = Limits(frame_decode_memory=Limits().frame_decode_memory // 16)
    said = decode_frames(frames, tight)
    assert said[0] is None and said[2] is None, said
    assert said[1] is not None and ("memory" in said[1] or "MemoryError" in said[1]), said
    untimed = decode_frames(frames, Limits(frame_decode_seconds=0))
    assert all(s is not None and "longer than the limit" in s for s in untimed), untimed


def test_frames_are_decoded_in_batches_of_many_per_child(tmp_path: Path) -> None:
    """More frames than a batch: every one decoded, the bad one found where it stands."""
    good = [(_png((8, 8 + i)), "png") for i in range(DECODE_BATCH + 3)]
    bad = _idat(lambda b: bytes(len(b)))
    frames = _queued(tmp_path, [*good[:DECODE_BATCH], (bad, "png"), *good[DECODE_BATCH:]])
    said = decode_frames(frames, Limits())
    assert [i for i, s in enumerate(said) if s is not None] == [DECODE_BATCH]


def test_a_decoded_frames_verdict_is_kept_for_the_next_bundle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A board's bundles share screens: a frame decoded once (by its name, its sha256, and the
    limits) is not decoded again by the same process; a frame the child stopped on is."""
    import verifier.frames as frames_module

    frames = _queued(tmp_path, [(_webp((30, 20)), "webp"), (_idat(lambda b: b[:-5]), "png")])
    first = decode_frames(frames, Limits())
    assert first[0] is None and first[1] is not None
    untimed = Limits(frame_decode_seconds=0)
    assert all(s is not None for s in decode_frames(frames, untimed))

    def no_child(*_: Any) -> Any:
        raise AssertionError("decoded again")

    monkeypatch.setattr(frames_module, "_decode_batch", no_child)
    assert decode_frames(frames, Limits()) == first  # kept: no child started
    with pytest.raises(AssertionError, match="decoded again"):
        decode_frames(frames, untimed)  # stopped for its time: never kept


# -- the site -----------------------------------------------------------------------------------


def _build(subs: Path, out: Path, cache: Path, **extra: Any) -> Any:
    return build_site(
        subs, out, root=ROOT, cache_dir=cache, allow_unsigned=True, workers=1, **extra
    )


def test_a_site_build_over_malformed_frame_bundles_publishes_the_others(tmp_path: Path) -> None:
    subs = tmp_path / "submissions"
    good = make_bundle(subs / "2026-12-05_good", declare_baseline=False)
    _with_frame(good, _webp((1024, 640)), "webp")
    for i, (label, (make, kind)) in enumerate(MALFORMED.items()):
        bad = copy_bundle(good, subs / f"2026-12-05_malformed-{i}")
        shutil.rmtree(bad / "frames")
        _with_frame(bad, make(), kind)
        assert "receipt.frame_image" in verify_bundle(bad, UNSIGNED).finding_ids(), label
    summary = _build(subs, tmp_path / "public", tmp_path / "cache")
    assert (summary.n_preview, summary.n_refused) == (1, len(MALFORMED))
    out = tmp_path / "public"
    assert (out / "submissions" / "2026-12-05_good.html").is_file()
    refused = (out / "refused.html").read_text(encoding="utf-8")
    assert refused.count("receipt.frame_image") >= len(MALFORMED)
    assert len(list((out / "receipts" / "frames").iterdir())) == 1  # the good bundle's frame


def test_a_bundle_the_build_cannot_render_is_withheld_and_the_build_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its frame replaced by one that does not decode after it was verified (a report the
    build was given): rendering it fails, it is withheld with ``ranking.unrendered`` named on
    the refused page, and the other bundle is published with its frame. More withheld bundles
    than the build allows stop it with a one-line error (the build's fault, not a bundle's)."""
    subs = tmp_path / "submissions"
    good = make_bundle(subs / "2026-12-05_good", declare_baseline=False)
    _with_frame(good, _webp((1024, 640)), "webp")
    stale = make_bundle(subs / "2026-12-05_stale", "always_halt", declare_baseline=False)
    name = _with_frame(stale, _png((1024, 640)), "png")
    reports = verify_path(subs, UNSIGNED)
    assert [r.status.value for r in reports] == ["preview", "preview"]
    (stale / "frames" / name).write_bytes(_idat(lambda b: bytes(len(b))))
    assert read_receipts(stale)  # the receipts are as verified: only the frame changed
    summary = _build(subs, tmp_path / "public", tmp_path / "cache", reports=reports)
    assert (summary.n_preview, summary.n_refused) == (1, 1)
    assert any("2026-12-05_stale" in n and "withheld" in n for n in summary.notes), summary.notes
    out = tmp_path / "public"
    assert (out / "submissions" / "2026-12-05_good.html").is_file()
    assert not (out / "submissions" / "2026-12-05_stale.html").exists()
    refused = (out / "refused.html").read_text(encoding="utf-8")
    assert "ranking.unrendered" in refused and "2026-12-05_stale" in refused.lower()
    assert len(list((out / "receipts" / "frames").iterdir())) == 1

    import effectbench.site.build as build_module

    monkeypatch.setattr(build_module, "MAX_WITHHELD", 0)
    with pytest.raises(
        SiteBuildError, match=r"rendering failed for 1 bundle\(s\), the last 2026-12-05_stale"
    ):
        _build(subs, tmp_path / "stopped", tmp_path / "cache", reports=reports)
