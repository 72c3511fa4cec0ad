"""The site built from the repository's own ``submissions/``, as the deploy job publishes it
(``effectbench site build --fresh`` in its light venv, no browser or X server; the build is
made once per test run and checked as a job by ``test_workflow_steps``): both
systems of record (the clinic on its API and every screen, the PostgreSQL ticketing pack on its
API and its web app), the three arms on each, every bundle ranked by reproduction from the
maintainers' record the reference list names (as ``make site`` ranks it), the ladder on each
substrate of each pack, each arm's substrate-sensitivity view equal to a recomputation from its
rows, and the packs page setting each arm's two packs side by side with its bundles' own counts.

The re-run itself (no record read) is done here once per pack and substrate the references ran:
one listed reference of each re-run by the verifier (its API rows all, a screen bundle's sample
of :data:`RERUN_SCREEN_ROWS` in Chromium, under Xvfb or through Xvnc)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from support.across import WRONG_RATES, PacksPage, jsonl_rows, paired
from support.site import REFERENCE, SCREEN_REFERENCES
from support.workflows import DeployBuild

from effectbench.findings import Family
from effectbench.metrics import (
    rate_difference,
)
from effectbench.packs.references import REFERENCE_FRESH_SEED, REFERENCE_SET
from effectbench.schema import Substrate
from verifier.api import VerifyOptions, verify_path
from verifier.limits import Limits
from verifier.report import Status

pytestmark = [pytest.mark.web, pytest.mark.desktop, pytest.mark.slow]

ARMS = ("screen_only", "effect_verified", "effect_verified_all")
"""The ladder, most silent wrong effects first."""
PACK_SUBSTRATES = {
    "clinic": ("api", "web", "desktop", "remote_display"),
    "clinic-generated": ("api", "web"),
    "ticketing": ("api", "web"),
}
"""Each system of record on the board and the substrates its references ran, in SPEC order."""
BELOW_DOING_NOTHING = {"spec1-clinic-generated-web"}
"""Boards where even the best reference arm is worth less than doing nothing at the default
prices: the generated web sample holds 8 tasks per category (controls 1 in 8, against 1 in 4 on
the api), and effect_verified_all's readback catches most trap writes only after they landed
(a wrong record it reports: wrong_action)."""
WITHHELD = {"spec1-ticketing-api": "C3_optimistic_then_reject on api"}
"""Boards whose pack's published blindness record (``verifier/blindness/``) names a leak on
their substrate, with the finding each says: shown in the default order without ranks until the
pack is fixed (SPEC 5.3). The ticketing pack's written C3 tasks lean on one workflow whose
declared effect predicts C3 a little (docs/agent-view.md)."""
SHARED_TASKS = {"clinic": 27, "clinic-generated": 64, "ticketing": 27}
"""The dev tasks each pack's references share across its substrates (the generated clinic's
screens run its declared sample)."""
RERUN_SCREEN_ROWS = 3
"""Rows of a listed screen reference the re-run test replays (a sample fixed by its listed
bytes; the shipped default is :attr:`verifier.limits.Limits.reproduce_screen_rows`)."""


@pytest.fixture(scope="module")
def shipped(deploy_build: DeployBuild) -> dict[str, Any]:
    """The site the deploy job publishes (built once per test run, in its light venv)."""
    done = deploy_build.done
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = deploy_build.public
    doc = json.loads((out / "downloads" / "leaderboard.json").read_text(encoding="utf-8"))
    boards = {p: [b for b in doc["boards"] if b["pack"] == p] for p in PACK_SUBSTRATES}
    groups = {p: [g for g in doc["groups"] if g["key"] == f"spec1-{p}"] for p in PACK_SUBSTRATES}
    page = PacksPage()
    page.feed((out / "packs.html").read_text(encoding="utf-8"))
    return {
        "doc": doc,
        "boards": boards,
        "groups": groups,
        "packs": page,
        "out": out,
    }


def test_the_reference_set_holds_every_arm_on_every_screen_of_each_pack() -> None:
    screens = [(s.pack, s.baseline, s.substrate) for s in REFERENCE_SET if s.substrate is not None]
    assert sorted(screens) == sorted(
        (p, a, s) for p, subs in PACK_SUBSTRATES.items() for a in ARMS for s in subs if s != "api"
    )
    assert len(SCREEN_REFERENCES) == len(screens)  # each one shipped in submissions/


def test_every_bundle_is_ranked_by_reproduction(shipped: dict[str, Any]) -> None:
    """Every shipped bundle is ranked as reproduced, from the maintainers' record the reference
    list names (its page's report says so): no record is skipped and no bundle re-run."""
    boards = shipped["doc"]["boards"]
    entries = [e for b in boards for e in b["entries"]]  # one board each
    # a fresh-instance run is a column of its system's public-seed row, not an entry (the
    # shipped ones are uncommitted, so no board lists them under its contamination either)
    fresh = list(_fresh_bundles().values())
    assert not {p.name for p in fresh} & {e["slug"] for e in entries}
    shipped_bundles = [p for p in REFERENCE.iterdir() if (p / "submission.json").is_file()]
    assert len(entries) + len(fresh) == len(shipped_bundles)
    assert {
        (e["status"], e["reproduced"])
        for b in boards
        if b["key"] not in WITHHELD
        for e in b["entries"]
    } == {("ranked", True)}
    assert {
        (e["status"], e["reproduced"]) for b in boards if b["key"] in WITHHELD for e in b["entries"]
    } == {("withheld", True)}
    for bundle in shipped_bundles:
        page = shipped["out"] / "submissions" / f"{bundle.name}.html"
        assert "from the reproduction record listed in the maintainers" in page.read_text(
            encoding="utf-8"
        ), bundle.name


def test_the_generated_references_are_flagged_as_public_seed(shipped: dict[str, Any]) -> None:
    """A generated pack's bundles say which instance they ran: the shipped references ran the
    published dev seed, flagged so on the board, but for the API arms drawn again on a fresh
    (uncommitted) seed; a pack that draws no instance has none."""
    for b in shipped["doc"]["boards"]:
        for e in b["entries"]:
            want = None
            if b["pack"] == "clinic-generated":
                want = "fresh-uncommitted" if e["slug"].endswith("-fresh") else "public"
            assert e["instance"] == want, (b["key"], e["slug"])
    pages = [p.read_text(encoding="utf-8") for p in shipped["out"].rglob("*.html")]
    flagged = [t for t in pages if "eb-badge--public-seed" in t]
    assert flagged and all("clinic-generated" in t for t in flagged)


def _one_reference_per_substrate() -> dict[tuple[str, str], Path]:
    """(pack, substrate) -> the first shipped bundle of that pack whose rows ran only there,
    for every pack on the board (whatever the reference list holds)."""
    chosen: dict[tuple[str, str], Path] = {}
    for bundle in sorted(REFERENCE.iterdir()):
        if not (bundle / "submission.json").is_file():
            continue
        sub = json.loads((bundle / "submission.json").read_text(encoding="utf-8"))
        (substrate,) = {r["substrate"] for r in jsonl_rows(bundle)}
        if sub["pack"]["name"] in PACK_SUBSTRATES:
            chosen.setdefault((sub["pack"]["name"], substrate), bundle)
    return chosen


def test_one_reference_per_pack_and_substrate_reproduces_when_re_run() -> None:
    """The re-run path, with no record read: one listed reference per pack and substrate
    replays (every API row, a fixed sample of a screen bundle's) and ranks, as it would on a
    board machine with no record."""
    chosen = _one_reference_per_substrate()
    assert set(chosen) == {(p, s) for p, subs in PACK_SUBSTRATES.items() for s in subs}
    options = VerifyOptions(limits=Limits(reproduce_screen_rows=RERUN_SCREEN_ROWS))
    for (pack, substrate), bundle in sorted(chosen.items()):
        (report,) = verify_path(bundle, options)
        assert report.status is Status.RANKED, (bundle.name, report.finding_ids())
        assert report.reproduced is True, bundle.name
        assert "reproduction record" not in (report.check(Family.REPRODUCE).note or "")
        want = report.n_rows if substrate == "api" else RERUN_SCREEN_ROWS
        assert report.reproduced_rows == want, (pack, substrate, bundle.name)


@pytest.mark.parametrize("pack", sorted(PACK_SUBSTRATES))
def test_rows_on_every_substrate_for_every_arm_and_the_ladder_holds(
    shipped: dict[str, Any], pack: str
) -> None:
    """One board per substrate the pack's references ran; on each, the three arms in the
    ladder's order (by net value at the default prices), each named with the substrate, the
    best above doing nothing, and rank ranges that do not all overlap."""
    boards = shipped["boards"][pack]
    assert [b["substrate"] for b in boards] == list(PACK_SUBSTRATES[pack])
    for b in boards:
        assert b["key"] == f"spec1-{pack}-{b['substrate']}"
        public = [e for e in b["entries"] if e["instance"] != "fresh-uncommitted"]
        careful = [e for e in public if e["system"] == "look_before_write"]
        entries = [e for e in public if e["system"] != "look_before_write"]
        fresh = [e for e in b["entries"] if e["instance"] == "fresh-uncommitted"]
        # the careful arm's references: the API of every pack but the anchor, never above the
        # ladder's best arm in SWER
        assert bool(careful) == (b["substrate"] == "api"), b["key"]
        for e in careful:
            assert e["rates"]["swer"]["rate"] <= min(x["rates"]["swer"]["rate"] for x in entries)
        if fresh:  # the same arms on a fresh instance: the same ladder
            assert [e["system"] for e in fresh] == list(reversed(ARMS)), b["key"]
            swer = [e["rates"]["swer"]["rate"] for e in fresh]
            assert swer[0] < swer[1] < swer[2], (b["key"], swer)
        assert [e["system"] for e in entries] == list(reversed(ARMS)), b["key"]
        assert {e["substrate"] for e in entries} == {b["substrate"]}
        assert [e["label"] for e in entries] == [f"{a} · {b['substrate']}" for a in reversed(ARMS)]
        swer = [e["rates"]["swer"]["rate"] for e in entries]
        assert swer[0] < swer[1] < swer[2], (b["key"], swer)
        above = entries[0]["value"]["per_100"] > 0  # the best above the doing-nothing line
        assert above == (b["key"] not in BELOW_DOING_NOTHING), b["key"]
        ranks = [(e["rank_best"], e["rank_worst"]) for e in entries]
        if b["key"] in WITHHELD:  # placed by the default order, never ranked
            assert set(ranks) == {(None, None)}, ranks
            assert [w for w in b["withheld"] if w.startswith(WITHHELD[b["key"]])], b["withheld"]
            continue
        assert not b["withheld"], b["key"]
        assert any(w < b2 for (_, w), (b2, _) in zip(ranks, ranks[1:], strict=False)), ranks


def test_a_leaking_packs_board_says_why_it_ranks_nothing(shipped: dict[str, Any]) -> None:
    """The home page says, on each withheld board, why no row is ranked: the finding (target,
    substrate, AUROC, top features) and where the pack's record is; no other board says so."""
    page = (shipped["out"] / "index.html").read_text(encoding="utf-8")
    said = re.findall(
        r'<p class="eb-withheld"[^>]*data-eb-view="([^"]+)"[^>]*>(.*?)</p>', page, re.S
    )
    assert [(view, text.split("</strong>")[0]) for view, text in said] == [
        ("api", "<strong>Not ranked until the pack is fixed.")
    ]
    text = said[0][1]
    assert WITHHELD["spec1-ticketing-api"] + ": cross-validated AUROC " in text
    assert "top features: " in text and "verifier/blindness/ticketing.json" in text


@pytest.mark.parametrize("pack", sorted(PACK_SUBSTRATES))
def test_each_arm_has_its_substrate_view_equal_to_a_recomputation(
    shipped: dict[str, Any], pack: str
) -> None:
    (group,) = shipped["groups"][pack]
    substrates = PACK_SUBSTRATES[pack]
    views = {s["system"]: s for s in group["across_substrates"]}
    assert set(views) == set(ARMS)
    for arm, view in views.items():
        assert set(view["substrates"]) == set(substrates)
        rows = [r for bundle in _bundles(pack, arm) for r in jsonl_rows(bundle)]
        assert len(view["differences"]) == len(substrates) * (len(substrates) - 1) // 2
        for pair in view["differences"]:
            first, second = pair["first"], pair["second"]
            on_first, on_second = paired(rows, first, second)
            assert on_first.n_tasks == on_second.n_tasks == SHARED_TASKS[pack]
            for rate in WRONG_RATES:
                d = rate_difference(on_first, on_second, rate)
                got = pair[rate]
                assert got["tasks"] == d.tasks, (arm, first, second, rate)
                for key, want in (("difference", d.difference), ("lo", d.lo), ("hi", d.hi)):
                    assert got[key] == pytest.approx(want, abs=1e-6), (arm, first, second, rate)


def _bundles(pack: str, arm: str) -> list[Path]:
    """The shipped bundles of system ``arm`` on ``pack`` (read from their own submission.json)."""
    out = []
    for bundle in sorted(REFERENCE.iterdir()):
        if (bundle / "submission.json").is_file():
            sub = json.loads((bundle / "submission.json").read_text(encoding="utf-8"))
            fresh = (sub.get("instances") or {}).get("seed") == REFERENCE_FRESH_SEED
            if sub["pack"]["name"] == pack and sub["system"]["name"] == arm and not fresh:
                out.append(bundle)
    return out


def _fresh_bundles() -> dict[str, Path]:
    """Each arm's shipped reference on the fresh instance of the generated clinic."""
    out = {}
    for bundle in sorted(REFERENCE.iterdir()):
        if (bundle / "submission.json").is_file():
            sub = json.loads((bundle / "submission.json").read_text(encoding="utf-8"))
            if (sub.get("instances") or {}).get("seed") == REFERENCE_FRESH_SEED:
                out[sub["system"]["name"]] = bundle
    return out


def test_the_generated_api_board_shows_no_delta_from_uncommitted_fresh_runs(
    shipped: dict[str, Any],
) -> None:
    """Each arm ran the generated clinic's API on the public dev seed and on a fresh instance
    whose seed was not committed (a shipped reference has no production transparency-log
    commitment): those entries are shown as uncommitted and measure no contamination delta,
    since only committed fresh instances count, and the page says why."""
    (board,) = [b for b in shipped["boards"]["clinic-generated"] if b["substrate"] == "api"]
    # the shipped fresh runs were not committed before they ran: no delta, said on the board
    assert board["contamination"] == []
    # one row per system: each fresh run is a column of its public-seed row, never a row
    labels = [e["label"] for e in board["entries"]]
    assert len(labels) == len(set(labels)) == len(ARMS) + 1  # and the careful arm's row
    fresh = _fresh_bundles()
    assert set(fresh) == set(ARMS)
    assert not {b.name for b in fresh.values()} & {e["slug"] for e in board["entries"]}
    page = (shipped["out"] / "index.html").read_text(encoding="utf-8")
    said = re.findall(r"<p data-eb-contamination>(.*?)</p>", page, re.S)
    assert said == [
        "No contamination delta: no fresh instance on this board was committed "
        "before its run (an uncommitted seed was the submitter's to choose), and "
        "only committed ones count."
    ]


def test_the_packs_page_sets_each_arm_on_both_systems_of_record(shipped: dict[str, Any]) -> None:
    """Each arm on the packs page, once per pack and substrate its references ran (the MockMed
    anchor left out), each cell counting its own bundle's rows."""
    systems = shipped["packs"].systems
    assert set(systems) == {*ARMS, "look_before_write"}  # the careful arm: the API only
    assert {(b, s) for b, s, _ in systems["look_before_write"]} == {
        (f"spec1-{p}", "api") for p in PACK_SUBSTRATES
    }
    for arm in ARMS:
        cells = systems[arm]
        assert {(b, s) for b, s, _ in cells} == {
            (f"spec1-{p}", s) for p, subs in PACK_SUBSTRATES.items() for s in subs
        }
        for pack in PACK_SUBSTRATES:
            for bundle in _bundles(pack, arm):
                (substrate,) = {r["substrate"] for r in jsonl_rows(bundle)}
                results = json.loads((bundle / "submission.json").read_text())["results"]
                for rate in ("swer", "over_halt"):
                    cell = cells[(f"spec1-{pack}", substrate, rate)]
                    got = (int(cell["data-k"]), int(cell["data-n"]))
                    want = (results[rate]["numerator"], results[rate]["denominator"])
                    assert got == want, (arm, bundle.name, rate)


@pytest.mark.parametrize("pack", sorted(PACK_SUBSTRATES))
def test_the_substrate_order_is_specs(shipped: dict[str, Any], pack: str) -> None:
    order = [s.value for s in Substrate]
    (group,) = shipped["groups"][pack]
    for view in group["across_substrates"]:
        for pair in view["differences"]:  # the later in SPEC order first
            assert order.index(pair["first"]) > order.index(pair["second"])
