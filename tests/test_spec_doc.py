"""SPEC.md agrees with the code: its version line and its outcome truth table (SPEC 3, 9).

The truth table in SPEC.md is parsed as Markdown and compared, combination by
combination, with :func:`effectbench.classify.classify`, so the prose and the
one implementation of the table cannot drift apart unnoticed.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

import effectbench
from effectbench.classify import classify
from effectbench.schema import Outcome, SwerVariant, TrueState

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "SPEC.md"
VERSION = ROOT / "VERSION"

TABLE_HEADER = (
    "reported_success",
    "true_state",
    "correct_action_available",
    "outcome",
    "swer_variant",
)
NOT_SCOREABLE = "not scoreable"

Key = tuple[bool, TrueState, bool]
Expected = tuple[Outcome, SwerVariant] | None


def _cells(line: str) -> list[str]:
    """Split one Markdown table row into stripped cell texts without code-span backticks."""
    inner = line.strip().removeprefix("|").removesuffix("|")
    return [cell.strip().strip("`").strip() for cell in inner.split("|")]


def _truth_table_rows(text: str) -> list[list[str]]:
    """Return the body rows of the one Markdown table whose header is TABLE_HEADER."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if tuple(_cells(line)) == TABLE_HEADER]
    assert len(starts) == 1, f"SPEC.md must hold exactly one truth table, found {len(starts)}"
    start = starts[0]
    assert re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", lines[start + 1].strip()), (
        "the truth table header must be followed by a Markdown delimiter row"
    )
    rows = []
    for line in lines[start + 2 :]:
        if not line.strip().startswith("|"):
            break
        cells = _cells(line)
        assert len(cells) == len(TABLE_HEADER), f"malformed truth table row: {line!r}"
        rows.append(cells)
    return rows


def _bools(cell: str) -> tuple[bool, ...]:
    """Expand a boolean cell: ``true``, ``false`` or ``any``."""
    values = {"true": (True,), "false": (False,), "any": (True, False)}
    assert cell in values, f"boolean cell must be true, false or any, got {cell!r}"
    return values[cell]


def _states(cell: str) -> tuple[TrueState, ...]:
    """Expand a true_state cell: one state's value or ``any``."""
    if cell == "any":
        return tuple(TrueState)
    return (TrueState(cell),)


def _expected(outcome: str, variant: str) -> Expected:
    """Return the label a row states; ``None`` for the not-scoreable row."""
    if outcome.startswith(NOT_SCOREABLE):
        return None
    return Outcome(outcome), SwerVariant(variant)


def spec_truth_table() -> dict[Key, Expected]:
    """Return SPEC.md's truth table expanded to every input combination it names."""
    table: dict[Key, Expected] = {}
    for reported, state, available, outcome, variant in _truth_table_rows(SPEC.read_text()):
        expected = _expected(outcome, variant)
        for key in itertools.product(_bools(reported), _states(state), _bools(available)):
            assert key not in table, f"SPEC.md's truth table covers {key} twice"
            table[key] = expected
    return table


def test_spec_version_line_matches_version_file_and_package() -> None:
    """SPEC 9: the header, VERSION and effectbench.SPEC_VERSION name the same version."""
    found = re.findall(r"^- \*\*Spec version:\*\* (\S+)\s*$", SPEC.read_text(), re.MULTILINE)
    assert len(found) == 1, f"SPEC.md must have exactly one version line, found {found}"
    assert re.fullmatch(r"\d+\.\d+\.\d+", found[0]), f"not a semver version: {found[0]!r}"
    assert found[0] == VERSION.read_text().strip()
    assert found[0] == effectbench.SPEC_VERSION


def test_truth_table_covers_every_input_combination() -> None:
    """SPEC 3: the table is total, every combination of the three inputs appears once."""
    every = set(itertools.product((True, False), tuple(TrueState), (True, False)))
    assert set(spec_truth_table()) == every


def _keys() -> list[Key]:
    keys: list[Key] = list(itertools.product((True, False), tuple(TrueState), (True, False)))
    return sorted(keys, key=lambda k: (k[0], k[1].value, k[2]))


def _key_id(k: Key) -> str:
    return f"reported={k[0]}-{k[1].value}-available={k[2]}"


@pytest.mark.parametrize(
    "key",
    _keys(),
    ids=_key_id,
)
def test_truth_table_row_equals_classify(key: Key) -> None:
    """SPEC 3: each combination's documented label is the one classify returns."""
    reported, state, available = key
    label = classify(reported, state, available)
    got = None if label is None else (label.outcome, label.swer_variant)
    assert got == spec_truth_table()[key]


def test_not_scoreable_row_is_the_unreadable_state_only() -> None:
    """SPEC 3: only an unreadable oracle makes an episode not scoreable."""
    table = spec_truth_table()
    dropped = {key for key, expected in table.items() if expected is None}
    assert dropped == {key for key in table if key[1] is TrueState.UNREADABLE}
