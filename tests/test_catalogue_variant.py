"""A pack's catalogue variant is derived from one declaration (issue 54): the kit's
:class:`~effectbench.kit.catalogue.CatalogueVariant` gives the provider its name, its front
ends, its attestation (reachable by worker processes from its owner path), its template digest
and its catalogue; the pack states only the declaration and its record's world loader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from effectbench.baselines import get_baseline
from effectbench.cli import main
from effectbench.kit.audit import AuditHandoff
from effectbench.kit.catalogue import Catalogue, CatalogueVariant, GeneratedCatalogue
from effectbench.kit.sqlite import SqliteOracle, SqliteWorlds
from effectbench.packs import instance_packs
from effectbench.packs.clinic import db
from effectbench.packs.clinic.generated import NAME, TEMPLATES
from effectbench.packs.clinic.generated_pack import GeneratedClinicProvider
from effectbench.packs.clinic.provider import ClinicProvider
from effectbench.run.runner import evaluate
from effectbench.schema import Substrate

ROOT = Path(__file__).resolve().parents[1]
PICKED = ("clean_draft", "partial_draft")
SMALL = Catalogue(
    "a test's catalogue v1",
    tuple(t for t in TEMPLATES if t.name in PICKED),
    dict.fromkeys(PICKED, 1),
    "a-test-dev-seed",
)


class SmallClinicVariant(GeneratedCatalogue, SqliteWorlds, ClinicProvider):
    """Two generated clinic tasks, declared as the shipped variant is."""

    variant = CatalogueVariant(
        name=NAME,
        catalogue=SMALL,
        generator_version=7,
        record={"clinic": db.TEMPLATE_DIGEST},
        modules=("effectbench.packs.clinic.generated",),
        oracle=SqliteOracle,
    )


def test_the_shipped_variant_is_derived_from_its_declaration() -> None:
    published = json.loads((ROOT / "docs/packs/clinic-generated.manifest.json").read_text())
    cls = GeneratedClinicProvider
    assert cls.name == cls.variant.name == NAME
    assert cls.catalogue is cls.variant.catalogue
    assert cls.template_digest == published["system_of_record"]["template_digest"]
    assert cls.front_ends.pack == NAME
    assert cls.front_ends.entries == ClinicProvider.front_ends.entries
    assert ClinicProvider.name == "clinic"  # the written pack is left as it is
    modules = cls.attestation._modules
    assert "effectbench.kit.draws" in modules and cls.__module__ in modules


def test_a_worker_finds_the_variants_attestation_by_its_owner(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    attestation = GeneratedClinicProvider.attestation
    monkeypatch.setattr(attestation, "_results", {})
    assert attestation.owner.endswith(":GeneratedClinicProvider.attestation")
    assert AuditHandoff(attestation.owner, "another code's key", {}).install() is False
    assert AuditHandoff(attestation.owner, attestation.key, {}).install() is True


def test_a_subclass_without_a_declaration_keeps_its_variants() -> None:
    class Fewer(GeneratedClinicProvider):
        pass

    assert Fewer.attestation is GeneratedClinicProvider.attestation
    assert Fewer.template_digest == GeneratedClinicProvider.template_digest


@pytest.mark.slow
def test_a_variant_declared_elsewhere_serves_and_runs_its_own_catalogue() -> None:
    assert SmallClinicVariant.attestation is not GeneratedClinicProvider.attestation
    assert SmallClinicVariant.template_digest != GeneratedClinicProvider.template_digest
    with SmallClinicVariant() as pack:
        api = [t for t in pack.tasks() if t.substrate is Substrate.API]
        assert [t.task_id for t in api] == [f"{NAME}::{d.name}" for d in SMALL.dev_split()]
        manifest = pack.manifest()
        assert manifest["generation"]["templates"] == list(PICKED)
        assert manifest["generation"]["dev"]["seed"] == "a-test-dev-seed"
        assert manifest["system_of_record"]["template_digest"] == pack.template_digest
        assert all(t.oracle.adversarially_audited for t in api)
        runs = {
            arm: evaluate(get_baseline(arm, pack), pack, trials=1, tasks=api)
            for arm in ("screen_only", "effect_verified_all")
        }
    assert not any(run.dropped for run in runs.values())
    outcomes = {
        arm: {r.task_id.split("::")[1].rsplit("-", 1)[0]: r.outcome.value for r in run.rows}
        for arm, run in runs.items()
    }
    assert outcomes["screen_only"]["partial_draft"] == "silent_wrong_effect"
    assert "silent_wrong_effect" not in outcomes["effect_verified_all"].values()
    assert set(outcomes["effect_verified_all"]) == set(PICKED)


def test_the_commands_name_the_installed_packs_that_draw_instances(
    capsys: pytest.CaptureFixture[str],
) -> None:
    drawing = instance_packs()
    assert drawing == ["clinic-generated", "ticketing-generated"]
    assert main(["run", "--pack", "mockmed", "--instance-seed", "x", "--trials", "1"]) != 0
    err = capsys.readouterr().err.strip()
    assert err.endswith(f"(a generated pack does: {', '.join(drawing)})"), err
    assert len(err.splitlines()) == 1
