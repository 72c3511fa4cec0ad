"""The ``clinic-generated`` pack: the clinic's app, faults and oracle over generated tasks.

The clinic pack (:mod:`.provider`) keeps its 30 written tasks (its fingerprint, and so the
shipped reference bundles, stay as they are); this pack serves the generated catalogue
(:mod:`.generated`) on the same service, front ends, faults, audit plan and oracle. It is
derived from one declaration (:class:`~effectbench.kit.catalogue.CatalogueVariant`); its
record is the kit's SQLite one with a world per task
(:class:`~effectbench.kit.sqlite.SqliteWorlds`): an episode starts from a copy of *its task's*
seed file (built once per process, on first use), the adversarial audit probes each task on
its own world, and a task's ``initial_state`` names its world's digest. Switching the clinic
board to the generated catalogue later is: make these definitions the clinic's, and re-make
the references.

The public manifest lists the dev split; the sequestered split (present only with the secret in
``EFFECTBENCH_SEQUESTERED_SECRET``) is committed to by its digest and size alone
(``generation`` in the manifest says which).
"""

from __future__ import annotations

from effectbench.kit.catalogue import (
    SCREEN_SAMPLE,
    CatalogueVariant,
    GeneratedCatalogue,
    screen_sample,
)
from effectbench.kit.sqlite import SqliteOracle, SqliteWorlds, WorldTemplate, world_template
from effectbench.packs.clinic import db
from effectbench.packs.clinic.generated import CATALOGUE, GENERATOR_VERSION, NAME
from effectbench.packs.clinic.provider import ClinicProvider

__all__ = [
    "SCREEN_SAMPLE",
    "GeneratedClinicProvider",
    "WorldTemplate",
    "screen_sample",
    "world_template",
]


class GeneratedClinicProvider(GeneratedCatalogue, SqliteWorlds, ClinicProvider):
    """The clinic's app over the generated catalogue (see the module's docstring).

    ``GeneratedClinicProvider(seed=S)`` serves the fresh instance drawn from submission seed
    ``S`` (:class:`~effectbench.kit.catalogue.GeneratedCatalogue`)."""

    variant = CatalogueVariant(
        name=NAME,
        catalogue=CATALOGUE,
        generator_version=GENERATOR_VERSION,
        record={"clinic": db.TEMPLATE_DIGEST},
        modules=(
            "effectbench.kit.sqlite",
            "effectbench.packs.clinic.audit",
            "effectbench.packs.clinic.db",
            "effectbench.packs.clinic.store",
            "effectbench.packs.clinic.tasks",
            "effectbench.packs.clinic.generated",
        ),
        oracle=SqliteOracle,
    )
