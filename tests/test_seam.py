"""A pack's optional capabilities are declared in effectbench.seam and found by isinstance."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any

import pytest

from effectbench.baselines import BASELINES, baseline_names, get_baseline
from effectbench.errors import UsageError
from effectbench.packs.clinic import ClinicProvider
from effectbench.packs.mockmed import MockMedProvider
from effectbench.schema import TaskSpec
from effectbench.seam import (
    BenchmarkProvider,
    ChecksFrontEnds,
    Closable,
    Episode,
    HandsOffToWorkers,
    OffersSubstrates,
    OwnBaselines,
    Reproducible,
    ScriptedPack,
    is_deterministic,
    own_baselines,
)

# Checked by mypy: the shipped packs satisfy the capabilities they claim, statically.
_scripted: type[ScriptedPack] = MockMedProvider
_clinic_scripted: type[ScriptedPack] = ClinicProvider
_clinic_own: type[OwnBaselines] = ClinicProvider
_clinic_workers: type[HandsOffToWorkers] = ClinicProvider
_clinic_closable: type[Closable] = ClinicProvider
_mockmed_reproducible: type[Reproducible] = MockMedProvider
_clinic_substrates: type[OffersSubstrates] = ClinicProvider
_clinic_front_ends: type[ChecksFrontEnds] = ClinicProvider


class _Bare:
    """A pack with nothing optional: tasks, manifest, params and provisioning only."""

    name = "bare"

    def tasks(self) -> Sequence[TaskSpec]:
        return ()

    def manifest(self) -> dict[str, Any]:
        return {}

    def trial_params(self, task: TaskSpec, trial: int) -> dict[str, Any]:
        return {}

    def provision(
        self, task: TaskSpec, trial: int, params: Mapping[str, Any]
    ) -> AbstractContextManager[Episode]:
        raise NotImplementedError("never provisioned in these tests")


def test_the_shipped_packs_declare_their_capabilities() -> None:
    mockmed = MockMedProvider()
    assert isinstance(mockmed, ScriptedPack) and is_deterministic(mockmed)
    assert not isinstance(mockmed, OwnBaselines) and own_baselines(mockmed) == {}
    assert not isinstance(mockmed, OffersSubstrates | ChecksFrontEnds)
    with ClinicProvider() as clinic:
        every = (ScriptedPack, OwnBaselines, HandsOffToWorkers, Closable, Reproducible)
        for capability in (*every, OffersSubstrates, ChecksFrontEnds):
            assert isinstance(clinic, capability), capability.__name__
        assert is_deterministic(clinic)
        assert list(own_baselines(clinic)) == ["effect_verified_all", "look_before_write"]


def test_a_pack_without_capabilities_gets_the_defaults() -> None:
    bare: BenchmarkProvider = _Bare()
    assert not is_deterministic(bare)
    assert own_baselines(bare) == {}
    assert baseline_names(bare) == list(BASELINES)
    with pytest.raises(UsageError, match="no scripted attempt"):
        get_baseline("screen_only", bare)


def test_baseline_names_are_read_from_the_class_without_building_the_pack() -> None:
    own = ["effect_verified_all", "look_before_write"]
    assert baseline_names(ClinicProvider) == [*BASELINES, *own]
    assert baseline_names(MockMedProvider) == list(BASELINES)
