"""Interop with the reference implementation: manifest, fingerprint, rows and results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from effectbench.effects import contract_hash
from effectbench.manifest import fingerprint
from effectbench.metrics import episode_frame, summarize
from effectbench.packs.mockmed import EFFECT, MockMedProvider
from effectbench.schema import EpisodeRecord

ANCHOR_FINGERPRINT = "sha256:ce941f1e8dfa41164f88f04eed7a6416f65fa2813c6ba3de9755cf3e5a402b1f"
ANCHOR_EFFECT_HASH = "sha256:ee92689f85689bbd45ea87b6c554857d0f2f80dea54711581bf79ca6953a698a"


def test_effect_contract_hash_is_byte_identical() -> None:
    assert contract_hash(EFFECT[0]) == ANCHOR_EFFECT_HASH


def test_manifest_equals_the_vector_and_its_fingerprint(vectors_dir: Path) -> None:
    vector = json.loads((vectors_dir / "mockmed-anchor.manifest.json").read_text())
    ours = MockMedProvider().manifest()
    assert ours == vector
    assert fingerprint(ours) == fingerprint(vector) == ANCHOR_FINGERPRINT


@pytest.mark.parametrize("arm", ["screen_only", "effect_verified"])
def test_rows_load_and_reserialise_without_loss(
    upstream_docs: dict[str, dict[str, Any]], arm: str
) -> None:
    for row in upstream_docs[arm]["episodes"]:
        record = EpisodeRecord.model_validate(row)
        again = record.to_row()
        assert again == row
        assert json.dumps(again) == json.dumps(row)  # same key order, same values


def _assert_close(claimed: Any, ours: Any, path: str = "results") -> None:
    if isinstance(claimed, dict):
        for key, value in claimed.items():
            _assert_close(value, ours[key], f"{path}.{key}")
    elif isinstance(claimed, list):
        assert len(claimed) == len(ours), path
        for i, (a, b) in enumerate(zip(claimed, ours, strict=True)):
            _assert_close(a, b, f"{path}[{i}]")
    elif isinstance(claimed, float):
        assert ours == pytest.approx(claimed, abs=1e-9), path
    else:
        assert ours == claimed, path


@pytest.mark.parametrize("arm", ["screen_only", "effect_verified"])
def test_summary_reproduces_the_upstream_results_block(
    upstream_docs: dict[str, dict[str, Any]], arm: str
) -> None:
    doc = upstream_docs[arm]
    ours = summarize(episode_frame(doc["episodes"])).to_json()
    _assert_close(doc["results"], ours)
    assert set(ours["outcome_counts"]) == set(doc["results"]["outcome_counts"])
