"""Which substrates a pack offers and which of its task variants a run chooses.

A pack that runs on several substrates declares them
(:class:`~effectbench.seam.OffersSubstrates`: ``substrates`` and what a run uses
by default, ``default_substrates``); every other pack offers the substrates its
tasks name. ``--substrate`` takes one name, a comma list, or
``all``.
"""

from __future__ import annotations

from collections.abc import Sequence

from effectbench.errors import UsageError
from effectbench.schema import Substrate, TaskSpec
from effectbench.seam import BenchmarkProvider, OffersSubstrates


def offered(pack: BenchmarkProvider) -> tuple[Substrate, ...]:
    """Return the substrates ``pack`` offers, in its order."""
    if isinstance(pack, OffersSubstrates):
        return tuple(pack.substrates)
    return tuple(dict.fromkeys(t.substrate for t in pack.tasks()))


def choose(pack: BenchmarkProvider, text: str | None) -> tuple[Substrate, ...]:
    """Parse a ``--substrate`` value for ``pack`` (``None``: the pack's default)."""
    have = offered(pack)
    if text is None:
        return tuple(pack.default_substrates) if isinstance(pack, OffersSubstrates) else have
    names = [n.strip() for n in text.split(",")]
    if "all" in names:
        return have
    chosen = []
    for name in names:
        try:
            substrate = Substrate(name)
        except ValueError:
            known = ", ".join(s.value for s in Substrate)
            raise UsageError(f"unknown substrate {name!r}; known: {known}, all") from None
        if substrate not in have:
            offers = ", ".join(s.value for s in have)
            raise UsageError(f"pack {pack.name!r} has no {name!r} substrate (it offers {offers})")
        if substrate not in chosen:
            chosen.append(substrate)
    return tuple(chosen)


def tasks_on(
    pack: BenchmarkProvider, substrates: Sequence[Substrate], split: str | None = None
) -> list[TaskSpec]:
    """Return ``pack``'s tasks on ``substrates`` (and in ``split``), in manifest order."""
    return [
        t
        for t in pack.tasks()
        if t.substrate in substrates and (split is None or t.split.value == split)
    ]


def named_tasks(
    pack: BenchmarkProvider,
    text: str,
    substrates: Sequence[Substrate],
    split: str | None = None,
) -> list[TaskSpec]:
    """Return the variants of the task ``text`` names (in ``split``), in manifest order.

    ``text`` is a task id (``clinic::clean_draft@web``) or its name with or without its
    prefix and a substrate (``clean_draft``, ``clean_draft@desktop``); a name
    without a substrate names its variants on ``substrates``, so the base id
    ``clinic::clean_draft`` (which is also the id of its ``api`` variant) with
    ``--substrate web`` names ``clinic::clean_draft@web``, through every door.
    """
    prefix, _, rest = text.rpartition("::")
    base, suffix = Substrate.base_of(rest), rest.removeprefix(Substrate.base_of(rest))[1:]
    found = []
    for task in pack.tasks():
        if split is not None and task.split.value != split:
            continue
        if task.task_id == text and (suffix or task.substrate in substrates):
            return [task]  # a full id; a base id (the api variant's) names its variants below
        own_prefix, _, own = task.task_id.rpartition("::")
        if Substrate.base_of(own) != base or prefix not in ("", own_prefix):
            continue
        if task.substrate.value == suffix if suffix else task.substrate in substrates:
            found.append(task)
    return found
