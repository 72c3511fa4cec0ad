"""The command-line package: a fast start, help for every option, one-line errors."""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from effectbench.baselines import baseline_names
from effectbench.cli import build_parser, main
from effectbench.cli._args import shown_default
from effectbench.packs import aliases, installed, pack_class

ROOT = Path(__file__).resolve().parents[1]
VECTORS = ROOT / "tests" / "data" / "vectors"
HEAVY = ("pandas", "numpy", "pyarrow", "pydantic", "altair", "sigstore", "mkdocs", "jinja2")
"""Libraries a start-up must not import (they cost 0.1 to 1 s each); see bench_cli.py."""


def _imported_by(argv: list[str]) -> set[str]:
    code = (
        "import contextlib, io, json, sys\n"
        "from effectbench.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        f"        main({argv!r})\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return {m.split(".")[0] for m in json.loads(done.stdout)}


@pytest.mark.parametrize(
    "argv", [["--version"], ["--help"], ["verify", "-h"], ["site", "build", "-h"], ["sign", "-h"]]
)
def test_start_up_imports_no_heavy_library(argv: list[str]) -> None:
    """``run --help`` may load the packs: it lists every pack's baselines."""
    assert _imported_by(argv) & set(HEAVY) == set()


def test_version_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"effectbench {version('effectbench')}\n"


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    out = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out += _parsers(sub)
    return out


def test_every_option_has_help_and_shows_its_default() -> None:
    parsers = _parsers(build_parser())
    assert len(parsers) > 10
    for parser in parsers:
        text = parser.format_help()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
                continue
            assert action.help, f"{parser.prog} {action.dest}: no help text"
            if action.option_strings and action.default not in (None, False, argparse.SUPPRESS):
                shown = "".join(text.split())  # help wraps lines, at hyphens too
                assert f"(default:{shown_default(action)})".replace(" ", "") in shown, (
                    f"{parser.prog} {action.option_strings[0]}: default not shown"
                )


def test_baseline_help_lists_every_baseline_of_every_pack(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for command in ("run", "submit"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        for pack in installed():
            names = " / ".join(aliases(pack))
            assert f"{names}: {', '.join(baseline_names(pack_class(pack)))}" in text
    assert "effect_verified_all" in baseline_names(pack_class("clinic"))


def test_every_baseline_the_help_lists_runs(capsys: pytest.CaptureFixture[str]) -> None:
    for name in baseline_names(pack_class("mockmed")):
        assert main(["run", "--baseline", name, "--trials", "1", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["arm"] == name


def test_an_unknown_split_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["run", "--baseline", "screen_only", "--split", "nope"])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown split 'nope'; known: dev, test" in err


def _serve(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "effectbench.cli", "site", "serve", "--dir", str(site), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--port", "70000"], "argument --port: a port is 0 to 65535, got 70000"),
        (["--port", "http"], "argument --port: expected a port number, got 'http'"),
        (["--host", "no-such-host.invalid", "--port", "0"], "--host no-such-host.invalid: not an"),
        (["--host", "203.0.113.7", "--port", "0"], "--host 203.0.113.7: not an address of this"),
    ],
)
def test_serve_refuses_a_bad_port_or_host_in_one_line(
    tmp_path: Path, args: list[str], needle: str
) -> None:
    (tmp_path / "index.html").write_text("<p>site</p>")
    done = _serve(tmp_path, *args)
    assert done.returncode == 2
    assert needle in done.stderr
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr


def test_serve_on_a_busy_port_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<p>site</p>")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = _serve(tmp_path, "--port", str(port))
    assert done.returncode == 2
    assert done.stderr == (
        f"effectbench: --port {port} on 127.0.0.1 is in use; choose another --port "
        "(0 picks a free one)\n"
    )


def test_import_collision_names_an_option_import_has(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "doc.json"
    shutil.copy(VECTORS / "upstream-screen_only-t3.json", doc)
    assert main(["import", str(doc), "--out", str(tmp_path / "subs")]) == 0
    capsys.readouterr()
    assert main(["import", str(doc), "--out", str(tmp_path / "subs")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "already exists; choose another --out folder or remove it" in err
    options = {o for a in _parsers(build_parser()) if a.prog.endswith(" import") for o in
               [s for act in a._actions for s in act.option_strings]}  # fmt: skip
    assert "--out" in options and "--name" not in options


def test_python_dash_m_runs_the_same_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "effectbench.cli", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout.startswith("effectbench ")


RANK_REFERENCE = Path(__file__).resolve().parents[1] / "submissions"


@pytest.mark.parametrize(
    ("option", "given", "message"),
    [
        ("--costs", "nan,1,1", "must be a number, got NaN"),
        ("--costs", "-1,3,1", "cannot be negative"),
        ("--costs", "1e9,3,1", "must be at most 1000000"),
        ("--costs", "inf,1,1", "must be at most 1000000"),
        ("--costs", "abc,1,1", "must be a number, got 'abc'"),
        ("--costs", "10,3", "expected three prices"),
        ("--value", "0", "the value of a correct effect must be above 0"),
        ("--value", "-5", "the value of a correct effect must be above 0"),
        ("--value", "nan", "the value of a correct effect must be a number, got NaN"),
        ("--value", "1e300", "the value of a correct effect must be at most 1000000"),
        ("--value", "infinity", "the value of a correct effect must be at most 1000000"),
        ("--value", "ten", "the value of a correct effect must be a number, got 'ten'"),
        ("--substrate", "paper", "unknown substrate 'paper'"),
    ],
)
def test_rank_refuses_bad_prices_in_one_line(
    option: str, given: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["rank", str(RANK_REFERENCE), f"{option}={given}"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_rank_prints_the_boards_at_the_given_prices(capsys: pytest.CaptureFixture[str]) -> None:
    folders = [RANK_REFERENCE / f"2026-12-01_{n}" for n in ("always-halt", "effect-verified")]
    assert main(["rank", *map(str, folders), "--costs", "clinical-billing"]) == 0
    out = capsys.readouterr().out
    assert "mockmed-anchor · web · dev split" in out
    assert "prices correct effect 50, silent wrong effect 50, wrong record 10, over-halt 1" in out
    lines = [line for line in out.splitlines() if "net value " in line and ": net value" in line]
    # every row names its substrate; the system that never acts is doing nothing itself (0)
    assert "effect_verified · web: net value +1255.6" in lines[0]
    assert "always_halt · web: net value 0.0" in lines[1] and "never beats" in lines[1]
    assert "record-wrong 44.4% 40/90" in lines[0] and "break-even 12.3" in lines[0]
    assert "40/90 episodes [" in lines[0] and "] by task" in lines[0]  # k/n counts episodes
    assert "they depend on the family of systems ranked together" in out
    # the two systems' paired resolution, its G and method, and the fixed-task figure beside it
    assert "resolution, effect_verified · web against always_halt · web: SWER " in out
    assert "SWER no spread: every shared task differs by the same amount" in out
    assert "net value " in out and "per 100 tasks paired (9 tasks, s_d " in out
    # deterministic trials vary within no task: the fixed figure is not estimable, never 0
    assert "held fixed not estimable: no variation within any shared task" in out
    assert main(["rank", *map(str, folders), "--json", "--value", "2.5"]) == 0
    (board,) = json.loads(capsys.readouterr().out)
    assert board["prices"] == {
        "value": 2.5,
        "silent": 10.0,
        "wrong_record": 3.0,
        "over_halt": 1.0,
    }
    assert board["substrate"] == "web" and board["board"] == "spec1-mockmed-anchor-web"
    rows = board["rows"]
    assert [r["label"] for r in rows] == ["always_halt · web", "effect_verified · web"]
    assert rows[1]["break_even"] == pytest.approx(3.0)  # below it, doing nothing is worth more
    assert rows[0]["break_even"] is None and rows[0]["never_beats_doing_nothing"]
    assert rows[0]["value"] == rows[0]["value_lo"] == rows[0]["value_hi"] == 0.0  # doing nothing
    (pair,) = board["paired_resolution"]
    assert pair["swer"]["paired_units"] == 9 and pair["swer"]["paired_method"] == (
        "paired-clustered-t"
    )
    assert main(["rank", *map(str, folders), "--substrate", "desktop"]) == 1
    assert "no board on desktop: the boards are on web" in capsys.readouterr().out


def test_rank_reads_the_cached_reports_and_verifies_only_what_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from effectbench.cli._rank import reports_of
    from effectbench.filenames import site_cache_home

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    subs = tmp_path / "subs"
    for name in ("always-halt", "effect-verified"):
        shutil.copytree(RANK_REFERENCE / f"2026-12-01_{name}", subs / f"2026-12-01_{name}")
    told: list[tuple[int, int]] = []
    first = reports_of([subs], False, True, True, lambda done, total: told.append((done, total)))
    assert [r.accepted for r in first] == [True, True]
    assert told == [(0, 2), (1, 2), (2, 2)]  # nothing cached yet: both verified
    reports = site_cache_home() / "reports"
    written = {p: p.stat().st_mtime_ns for p in reports.glob("*.json")}
    assert len(written) == 2
    # the same folder spelled another way (as `site build` spells it, from the checkout):
    # the same reports, each with the path as spelled now
    monkeypatch.chdir(tmp_path)
    told.clear()
    relative = reports_of([Path("subs")], False, True, True, lambda d, t: told.append((d, t)))
    assert told == [(2, 2)] and len(list(reports.glob("*.json"))) == 2
    assert [r.path for r in relative] == [str(Path("subs") / Path(r.path).name) for r in first]
    # one bundle changes (a note added): only it is verified again
    (subs / "2026-12-01_always-halt" / "README.md").write_text("notes\n", encoding="utf-8")
    told.clear()
    again = reports_of([subs], False, True, True, lambda done, total: told.append((done, total)))
    assert told == [(1, 2), (2, 2)]
    assert {p: p.stat().st_mtime_ns for p in written} == written  # read, never rewritten
    assert len(list(reports.glob("*.json"))) == 3
    assert [r.path for r in again] == [r.path for r in first]
    # a run without re-running shipped baselines never reads nor writes those reports
    told.clear()
    reports_of([subs], True, False, True, lambda done, total: told.append((done, total)))
    assert told[0] == (0, 2) and len(list(reports.glob("*.json"))) == 5


def _in_a_terminal(argv: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    """Run ``effectbench ARGV`` with its stderr on a pseudo-terminal: (status, stdout, what the
    terminal showed)."""
    import os
    import pty

    leader, follower = pty.openpty()
    done = subprocess.Popen(
        [sys.executable, "-m", "effectbench.cli", *argv],
        stdout=subprocess.PIPE,
        stderr=follower,
        env=env,
    )
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the command closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    out, _ = done.communicate(timeout=300)
    os.close(leader)
    return done.returncode, out.decode(), shown.decode(errors="replace")


def test_rank_shows_a_progress_bar_on_a_terminal_and_none_elsewhere(tmp_path: Path) -> None:
    import os

    subs = tmp_path / "subs"
    for name in ("always-halt", "effect-verified"):
        shutil.copytree(RANK_REFERENCE / f"2026-12-01_{name}", subs / f"2026-12-01_{name}")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "COLUMNS": "100"}
    status, out, shown = _in_a_terminal(["rank", str(subs)], env)
    assert status == 0 and "effect_verified · web" in out
    assert "verifying bundles" in shown  # the bar, on the terminal only
    status, out, shown = _in_a_terminal(["rank", str(subs), "--json"], env)
    assert status == 0 and json.loads(out)[0]["substrate"] == "web"
    assert shown == ""  # --json: quiet
    piped = subprocess.run(
        [sys.executable, "-m", "effectbench.cli", "rank", str(subs)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert piped.returncode == 0 and piped.stderr == ""  # not a terminal: quiet


@pytest.mark.parametrize(
    ("argv", "label"),
    [
        (["verify", "{subs}"], "verifying bundles"),
        (
            ["reproduce", "{subs}", "--records", "{records}", "--references", "{listing}"],
            "re-running bundles",
        ),
        (["site", "build", "--submissions", "{subs}", "--out", "{out}"], "building the site"),
    ],
    ids=["verify", "reproduce", "site-build"],
)
def test_long_commands_show_a_bar_on_a_terminal_and_nothing_piped(
    tmp_path: Path, argv: list[str], label: str
) -> None:
    import os

    subs = tmp_path / "subs"
    for name in ("always-halt", "effect-verified"):
        shutil.copytree(RANK_REFERENCE / f"2026-12-01_{name}", subs / f"2026-12-01_{name}")
    # reproduce reads (and would write) copies: the repository's records and list stay as
    # they are, whatever the command decides
    shutil.copytree(ROOT / "reproductions", tmp_path / "records")
    shutil.copy(ROOT / "verifier" / "reference_bundles.json", tmp_path / "listing.json")
    places = {
        "subs": subs,
        "records": tmp_path / "records",
        "listing": tmp_path / "listing.json",
        "out": tmp_path / "public",
    }
    argv = [a.format(**places) for a in argv]
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "COLUMNS": "100"}
    status, out, shown = _in_a_terminal(argv, env)
    assert status == 0, out
    assert label in shown  # the bar, on the terminal only
    piped = subprocess.run(
        [sys.executable, "-m", "effectbench.cli", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert piped.returncode == 0 and label not in piped.stderr  # not a terminal: no bar
