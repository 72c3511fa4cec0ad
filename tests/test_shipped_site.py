"""The site built from the repository's own ``submissions/``, as ``make site`` builds it: the
clinic's three arms on every substrate, each ranked by reproduction (a sample of each screen
bundle's rows re-run in Chromium, under Xvfb and through Xvnc), the ladder on each substrate,
and each arm's substrate-sensitivity view equal to a recomputation from its rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.across import WRONG_RATES, jsonl_rows, paired
from support.site import REFERENCE, SCREEN_REFERENCES

from effectbench.metrics import rate_difference
from effectbench.produce import REFERENCE_SET
from effectbench.schema import Substrate
from effectbench.site import build_site

pytestmark = [pytest.mark.web, pytest.mark.desktop, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
ARMS = ("screen_only", "effect_verified", "effect_verified_all")
"""The ladder, most silent wrong effects first."""
SUBSTRATES = ("api", "web", "desktop", "remote_display")


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("shipped")
    out = base / "public"
    summary = build_site(REFERENCE, out, root=ROOT, cache_dir=base / "cache")
    doc = json.loads((out / "downloads" / "leaderboard.json").read_text(encoding="utf-8"))
    clinic = [b for b in doc["boards"] if b["pack"] == "clinic"]
    (group,) = [g for g in doc["groups"] if g["key"] == "spec1-clinic"]
    return {"summary": summary, "doc": doc, "clinic": clinic, "group": group, "out": out}


def test_the_reference_set_holds_every_arm_on_every_screen() -> None:
    screens = {(s.baseline, s.substrate) for s in REFERENCE_SET if s.substrate is not None}
    assert screens == {(a, s) for a in ARMS for s in SUBSTRATES if s != "api"}
    assert len(SCREEN_REFERENCES) == len(screens)  # each one shipped in submissions/


def test_every_bundle_is_ranked_by_reproduction(shipped: dict[str, Any]) -> None:
    entries = [e for b in shipped["doc"]["boards"] for e in b["entries"]]  # one board each
    shipped_bundles = [p for p in REFERENCE.iterdir() if (p / "submission.json").is_file()]
    assert len(entries) == len(shipped_bundles)
    assert {(e["status"], e["reproduced"]) for e in entries} == {("ranked", True)}


def test_clinic_rows_on_every_substrate_for_every_arm_and_the_ladder_holds(
    shipped: dict[str, Any],
) -> None:
    """One board per substrate; on each, the three arms in the ladder's order (by net value at
    the default prices), each named with the substrate, the best above doing nothing, and rank
    ranges that do not all overlap."""
    boards = shipped["clinic"]
    assert [b["substrate"] for b in boards] == list(SUBSTRATES)
    for b in boards:
        assert b["key"] == f"spec1-clinic-{b['substrate']}"
        entries = b["entries"]
        assert [e["system"] for e in entries] == list(reversed(ARMS)), b["key"]
        assert {e["substrate"] for e in entries} == {b["substrate"]}
        assert [e["label"] for e in entries] == [f"{a} · {b['substrate']}" for a in reversed(ARMS)]
        swer = [e["rates"]["swer"]["rate"] for e in entries]
        assert swer[0] < swer[1] < swer[2], (b["key"], swer)
        assert entries[0]["value"]["per_100"] > 0  # above the doing-nothing line
        ranks = [(e["rank_best"], e["rank_worst"]) for e in entries]
        assert any(w < b2 for (_, w), (b2, _) in zip(ranks, ranks[1:], strict=False)), ranks


def test_each_arm_has_its_substrate_view_equal_to_a_recomputation(
    shipped: dict[str, Any],
) -> None:
    views = {s["system"]: s for s in shipped["group"]["across_substrates"]}
    assert set(views) == set(ARMS)
    for arm, view in views.items():
        assert set(view["substrates"]) == set(SUBSTRATES)
        rows = [r for bundle in _clinic_bundles(arm) for r in jsonl_rows(bundle)]
        assert len(view["differences"]) == len(SUBSTRATES) * (len(SUBSTRATES) - 1) // 2
        for pair in view["differences"]:
            first, second = pair["first"], pair["second"]
            on_first, on_second = paired(rows, first, second)
            assert on_first.n_tasks == on_second.n_tasks == 27  # the dev split, on both
            for rate in WRONG_RATES:
                d = rate_difference(on_first, on_second, rate)
                got = pair[rate]
                assert got["tasks"] == d.tasks, (arm, first, second, rate)
                for key, want in (("difference", d.difference), ("lo", d.lo), ("hi", d.hi)):
                    assert got[key] == pytest.approx(want, abs=1e-6), (arm, first, second, rate)


def _clinic_bundles(arm: str) -> list[Path]:
    """The shipped clinic bundles of system ``arm`` (read from their own submission.json)."""
    out = []
    for bundle in sorted(REFERENCE.iterdir()):
        if (bundle / "submission.json").is_file():
            sub = json.loads((bundle / "submission.json").read_text(encoding="utf-8"))
            if sub["pack"]["name"] == "clinic" and sub["system"]["name"] == arm:
                out.append(bundle)
    return out


def test_the_substrate_order_is_specs(shipped: dict[str, Any]) -> None:
    order = [s.value for s in Substrate]
    for view in shipped["group"]["across_substrates"]:
        for pair in view["differences"]:  # the later in SPEC order first
            assert order.index(pair["first"]) > order.index(pair["second"])
