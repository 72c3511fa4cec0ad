"""The generated catalogues draw exactly what they drew before the kit took over their draws
and their pack glue (issue 54, first part): every field of every task of the dev split, of one
fresh instance and of one sequestered split of the clinic and ticketing catalogues, and the
manifests the shipped bundles were verified against.

The digests below were computed on main before the refactoring (commit 3e3a7de); a change
that draws differently must bump the generator's version and re-make the references, and then
these pins with them.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from effectbench_ticketing.generated import CATALOGUE as TICKETING
from effectbench_ticketing.generated_pack import GeneratedTicketingProvider

from effectbench.hashing import canonical_hash
from effectbench.kit.catalogue import Catalogue
from effectbench.kit.generate import split_digest
from effectbench.manifest import fingerprint
from effectbench.packs.clinic.generated import CATALOGUE as CLINIC
from effectbench.packs.clinic.generated_pack import GeneratedClinicProvider

ROOT = Path(__file__).resolve().parents[1]
INSTANCE_SEED = "pin-seed-1"
SECRET = "pin-secret-1"

PINS: dict[str, dict[str, str]] = {
    "clinic": {
        "dev": "sha256:ba7d2f79e05ae9b5286e838492be50b2a688e8088541aa29f04b532955bcde00",
        "dev_split_digest": (
            "sha256:a83b05d8a8c42ce0af10802881ff8bfaa208cd53ca4305866654547c05ffb694"
        ),
        "instance": "sha256:59669cc16b041a372580d33b51a4498178b07fc2bbe417645a801f55936bf512",
        "sequestered": ("sha256:0f3e72924d4c698908922190545053de71c5d0c34a064996949d9333e44a286b"),
    },
    "ticketing": {
        "dev": "sha256:e86b1121630c1ace13a6d6008f9507c87bd5c8c9ff67aa000b6b72859d260386",
        "dev_split_digest": (
            "sha256:9767f0fc268e6e1c0960da5676a531521dd32675c722566664be0159011b1d61"
        ),
        "instance": "sha256:d7a6d2d7cd6ccd95cbd8c71a4698c93c3729abd8fd196835d70052717d8269a1",
        "sequestered": ("sha256:aedc0a696ac4e90acb5afaee30430b55909284fbfaf5d21ce82a5cfa0abac802"),
    },
}
CLINIC_INSTANCE_MANIFEST = "sha256:4a83f0984780940a9c5bf1d33baac8d65fb817adfe4f9a07a41cf168fc1dd9cd"
"""The fingerprint of the clinic catalogue's manifest for instance seed ``pin-seed-1``."""


def every_field(tasks: Sequence[Any]) -> str:
    """The canonical hash of every field of every task (worlds, faults and facts included)."""
    return canonical_hash([dataclasses.asdict(t) for t in tasks])


@pytest.mark.slow
@pytest.mark.parametrize(("pack", "catalogue"), [("clinic", CLINIC), ("ticketing", TICKETING)])
def test_the_splits_draw_what_they_drew(pack: str, catalogue: Catalogue[Any]) -> None:
    pins = PINS[pack]
    dev = catalogue.dev_split()
    assert every_field(dev) == pins["dev"]
    assert split_digest(dev) == pins["dev_split_digest"]
    assert every_field(catalogue.instance_split(INSTANCE_SEED)) == pins["instance"]
    sequestered = catalogue.sequestered_split(SECRET)
    assert sequestered is not None and every_field(sequestered) == pins["sequestered"]


def published(pack: str) -> str:
    return fingerprint(json.loads((ROOT / "docs" / "packs" / f"{pack}.manifest.json").read_text()))


@pytest.mark.slow
def test_the_clinic_catalogues_manifests_are_what_the_bundles_were_verified_against() -> None:
    with GeneratedClinicProvider() as provider:
        assert fingerprint(provider.manifest()) == published("clinic-generated")
    with GeneratedClinicProvider(seed=INSTANCE_SEED) as provider:
        assert fingerprint(provider.manifest()) == CLINIC_INSTANCE_MANIFEST


@pytest.mark.postgres
@pytest.mark.slow
def test_the_ticketing_catalogues_manifest_is_what_the_bundles_were_verified_against() -> None:
    """About 2.5 min: the manifest's flags come from the live audit of all 296 worlds."""
    with GeneratedTicketingProvider() as provider:
        assert fingerprint(provider.manifest()) == published("ticketing-generated")
