"""Which rows the verifier re-runs is never the submitter's choice.

The attack this answers: a bundle that claims the shipped ``screen_only`` baseline on
the clinic's web substrate, with 42 of its 81 (task, trial) cells copied from the
``effect_verified`` reference (a far better SWER), whose one free field (a row's
``latency_s``) is ground until a sample drawn from the rows' hash misses every forged
cell. Here the grinding is done on the selector itself (the re-run of 81 browser
episodes is the web tests' job): whatever the timings, every forged cell is re-run.
A listed reference bundle keeps its fixed sample, drawn from its listed bytes.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from effectbench.hashing import content_hash
from effectbench.packs.clinic import ClinicProvider
from effectbench.schema import Split
from verifier.limits import Limits
from verifier.references import bundle_content_hash, listed_reference
from verifier.reproduce import rerun_pairs

ROOT = Path(__file__).resolve().parents[1]
SCREEN_ONLY = ROOT / "submissions" / "2026-12-01_screen-only-clinic-web"
EFFECT_VERIFIED = ROOT / "submissions" / "2026-12-01_effect-verified-clinic-web"
GRINDS = 1_000


def _rows(folder: Path) -> list[dict[str, Any]]:
    lines = (folder / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def _digests(folder: Path, episodes: bytes) -> dict[str, str]:
    """The file digests of ``folder`` with its ``episodes.jsonl`` replaced by ``episodes``."""
    files = {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in folder.rglob("*")
        if p.is_file()
    }
    files["episodes.jsonl"] = hashlib.sha256(episodes).hexdigest()
    return files


@pytest.fixture(scope="module")
def web_tasks() -> tuple[ClinicProvider, list[Any]]:
    pack = ClinicProvider()
    tasks = [t for t in pack.tasks() if t.split is Split.DEV and t.substrate.value == "web"]
    return pack, tasks


def test_grinding_the_timings_never_moves_the_re_run_off_a_forged_cell(
    web_tasks: tuple[ClinicProvider, list[Any]],
) -> None:
    pack, tasks = web_tasks
    rows = _rows(SCREEN_ONLY)
    better = {(r["task_id"], r["trial"]): r for r in _rows(EFFECT_VERIFIED)}
    # 42 of 81 cells taken from the effect_verified reference, those that differ first
    own = {(r["task_id"], r["trial"]): r["outcome"] for r in rows}
    keys = sorted(own, key=lambda k: (better[k]["outcome"] == own[k], k))
    forged = keys[:42]
    assert any(better[k]["outcome"] != own[k] for k in forged)  # a re-run would disagree
    for i, row in enumerate(rows):
        key = (row["task_id"], row["trial"])
        if key in forged:
            rows[i] = {**better[key], "arm": row["arm"], "episode_id": row["episode_id"]}
    assert len(forged) == 42 and len(rows) == 81
    hashes = set()
    for grind in range(GRINDS):
        rows[0]["latency_s"] = 1.0 + grind / 1000
        episodes = "".join(json.dumps(r) + "\n" for r in rows).encode()
        digest = content_hash(_digests(SCREEN_ONLY, episodes))
        hashes.add(digest)
        reference, _ = listed_reference(digest, SCREEN_ONLY.name)
        assert reference is None  # not the maintainers' bytes, whatever the timings
        pairs = rerun_pairs(tasks, 3, pack, Limits(), None)
        assert pairs is None  # every row is re-run: each forged cell meets its re-run
    assert len(hashes) == GRINDS  # each grind was a different bundle


def test_a_listed_reference_keeps_its_fixed_sample_and_a_retimed_copy_loses_it(
    web_tasks: tuple[ClinicProvider, list[Any]],
) -> None:
    pack, tasks = web_tasks
    digest = bundle_content_hash(SCREEN_ONLY)
    reference, why = listed_reference(digest, SCREEN_ONLY.name)
    assert reference is not None and why == ""
    sample = rerun_pairs(tasks, 3, pack, Limits(), reference.content_hash)
    assert sample is not None and len(sample) == Limits().reproduce_screen_rows
    assert sample == rerun_pairs(tasks, 3, pack, Limits(), reference.content_hash)
    moved, why = listed_reference(digest, "2026-12-02_elsewhere")
    assert moved is None and "listed as" in why  # the same bytes in another folder
    rows = _rows(SCREEN_ONLY)
    rows[0]["latency_s"] = 0.5
    episodes = "".join(json.dumps(r) + "\n" for r in rows).encode()
    retimed = content_hash(_digests(SCREEN_ONLY, episodes))
    assert listed_reference(retimed, SCREEN_ONLY.name) == (None, "")
