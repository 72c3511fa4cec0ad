"""The packs page: each system on several packs' boards, its rates set side by side.

Two small packs (MockMed's nine tasks under two names, each a board of its own) each get a bundle
of two shipped arms; the built site's packs page holds both systems, on both boards, with the
counts of their own rows, and leaves out a system on one board only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.across import PacksPage

from effectbench.baselines import get_baseline
from effectbench.bundle import SystemInfo
from effectbench.manifest import manifest_of
from effectbench.packs import register
from effectbench.packs.mockmed import MockMedProvider
from effectbench.produce import make_submission, write_submission
from effectbench.run.runner import evaluate
from effectbench.schema import Split
from effectbench.site import build_site

ROOT = Path(__file__).resolve().parents[1]
PACKS = ("desk-a", "desk-b")
ARMS = ("screen_only", "effect_verified")


def _pack(name: str) -> type[MockMedProvider]:
    class Renamed(MockMedProvider):
        def __init__(self) -> None:
            super().__init__()
            self._tasks = tuple(
                t.model_copy(update={"task_id": t.task_id.replace("mockmed::", f"{name}::")})
                for t in self._tasks
            )

        def manifest(self) -> dict[str, Any]:
            return manifest_of(name, self._tasks)

    Renamed.name = name
    return Renamed


def _bundle(subs: Path, pack: MockMedProvider, arm: str, name: str) -> Path:
    run = evaluate(get_baseline(arm, pack), pack, trials=3)
    sub = make_submission(
        run,
        pack,
        SystemInfo(name=name),
        trials=3,
        split=Split.DEV,
        started_at="2026-11-30T00:00:00Z",
        finished_at="2026-11-30T00:01:00Z",
    )
    return write_submission(subs / f"2026-12-01_{name}-{pack.name}", sub, run.rows)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("packs-site")
    subs = base / "submissions"
    bundles: dict[tuple[str, str], Path] = {}
    with register(PACKS[0], _pack(PACKS[0])), register(PACKS[1], _pack(PACKS[1])):
        for name in PACKS:
            pack = _pack(name)()
            for arm in ARMS:
                bundles[(arm, name)] = _bundle(subs, pack, arm, arm.replace("_", "-"))
        _bundle(subs, _pack(PACKS[0])(), "always_halt", "halts-on-one-pack")
        out = base / "public"
        build_site(subs, out, root=ROOT, cache_dir=base / "cache", workers=1, allow_unsigned=True)
    page = PacksPage()
    page.feed((out / "packs.html").read_text(encoding="utf-8"))
    return {"bundles": bundles, "systems": page.systems}


def test_every_system_on_two_packs_boards_is_set_side_by_side(site: dict[str, Any]) -> None:
    assert set(site["systems"]) == {a.replace("_", "-") for a in ARMS}  # not the one-board one
    for (arm, pack), bundle in site["bundles"].items():
        results = json.loads((bundle / "submission.json").read_text())["results"]
        shown = site["systems"][arm.replace("_", "-")]
        board = next(b for b, _, _ in shown if b.endswith(pack))
        cell = shown[(board, "web", "swer")]
        assert (int(cell["data-k"]), int(cell["data-n"])) == (
            results["swer"]["numerator"],
            results["swer"]["denominator"],
        )
        assert (
            int(shown[(board, "web", "over_halt")]["data-k"]) == results["over_halt"]["numerator"]
        )
