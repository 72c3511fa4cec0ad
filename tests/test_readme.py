"""The README says what the commands do: its opening commands, its command lines, its figures."""

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


def _blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)```", README, re.S)


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


def test_every_effectbench_command_in_the_readme_parses() -> None:
    parser = build_parser()
    seen = 0
    for block in _blocks():
        for command in _commands(block):
            words = shlex.split(command)
            if words and (words[0] == "effectbench" or words[0].endswith("bin/effectbench")):
                parser.parse_args(words[1:])  # exits (failing the test) on an unknown option
                seen += 1
    assert seen >= 10


def test_the_readme_lists_every_baseline_of_every_pack() -> None:
    usage = next(b for b in _blocks() if "run --baseline" in b)
    for pack in installed():
        for name in baseline_names(pack_class(pack)):
            assert name in usage, name


def test_the_readme_figures_are_what_the_commands_print() -> None:
    for arm, pins in PINNED.items():
        k, n = pins["swer"]  # type: ignore[misc]
        assert f"{arm} {k}/{n}" in README
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
    assert f"({so}, {ev} and {eva} on each)" in " ".join(README.split())
    assert set(clinic) == set(baseline_names(pack_class("clinic"))) - {
        "always_halt",
        "retry_on_error",
    }
    text = " ".join(README.split())
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


def test_the_ticketing_ladder_is_what_its_shipped_bundles_measured() -> None:
    """docs/ticketing.md's ladder table holds the ticketing reference bundles' own counts (the
    API at 10 trials, the web at 3), every arm on both substrates."""
    table = (ROOT / "docs" / "ticketing.md").read_text(encoding="utf-8")
    cells: dict[str, dict[str, dict[str, Any]]] = {}  # arm -> substrate -> its results block
    for bundle in (ROOT / "submissions").iterdir():
        sub = json.loads((bundle / "submission.json").read_text())
        if sub["pack"]["name"] != "ticketing":
            continue
        (substrate,) = {c["substrate"] for c in sub["results"]["cells"]}
        cells.setdefault(sub["results"]["arm"], {})[substrate] = sub["results"]
    assert set(cells) == {"screen_only", "effect_verified", "effect_verified_all"}
    rows = {line.split("`")[1]: line for line in table.splitlines() if line.startswith("| `")}
    for arm, on in cells.items():
        assert set(on) == {"api", "web"}, arm
        swer, halts = [], []
        for results in (on["api"], on["web"]):
            k, n = results["swer"]["numerator"], results["swer"]["denominator"]
            swer.append(f"{k}/{n} ({100 * k / n:.1f}%)")
            k, n = results["over_halt"]["numerator"], results["over_halt"]["denominator"]
            halts.append(f"{k}/{n}" if k else "0")
        assert rows[arm] == f"| `{arm}` | {' | '.join(swer)} | {', '.join(halts)} |", arm
