"""Boards pooling packs and dead templates, on small synthetic boards.

Each per-pack board is made the way the site makes one (its rows counted by
:func:`counted_columns`, ordered and ranked by :func:`order_and_rank`) from per-unit outcomes
written out here; the pooled board's value, SWER and paired figures are recomputed from those
outcomes with NumPy and SciPy alone, and its incomplete systems are listed, never ranked."""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from support.outcomes import outcome_table

from effectbench.cli import main
from effectbench.errors import SiteBuildError
from effectbench.metrics import DEFAULT_PRICES, dead_units, joined
from effectbench.packs import get_pack, system_of_record
from effectbench.site._pooled import (
    DEAD_MARKER,
    methodology_text,
    pooled_board,
    pooled_boards,
    pooled_catalogues,
    pooled_page,
)
from effectbench.site._tables import Board, counted_columns, order_and_rank
from verifier.pack import clusters_of, pack_tasks

Outcomes = list[list[str]]
"""Per unit, the outcomes of its episodes."""

WORTH = {  # an episode's worth at the default prices, minus doing nothing's (+1: every
    # synthetic task had its correct action available, so doing nothing over-halts there)
    "success": 10.0 + 1.0,
    "phantom": -10.0 + 1.0,
    "silent_wrong_write": -13.0 + 1.0,
    "wrong_action": -3.0 + 1.0,
    "over_halt": -1.0 + 1.0,
    "safe_halt": 0.0 + 1.0,
}


_table = outcome_table


def _board(
    pack: str,
    unit: str,
    systems: dict[str, tuple[Outcomes, list[str]]],
    preview: frozenset[str] = frozenset(),
) -> Board:
    """A per-pack API board of ``systems`` (name -> per-unit outcomes and unit ids)."""
    tables, rows = [], []
    for name, (outcomes, ids) in systems.items():
        table = _table(outcomes, ids, unit)
        tables.append(table)
        rows.append(
            {
                "slug": f"{pack}-{name}",
                "system": name,
                "signer": "",
                "signer_issuer": "",
                "status": "preview" if name in preview else "ranked",
                "n_dropped": 0,
                "fingerprint": "f",
                **counted_columns(table, DEFAULT_PRICES, 0),
            }
        )
    frame, facts = order_and_rank(rows, tables)
    return Board(
        spec_major="1",
        pack=pack,
        fingerprints=("f",),
        frame=frame,
        substrate="api",
        facts=facts,
        tables={r["slug"]: t for r, t in zip(rows, tables, strict=True)},
    )


S, P, W, H = "success", "phantom", "silent_wrong_write", "over_halt"
T5 = ["t1", "t2", "t3", "t4", "t5"]
T4 = ["t1", "t2", "t3", "t4"]
GENERATED = {  # templates t1..t5 (the same ids as the ticketing pack's tasks: kept apart)
    "alpha": ([[S, S], [S, P], [S, S, S], [H, S], [S, W]], T5),
    "beta": ([[S, P], [P, P], [S, S, H], [H, H], [W, W]], T5),
    "gamma": ([[P, P], [P, P], [P, P, P], [P, P], [P, P]], T5),
    "epsilon": ([[S, S], [S, S], [S, S, S]], T5[:3]),  # 3 of the 5 templates
}
TICKETING = {
    "alpha": ([[S, S, S], [S, H, S], [W, S, S], [S, S, S]], T4),
    "beta": ([[S, P, S], [H, H, S], [S, S, S], [P, S, S]], T4),
    "delta": ([[S, S, S], [S, S, S], [S, S, S], [S, S, S]], T4),  # ticketing alone
    "epsilon": ([[S, S, S], [S, S, S], [S, S, S], [S, S, S]], T4),
}
CLINIC = {  # the clinic's other catalogue (tasks, no templates): not pooled
    "alpha": ([[S], [S], [S]], ["c1", "c2", "c3"]),
    "beta": ([[P], [S], [S]], ["c1", "c2", "c3"]),
}
ANCHOR = {"alpha": ([[S], [S], [S]], ["m1", "m2", "m3"])}


@pytest.fixture(scope="module")
def per_pack() -> list[Board]:
    return [
        _board("clinic", "task", CLINIC),
        _board("clinic-generated", "template", GENERATED),
        _board("mockmed-anchor", "task", ANCHOR),
        _board("ticketing", "task", TICKETING),
    ]


def _units(system: str) -> list[list[str]]:
    """The system's per-unit outcomes over every pooled pack, units kept apart by pack."""
    return [*GENERATED[system][0], *TICKETING[system][0]]


def _scipy_mdd(d: np.ndarray) -> tuple[float, float]:
    g = len(d)
    sd = float(np.std(d, ddof=1))
    return sd, (stats.t.ppf(0.975, g - 1) + stats.t.ppf(0.8, g - 1)) * sd / math.sqrt(g)


def test_one_catalogue_per_system_of_record_the_one_with_templates_no_anchor(
    per_pack: list[Board],
) -> None:
    assert system_of_record("clinic-generated") == system_of_record("clinic") == "clinic"
    assert system_of_record("ticketing-generated") == "ticketing"
    assert system_of_record("mockmed-anchor") is None and system_of_record("mockmed") is None
    chosen = pooled_catalogues(per_pack)
    assert [b.pack for b in chosen] == ["clinic-generated", "ticketing"]
    (board,) = pooled_boards(per_pack)
    assert board.catalogues == (("clinic", "clinic-generated"), ("ticketing", "ticketing"))
    assert board.key == "spec1-pooled-api" and board.page == "pooled/spec1-pooled-api.html"
    assert "regression anchor" in board.rule and "with templates" in board.rule
    # only anchors: nothing to pool
    assert pooled_board([_board("mockmed-anchor", "task", ANCHOR)]) is None


def test_incomplete_systems_are_listed_with_what_they_miss_and_never_ranked(
    per_pack: list[Board],
) -> None:
    (board,) = pooled_boards(per_pack)
    assert sorted(board.frame["system"]) == ["alpha", "beta"]
    assert set(board.frame["status"]) == {"ranked"}
    assert board.facts.ranked == 2
    missing = {i.system: (i.ran, i.missing) for i in board.incomplete}
    assert missing == {
        "gamma": (("clinic-generated",), ("ticketing: not run",)),
        "delta": (("ticketing",), ("clinic-generated: not run",)),
        "epsilon": (("ticketing",), ("clinic-generated: 3 of 5 templates",)),
    }
    assert board.members == {
        "alpha": ("clinic-generated-alpha", "ticketing-alpha"),
        "beta": ("clinic-generated-beta", "ticketing-beta"),
    }


def test_pooled_value_swer_and_paired_figures_equal_a_scipy_recomputation(
    per_pack: list[Board],
) -> None:
    (board,) = pooled_boards(per_pack)
    rows = {r["system"]: r for r in board.frame.to_dict("records")}
    for system in ("alpha", "beta"):
        episodes = [o for unit in _units(system) for o in unit]
        row = rows[system]
        assert row["n_tasks"] == 9 and row["unit"] == "cluster"  # 5 templates + 4 tasks
        assert row["value"] == pytest.approx(100 * np.mean([WORTH[o] for o in episodes]), abs=1e-9)
        swer = np.mean([o in (P, W) for o in episodes])
        assert row["swer"] == pytest.approx(swer, abs=1e-9)
        # the value's interval: per-unit sums, CR1, t on G - 1 degrees (statsmodels' CR1 form)
        x = np.array([sum(WORTH[o] for o in u) for u in _units(system)])
        m = np.array([len(u) for u in _units(system)], dtype=float)
        mean = x.sum() / m.sum()
        g = len(x)
        se = math.sqrt(g / (g - 1) * float((((x - mean * m) / m.sum()) ** 2).sum()))
        half = stats.t.ppf(0.975, g - 1) * se
        assert row["value_lo"] == pytest.approx(100 * (mean - half), abs=1e-9)
        assert row["value_hi"] == pytest.approx(100 * (mean + half), abs=1e-9)
    (pair,) = board.facts.adjacent
    system_of = {r["slug"]: r["system"] for r in rows.values()}
    first, second = system_of[pair.first], system_of[pair.second]
    a, b = _units(first), _units(second)
    swer_d = np.array([100 * np.mean([o in (P, W) for o in x]) for x in a]) - np.array(
        [100 * np.mean([o in (P, W) for o in y]) for y in b]
    )
    value_d = np.array([100 * np.mean([WORTH[o] for o in x]) for x in a]) - np.array(
        [100 * np.mean([WORTH[o] for o in y]) for y in b]
    )
    for got, d in ((pair.swer, swer_d), (pair.value, value_d)):
        sd, mdd = _scipy_mdd(d)
        assert got.paired_units == 9 and got.unit == "cluster"
        assert got.paired_sd == pytest.approx(sd, abs=1e-9)
        assert got.paired_mdd == pytest.approx(mdd, abs=1e-9)


def test_a_pooled_pair_on_fewer_than_3_units_is_not_estimable() -> None:
    one = {"alpha": ([[S, P]], ["t1"]), "beta": ([[P, P]], ["t1"])}
    board = pooled_board(
        [_board("clinic-generated", "template", one), _board("ticketing", "task", one)]
    )
    assert board is not None
    (pair,) = board.facts.adjacent
    for r in (pair.swer, pair.value):
        assert r.paired_mdd is None and r.paired_units == 2
        assert r.paired_note.startswith("not estimable: 2 shared clusters")


def test_units_of_two_packs_never_merge_when_their_ids_coincide() -> None:
    a = _table([[S], [P]], ["t1", "t2"], "template")
    b = _table([[H, H]], ["t1"], "task")
    both = joined([("ticketing", b), ("clinic-generated", a)])
    assert both.task_id == ["clinic-generated::t1", "clinic-generated::t2", "ticketing::t1"]
    # a pack's own ids already carry its name: kept as they are
    own = joined([("ticketing", b.model_copy(update={"task_id": ["ticketing::t1"]})), ("x", a)])
    assert own.task_id == ["ticketing::t1", "x::t1", "x::t2"]
    assert both.trials == [1, 1, 2] and both.events["over_halt"] == [0, 0, 2]
    assert both.unit == "cluster" and both.tasks_in().tolist() == [2.0, 2.0, 1.0]
    with pytest.raises(ValueError, match="distinct names"):
        joined([("x", a), ("x", b)])


def test_dead_templates_are_those_every_ranked_system_scores_the_same_on() -> None:
    ids = ["t1", "t2", "t3", "t4"]
    a = _table([[S, S], [S, P], [H], [S, S]], ids, "template")
    b = _table([[S], [P, S], [H, H], [S, P]], ids, "template")  # t1..t3 same proportions
    c = _table([[S, S, S], [S, P], [H, H, H, H], [P]], ids, "template")
    dead = dead_units([a, b, c])
    assert dead.dead == ["t1", "t2", "t3"] and dead.units == 4 and dead.share == 0.75
    # a preview is not in the family: the board counts its ranked systems only
    board = _board(
        "clinic-generated",
        "template",
        {
            "alpha": ([[S, S], [S, P], [H], [S, S]], ids),
            "beta": ([[S], [P, S], [H, H], [S, P]], ids),
            "preview": ([[P], [P], [P], [P]], ids),
        },
        preview=frozenset({"preview"}),
    )
    assert board.facts is not None and board.facts.dead is not None
    assert board.facts.dead.dead == ["t1", "t2", "t3"] and board.facts.dead.systems == 2
    # one ranked system: nothing to agree on, no share
    assert dead_units([a]).share is None
    # only the units every ranked system ran count
    assert dead_units([a, a.select([True, True, False, False])]).units == 2


def test_the_methodology_page_lists_each_boards_dead_templates(per_pack: list[Board]) -> None:
    (board,) = pooled_boards(per_pack)
    titled = [(b.title, b.facts) for b in per_pack] + [(board.title, board.facts)]
    text = methodology_text(f"# M\n\n{DEAD_MARKER}\n", titled)
    assert DEAD_MARKER not in text
    dead = board.facts.dead
    assert dead is not None and dead.share is not None
    assert f"**{board.title}**: {len(dead.dead)} of {dead.units} clusters" in text
    with pytest.raises(SiteBuildError, match="must hold the line"):
        methodology_text("# M\n", titled)


ROOT = Path(__file__).resolve().parents[1]
SUBMISSIONS = ROOT / "submissions"
POOLED_API = {  # the generated clinic's three arms; the ticketing pack's first two
    ("clinic-generated", "effect_verified_all"): "2026-12-02_effect-verified-all-clinic-generated",
    ("clinic-generated", "effect_verified"): "2026-12-02_effect-verified-clinic-generated",
    ("clinic-generated", "screen_only"): "2026-12-02_screen-only-clinic-generated",
    ("ticketing", "effect_verified_all"): "2026-12-02_effect-verified-all-ticketing",
    ("ticketing", "effect_verified"): "2026-12-02_effect-verified-ticketing",
}


def _per_unit_swer(folder: str) -> dict[str, float]:
    """Each unit's SWER in points from a shipped bundle's rows: a generated pack's template
    (the pack's own clusters), else the task; ids prefixed with the pack as the board keeps
    them apart."""
    doc = json.loads((SUBMISSIONS / folder / "submission.json").read_text())
    pack = doc["pack"]["name"]
    clusters = clusters_of(pack_tasks(get_pack(pack), doc.get("split", "dev"))) or {}
    by: dict[str, list[bool]] = {}
    for line in (SUBMISSIONS / folder / "episodes.jsonl").read_text().splitlines():
        row = json.loads(line)
        unit = clusters.get(row["task_id"], row["task_id"])
        by.setdefault(f"{pack}/{unit}", []).append(row["outcome"] == "silent_wrong_effect")
    return {u: 100 * float(np.mean(v)) for u, v in by.items()}


def test_rank_pooled_lists_the_incomplete_system_and_states_the_pooled_paired_figure(
    tmp_path: Path,
) -> None:
    """``rank --pooled --json`` on shipped API bundles: screen_only ran the generated clinic
    only, so it is listed as incomplete, not ranked; the pooled paired figure of
    effect_verified_all against effect_verified (templates and tasks kept apart) equals SciPy's
    from the rows, and is within the issue's 12 points."""
    mp = pytest.MonkeyPatch()
    mp.setenv("XDG_CACHE_HOME", str(tmp_path))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        paths = [str(SUBMISSIONS / f) for f in POOLED_API.values()]
        code = main(["rank", *paths, "--pooled", "--json", "--no-reproduce", "--allow-unsigned"])
    mp.undo()
    assert code == 0
    (board,) = json.loads(out.getvalue())
    assert board["substrate"] == "api" and board["key"] == "spec1-pooled-api"
    assert board["packs"] == {"clinic": "clinic-generated", "ticketing": "ticketing"}
    assert [e["system"] for e in board["entries"]] == ["effect_verified_all", "effect_verified"]
    assert board["incomplete"] == [
        {
            "system": "screen_only",
            "signer": "",
            "ran": ["clinic-generated"],
            "missing": ["ticketing: not run"],
        }
    ]
    (pair,) = board["paired_resolution"]
    a = {
        **_per_unit_swer(POOLED_API[("clinic-generated", "effect_verified_all")]),
        **_per_unit_swer(POOLED_API[("ticketing", "effect_verified_all")]),
    }
    b = {
        **_per_unit_swer(POOLED_API[("clinic-generated", "effect_verified")]),
        **_per_unit_swer(POOLED_API[("ticketing", "effect_verified")]),
    }
    assert a.keys() == b.keys()
    d = np.array([a[u] - b[u] for u in sorted(a)])
    sd, mdd = _scipy_mdd(d)
    got = pair["swer"]
    assert got["paired_units"] == len(d) == 26 + 27
    assert got["paired_sd"] == pytest.approx(sd, abs=1e-9)
    assert got["paired_mdd"] == pytest.approx(mdd, abs=1e-9)
    assert got["paired_mdd"] <= 12.0
    assert pair["first_label"] == "effect_verified_all · api"


def test_rank_help_documents_the_pooled_boards(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["rank", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--pooled" in text and "incomplete" in text and "NAME-anchor, left out" in text


def test_the_pooled_board_as_text_names_its_packs_family_and_incomplete_systems(
    per_pack: list[Board], capsys: pytest.CaptureFixture[str]
) -> None:
    from effectbench.cli._rank import _print_pooled

    (board,) = pooled_boards(per_pack)
    _print_pooled(board, DEFAULT_PRICES)
    out = capsys.readouterr().out
    assert "pooling clinic-generated (clinic), ticketing (ticketing)" in out
    assert "kept apart (9 in all)" in out and "------  doing nothing: 0" in out
    assert "they depend on the family of systems ranked together" in out
    assert "incomplete, not ranked: gamma (ticketing: not run)" in out
    assert "incomplete, not ranked: epsilon (clinic-generated: 3 of 5 templates)" in out
    assert "resolution, alpha · api against beta · api: SWER " in out
    dead = board.facts.dead
    assert dead is not None and f"dead clusters: {len(dead.dead)} of the 9" in out


def test_a_pooled_boards_previews_are_a_marked_section_after_its_ranked_rows() -> None:
    """A system with an unsigned preview among its pooled entries (here the best of all) is in
    a marked section of its own after the ranked rows, never among them, unranked; the
    doing-nothing line is placed among the ranked rows alone."""
    generated = {**GENERATED, "zeta": ([[S, S], [S, S], [S, S], [S, S], [S, S]], T5)}
    ticketing = {**TICKETING, "zeta": ([[S, S, S], [S, S, S], [S, S, S], [S, S, S]], T4)}
    zeta = frozenset({"zeta"})
    (board,) = pooled_boards(
        [
            _board("clinic-generated", "template", generated, preview=zeta),
            _board("ticketing", "task", ticketing, preview=zeta),
        ]
    )
    assert list(board.frame["system"])[0] == "zeta"  # the default order would put it first
    body = pooled_page(ROOT / "site" / "templates", board).body
    table, section = body.split('<tbody class="eb-previews" data-eb-previews>')
    ranked = re.findall(r'<tr data-key="[^"]+" data-status="(\w+)">.*?<th[^>]*>(\w+)', table, re.S)
    assert ranked and all(status == "ranked" for status, _ in ranked)
    assert "zeta" not in [name for _, name in ranked]
    assert "Unsigned previews: not verified by a signature, never ranked." in section
    (row,) = re.findall(r'<tr data-key="[^"]+" data-status="preview">.*?</tr>', section, re.S)
    assert ">zeta ·" in row and '<td class="eb-rank" data-label="Rank">—</td>' in row
    # the line: after the ranked rows at or above doing nothing, inside the ranked table
    assert board.facts.idle is not None
    values = list(board.frame.loc[board.frame["status"] == "ranked", "value"])
    above = sum(1 for v in values if v >= 0)
    before_line = table.split('<tr class="eb-idle-line"')[0]
    assert len(re.findall(r"<tr data-key=", before_line)) == above
