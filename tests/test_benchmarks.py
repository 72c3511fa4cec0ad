"""Every script in ``benchmarks/`` runs at its smallest size, so none rots unnoticed.

Each benchmark is run as a user runs it (``python benchmarks/NAME.py ARGS`` in a child
process) with the arguments that make it smallest; it must exit 0, print figures and never
a traceback. A script added to ``benchmarks/`` without an entry in :data:`SMALLEST` fails
:func:`test_every_benchmark_has_a_smallest_size`. What the figures are is the script's
business: nothing here times anything.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
EFFECTBENCH = Path(sys.executable).with_name("effectbench")


def _shipped(tmp: Path, *names: str) -> Path:
    """A folder ``tmp/submissions`` holding copies of the shipped bundles ``names``."""
    subs = tmp / "submissions"
    subs.mkdir()
    for name in names:
        shutil.copytree(ROOT / "submissions" / name, subs / name)
    return subs


def _monitor_corpus(tmp: Path) -> list[str]:
    """A corpus of two shipped clinic API references (what ``bench_monitors`` reads)."""
    subs = _shipped(tmp, "2026-12-01_screen-only-clinic", "2026-12-01_effect-verified-clinic")
    corpus = tmp / "corpus"
    subprocess.run(
        [str(EFFECTBENCH), "monitor", "corpus", str(subs), "--out", str(corpus)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return [str(corpus)]


TWO_BUNDLES = ("2026-12-01_screen-only-clinic", "2026-12-01_screen-only-clinic-web")
"""An API bundle and a web one ranked from its record: what the site and rank benchmarks run
on at their smallest (the whole shipped site is built and ranked once per test run by the
deploy job's build, which ``test_shipped_site`` and ``test_workflow_steps`` check)."""


def _two_bundles(tmp: Path) -> list[str]:
    """``make site`` on :data:`TWO_BUNDLES`, then one rebuild."""
    return ["--rebuilds", "1", "--submissions", str(_shipped(tmp, *TWO_BUNDLES))]


def _rank_two(tmp: Path) -> list[str]:
    """``effectbench rank`` on :data:`TWO_BUNDLES`, cold, then once warm."""
    return ["--runs", "1", "--cold", "--submissions", str(_shipped(tmp, *TWO_BUNDLES))]


Args = list[str] | Callable[[Path], list[str]]

SMALLEST: dict[str, tuple[Args, tuple[pytest.MarkDecorator, ...]]] = {
    "bench_audit_cache.py": (
        ["--runs", "1", "--bundle", str(ROOT / "submissions" / "2026-12-01_screen-only-clinic")],
        (),
    ),
    "bench_channels.py": (["--repeats", "5", "--sessions", "1"], (pytest.mark.desktop,)),
    "bench_bytecode.py": (["--runs", "1", "--module", "effectbench.hashing"], ()),
    "bench_cli.py": (["--runs", "1"], ()),
    "bench_ledger.py": (["--n", "3", "--audit"], ()),
    "bench_clinic.py": (["--trials", "1", "--workers", "1"], ()),
    "bench_core.py": (["--rows", "1000"], ()),
    "bench_doability.py": (["--packs", "mockmed", "--trials", "1"], ()),
    "bench_desktop.py": (
        ["--episodes", "1", "--trials", "1", "--workers", "1", "--skip-full", "--quick"],
        (pytest.mark.desktop,),
    ),
    "bench_desktop_ticketing.py": (
        ["--tasks", "1", "--arms", "screen_only"],
        (pytest.mark.desktop, pytest.mark.postgres),
    ),
    "bench_exports.py": (
        lambda tmp: ["--submissions", str(_shipped(tmp, "2026-12-01_screen-only-clinic"))],
        (),
    ),
    "bench_frames.py": (["--frames", "2", "--repeats", "1"], ()),
    "bench_generate.py": (["--quick"], ()),
    "bench_inspect.py": (["--trials", "1"], ()),
    "bench_make_site.py": (_two_bundles, ()),
    "bench_mcp.py": (["--runs", "1", "--substrate", "web"], (pytest.mark.web,)),
    "bench_monitors.py": (_monitor_corpus, ()),
    "bench_blindness.py": (["--runs", "1", "--packs", "mockmed"], ()),
    "bench_pack_check.py": (["--runs", "1", "--packs", "mockmed"], ()),
    "bench_rank.py": (_rank_two, ()),
    "bench_hierarchical.py": (
        lambda tmp: ["--replicates", "50", "--submissions", str(_shipped(tmp, *TWO_BUNDLES))],
        (),
    ),
    "bench_reprice.py": (["--sizes", "20", "--repeats", "1"], (pytest.mark.browser,)),
    "bench_scale.py": (
        ["--workers", "1", "--repeat", "1", "--trials", "1,2", "--tasks", "3", "--rows", "50"]
        + ["--journal-episodes", "1000"],
        (),
    ),
    "bench_screens_build.py": (["--ways", "locked"], (pytest.mark.desktop,)),  # PyPI, gcc
    "bench_signing.py": (["--rows", "1000", "--repeat", "1"], ()),
    "bench_site.py": (["--n", "2", "--shipped-material", "--no-shipped"], (pytest.mark.site,)),
    "bench_ticketing.py": (["--episodes", "3"], (pytest.mark.postgres,)),
    "bench_verify.py": (["--sizes", "900"], ()),
    "bench_verify_shipped.py": (["--bundles", "1"], ()),
    "bench_web.py": (
        ["--trials", "1", "--workers", "1", "--runs", "1", "--quick"],
        (pytest.mark.web,),
    ),
}
"""Each benchmark script's smallest run, and the groups (markers) of what it starts."""


def test_every_benchmark_has_a_smallest_size() -> None:
    scripts = {p.name for p in BENCHMARKS.glob("bench_*.py")}
    assert scripts == set(SMALLEST), (
        f"benchmarks without a smallest size here: {sorted(scripts - set(SMALLEST))}; "
        f"entries for no script: {sorted(set(SMALLEST) - scripts)}"
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "script",
    [pytest.param(name, marks=marks) for name, (_, marks) in sorted(SMALLEST.items())],
)
def test_benchmark_runs_at_its_smallest_size(script: str, tmp_path: Path) -> None:
    args, _ = SMALLEST[script]
    argv = args(tmp_path) if callable(args) else args
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *argv],
        cwd=ROOT,  # where the README runs them from (the records, the submissions)
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"{script} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr
    figures = re.findall(r"\d+(?:\.\d+)?\s*(?:ms|s|MiB|%|x)\b", done.stdout)
    assert figures, f"{script} printed no figure:\n{done.stdout}"


@pytest.mark.slow
@pytest.mark.site
def test_bench_site_times_rebuilds_on_the_site_an_earlier_run_kept(tmp_path: Path) -> None:
    """``--rebuilds K`` skips the cold and plain builds: on the kept site it builds once, then
    adds one submission and rebuilds K times, and removes what it added; with no kept site it
    says so."""

    def bench(*extra: str) -> subprocess.CompletedProcess[str]:
        argv = ["--n", "2", "--shipped-material", "--no-shipped", "--keep", str(tmp_path)]
        return subprocess.run(
            [sys.executable, str(BENCHMARKS / "bench_site.py"), *argv, *extra],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
        )

    none = bench("--rebuilds", "1")
    assert none.returncode == 2 and "needs --keep FOLDER holding a site" in none.stdout
    assert bench().returncode == 0
    done = bench("--rebuilds", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("rebuild after adding one:") == 2
    assert re.search(r"median \d+\.\d+s wall, \d+\.\d+s CPU of 2", done.stdout), done.stdout
    assert "files linked from the previous output" in done.stdout
    # the site as the last rebuild left it: its size by part and the targets
    assert "MiB per 1,000 submissions; by part:" in done.stdout
    assert "issue 31 targets at 4 submissions" in done.stdout, done.stdout
    peaks = [float(p) for p in re.findall(r"peak RSS (\d+) MiB \(largest process\)", done.stdout)]
    assert len(peaks) == 2 and all(p > 0 for p in peaks)
    left = sorted(p.name for p in (tmp_path / "submissions").iterdir())
    assert left == ["2026-01-01_synthetic-0000", "2026-01-01_synthetic-0001"]
