"""The pack kit's generated catalogue: a pack's templates, its splits and what its provider adds.

:class:`Catalogue` is one pack's generator (:mod:`.generate`) bound to its templates, the dev
split's counts and its published seed: :meth:`Catalogue.dev_split` draws the dev split (once
per process), :meth:`Catalogue.sequestered_split` the test split from the secret (a quarter of
the dev counts, at least 2 per template; None without the secret, never a public fallback).

:class:`GeneratedCatalogue` is what a :class:`~.provider.RecordPack` serving such a catalogue
adds, whatever its record, derived from one declaration (:class:`CatalogueVariant`: the
variant's name, catalogue, generator version, record identity and audited modules) and the
written provider it builds on: its definitions are the dev split then the sequestered split
(when the secret is set), a test split that is absent says why, each task's ``initial_state`` names
its own world's digest, and the public manifest lists the dev split only and commits to the
test split by its size and digest (``generation``). A generated task has a ``world`` with a
``digest`` (the seed state its episodes start from) and the name of its ``template``.

A provider built with ``seed=S`` serves the *fresh instance* drawn from submission seed ``S``
(:meth:`Catalogue.instance_split`: the dev split's templates and counts, every payload
carrying the seed's :class:`InstanceMark`); :meth:`GeneratedCatalogue.instantiate` draws one
from a provider, as ``effectbench submit --instance-seed`` and the verifier do
(:class:`~effectbench.seam.DrawsInstances`).

Every task runs on the API; the costly substrates (the screens) offer each split's declared
stratified sample (:func:`screen_sample`, named in the manifest), and the statistics count a
task's template, the level its outcomes correlate within (``cluster_of``,
:class:`~effectbench.seam.ClustersTasks`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from effectbench.hashing import canonical_hash
from effectbench.kit.audit import Attestation
from effectbench.kit.frontends import FrontEnds
from effectbench.kit.generate import (
    SECRET_ENV,
    Draw,
    Generated,
    Template,
    category_counts,
    generate,
    instance_catalogue_seed,
    sequestered_seed,
    split_digest,
    stratified_sample,
)
from effectbench.schema import Category, Split, Substrate, TaskSpec

__all__ = [
    "CATALOGUE_MODULES",
    "SCREEN_SAMPLE",
    "Catalogue",
    "CatalogueVariant",
    "GeneratedCatalogue",
    "InstanceMark",
    "marked",
    "screen_sample",
    "situation_template",
]

T = TypeVar("T", bound=Generated)

SCREEN_SAMPLE = 8
"""Tasks per category (controls included) each split offers on a screen substrate."""


_CONSONANTS = "bdfghklmnprstvwz"
_VOWELS = "aeio"


@dataclass(frozen=True)
class InstanceMark:
    """The parts of a fresh instance's mark (:func:`effectbench.hashing.instance_mark`, as
    :attr:`Draw.mark` holds it) a generated payload carries, each from its own hex digits:

    * ``word``: six syllables (2^36 values), a suffix for every name drawn (``Fikibomedego``);
    * ``digits``: eight digits (10^8 values) appended to every account number or record code;
    * ``ids``: an offset for every row id (10^6 values: a multiple of 1000, 1000 to 10^9);
    * ``cents``: 1 to 99 cents added to every amount already on the record;
    * ``tag``: ``(ref HEX12)`` (2^48 values) after every text drawn (:func:`marked`).
    """

    word: str
    digits: str
    ids: int
    cents: int
    tag: str

    @classmethod
    def of(cls, mark: str | None) -> InstanceMark | None:
        """Return the parts of ``mark`` (None: an unmarked draw, as the public dev split's)."""
        if mark is None:
            return None
        bits = int(mark[:9], 16)  # 36 bits: six syllables of 6 bits
        syllables = []
        for _ in range(6):
            syllables.append(_CONSONANTS[bits & 15] + _VOWELS[(bits >> 4) & 3])
            bits >>= 6
        return cls(
            word="".join(syllables).capitalize(),
            digits=f"{int(mark[9:17], 16) % 10**8:08d}",
            ids=(int(mark[17:25], 16) % 10**6 + 1) * 1000,
            cents=int(mark[25:27], 16) % 99 + 1,
            tag=f"(ref {mark[27:39]})",
        )


def marked(text: str, mark: InstanceMark | None) -> str:
    """Return ``text`` with the instance's tag after it (``text`` itself when unmarked)."""
    return text if mark is None else f"{text} {mark.tag}"


def screen_sample(tasks: Sequence[Any]) -> tuple[Any, ...]:
    """The declared sample of ``tasks`` offered on the screens (web, desktop, remote display):
    :data:`SCREEN_SAMPLE` per category, one per template in turn."""
    return stratified_sample(tasks, SCREEN_SAMPLE, lambda t: t.template)


def situation_template(
    name: str,
    category: Category,
    title: str,
    build: Callable[[Draw, str, Split, Any], T],
    fault: Any,
) -> Template[T]:
    """Return the template ``name``: each draw first settles the task's fault (``fault`` itself,
    or, when it is a function of the draw, what it draws: the fault's parameters), then has
    ``build`` draw the task around it from the same random source (the name and split given)."""

    def draw(d: Draw, task_name: str, split: Split) -> T:
        settled = fault(d) if callable(fault) else fault
        return build(d, task_name, split, settled)

    return Template(name=name, category=category, draw=draw, title=title)


class Catalogue(Generic[T]):
    """A pack's templates, the dev split's counts and seed, and the splits drawn from them."""

    def __init__(
        self,
        generator: str,
        templates: Sequence[Template[T]],
        dev_counts: Mapping[str, int],
        dev_seed: str,
    ) -> None:
        self.generator = generator
        """What draws the catalogue, and its version (the manifest names it)."""
        self.templates = tuple(templates)
        self.dev_counts = dict(dev_counts)
        self.dev_seed = dev_seed
        self.test_counts = {name: max(2, -(-n // 4)) for name, n in self.dev_counts.items()}
        """The sequestered split: a quarter of the dev split's counts (at least 2 each)."""
        self._splits: dict[str, tuple[T, ...]] = {}

    def dev_split(self) -> tuple[T, ...]:
        """The dev split, drawn from the published seed (once per process)."""
        if "" not in self._splits:
            self._splits[""] = generate(self.templates, self.dev_counts, self.dev_seed, Split.DEV)
        return self._splits[""]

    def instance_split(self, seed: str) -> tuple[T, ...]:
        """The dev split's fresh instance for submission seed ``seed`` (once per process): the
        same templates and counts, drawn from ``seed`` (:func:`~.generate.instance_catalogue_seed`)
        so that every payload carries its mark (the published seed gives the dev split itself,
        unmarked). Raises ``GenerationError`` naming a template that raises or repeats a task."""
        if seed == self.dev_seed:
            return self.dev_split()
        key = instance_catalogue_seed(seed)
        if key not in self._splits:
            self._splits[key] = generate(self.templates, self.dev_counts, key, Split.DEV)
        return self._splits[key]

    def instance_slots(self, seed: str) -> dict[str, str]:
        """Map each task id of ``seed``'s instance to the public dev task drawn from the same
        template and index: the pairs of a contamination delta
        (:func:`effectbench.metrics.contamination_delta`)."""
        fresh: Sequence[Any] = self.instance_split(seed)
        public: Sequence[Any] = self.dev_split()
        return {f.task_id: p.task_id for f, p in zip(fresh, public, strict=True)}

    def sequestered_split(self, secret: str | None = None) -> tuple[T, ...] | None:
        """The sequestered split drawn from ``secret`` (default: the environment's), or None."""
        seed = secret if secret is not None else sequestered_seed()
        if seed is None:
            return None
        key = f"sequestered\x00{seed}"
        if key not in self._splits:
            self._splits[key] = generate(self.templates, self.test_counts, key, Split.TEST)
        return self._splits[key]


CATALOGUE_MODULES = (
    "effectbench.kit.catalogue",
    "effectbench.kit.draws",
    "effectbench.kit.generate",
)
"""The kit's modules every catalogue variant's audit depends on (beside the audit's own)."""


@dataclass(frozen=True)
class CatalogueVariant:
    """The one declaration a pack's catalogue variant is derived from (:class:`GeneratedCatalogue`
    reads it off a provider class as its ``variant``), the way a task is derived from another
    with a few fields replaced: what is not declared here is the pack's written provider's."""

    name: str
    """The variant's pack name (its task ids are ``NAME::TASK``, its front ends' variant ids
    are under it)."""
    catalogue: Catalogue[Any]
    """The templates, dev counts and seed it serves."""
    generator_version: int
    """Bumped whenever a template draws differently (the pack's fingerprint changes with it)."""
    record: Mapping[str, Any]
    """The seed identity of the record the worlds are added to (``{"clinic": DIGEST}``)."""
    modules: tuple[str, ...]
    """The pack's modules whose source decides the variant's audit (the kit's, the
    :data:`CATALOGUE_MODULES` and the provider's own module are added)."""
    oracle: Hashable
    """The default oracle factory (the one whose audit is cached and handed to workers)."""

    def template_digest(self) -> str:
        """The variant's seed identity: the record's, the generator's version and the dev seed
        (each task's own world digest is in its ``initial_state``)."""
        return canonical_hash(
            {**self.record, "generator": self.generator_version,
             "dev_seed": self.catalogue.dev_seed}
        )  # fmt: skip

    def attestation(self, owner: str) -> Attestation:
        """The variant's audit, per oracle factory, kept at ``owner`` (``module:attribute``)."""
        module = owner.partition(":")[0]
        return Attestation(owner, (*CATALOGUE_MODULES, *self.modules, module), self.oracle)


class GeneratedCatalogue:
    """What a pack serving a :class:`Catalogue` adds to its provider (a mixin, listed before
    the :class:`~.provider.RecordPack` it builds on; see the module's docstring).

    A provider class that states ``variant`` (a :class:`CatalogueVariant`) gets the rest from
    it and from the written provider it derives from: its ``name``, its front ends (the written
    pack's, under the variant's name), its ``attestation``, its ``template_digest`` and its
    ``catalogue``. Such a class holds nothing else but the world loader of its record."""

    catalogue: ClassVar[Catalogue[Any]]
    variant: ClassVar[CatalogueVariant]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        declared = cls.__dict__.get("variant")
        if declared is None:  # a subclass of a variant (a test's, a benchmark's) keeps its own
            return
        written: FrontEnds = getattr(cls, "front_ends")  # noqa: B009 (the written pack's)
        derived = {
            "name": declared.name,
            "catalogue": declared.catalogue,
            "front_ends": FrontEnds(declared.name, written.entries),
            "attestation": declared.attestation(f"{cls.__module__}:{cls.__qualname__}.attestation"),
            "template_digest": declared.template_digest(),
        }
        for attribute, value in derived.items():
            setattr(cls, attribute, value)

    def __init__(self, *args: Any, seed: str | None = None, **kwargs: Any) -> None:
        """``seed``: the submission seed of the fresh instance to serve (default: the published
        dev seed); the other arguments are the provider's own. Raises ``GenerationError``
        naming a template whose draw raises or repeats a task."""
        seed = self.catalogue.dev_seed if seed is None else seed
        if not isinstance(seed, str) or not seed:
            raise ValueError("an instance seed is a non-empty string")
        self._seed = seed
        self._dev = self.catalogue.instance_split(seed)
        self._made_with = (args, kwargs)
        self._secret_split = self.catalogue.sequestered_split()
        super().__init__(*args, **kwargs)

    @property
    def public_seed(self) -> str:
        """The published seed of the dev split."""
        return self.catalogue.dev_seed

    @property
    def instance_seed(self) -> str:
        """The seed this provider's dev split was drawn from."""
        return self._seed

    def instantiate(self, seed: str) -> Any:
        """This pack's dev split drawn afresh from submission seed ``seed`` (same templates,
        counts and generator; every payload carries the seed's mark), built with this
        provider's arguments. Raises ``GenerationError`` naming a broken template."""
        args, kwargs = self._made_with
        return type(self)(*args, **kwargs, seed=seed)

    def dev(self) -> tuple[Any, ...]:
        """The dev split of this provider's instance seed."""
        return self._dev

    def definitions(self) -> Sequence[Any]:
        """The dev split, then the sequestered split when its secret is set."""
        return self.dev() + (self._secret_split or ())

    def definitions_on(self, substrate: Substrate) -> Sequence[Any]:
        """Every task on the API; each split's declared :func:`screen_sample` on a screen."""
        if substrate is Substrate.API:
            return self.definitions()
        return screen_sample(self.dev()) + screen_sample(self._secret_split or ())

    def cluster_of(self, task: TaskSpec) -> str:
        """The statistics' unit: ``task``'s template on its substrate (outcomes correlate
        within a template; docs/generated-tasks.md, "How to cluster the statistics")."""
        definition = self.definition(task)  # type: ignore[attr-defined]
        return str(self.front_ends.variant_id(definition.template, task.substrate))  # type: ignore[attr-defined]

    def split_absent(self, split: str) -> str | None:
        """Why ``split`` has no task here (None: it has some, or no reason to give)."""
        if split == Split.TEST.value and self._secret_split is None:
            return (
                f"the sequestered split is drawn from the secret in {SECRET_ENV}, which is not "
                "set (there is no public fallback seed); set it and run again"
            )
        return None

    def _task_spec(self, d: Any, audited: bool, substrate: Substrate) -> TaskSpec:
        spec: TaskSpec = super()._task_spec(d, audited, substrate)  # type: ignore[misc]
        state = {**spec.initial_state, "template": d.world.digest}
        return spec.model_copy(update={"initial_state": state})

    def manifest(self) -> dict[str, Any]:
        """The public manifest: the dev split's tasks, and the sequestered split by digest."""
        manifest: dict[str, Any] = super().manifest()  # type: ignore[misc]
        public = [t for t in manifest["tasks"] if t["split"] != Split.TEST.value]
        manifest["tasks"] = public
        manifest["n_tasks"] = len(public)
        ids = {t["task_id"] for t in public}
        manifest["payload_wiring"] = {
            tid: w for tid, w in manifest["payload_wiring"].items() if tid in ids
        }
        dev, secret = self.dev(), self._secret_split
        manifest["generation"] = {
            "generator": self.catalogue.generator,
            "templates": [t.name for t in self.catalogue.templates],
            "dev": {"seed": self.instance_seed, "tasks": len(dev),
                    "categories": category_counts(dev)},
            "screens": {"per_category": SCREEN_SAMPLE, "stratum": "template",
                        "dev_tasks": [d.name for d in screen_sample(dev)]},
            "test": (
                {"present": True, "tasks": len(secret), "digest": split_digest(secret)}
                if secret is not None
                else {"present": False, "reason": f"{SECRET_ENV} is not set: the sequestered "
                      "split is not generated (there is no public fallback seed)"}
            ),
        }  # fmt: skip
        return manifest
