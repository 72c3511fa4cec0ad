"""A board's paired resolution: the minimum detectable difference between two of its systems,
paired and clustered by unit (template), recomputed here with NumPy and SciPy from the shipped
rows of the generated clinic catalogue; and its edge cases (too few shared units, no spread)."""

from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats
from support.outcomes import outcome_table

from effectbench.cli import main
from effectbench.metrics import DEFAULT_PRICES, resolution
from effectbench.packs import get_pack
from verifier.pack import clusters_of, pack_tasks

SUBMISSIONS = Path(__file__).resolve().parents[1] / "submissions"
GENERATED = {
    "effect_verified_all": "2026-12-02_effect-verified-all-clinic-generated",
    "effect_verified": "2026-12-02_effect-verified-clinic-generated",
    "screen_only": "2026-12-02_screen-only-clinic-generated",
}
WORTH = {  # an episode's worth at the default prices, written out per outcome
    "success": DEFAULT_PRICES.value,
    "phantom": -DEFAULT_PRICES.silent,
    "wrong_write": -(DEFAULT_PRICES.silent + DEFAULT_PRICES.wrong_record),
    "wrong_action": -DEFAULT_PRICES.wrong_record,
    "over_halt": -DEFAULT_PRICES.over_halt,
}


def _rows(folder: str) -> list[dict[str, Any]]:
    text = (SUBMISSIONS / folder / "episodes.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def _worth(row: dict[str, Any]) -> float:
    """An episode's worth minus doing nothing's on it (an over-halt where the correct action
    was available), from its outcome alone."""
    outcome = row["outcome"]
    if outcome == "silent_wrong_effect":
        outcome = "wrong_write" if row["swer_variant"] == "wrong_write" else "phantom"
    idle = -DEFAULT_PRICES.over_halt if row["correct_action_available"] else 0.0
    return WORTH.get(outcome, 0.0) - idle


def _per_template(folder: str, clusters: dict[str, str]) -> dict[str, tuple[float, float]]:
    """Each template's SWER (points) and net value per 100 tasks, from the rows."""
    by: dict[str, list[dict[str, Any]]] = {}
    for r in _rows(folder):
        by.setdefault(clusters[r["task_id"]], []).append(r)
    return {
        t: (
            100 * float(np.mean([r["outcome"] == "silent_wrong_effect" for r in rows])),
            100 * float(np.mean([_worth(r) for r in rows])),
        )
        for t, rows in by.items()
    }


def _reference(d: np.ndarray) -> tuple[float, float]:
    """(s_d, the paired minimum detectable difference) from SciPy: t on G - 1 degrees."""
    g = len(d)
    sd = float(np.std(d, ddof=1))
    return sd, (stats.t.ppf(0.975, g - 1) + stats.t.ppf(0.8, g - 1)) * sd / math.sqrt(g)


@pytest.fixture(scope="module")
def ranked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    cache = tmp_path_factory.mktemp("cache")
    mp = pytest.MonkeyPatch()
    mp.setenv("XDG_CACHE_HOME", str(cache))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(
            [
                "rank",
                *(str(SUBMISSIONS / f) for f in GENERATED.values()),
                "--json",
                "--no-reproduce",
                "--allow-unsigned",
            ]
        )
    mp.undo()
    assert code == 0
    (board,) = json.loads(out.getvalue())
    return dict(board)


def test_rank_json_states_every_pairs_paired_resolution_as_scipy_recomputes_it(
    ranked: dict[str, Any],
) -> None:
    doc = json.loads((SUBMISSIONS / GENERATED["effect_verified"] / "submission.json").read_text())
    facts = pack_tasks(get_pack(doc["pack"]["name"]), doc.get("split", "dev"))
    clusters = clusters_of(facts)
    assert clusters is not None
    by_system = {name: _per_template(folder, clusters) for name, folder in GENERATED.items()}
    system_of = {r["slug"]: r["system"] for r in ranked["rows"]}
    pairs = ranked["paired_resolution"]
    assert len(pairs) == 3  # every pair of the three systems
    seen = {}
    for p in pairs:
        a, b = by_system[system_of[p["first"]]], by_system[system_of[p["second"]]]
        shared = sorted(set(a) & set(b))
        for i, measure in enumerate(("swer", "value")):
            d = np.array([a[t][i] - b[t][i] for t in shared])
            sd, mdd = _reference(d)
            got = p[measure]
            assert got["paired_units"] == len(shared) == 26
            assert got["paired_sd"] == pytest.approx(sd, abs=1e-9)
            assert got["paired_mdd"] == pytest.approx(mdd, abs=1e-9)
            assert got["paired_method"] == "paired-clustered-t" and got["unit"] == "template"
            if got["fixed_mdd"] is None:  # e.g. SWER 0 or 1 on every task of every template
                assert got["fixed_note"] == "not estimable: no variation within any shared template"
            else:
                assert (
                    got["fixed_mdd"] > 0
                    and got["fixed_note"] == "holds for these 26 templates only"
                )
        seen[(system_of[p["first"]], system_of[p["second"]])] = p["swer"]["paired_mdd"]
    # the figures, from the shipped generated clinic catalogue
    assert round(seen[("effect_verified_all", "effect_verified")], 1) == 16.7
    assert round(seen[("effect_verified", "screen_only")], 1) == 27.6
    assert all("paired" in key for key in ranked if key.startswith("paired"))


_table = outcome_table


def test_too_few_shared_templates_are_not_estimable_never_0_or_infinity() -> None:
    a = _table([["success"] * 4, ["phantom"] * 4], ["t1", "t2"])
    b = _table([["over_halt"] * 4, ["success"] * 4], ["t1", "t2"])
    for measure in ("swer", "value"):
        r = resolution(a, b, measure, DEFAULT_PRICES)
        assert r.paired_mdd is None and r.paired_units == 2
        assert r.paired_note.startswith("not estimable: 2 shared templates")
    r = resolution(a, _table([["success"]], ["other"]), "swer", DEFAULT_PRICES)
    assert r.paired_mdd is None and r.fixed_mdd is None and "no shared template" in r.fixed_note
    # nothing varies within a template either: the fixed figure is not estimable, never 0
    r = resolution(a, a.model_copy(update={"task_id": ["t1", "t2"]}), "swer", DEFAULT_PRICES)
    assert (
        r.fixed_mdd is None
        and r.fixed_note == "not estimable: no variation within any shared template"
    )


def test_zero_spread_says_so_and_the_fixed_figure_stands_in() -> None:
    ids = ["t1", "t2", "t3", "t4"]
    a = _table([["phantom", "success"]] * 4, ids)
    b = _table([["success", "success"]] * 4, ids)
    r = resolution(a, b, "swer", DEFAULT_PRICES)
    assert r.paired_mdd is None and r.paired_sd == 0.0 and r.paired_note.startswith("no spread")
    assert r.fixed_mdd is not None and r.fixed_mdd > 0 and r.headline == r.fixed_mdd
    # the fixed figure: each template's within variance over its 2 tasks, units held fixed
    within = 100 * 100 * 0.5 * 0.5 / 2
    se = math.sqrt(4 * within) / 4
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert r.fixed_mdd == pytest.approx(z * se, abs=1e-9)


FRESH = {
    "effect_verified": "2026-12-02_effect-verified-clinic-generated-fresh",
    "screen_only": "2026-12-02_screen-only-clinic-generated-fresh",
}


def test_one_row_per_system_its_fresh_run_a_column_and_unpaired_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A system's public-seed and fresh-instance bundles are one row of the board: the fresh
    run, the contamination delta of committed runs (SWER and value, fresh minus public, paired
    interval; none here: the shipped fresh runs are uncommitted) and its rank on the fresh
    rows alone are columns; a fresh bundle without a public one says "unpaired"."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folders = [
        GENERATED["effect_verified_all"],
        GENERATED["effect_verified"],
        FRESH["effect_verified"],
        FRESH["screen_only"],  # its public-seed bundle is not on this board
    ]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(
            ["rank", *(str(SUBMISSIONS / f) for f in folders), "--json", "--no-reproduce",
             "--allow-unsigned"]
        )  # fmt: skip
    assert code == 0
    (board,) = json.loads(out.getvalue())
    rows = {r["system"]: r for r in board["rows"]}
    assert len(board["rows"]) == len(rows) == 3  # no system twice
    ev = rows["effect_verified"]
    assert (
        ev["fresh_slug"] == FRESH["effect_verified"] and ev["slug"] == GENERATED["effect_verified"]
    )
    # the shipped fresh runs were not committed before they ran: a column of the row, but no
    # delta (only committed fresh instances count, issue 52)
    assert ev["contamination"] == "uncommitted" and board["contamination"] == []
    assert all(ev[f"contamination_{k}"] is None for k in ("swer", "value", "swer_lo", "value_hi"))
    # unsigned and not reproduced here, so previews: shown, never ranked, on fresh rows either
    assert ev["status"] == "preview" and ev["fresh_rank_best"] is None
    so = rows["screen_only"]
    assert so["contamination"] == "unpaired" and so["contamination_swer"] is None
    assert so["slug"] == FRESH["screen_only"]
    eva = rows["effect_verified_all"]
    assert eva["contamination"] == "" and eva["fresh_slug"] == ""


def test_rank_json_shows_the_hierarchical_bootstrap_beside_the_analytic_intervals(
    ranked: dict[str, Any],
) -> None:
    """Every row and every pair of the board, each with the board's analytic interval and a
    hierarchical bootstrap one (templates, tasks, trials), under one clearly named key."""
    block = ranked["hierarchical_bootstrap"]
    assert block["levels"] == ["template", "task", "trial"] and block["replicates"] >= 1000
    rows = {r["slug"]: r for r in ranked["rows"]}
    assert [b["slug"] for b in block["rows"]] == list(rows)
    for b in block["rows"]:
        row = rows[b["slug"]]
        # the rows went through pandas' JSON (10 significant digits)
        assert (b["value"], b["analytic_lo"], b["analytic_hi"]) == pytest.approx(
            (row["value"], row["value_lo"], row["value_hi"]), rel=1e-9
        )
        assert b["templates"] == 26 and b["tasks"] > b["templates"]
        assert b["bootstrap_lo"] < b["value"] < b["bootstrap_hi"]
    slugs = list(rows)
    pairs = [(x, y) for i, x in enumerate(slugs) for y in slugs[i + 1 :]]
    assert [(p["first"], p["second"]) for p in block["pairs"]] == pairs
    for p in block["pairs"]:
        assert p["analytic_lo"] <= p["difference"] <= p["analytic_hi"]
        assert p["bootstrap_lo"] <= p["bootstrap_hi"] and p["note"] == ""
