"""Each pack's published blindness record (``verifier/blindness/``), and what reads it.

The record is what ``make generate`` wrote from the audit of ``pack check``, bound to the digest
of what the audit reads; a changed pack makes it stale without any audit being run. ``rank``
(like the site) shows the board of a pack whose record names a leak on its substrate without
ranks, saying the finding: today the ticketing pack's API board.
"""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import pytest

import verifier.blindness as blindness
from effectbench.cli import main
from effectbench.packs import get_pack
from effectbench.seam import Closable
from effectbench.variants import choose

ROOT = Path(__file__).resolve().parents[1]
TICKETING_API = sorted(
    p
    for p in (ROOT / "submissions").iterdir()
    if p.name.startswith("2026-12-02_") and p.name.endswith("-ticketing")
)


def test_each_core_pack_has_a_current_record_naming_its_leaks() -> None:
    for name in ("clinic", "clinic-generated", "mockmed-anchor"):
        pack = get_pack(name)
        try:
            text = blindness.current_record(pack)
            substrates = [s.value for s in choose(pack, None)]  # the pack's own: MockMed's web
        finally:
            if isinstance(pack, Closable):
                pack.close()
        assert text is not None, f"{name}: stale or absent record: run make generate"
        record = json.loads(text)
        assert record["pack"] == name and record["substrates"] == substrates
        leaking = [t for t in record["targets"] if t["auroc"] is not None and t["auroc"] > 0.65]
        assert record["leaks"] == leaking
        assert blindness.leaks_of(name) == tuple(
            blindness.Leak(
                t["target"], t["substrate"], t["auroc"], 0.65, t["model"], tuple(t["top_features"])
            )
            for t in leaking
        )


def test_a_changed_pack_makes_its_record_stale_without_an_audit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record whose digest is not the pack's own is stale: ``records`` gives "" for it (what
    ``generate --check`` compares) and audits nothing; the record's leaks are still read."""
    shutil.copy(blindness.record_path("clinic"), tmp_path / "clinic.json")
    record = json.loads((tmp_path / "clinic.json").read_text())
    record["inputs"] = "0" * 64
    (tmp_path / "clinic.json").write_text(json.dumps(record))
    monkeypatch.setattr(blindness, "BLINDNESS_DIR", tmp_path)

    def no_audit(pack: object) -> str:
        raise AssertionError("the check ran an audit")

    monkeypatch.setattr(blindness, "record_text", no_audit)
    assert blindness.records()["clinic"] == ""


@pytest.mark.postgres
def test_rank_withholds_the_ticketing_api_board(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its record names C3 on the API: every row is placed by the default order and none is
    ranked, and the board says the finding instead."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert len(TICKETING_API) == 3, TICKETING_API
    (leak,) = blindness.leaks_of("ticketing")
    assert leak.substrate == "api" and leak.target == "C3_optimistic_then_reject"
    assert main(["rank", *map(str, TICKETING_API), "--json"]) == 0
    (board,) = json.loads(capsys.readouterr().out)
    assert board["board"] == "spec1-ticketing-api"
    assert board["withheld"] == [leak.text()]
    assert {r["status"] for r in board["rows"]} == {"withheld"}
    assert {(r["rank_best"], r["rank_worst"]) for r in board["rows"]} == {(None, None)}
    assert board["family"]["ranked"] == 0
    assert main(["rank", *map(str, TICKETING_API)]) == 0
    out = capsys.readouterr().out
    assert (
        f"not ranked until the pack is fixed: its blindness record (SPEC 5.3) finds {leak.text()}"
        in out
    )
    rows = [line for line in out.splitlines() if ": net value " in line]
    assert len(rows) == 3 and all(line.split()[0] == "-" for line in rows), rows


@pytest.mark.postgres
@pytest.mark.site
@pytest.mark.slow
def test_the_site_shows_the_ticketing_api_board_unranked_with_its_finding(tmp_path: Path) -> None:
    """A real build of the three shipped ticketing API bundles (judged by their maintainers'
    reproduction records): the board says the finding above its table, its rows carry no rank
    in the page or in ``leaderboard.json``, and its re-ranking data marks them withheld (the
    browser ranks only ``ranked`` rows)."""
    from support.site import RECORDS

    from effectbench.site import build_site

    subs = tmp_path / "subs"
    for bundle in TICKETING_API:
        shutil.copytree(bundle, subs / bundle.name)
    out = tmp_path / "public"
    build_site(subs, out, root=ROOT, cache_dir=tmp_path / "cache", records=RECORDS)
    (leak,) = blindness.leaks_of("ticketing")
    page = (out / "index.html").read_text(encoding="utf-8")
    said = re.findall(r'<p class="eb-withheld"[^>]*>(.*?)</p>', page, re.S)
    assert len(said) == 1 and said[0].startswith("<strong>Not ranked until the pack is fixed.")
    assert leak.text() in html.unescape(said[0])
    doc = json.loads((out / "downloads" / "leaderboard.json").read_text(encoding="utf-8"))
    (board,) = doc["boards"]
    assert board["key"] == "spec1-ticketing-api" and board["withheld"] == [leak.text()]
    assert {(e["status"], e["rank_best"]) for e in board["entries"]} == {("withheld", None)}
    script = (out / "boards" / "spec1-ticketing.js").read_text(encoding="utf-8")
    assert script.count('"status":"withheld"') == 3 and '"status":"ranked"' not in script
