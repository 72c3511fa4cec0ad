"""The check-id registry (``effectbench.findings.CheckId``) and the docs' table agree."""

from __future__ import annotations

from pathlib import Path

from effectbench.findings import CheckId, Family, check_table, docs_check_table, with_check_table

DOCS = Path(__file__).resolve().parents[1] / "docs" / "verifier-report.md"


def test_docs_check_id_table_equals_the_registry() -> None:
    documented = docs_check_table(DOCS.read_text(encoding="utf-8"))
    assert documented == [(c.value, c.family.value, c.meaning) for c in CheckId]


def test_the_docs_table_is_the_generated_one() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert check_table() in text and with_check_table(text) == text


def test_every_id_is_family_dot_rule_with_a_meaning() -> None:
    for check in CheckId:
        family, _, rule = check.value.partition(".")
        assert check.family is Family(family) and rule and rule.islower()
        assert check.name == check.value.replace(".", "_").upper()
        assert check.meaning and "\n" not in check.meaning and "|" not in check.meaning
    assert {c.family for c in CheckId} == set(Family)
