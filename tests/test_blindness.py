"""The blindness audit of ``pack check`` (SPEC 5.3): a planted leak is found; the shipped packs
show none.

A pack that appends each task's title to its goal, one whose first screen heads its banner
with a word of the task's category, and one whose web page's title (in the episode's real
Chromium page) starts with such a word (``tests/support/broken_packs.py``), must each be caught
with a cross-validated AUROC above 0.9 and a ``pack.blindness`` finding; the clinic's
every cross-validated AUROC stays at or below the threshold.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from support.broken_packs import BROKEN

from effectbench.cli import main
from effectbench.conformance import AuditId
from effectbench.conformance.blindness import (
    MIN_GROUPS,
    SCREEN_GROUPS,
    THRESHOLD,
    Observation,
    TargetResult,
    audit,
    observe,
)
from effectbench.conformance.check import Report, check_blindness
from effectbench.packs import get_pack, register
from effectbench.schema import Category, Substrate
from effectbench.seam import Closable

API = (Substrate.API,)


@pytest.fixture
def pack(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The pack ``request.param`` (a leaky test pack is registered first), closed after."""
    name = request.param
    if name in BROKEN:
        with register(name, BROKEN[name]):
            built = get_pack(name)
    else:
        built = get_pack(name)
    try:
        yield built
    finally:
        if isinstance(built, Closable):
            built.close()


def _by_target(results: list[TargetResult]) -> dict[str, TargetResult]:
    return {r.target: r for r in results}


@pytest.mark.slow
@pytest.mark.parametrize("pack", ["leaky-title-in-goal"], indirect=True)
def test_the_title_in_the_goal_is_found(pack: Any) -> None:
    report = Report(pack=pack.name, substrates=API)
    check_blindness(pack, API, report)
    results = _by_target(report.blindness)
    lines = [r.line() for r in report.blindness]
    trap = results["trap_vs_control"]
    assert trap.auroc is not None and trap.auroc > 0.9, lines
    assert any("contr" in f for f in trap.features), lines  # "(control)" of the titles
    assert results["halt_expected"].leaks, lines
    findings = [f for f in report.findings if f.id is AuditId.PACK_BLINDNESS]
    assert len(findings) == sum(r.leaks for r in report.blindness) >= 2
    message = next(f.message for f in findings if f.message.startswith("halt_expected"))
    assert "AUROC" in message and "top features:" in message
    assert f"> {THRESHOLD}" in message


@pytest.mark.slow
@pytest.mark.parametrize("pack", ["leaky-banner-word"], indirect=True)
def test_a_category_word_on_the_first_screen_is_found(pack: Any) -> None:
    results = _by_target(audit(observe(pack, Substrate.API)))
    for target in ("C3_optimistic_then_reject", "trap_vs_control"):
        result = results[target]
        assert result.auroc is not None and result.auroc > 0.9, result.line()
    assert results["C7_silent_noop_wrong_target"].leaks
    carried = results["C3_optimistic_then_reject"].features
    assert any(piece in f for f in carried for piece in ("pendi", "endin", "nding")), carried


@pytest.mark.slow
@pytest.mark.parametrize("pack", ["leaky-page-title"], indirect=True)
def test_a_category_word_in_the_page_title_is_found(pack: Any) -> None:
    """Read from Chromium: the word is in the page's title only, never drawn."""
    web = (Substrate.WEB,)
    report = Report(pack=pack.name, substrates=web)
    check_blindness(pack, web, report)
    results = _by_target(report.blindness)
    lines = report.blindness_lines()
    assert all(line.split("\t")[2] == "web" for line in lines), lines
    for target in ("trap_vs_control", "C3_optimistic_then_reject"):
        auroc = results[target].auroc
        assert auroc is not None and auroc > 0.9, lines
    carried = results["C3_optimistic_then_reject"].features
    assert any(piece in f.lower() for f in carried for piece in ("pendi", "endin", "nding")), lines
    findings = [f.message for f in report.findings if f.id is AuditId.PACK_BLINDNESS]
    assert any(m.startswith("trap_vs_control") and " on web: " in m for m in findings), findings
    assert report.blindness_episodes == 2 * sum(
        min(SCREEN_GROUPS, n) for n in _groups_per_category(pack, Substrate.WEB).values()
    )


def _groups_per_category(pack: Any, substrate: Substrate) -> dict[Category, int]:
    out: dict[Category, int] = {}
    for task in pack.tasks():
        if task.split.value == "dev" and task.substrate is substrate:
            out[task.category] = out.get(task.category, 0) + 1
    return out


def _observation(category: Category, group: str, text: str) -> Observation:
    return Observation(
        text=text,
        fields={"display.surface": "api"},
        category=category,
        halt_expected=category is not Category.CONTROL,
        group=group,
    )


def test_too_few_groups_say_so_and_give_no_number() -> None:
    observations = [
        _observation(Category.C1_PARTIAL_SAVE, "a", "open the chart"),
        _observation(Category.C1_PARTIAL_SAVE, "b", "open the chart"),
        *(_observation(Category.CONTROL, f"c{i}", "open the chart") for i in range(4)),
    ]
    results = _by_target(audit(observations))
    c1 = results["C1_partial_save"]
    assert c1.auroc is None and not c1.leaks
    assert f"2 positive group(s) (clusters or tasks); cross-validation needs {MIN_GROUPS}" in (
        c1.reason
    )
    assert "not cross-validated" in c1.line() and "AUROC" not in c1.line()
    assert results["C2_duplicate_submission"].reason.startswith("0 positive")


def test_a_template_memorised_is_not_a_leak() -> None:
    """Each group's own word says nothing about a held-out group: no leak."""
    observations = []
    for g in range(8):
        category = Category.C3_OPTIMISTIC_THEN_REJECT if g % 2 else Category.CONTROL
        for trial in range(3):
            observations.append(_observation(category, f"t{g}", f"open chart template{g} {trial}"))
    result = _by_target(audit(observations))["C3_optimistic_then_reject"]
    assert result.auroc is not None and result.auroc <= THRESHOLD, result.line()


@pytest.mark.slow
def test_the_command_prints_one_blindness_line_per_target(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["pack", "check", "mockmed"]) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("blindness\t")]
    assert [line.split("\t")[1] for line in lines] == [
        *(c.value for c in Category if c is not Category.CONTROL),
        "trap_vs_control",
        "halt_expected",
    ]


@pytest.mark.slow
def test_the_clinic_shows_no_leak() -> None:
    built = get_pack("clinic")
    try:
        report = Report(pack="clinic", substrates=API)
        check_blindness(built, API, report)
    finally:
        if isinstance(built, Closable):
            built.close()
    lines = report.blindness_lines()
    assert len(lines) == 9
    numbers = [r for r in report.blindness if r.auroc is not None]
    assert {r.target for r in numbers} >= {"trap_vs_control", "halt_expected"}, lines
    assert all(r.auroc is not None and r.auroc <= THRESHOLD for r in numbers), lines
    assert not report.findings, [f.line() for f in report.findings]
