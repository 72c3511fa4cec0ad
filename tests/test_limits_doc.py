"""Every limit ``docs/bundle-format.md`` states is the code's default, and every limit is stated.

The table names, for each limit, the code it documents (``Limits.FIELD`` or
``bundle.NAME``) and the option that raises it; this test reads the table and
compares each default with the code, each option with the command line's.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from effectbench import bundle
from effectbench.cli._verify import LIMIT_OPTIONS
from verifier.limits import Limits

DOC = Path(__file__).resolve().parents[1] / "docs" / "bundle-format.md"
UNITS = {"": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}


def _table() -> list[list[str]]:
    """The rows of the Limits section's table, cells stripped of their code quotes."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Limits\n") :]
    section = section[: section.find("\n## ", 5)] if "\n## " in section[5:] else section
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in section.splitlines()
        if line.startswith("|") and not line.startswith("|---")
    ]
    return [[cell.strip("`") for cell in row] for row in rows[1:]]  # the header row left out


def _amount(text: str) -> int:
    number, _, unit = text.partition(" ")
    return int(number.replace(",", "")) * UNITS[unit]


def _code(name: str) -> int:
    owner, _, attr = name.partition(".")
    assert owner in ("Limits", "bundle"), name
    return int(getattr(Limits(), attr) if owner == "Limits" else getattr(bundle, attr))


def test_every_stated_limit_is_the_codes_default() -> None:
    rows = _table()
    assert rows
    for what, default, option, code in rows:
        assert _amount(default) == _code(code), f"{what}: the docs say {default}, {code} differs"
        if option:
            fields = {flag: field for flag, field, _ in LIMIT_OPTIONS}
            assert f"Limits.{fields[option]}" == code, f"{option} raises another limit"


def test_every_limit_of_the_code_is_stated() -> None:
    stated = {code for *_, code in _table()}
    assert {f"Limits.{f.name}" for f in dataclasses.fields(Limits)} <= stated
    assert {"bundle.MAX_TRIALS", "bundle.MAX_LISTED"} <= stated
    options = {option for _, _, option, _ in _table() if option}
    assert options == {flag for flag, _, _ in LIMIT_OPTIONS}
    prose = re.findall(r"([\d,]+) trials", DOC.read_text(encoding="utf-8"))
    assert f"{bundle.MAX_TRIALS:,}" in prose  # the paragraph on the cap names its value
