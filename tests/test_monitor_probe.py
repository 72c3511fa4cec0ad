"""The leak probe (issue 32): on the shipped corpus a classifier on the metadata alone stays
near chance, and the probe itself has the power to see a leak when there is one."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from effectbench.monitors.corpus import LabelEntry, read_corpus
from effectbench.monitors.probe import probe, probe_views
from effectbench.schema import Split

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "monitors" / "corpus"
NEAR_CHANCE = 0.1
"""How far from 0.5 the shipped corpus's AUROC within cells may be."""


@pytest.fixture(scope="module")
def shipped() -> tuple[dict[str, dict[str, Any]], list[LabelEntry]]:
    corpus = read_corpus(CORPUS, check_frames=False)
    dev = corpus.labels(Split.DEV)
    assert dev is not None
    scored = [e for e in dev.episodes if e.scored is not None]
    return {str(v["id"]): v for v in corpus.raw}, scored


def test_the_shipped_corpus_metadata_stays_near_chance_within_cells() -> None:
    result = probe(CORPUS)
    assert result.episodes > 2000 and result.situations > 300
    assert result.within_cells is not None and result.overall is not None
    assert abs(result.within_cells - 0.5) <= NEAR_CHANCE, result
    assert abs(result.overall - 0.5) <= NEAR_CHANCE, result


def test_a_field_derived_from_the_label_is_found(
    shipped: tuple[dict[str, dict[str, Any]], list[LabelEntry]],
) -> None:
    views, scored = shipped
    leaked = copy.deepcopy(views)
    for e in scored:  # what an export that kept the truth table's reading would hold
        leaked[e.id]["task"]["params"]["checked"] = "wrong" if e.scored else "right"
    result = probe_views(leaked, scored)
    # naive Bayes sums every token, so the others dilute the leak; it still stands out
    assert result.within_cells is not None and result.within_cells > 0.85
    assert result.overall is not None and result.overall > 0.8
    assert probe_views(leaked, scored, drop=["param:checked"]) == probe_views(views, scored)


def test_a_situation_s_screens_are_held_out_together(
    shipped: tuple[dict[str, dict[str, Any]], list[LabelEntry]],
) -> None:
    # A payload shared by a situation's variants (task, task@web, ...) is memory, not a leak:
    # when every situation has a token of its own and variants are held out together, the
    # token tells nothing of the held-out situation (a probe folding each variant apart
    # scores 0.87 within cells here: it remembers the payload of the situation's other screen).
    views, scored = shipped
    tagged = copy.deepcopy(views)
    for e in scored:
        tagged[e.id]["task"] = {
            "goal": "",
            "params": {"payload": e.task.split("@", 1)[0]},
            "declared_effect": None,
        }
        tagged[e.id]["substrate"] = "api"
    result = probe_views(tagged, scored)
    assert result.situations < len({e.task for e in scored})
    assert result.within_cells is not None and result.within_cells < 0.5 + NEAR_CHANCE
