"""The README says what the commands do and starts with the point: its opening commands within
its first lines, its command lines and links; the pages it links to (its long sections, moved
under docs/) hold figures and commands that are true."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from effectbench.baselines import baseline_names
from effectbench.cli import build_parser
from effectbench.cli._run import PINNED
from effectbench.packs import installed, pack_class

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PAGES = ("setup.md", "using.md", "doors.md", "long-runs.md", "monitors.md")
"""The pages under docs/ that hold what the README held at length, linked from it."""
USING = (ROOT / "docs" / "using.md").read_text(encoding="utf-8")
MAX_LINES = 150


def _blocks(text: str = README) -> list[str]:
    return re.findall(r"```sh\n(.*?)```", text, re.S)


def _commands(block: str) -> list[str]:
    """Return the block's command lines, continuations joined and comments dropped."""
    text = re.sub(r"\\\n\s*", " ", block)
    out = []
    for line in text.splitlines():
        code = line.split("  #", 1)[0].strip()
        if code and not code.startswith("#"):
            out += [part.strip() for part in code.split("&&")]
    return out


def test_the_readme_opens_with_the_two_make_commands() -> None:
    first = README.split("```sh\n", 1)[1].split("```", 1)[0]
    assert README.index("```sh") < README.index("\n## ")  # before any section
    assert _commands(first) == ["make site", "make test"]
    makefile = (ROOT / "Makefile").read_text()
    for target in ("site", "test", "test-fast", "reference", "setup"):
        assert re.search(rf"^{re.escape(target)}:", makefile, re.M), target


def test_the_readme_starts_with_the_point_and_stays_short() -> None:
    """The two commands within the first 10 lines, the first heading after the title within
    the first 30, at most 150 lines in all."""
    lines = README.splitlines()
    assert lines[0] == "# EffectBench"
    assert len(lines) <= MAX_LINES, len(lines)
    for command in ("make site", "make test"):
        at = next(i for i, line in enumerate(lines) if line.startswith(command + " "))
        assert at < 10, (command, at + 1)
    fences = [i for i, line in enumerate(lines) if line.startswith("```")]
    inside = {i for a, b in zip(fences[::2], fences[1::2], strict=True) for i in range(a, b + 1)}
    heading = next(i for i, line in enumerate(lines) if i and i not in inside and line[:1] == "#")
    assert heading < 30, heading + 1


def _effectbench_commands(text: str) -> list[list[str]]:
    found = []
    for block in _blocks(text):
        for command in _commands(block):
            words = shlex.split(command)
            if words and (words[0] == "effectbench" or words[0].endswith("bin/effectbench")):
                found.append(words)
    return found


def test_every_effectbench_command_in_the_readme_and_its_pages_parses() -> None:
    parser = build_parser()
    shown = _effectbench_commands(README)
    assert len(shown) >= 3  # one for each path
    for page in PAGES:
        commands = _effectbench_commands((ROOT / "docs" / page).read_text(encoding="utf-8"))
        assert commands or page == "setup.md", page
        shown += commands
    for words in shown:
        parser.parse_args(words[1:])  # exits (failing the test) on an unknown option
    assert len(shown) >= 20


def test_every_relative_link_of_the_readme_and_its_pages_exists() -> None:
    """Every ``[text](target)`` and image that is not a web address names a file that exists
    (relative to the page that links it), and the README links every page it moved to docs/."""
    links = re.findall(r"\]\(([^)\s]+)\)", README)
    for page in PAGES:
        assert f"docs/{page}" in links, page
    checked = 0
    for path in (ROOT / "README.md", *(ROOT / "docs" / page for page in PAGES)):
        for target in re.findall(r"\]\(([^)\s]+)\)", path.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            assert (path.parent / target.split("#", 1)[0]).exists(), f"{path.name}: {target}"
            checked += 1
    assert checked >= 15


def test_the_readme_picture_is_a_small_png() -> None:
    (image,) = re.findall(r"!\[[^]]+\]\(([^)]+)\)", README)
    data = (ROOT / image).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) < 160_000, len(data)


def test_the_using_page_lists_every_baseline_of_every_pack() -> None:
    usage = next(b for b in _blocks(USING) if "run --baseline" in b)
    for pack in installed():
        for name in baseline_names(pack_class(pack)):
            assert name in usage, name


def test_the_using_pages_figures_are_what_the_commands_print() -> None:
    for arm, pins in PINNED.items():
        k, n = pins["swer"]  # type: ignore[misc]
        assert f"{arm} {k}/{n}" in USING
    clinic = {}
    screens: dict[str, set[str]] = {}  # arm -> its SWER k/n on each screen
    for bundle in (ROOT / "submissions").iterdir():
        sub = json.loads((bundle / "submission.json").read_text())
        on = {c["substrate"] for c in sub["results"]["cells"]}
        if sub["pack"]["name"] == "clinic" and sub["pack"]["split"] == "dev" and on == {"api"}:
            clinic[sub["results"]["arm"]] = sub["results"]
        elif sub["pack"]["name"] == "clinic":
            swer = sub["results"]["swer"]
            screens.setdefault(sub["results"]["arm"], set()).add(
                f"{swer['numerator']}/{swer['denominator']}"
            )
    each = [screens[arm] for arm in ("screen_only", "effect_verified", "effect_verified_all")]
    assert all(len(s) == 1 for s in each), screens  # the same on web, desktop, remote display
    (so,), (ev,), (eva,) = each
    assert f"({so}, {ev} and {eva} on each)" in " ".join(USING.split())
    assert set(clinic) == set(baseline_names(pack_class("clinic"))) - {
        "always_halt",
        "retry_on_error",
    }
    text = " ".join(USING.split())
    for arm, res in clinic.items():
        k, n = res["swer"]["numerator"], res["swer"]["denominator"]
        assert f"{k}/{n} ({100 * k / n:.1f}%) for {arm}" in text, arm
        if arm != "screen_only":
            k, n = res["over_halt"]["numerator"], res["over_halt"]["denominator"]
            assert f"over-halt {k}/{n} ({100 * k / n:.1f}%)" in text, arm
    ladder = (ROOT / "docs" / "clinic.md").read_text(encoding="utf-8")
    for arm, res in clinic.items():
        k, n = res["swer"]["numerator"], res["swer"]["denominator"]
        assert f"| `{arm}` | {k}/{n} ({100 * k / n:.1f}%) |" in ladder, arm


API_ONLY = ("look_before_write",)
"""Reference arms shipped on the API alone (their pack's careful script is the API's)."""


def test_the_ticketing_ladder_is_what_its_shipped_bundles_measured() -> None:
    """docs/ticketing.md's ladder table holds the ticketing reference bundles' own counts (the
    API at 10 trials, the web at 3), every arm on both substrates but the API-only ones."""
    table = (ROOT / "docs" / "ticketing.md").read_text(encoding="utf-8")
    cells: dict[str, dict[str, dict[str, Any]]] = {}  # arm -> substrate -> its results block
    for bundle in (ROOT / "submissions").iterdir():
        sub = json.loads((bundle / "submission.json").read_text())
        if sub["pack"]["name"] != "ticketing":
            continue
        (substrate,) = {c["substrate"] for c in sub["results"]["cells"]}
        cells.setdefault(sub["results"]["arm"], {})[substrate] = sub["results"]
    assert set(cells) == {"screen_only", "effect_verified", "effect_verified_all", *API_ONLY}
    rows = {line.split("`")[1]: line for line in table.splitlines() if line.startswith("| `")}
    for arm, on in cells.items():
        assert set(on) == ({"api"} if arm in API_ONLY else {"api", "web"}), arm
        swer, halts = [], []
        for results in (on["api"], *([] if arm in API_ONLY else [on["web"]])):
            k, n = results["swer"]["numerator"], results["swer"]["denominator"]
            swer.append(f"{k}/{n} ({100 * k / n:.1f}%)")
            k, n = results["over_halt"]["numerator"], results["over_halt"]["denominator"]
            halts.append(f"{k}/{n}" if k else "0")
        if arm in API_ONLY:
            swer.append("(api only)")
        assert rows[arm] == f"| `{arm}` | {' | '.join(swer)} | {', '.join(halts)} |", arm
