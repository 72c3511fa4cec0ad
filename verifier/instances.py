"""Fresh instances: a bundle's generated pack drawn again from the bundle's seed.

A pack that draws its tasks from a seed (:class:`effectbench.seam.DrawsInstances`) runs either
on its public dev seed (a bundle that declares no ``instances``, or declares that seed: accepted
and flagged *public-seed*) or on a fresh instance drawn from a submission seed. The verifier
draws that instance again (:func:`instance_pack`), so the pack's task facts and every receipt's
payload are the seed's; :func:`check_instance_rows` then refuses rows whose task was not drawn
from the seed (``pack.instance_task``, ``pack.instance_mixed``), and :mod:`verifier.receipts`
names a receipt whose payload was not (``pack.instance_payload``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from effectbench.bundle import RECEIPTS_VERSION, SubmissionHeader
from effectbench.findings import CheckId
from effectbench.kit.generate import GenerationError
from effectbench.seam import BenchmarkProvider, DrawsInstances
from verifier.report import FindingSink

__all__ = [
    "InstanceFacts",
    "check_instance_rows",
    "instance_pack",
    "instance_seed",
    "is_fresh",
    "rerun_hint",
]


@dataclass(frozen=True)
class InstanceFacts:
    """The instance a bundle ran on, as the report shows it."""

    seed: str
    public: bool
    """True for the pack's published dev seed (a public-seed bundle: its tasks are known)."""
    public_tasks: frozenset[str] = frozenset()
    """The task ids of the public-seed instance (to say when a fresh bundle holds them)."""


def is_fresh(pack: object) -> bool:
    """True when ``pack`` is an instance drawn from a seed other than its public one."""
    return isinstance(pack, DrawsInstances) and pack.instance_seed != pack.public_seed


def instance_seed(pack: object) -> str:
    """The seed ``pack``'s tasks were drawn from ("" for a pack that draws none)."""
    return pack.instance_seed if isinstance(pack, DrawsInstances) else ""


def rerun_hint(pack_name: str, seed: str) -> str:
    """What to re-run: every task of the instance drawn from ``seed``."""
    return (
        f"re-run every task of the instance drawn from seed {seed!r} (effectbench submit "
        f"--pack {pack_name} --instance-seed {seed!r}) and submit that bundle alone"
    )


def instance_pack(
    pack: BenchmarkProvider, header: SubmissionHeader, sink: FindingSink, file: str
) -> tuple[BenchmarkProvider | None, InstanceFacts | None]:
    """Return ``pack`` drawn from the bundle's seed, and the instance's facts.

    A pack that draws no instances keeps ``pack`` (a declared ``instances`` is then refused,
    ``pack.instance_seed``); a generator that raises or repeats a task gives ``(None, None)``
    and ``pack.instance_generator``.
    """
    declared = header.instances
    if not isinstance(pack, DrawsInstances):
        if declared is not None:
            sink.emit(
                CheckId.PACK_INSTANCE_SEED,
                f"pack {header.pack.name!r} draws no instances from a seed; remove "
                "'instances' or run a generated pack",
                file,
                None,
                "instances.seed",
            )
        return pack, None
    public_seed = pack.public_seed
    seed = public_seed if declared is None else declared.seed
    public_tasks = frozenset(t.task_id for t in pack.tasks())
    if seed != pack.instance_seed:
        try:
            pack = pack.instantiate(seed)
        except GenerationError as exc:
            sink.emit(
                CheckId.PACK_INSTANCE_GENERATOR,
                f"drawing pack {header.pack.name!r} from seed {seed!r} again failed: {exc}; "
                "nothing of this bundle can be checked against its instance",
                file,
                None,
                "instances.seed",
            )
            return None, None
    return pack, InstanceFacts(seed, seed == public_seed, public_tasks)


def check_instance_rows(
    header: SubmissionHeader,
    facts: InstanceFacts | None,
    drawn: Iterable[str],
    seen: Iterable[str],
    sink: FindingSink,
    files: Mapping[str, str],
) -> None:
    """Refuse rows whose task was not drawn from the instance's seed.

    ``drawn`` are the task ids of the instance, ``seen`` those the rows name; ``files`` names
    the ``rows`` and ``submission`` files.
    """
    drawn_ids, seen_ids = set(drawn), set(seen)
    if facts is None or not drawn_ids:  # an empty split is pack.split's to say
        return
    foreign = sorted(seen_ids - drawn_ids)
    hint = rerun_hint(header.pack.name, facts.seed)
    if foreign:
        from_public = [t for t in foreign if t in facts.public_tasks] if not facts.public else []
        said = f" ({len(from_public)} of them from the public dev seed)" if from_public else ""
        mixed = bool(seen_ids & drawn_ids)
        sink.emit(
            CheckId.PACK_INSTANCE_MIXED if mixed else CheckId.PACK_INSTANCE_TASK,
            f"{len(foreign)} task(s) of the rows were not drawn from seed {facts.seed!r}{said}, "
            f"e.g. {foreign[0]!r}" + (": the bundle mixes seeds; " if mixed else "; ") + hint,
            files["rows"],
        )
    if not facts.public and header.effectbench_bundle_version < RECEIPTS_VERSION:
        sink.emit(
            CheckId.PACK_INSTANCE_PAYLOAD,
            "a fresh instance's bundle needs a receipt per row (bundle format "
            f"{RECEIPTS_VERSION}) so each payload can be checked against its seed; {hint}",
            files["submission"],
            None,
            "effectbench_bundle_version",
        )
