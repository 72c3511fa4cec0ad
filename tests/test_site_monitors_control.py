"""The monitors page reads like the control literature for the three shipped reference monitors
(issue 53): recall at 1% and 5% false-positive rate, g-mean squared, subtle and obvious silent
wrong effects and held-out-family recall, each shown as recomputed here by brute force from the
bundle's own scores and the corpus's labels.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from html import unescape

import numpy as np
from markupsafe import Markup
from support.monitors import bundle_scores
from support.site import ROOT

from effectbench.metrics.detection import FPR_TARGETS
from effectbench.monitors.corpus import read_corpus
from effectbench.packs import get_pack
from effectbench.schema import Split
from effectbench.site._monitors import (
    MonitorBoard,
    _order,
    _place,
    dev_facts,
    monitor_cells_chart,
    monitors_page,
    roc_chart,
)
from effectbench.site._pages import ChartArt
from verifier.monitors import verify_monitor
from verifier.pack import clusters_of, pack_tasks


def _families() -> dict[str, str]:
    """Each public task's template, from the packs the corpus's sources ran."""
    lock = json.loads((ROOT / "monitors" / "corpus.lock.json").read_text(encoding="utf-8"))
    out: dict[str, str] = {}
    for name in sorted(
        {
            json.loads((ROOT / s["folder"] / "submission.json").read_text(encoding="utf-8"))[
                "pack"
            ]["name"]
            for s in lock["sources"]
        }
    ):
        out.update(clusters_of(pack_tasks(get_pack(name), "dev")) or {})
    return out


def _cell(html: str, slug: str, metric: str) -> str:
    table = re.search(r'<table class="eb-table" id="eb-monitors-control">(.*?)</table>', html, re.S)
    assert table is not None
    row = re.search(rf'<tr data-monitor="{re.escape(slug)}">(.*?)</tr>', table.group(1), re.S)
    assert row is not None, slug
    cell = re.search(rf'<td data-metric="{re.escape(metric)}">(.*?)</td>', row.group(1), re.S)
    assert cell is not None, metric
    return unescape(re.sub(r"<[^>]+>", " ", cell.group(1))).strip()


def test_the_three_reference_monitors_show_the_control_figures() -> None:
    corpus = read_corpus(ROOT / "monitors" / "corpus", check_frames=False)
    dev = corpus.labels(Split.DEV)
    assert dev is not None
    families = _families()
    assert len(set(families.values())) > 5  # templates, not one family per task
    facts = dev_facts(corpus.views, dev, families)
    board = MonitorBoard(corpus=corpus.ref, episodes=len(corpus.views))
    ids = [v.id for v in corpus.views]
    bundles = sorted((ROOT / "monitors" / "bundles").iterdir())
    for bundle in bundles:
        _place(board, bundle, verify_monitor(bundle, corpus.ref, ids, [dev]), dev, facts, {}, set())
    board.rows.sort(key=_order)
    art = ChartArt(Markup("<svg></svg>"), Markup(""))  # the drawings are not what is tested
    roc = roc_chart("monitors-roc", board.rows)
    cells = monitor_cells_chart("monitors-cells", board.rows, board.cells)
    html = monitors_page(ROOT / "site" / "templates", board, roc, art, cells, art).body
    assert 'id="control"' in html
    labels = np.array([e.label for e in dev.episodes])
    for bundle in bundles:
        scores = bundle_scores(bundle)
        s = np.array([scores[e.id] for e in dev.episodes])
        pos, neg = s[labels == "positive"], s[labels == "negative"]
        cuts = {}
        for name, target in FPR_TARGETS:  # brute force: the lowest cut within the target
            allowed = [
                c for c in np.unique(s) if Fraction(int((neg > c).sum()), len(neg)) <= target
            ]
            cuts[name] = min(allowed)
            shown = _cell(html, bundle.name, f"control-recall-{name}")
            assert shown == f"{100 * float((pos > cuts[name]).mean()):.1f}%", (bundle.name, shown)
        g2 = float((pos > cuts["5%"]).mean()) * float((neg <= cuts["5%"]).mean())
        assert _cell(html, bundle.name, "g-mean-squared") == f"{g2:.3f}"
        for metric in ("subtle", "obvious", "held-out-families", "in-family"):
            assert re.match(r"\d+\.\d%", _cell(html, bundle.name, metric)), metric
