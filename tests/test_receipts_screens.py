"""Receipts on screen substrates: ``effectbench submit`` of the clinic on the web (headless
Chromium) and on the desktop (Xvfb, AT-SPI, GTK 3), and one episode over VNC.

Every row has its receipt; a screen_only silent wrong effect's receipt holds the frame of the
green banner the agent believed (a lossless WebP in the bundle's ``frames/``, named by its
hash), the agent's claim, and the declared field whose actual value differs from the expected
one; deleting that frame, or changing one value of a change set, is refused with the receipt's
check id. One trial per task (the receipts are the subject here; a board needs three).
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image
from support.bundles import copy_bundle, edit_receipts, read_receipts, read_rows

from effectbench.baselines import get_baseline
from effectbench.cli import main
from effectbench.computer import images
from effectbench.kit.pages import BANNER_RGB
from effectbench.packs.clinic import ClinicProvider
from effectbench.packs.clinic.desktop import layout as desktop_layout
from effectbench.packs.clinic.web import layout as web_layout
from effectbench.receipts.collect import evidence_of
from effectbench.receipts.model import Receipt
from effectbench.run.runner import run_episode
from effectbench.schema import EpisodeRecord, Substrate
from verifier.api import VerifyOptions, verify_bundle

UNSIGNED = VerifyOptions(allow_unsigned=True, reproduce=False)


def _submit(out: Path, substrate: str) -> Path:
    args = ["submit", "--pack", "clinic", "--substrate", substrate, "--baseline", "screen_only"]
    args += ["--trials", "1", "--name", f"screen only {substrate}", "--out", str(out)]
    assert main(args) == 0
    (bundle,) = out.iterdir()
    return bundle


def _banner_rgb(frame: bytes, box: tuple[int, int, int, int]) -> tuple[int, int, int]:
    with Image.open(io.BytesIO(frame)) as image:
        pixels = np.asarray(image.convert("RGB"), dtype=np.uint8)
    return images.dominant(pixels, box)


def _check_bundle(bundle: Path, banner: tuple[int, int, int, int], green: tuple[int, ...]) -> None:
    rows, receipts = read_rows(bundle), read_receipts(bundle)
    assert len(rows) == len(receipts) == 27
    assert [r["episode_id"] for r in rows] == [r["episode_id"] for r in receipts]
    frames = {p.name: p.read_bytes() for p in (bundle / "frames").iterdir()}
    for name, data in frames.items():
        assert name == f"{hashlib.sha256(data).hexdigest()}.webp"
    for raw in receipts:
        roles = [f["role"] for f in raw["frames"]]
        assert roles == ["first", "report", "last"] and {f["name"] for f in raw["frames"]} <= set(
            frames
        )
    at = next(
        i
        for i, r in enumerate(rows)
        if r["task_id"].startswith("clinic::partial_note@")
        and r["outcome"] == "silent_wrong_effect"
    )
    receipt = Receipt.from_json(json.dumps(receipts[at]))
    report = next(f for f in receipt.frames if f.role == "report")
    assert _banner_rgb(frames[report.name], banner) == green  # the banner the agent believed
    assert receipt.claim.reported_success and receipt.claim.message == rows[at]["agent"]["message"]
    (differs,) = [e for e in receipt.effects or [] if e.state.value != "correct"]
    assert differs.field == "note" and differs.evidence.values == [""]
    assert any(a.kind in ("click", "a11y_action") for a in receipt.actions)
    assert verify_bundle(bundle, UNSIGNED).check("receipt").passed


def _refused(bundle: Path, tmp_path: Path) -> None:
    """Deleting a frame, or changing one value of a change set: refused by the receipts."""
    gone = copy_bundle(bundle, tmp_path / "frame-gone")
    receipt = next(
        r for r in read_receipts(gone) if r["task_id"].startswith("clinic::partial_note")
    )
    (gone / "frames" / receipt["frames"][1]["name"]).unlink()
    assert "receipt.frame_missing" in verify_bundle(gone, UNSIGNED).finding_ids()

    changed = copy_bundle(bundle, tmp_path / "value-changed")

    def edit(receipts: list[dict[str, Any]]) -> None:
        r = next(r for r in receipts if r["task_id"].startswith("clinic::partial_note"))
        r["changes"]["rows"][0]["values"]["note"] = "the note, as if it had been saved"

    edit_receipts(changed, edit)
    assert "receipt.evidence" in verify_bundle(changed, UNSIGNED).finding_ids()
    shutil.rmtree(gone)
    shutil.rmtree(changed)


@pytest.mark.web
def test_submit_on_the_web_writes_a_receipt_per_row_with_the_banner_frame(tmp_path: Path) -> None:
    bundle = _submit(tmp_path / "subs", "web")
    _check_bundle(bundle, web_layout.BANNER.region(), BANNER_RGB["success"])
    _refused(bundle, tmp_path)


def _rect(rect: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    x, y, w, h = rect
    return (x, y, x + w, y + h)


@pytest.mark.desktop
def test_submit_on_the_desktop_writes_a_receipt_per_row_with_the_banner_frame(
    tmp_path: Path,
) -> None:
    bundle = _submit(tmp_path / "subs", "desktop")
    _check_bundle(bundle, _rect(desktop_layout.BANNER), desktop_layout.BANNER_RGB["success"])
    receipts = read_receipts(bundle)
    kinds = {a["kind"] for r in receipts for a in r["actions"]}
    assert {"a11y_action", "a11y_set_text"} & kinds  # the desktop bots act through AT-SPI
    _refused(bundle, tmp_path)


@pytest.mark.desktop
def test_an_episode_over_vnc_has_its_frames_and_pixel_actions() -> None:
    with ClinicProvider() as pack:
        task = next(t for t in pack.tasks() if t.task_id == "clinic::partial_note@remote_display")
        assert task.substrate is Substrate.REMOTE_DISPLAY
        row = run_episode(get_baseline("screen_only", pack), pack, task, 0, 0)
        assert isinstance(row, EpisodeRecord), row
        evidence = evidence_of(row)
        assert evidence is not None
        receipt = evidence.receipt
        assert [f.role for f in receipt.frames] == ["first", "report", "last"]
        assert set(evidence.frames) == {f.name for f in receipt.frames}
        assert {"click", "type"} <= {a.kind for a in receipt.actions}
        assert receipt.changes is not None and receipt.truth.outcome.value == row.outcome.value
