"""The pack kit's task generator: task definitions drawn from templates and a seed.

A pack that generates its catalogue states :class:`Template` values, one per situation it
knows how to build (a divergence category, or a control), and how many tasks each draws per
split. :func:`generate` draws them: every task gets a :class:`Draw` of its own, a random source
seeded by ``(catalogue seed, template, index)`` alone, so a task's id, situation and payload
are stable from the template and the seed, whatever else the catalogue holds.

What makes two generated tasks *distinct* is :func:`distinct_key`: the task's situation (what
its fault does and where: which field is dropped, which chart a lookup lands on, ...) and its
drawn payload (names, dates of birth, identifiers, note text, encounter type, codes), without
the per-trial tag every task has anyway. :func:`generate` refuses a catalogue where two tasks
share a key, or a template whose draw raises, naming the template
(:class:`GenerationError`).

The sequestered split is drawn the same way from a seed that is never published: the secret in
:data:`SECRET_ENV`. Without it the split is absent (:func:`sequestered_seed` returns None, and
never falls back to a public seed); the public manifest commits to the split by
:func:`split_digest` only.
"""

from __future__ import annotations

import hashlib
import os
import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from effectbench.hashing import canonical_hash, instance_mark
from effectbench.schema import Category, Split

__all__ = [
    "SECRET_ENV",
    "Draw",
    "Generated",
    "GenerationError",
    "INSTANCE_PREFIX",
    "Template",
    "category_counts",
    "distinct_key",
    "generate",
    "instance_catalogue_seed",
    "sequestered_seed",
    "split_digest",
    "stratified_sample",
]

SECRET_ENV = "EFFECTBENCH_SEQUESTERED_SECRET"
"""The environment variable holding the sequestered split's secret seed."""
INSTANCE_PREFIX = "instance\x00"
"""How a catalogue seed drawn for a submission seed starts (:func:`instance_catalogue_seed`)."""


def instance_catalogue_seed(seed: str) -> str:
    """Return the catalogue seed of the fresh instance drawn for submission seed ``seed``
    (its draws carry :attr:`Draw.mark`; the public and sequestered seeds' draws do not)."""
    return INSTANCE_PREFIX + seed


class GenerationError(ValueError):
    """A template whose draw raised, or two drawn tasks that are not distinct."""


class Generated(Protocol):
    """What a generated task definition states beside :class:`~.provider.TaskDefinition`."""

    @property
    def name(self) -> str:
        """Its name (``TEMPLATE-DIGEST``)."""
        ...

    @property
    def category(self) -> Category:
        """Its divergence category (or ``control``)."""
        ...

    def situation(self) -> Mapping[str, Any]:
        """What the task's fault does and where (its situation family is a part of it)."""
        ...

    def payload(self) -> Mapping[str, Any]:
        """The drawn payload: names, dates, identifiers, texts, codes (no per-trial tag)."""
        ...


T = TypeVar("T", bound=Generated)


class Draw:
    """One task's random source: seeded by the catalogue's seed, the template and an index."""

    def __init__(self, seed: str, template: str, index: int) -> None:
        digest = hashlib.sha256(f"{seed}\x00{template}\x00{index}".encode()).digest()
        self.digest = digest.hex()
        """The draw's identity (the task's name is made from it)."""
        self._rng = random.Random(int.from_bytes(digest, "big"))
        self.seed = seed
        """The catalogue seed the draw is made from."""
        self.mark: str | None = (
            instance_mark(seed.removeprefix(INSTANCE_PREFIX))
            if seed.startswith(INSTANCE_PREFIX)
            else None
        )
        """A fresh instance's mark (:func:`effectbench.hashing.instance_mark` of its submission
        seed), which its payload carries; None for any other seed."""

    def name(self, template: str) -> str:
        """Return the task's name: the template's and the draw's first 10 hex digits."""
        return f"{template}-{self.digest[:10]}"

    def choice(self, options: Sequence[Any]) -> Any:
        """Return one of ``options``, uniformly."""
        return options[self._rng.randrange(len(options))]

    def sample(self, options: Sequence[Any], k: int) -> list[Any]:
        """Return ``k`` distinct members of ``options``."""
        return self._rng.sample(list(options), k)

    def integer(self, lo: int, hi: int) -> int:
        """Return an integer in ``[lo, hi]``."""
        return self._rng.randint(lo, hi)

    def chance(self, p: float) -> bool:
        """Return True with probability ``p``."""
        return self._rng.random() < p


@dataclass(frozen=True)
class Template(Generic[T]):
    """One situation a pack can build: its category, its family and how a task is drawn."""

    name: str
    """The template's name (every task it draws is named ``NAME-DIGEST``)."""
    category: Category
    """The divergence category of every task it draws."""
    draw: Callable[[Draw, str, Split], T]
    """Draw one task from a random source, given its name and split."""
    title: str = ""
    """What the template builds, in a line."""


def distinct_key(task: Generated) -> str:
    """Return what two distinct generated tasks never share: the canonical hash of the task's
    situation and drawn payload (its name, id and per-trial tag left out)."""
    return canonical_hash({"situation": dict(task.situation()), "payload": dict(task.payload())})


def generate(
    templates: Sequence[Template[T]], counts: Mapping[str, int], seed: str, split: Split
) -> tuple[T, ...]:
    """Draw ``counts[template]`` tasks from each template with ``seed``, in template order.

    Raises :class:`GenerationError` naming the template when its draw raises, when a count
    names no template, or when a drawn task repeats another's name or :func:`distinct_key`.
    """
    known = {t.name for t in templates}
    unknown = sorted(set(counts) - known)
    if unknown:
        raise GenerationError(f"counts name no template: {', '.join(unknown)}")
    out: list[T] = []
    names: dict[str, str] = {}
    keys: dict[str, str] = {}
    for template in templates:
        for index in range(counts.get(template.name, 0)):
            draw = Draw(seed, template.name, index)
            name = draw.name(template.name)
            try:
                task = template.draw(draw, name, split)
            except Exception as exc:  # noqa: BLE001 - any failure of a template is named
                raise GenerationError(
                    f"template {template.name!r} raised on draw {index} ({exc!r}): fix the "
                    "template, then generate again"
                ) from exc
            if task.category is not template.category:
                raise GenerationError(
                    f"template {template.name!r} drew a {task.category.value} task; it is "
                    f"declared {template.category.value}"
                )
            key = distinct_key(task)
            for seen, value, what in (
                (names, task.name, "name"),
                (keys, key, "situation and payload"),
            ):
                if value in seen:
                    raise GenerationError(
                        f"template {template.name!r} drew task {task.name} with the same "
                        f"{what} as {seen[value]}: draw more distinct values or fewer tasks"
                    )
                seen[value] = task.name
            out.append(task)
    return tuple(out)


def category_counts(tasks: Sequence[Generated]) -> dict[str, int]:
    """Return how many tasks of each category ``tasks`` holds (by category value)."""
    return dict(sorted(Counter(t.category.value for t in tasks).items()))


def stratified_sample(
    tasks: Sequence[T], per_category: int, stratum: Callable[[T], str]
) -> tuple[T, ...]:
    """Return ``per_category`` tasks of each category (all of a smaller one), in ``tasks``'
    order: within a category, one task of each stratum (``stratum(task)``, e.g. its template)
    in turn, in order of first appearance, so the sample spreads over the strata.

    What a pack offers on its costly substrates (screens) when its catalogue is large; the
    choice depends on the tasks alone, so it is stable for a given split.
    """
    chosen: set[str] = set()
    by_category: dict[Category, dict[str, list[T]]] = {}
    for task in tasks:
        by_category.setdefault(task.category, {}).setdefault(stratum(task), []).append(task)
    for strata in by_category.values():
        queues = [list(q) for q in strata.values()]
        taken = 0
        while taken < per_category and any(queues):
            for queue in queues:
                if queue and taken < per_category:
                    chosen.add(queue.pop(0).name)
                    taken += 1
    return tuple(t for t in tasks if t.name in chosen)


def sequestered_seed(environ: Mapping[str, str] | None = None) -> str | None:
    """Return the sequestered split's secret seed from :data:`SECRET_ENV`, or None (then the
    split is absent: there is no public fallback)."""
    secret = (os.environ if environ is None else environ).get(SECRET_ENV, "")
    return secret or None


def split_digest(tasks: Sequence[Generated]) -> str:
    """Return the commitment to a split: the canonical hash of its tasks' names and keys."""
    return canonical_hash([[t.name, distinct_key(t)] for t in tasks])
