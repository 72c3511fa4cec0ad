"""The site build never loses a user's files, never trusts a planted cache, and never stops
on a hostile name; its boards follow the ranking rules (one per pack and split, copies and
withdrawals by content hash). Every case is a real build or a real process."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.bundles import make_bundle, read_rows, read_submission, write_submission
from support.site import site_root

from effectbench import SPEC_VERSION
from effectbench.baselines import get_baseline
from effectbench.bundle import Submission
from effectbench.cli import main
from effectbench.manifest import fingerprint
from effectbench.metrics import episode_frame, summarize
from effectbench.packs import get_pack
from effectbench.produce import write_submission as write_bundle_folder
from effectbench.run.runner import evaluate
from effectbench.site import build_site
from effectbench.site._outdir import MARKER, locked
from effectbench.site._reports import verify_submissions
from effectbench.variants import choose, tasks_on
from verifier.api import verify_path
from verifier.ranking import rank_across
from verifier.references import bundle_content_hash
from verifier.report import Status

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "submissions"
FORMULA = '=HYPERLINK("http://evil.example","click")'
ESC_NAME = "red\x1b[31m alert"


def _snapshot(root: Path) -> dict[str, str]:
    out = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        out[rel] = p.read_bytes().hex()[:64] if p.is_file() else "dir"
    return out


def _clinic_test_split(folder: Path) -> Path:
    """A preview bundle of the clinic's sequestered test split (a board of its own)."""
    pack = get_pack("clinic")
    tasks = tasks_on(pack, choose(pack, None), "test")
    run = evaluate(get_baseline("effect_verified", pack), pack, trials=3, tasks=tasks)
    sub = Submission.model_validate(
        {
            "spec_version": SPEC_VERSION,
            "system": {"name": "Test-split agent"},
            "pack": {
                "name": pack.name,
                "fingerprint": fingerprint(pack.manifest()),
                "split": "test",
            },
            "trials_per_task": 3,
            "seeds": [0, 1, 2],
            "environment": {"python": "3.11", "platform": "test"},
            "results": summarize(episode_frame(run.rows)),
        }
    )
    return write_bundle_folder(folder, sub, run.rows)


def _rename(bundle: Path, system: str, **pack: str) -> None:
    data = read_submission(bundle)
    data["system"]["name"] = system
    data["pack"].update(pack)
    write_submission(bundle, data)


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One folder of bundles, each a case, and one real build of it (previews allowed)."""
    base = tmp_path_factory.mktemp("site-safety")
    subs = base / "submissions"
    subs.mkdir()
    reference = next(REFERENCE.glob("*_screen-only"))
    shutil.copytree(reference, subs / reference.name)  # listed: ranked by its re-run
    alias = make_bundle(subs / "2026-03-01_alias", "retry_on_error", declare_baseline=False)
    _rename(alias, "Alias agent", name="mockmed")  # the CLI name of mockmed-anchor
    formula = make_bundle(subs / "2026-03-02_formula", "always_halt", declare_baseline=False)
    _rename(formula, FORMULA)
    copy = subs / "2026-01-01_formula-copy"  # byte-identical copy, backdated folder name
    shutil.copytree(formula, copy)
    hostile = make_bundle(subs / "2026-03-03_hostile", "screen_only", declare_baseline=False)
    _rename(hostile, ESC_NAME)
    gone = make_bundle(
        subs / "2026-03-04_gone", "effect_verified", trials=4, declare_baseline=False
    )
    retimed = subs / "2026-03-05_gone-again"  # its rows re-timed: a row-identical copy
    shutil.copytree(gone, retimed)
    rows = read_rows(retimed)
    for r in rows:
        r["started_at"] = r["finished_at"] = "2026-03-05T00:00:00+00:00"
    (retimed / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    _clinic_test_split(subs / "2026-03-06_test-split")
    withdrawn = [{"content_hash": bundle_content_hash(gone), "reason": "asked by the submitter"}]
    root = site_root(base, withdrawn)
    out = base / "public"
    summary = build_site(subs, out, root=root, cache_dir=base / "cache", allow_unsigned=True)
    return {"base": base, "subs": subs, "root": root, "out": out, "summary": summary}


def _page(cases: dict[str, Any], name: str) -> str:
    return str((cases["out"] / name).read_text(encoding="utf-8"))


def test_one_board_per_pack_and_split_with_the_split_shown(cases: dict[str, Any]) -> None:
    index = _page(cases, "index.html")
    assert index.count('id="eb-board-spec1-mockmed-anchor"') == 1  # the alias joined it
    assert 'data-slug="2026-03-01_alias"' in index
    assert "mockmed-anchor · dev split · SPEC 1.x" in index
    assert 'id="eb-board-spec1-clinic-test"' in index and "clinic · test split" in index
    assert 'data-slug="2026-03-06_test-split"' in index


def test_n_and_dropped_beside_the_rates(cases: dict[str, Any]) -> None:
    assert "n 90 · 9 tasks · dropped 0" in _page(cases, "index.html")


def test_a_copy_is_not_ranked_twice(cases: dict[str, Any]) -> None:
    index = _page(cases, "index.html")
    shown = [s for s in ("2026-03-02_formula", "2026-01-01_formula-copy") if s in index]
    assert len(shown) == 1  # one of the two byte-identical bundles, never both
    assert "ranking.duplicate" in _page(cases, "refused.html")


def test_the_bundle_verified_first_wins_whatever_its_folder_says(
    cases: dict[str, Any], tmp_path: Path
) -> None:
    """A replayed copy in a backdated folder: the verified time decides, not the name."""
    subs = tmp_path / "submissions"
    for name in ("2026-03-02_formula", "2026-01-01_formula-copy"):
        shutil.copytree(cases["subs"] / name, subs / name)
    copy, original = verify_submissions(subs, allow_unsigned=True)  # sorted by folder name
    assert Path(copy.path).name == "2026-01-01_formula-copy"
    signed = {"status": Status.RANKED, "accepted": True}
    original = original.model_copy(update={**signed, "verified_at": "2026-03-02T10:00:00Z"})
    copy = copy.model_copy(update={**signed, "verified_at": "2026-03-09T08:00:00Z"})
    first, second = rank_across([copy, original])
    assert first.status.value == "refused" and "ranking.duplicate" in first.finding_ids()
    assert second.status is Status.RANKED


def test_withdrawal_by_content_hash_takes_its_row_identical_copy(cases: dict[str, Any]) -> None:
    index = _page(cases, "index.html")
    assert 'data-slug="2026-03-04_gone"' not in index
    assert 'data-slug="2026-03-05_gone-again"' not in index
    refused = _page(cases, "refused.html")
    withdrawn = refused[refused.index('id="eb-withdrawn"') :].replace("<wbr>", "")
    assert "2026-03-04_gone" in withdrawn and "2026-03-05_gone-again" in withdrawn
    assert cases["summary"].n_withdrawn == 1


def test_a_hostile_name_never_stops_the_build(cases: dict[str, Any]) -> None:
    refused = _page(cases, "refused.html")
    assert "structure.text" in refused and "2026-03-03_hostile" in refused
    assert not any("\x1b" in p.read_text(errors="replace") for p in cases["out"].rglob("*.html"))
    assert cases["summary"].n_ranked >= 1  # the other bundles were built


def test_whatever_text_reaches_a_chart_is_made_safe_first() -> None:
    """vl-convert aborts its whole process on an ESC in a label: none may reach it."""
    from effectbench.site._entries import shown
    from effectbench.site._render import render_chunk

    spec = {
        "data": {"values": [{"a": 1, "b": ESC_NAME + "\u202e" + "n" * 500}]},
        "mark": "bar",
        "encoding": {
            "x": {"field": "b", "type": "nominal"},
            "y": {"field": "a", "type": "quantitative"},
        },
    }
    (svg,) = render_chunk([json.dumps(spec).encode()])  # this process survives: sanitised
    assert svg.startswith("<svg") and "\x1b" not in svg
    assert shown(ESC_NAME) == "red\ufffd[31m alert"
    assert len(shown("n" * 200_000)) == 120


def test_csv_cells_never_start_a_formula(cases: dict[str, Any]) -> None:
    text = (cases["out"] / "downloads" / "leaderboard.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    systems = {r["system"] for r in rows}
    assert "'" + FORMULA in systems and FORMULA not in systems
    for row in rows:
        for value in row.values():
            assert not value.startswith(("=", "+", "@")), value
            assert not value.startswith("-") or _number(value), value


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_dates_come_from_verified_data_only(cases: dict[str, Any]) -> None:
    listed = json.loads((ROOT / "verifier" / "reference_bundles.json").read_text())
    index = _page(cases, "index.html")
    for entry in listed["bundles"]:
        if entry["folder"].endswith("_screen-only"):
            assert re.search(rf'data-col="date"[^>]*>{entry["date"]}</td>', index)
    # a preview's folder date is not shown
    assert not re.search(r'data-col="date"[^>]*>2026-03-02</td>', index)


# --------------------------------------------------------------------------- --out


@pytest.mark.parametrize("target", [".", "nonempty", "file", "submissions"])
def test_out_that_is_not_ours_is_refused_and_nothing_changes(
    cases: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    target: str,
) -> None:
    work = tmp_path / "work"
    shutil.copytree(cases["subs"] / "2026-03-02_formula", work / "submissions" / "2026-03-02_x")
    (work / ".git").mkdir()
    (work / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (work / "nonempty").mkdir()
    (work / "nonempty" / "notes.txt").write_text("mine\n")
    (work / "file").write_text("a file\n")
    monkeypatch.chdir(work)
    before = _snapshot(tmp_path)
    status = main(
        ["site", "build", "--submissions", "submissions", "--root", str(cases["root"]),
         "--out", target, "--cache-dir", str(tmp_path / "cache")]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "--out" in err, err
    assert _snapshot(tmp_path) == before


def test_a_previous_build_is_replaced_whole(cases: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "public"
    shutil.copytree(cases["out"], out)
    (out / "stale.html").write_text("from an older build\n")
    cache = cases["base"] / "cache"
    build_site(cases["subs"], out, root=cases["root"], cache_dir=cache, allow_unsigned=True)
    assert (out / MARKER).is_file() and (out / "index.html").is_file()
    assert not (out / "stale.html").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["public"]  # no staging left


_HOLD = """
import sys
from pathlib import Path
from effectbench.site._outdir import locked
with locked(Path(sys.argv[1])):
    print("held", flush=True)
    sys.stdin.read()
"""


def test_a_second_build_into_a_locked_folder_is_refused(
    cases: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "public"
    shutil.copytree(cases["out"], out)
    before = _snapshot(out)
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(out)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        status = main(
            ["site", "build", "--submissions", str(cases["subs"]), "--root", str(cases["root"]),
             "--out", str(out), "--allow-unsigned", "--cache-dir", str(cases["base"] / "cache")]
        )  # fmt: skip
        err = capsys.readouterr().err
        assert status == 2 and "another build" in err
        assert _snapshot(out) == before
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=60)
    with locked(out):  # released with the process
        pass


def test_two_concurrent_builds_never_leave_half_a_site(
    cases: dict[str, Any], tmp_path: Path
) -> None:
    out = tmp_path / "public"
    cmd = [sys.executable, "-m", "effectbench.cli", "site", "build", "--submissions",
           str(cases["subs"]), "--root", str(cases["root"]), "--out", str(out),
           "--allow-unsigned", "--workers", "1", "--cache-dir", str(tmp_path / "cache")]  # noqa: E501  # fmt: skip
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    results = [(p.wait(timeout=900), p.stderr.read() if p.stderr else "") for p in procs]
    assert all(code in (0, 2) for code, _ in results), results
    assert any(code == 0 for code, _ in results)
    for code, err in results:
        if code == 2:
            assert "another build" in err
    assert (out / MARKER).is_file() and (out / "index.html").is_file()
    assert (out / "refused.html").is_file() and (out / "downloads" / "leaderboard.csv").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "public"]


# --------------------------------------------------------------------------- caches


def test_a_planted_report_cache_is_never_trusted(cases: dict[str, Any], tmp_path: Path) -> None:
    subs = tmp_path / "submissions"
    shutil.copytree(cases["subs"] / "2026-03-03_hostile", subs / "2026-03-03_hostile")
    cache = tmp_path / "cache" / "reports"
    (honest,) = verify_submissions(subs, cache_dir=cache)
    assert honest.status.value == "refused"
    (entry,) = cache.glob("*.json")
    forged = honest.model_copy(update={"status": Status.RANKED, "accepted": True})
    entry.write_bytes(forged.model_dump_json().encode())  # planted: same key, no valid seal
    (again,) = verify_submissions(subs, cache_dir=cache)
    assert again.status.value == "refused"


def test_a_changed_file_set_is_verified_again(cases: dict[str, Any], tmp_path: Path) -> None:
    subs = tmp_path / "submissions"
    name = next(p.name for p in cases["subs"].iterdir() if p.name.endswith("_screen-only"))
    shutil.copytree(cases["subs"] / name, subs / name)
    cache = tmp_path / "cache" / "reports"
    (first,) = verify_submissions(subs, cache_dir=cache)
    assert first.status.value == "ranked"
    (subs / name / "empty").mkdir()  # an empty sub-folder: no file changed
    (second,) = verify_submissions(subs, cache_dir=cache)
    assert second.status.value == "refused"
    assert "structure.unexpected_file" in second.finding_ids()
    (subs / name / "empty").rmdir()
    os.mkfifo(subs / name / "pipe")  # a FIFO: never opened, but the file set changed
    (third,) = verify_submissions(subs, cache_dir=cache)
    assert third.status.value == "refused"


def test_the_default_cache_is_outside_the_repository(cases: dict[str, Any]) -> None:
    from effectbench.site._cache import cache_home
    from effectbench.site.build import BuildOptions

    options = BuildOptions(cases["subs"], cases["out"], ROOT)
    assert ROOT not in options.cache_root.parents
    assert options.cache_root == cache_home() / "site"


def test_site_build_help_names_the_cache_it_uses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The help once named ROOT/.cache/effectbench-site, a folder no build used."""
    from effectbench.site.build import BuildOptions

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    with pytest.raises(SystemExit):
        main(["site", "build", "--help"])
    help_text = "".join(capsys.readouterr().out.split())  # argparse wraps at a hyphen
    used = BuildOptions(tmp_path / "s", tmp_path / "o", ROOT).cache_root
    assert used == tmp_path / "xdg" / "effectbench" / "site"
    assert f"(default:{used}," in help_text


def test_the_withdrawn_list_header_names_the_keys_it_is_read_by() -> None:
    from effectbench.site._withdrawn import KEYS

    header = [line for line in (ROOT / "site" / "withdrawn.yml").read_text().splitlines()]
    comment = " ".join(line.lstrip("# ") for line in header if line.startswith("#"))
    named = set(re.findall(r"[{,]\s*([a-z_]+):", comment))
    assert named == set(KEYS), named
    assert "folder name" in comment  # says a folder name is not how an entry names a bundle


# --------------------------------------------------------------------------- killed submit

_SLOW_SUBMIT = """
import sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from support.bundles import read_rows, read_submission
from effectbench.bundle import Submission
from effectbench.produce import write_submission
source = Path(sys.argv[1])
rows = read_rows(source)
def slow():
    for i, row in enumerate(rows):
        yield row
        if i == 5:
            print("writing", flush=True)
            time.sleep(600)
write_submission(Path(sys.argv[2]), Submission.model_validate(read_submission(source)), slow())
"""


def test_a_killed_submit_leaves_nothing_that_counts_as_a_bundle(
    cases: dict[str, Any], tmp_path: Path
) -> None:
    subs = tmp_path / "submissions"
    subs.mkdir()
    source = cases["subs"] / "2026-03-02_formula"
    child = subprocess.Popen(
        [sys.executable, "-c", _SLOW_SUBMIT, str(source), str(subs / "2026-03-07_killed"),
         str(ROOT / "tests")],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "writing"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    leftovers = list(subs.iterdir())
    assert leftovers and all(p.name.startswith(".") for p in leftovers)  # half-written, hidden
    with pytest.raises(Exception, match="no bundle here"):
        verify_path(subs)
    assert verify_submissions(subs) == []


# --------------------------------------------------------------------------- README limit


def test_a_readme_is_read_only_up_to_its_limit(tmp_path: Path) -> None:
    """A refused bundle's huge README: the verifier refuses it by size, the site reads 1 MiB."""
    import tracemalloc

    from effectbench.site._entries import README_LIMIT, entry_from_report

    bundle = make_bundle(tmp_path / "2026-03-07_big-readme", "always_halt", declare_baseline=False)
    readme = bundle / "README.md"
    with readme.open("wb") as fh:
        fh.write(b"# Notes\n" + b"x" * 100 + b"\n")
        fh.truncate(64 * README_LIMIT)  # sparse: 64 MiB that take no disk
    before = {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in bundle.iterdir()}
    (report,) = verify_path(bundle)
    assert report.status is Status.REFUSED
    assert "structure.file_size" in report.finding_ids()
    tracemalloc.start()
    try:
        entry = entry_from_report(report)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert entry.readme is not None and entry.readme.startswith("# Notes\n")
    assert entry.readme.endswith("[cut at the size limit]")
    assert len(entry.readme.encode()) <= README_LIMIT + 64
    assert peak < 8 * README_LIMIT  # never the whole 64 MiB file in memory
    after = {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in bundle.iterdir()}
    assert after == before  # nothing written into the bundle


def test_a_hard_linked_readme_is_refused_and_never_published(tmp_path: Path) -> None:
    """The README is a second name of a file outside the bundle: its text stays private."""
    subs = tmp_path / "submissions"
    bundle = make_bundle(subs / "2026-04-01_linked", "screen_only", declare_baseline=False)
    secret = tmp_path / "private-notes.txt"
    secret.write_text("the maintainers' private notes\n")
    os.link(secret, bundle / "README.md")
    out = tmp_path / "public"
    summary = build_site(
        subs, out, root=site_root(tmp_path, []), cache_dir=tmp_path / "cache", allow_unsigned=True
    )
    assert summary.n_refused == 1
    assert "structure.hard_link" in (out / "refused.html").read_text(encoding="utf-8")
    for page in out.rglob("*"):
        if page.is_file():
            assert b"private notes" not in page.read_bytes(), page
    assert not (out / "submissions" / "2026-04-01_linked" / "README.txt").exists()
