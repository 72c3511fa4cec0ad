"""The pack kit's generic draws: the small pieces a pack's templates compose into a task.

A generated task (:mod:`.generate`) is drawn from one random source (:class:`~.generate.Draw`)
in a fixed order, and a pack composes its draw from named pieces (a person, a homonym, a
neighbourhood, the fault's settlement, ...), as Hypothesis composes strategies. What every
pack draws the same way, whatever its record, is here:

* :func:`until` draws again until a value is fresh (a name not yet used, a date unlike
  another), and :func:`number` a new identifier number in a range;
* :func:`date` an ISO date;
* :class:`Scene` is a task's neighbourhood while it is drawn, with what a fresh instance's
  mark (:class:`~.catalogue.InstanceMark`) adds to a name (:meth:`Scene.named`), a code
  (:attr:`Scene.digits`), a row id (:meth:`Scene.id`), an amount (:meth:`Scene.cents`) and a
  text (:meth:`Scene.text`);
* :class:`Situation` is one row of a pack's template grid (its name, category, title, dev
  count, the shape the template fixes and its fault) and :func:`template_grid` turns the grid
  into the templates and the dev split's counts (:class:`~.catalogue.Catalogue`).

Each piece draws from the task's random source in the order it is called; a piece that
changes what or when it draws changes every task after it (the generator's version is bumped
then).
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from effectbench.kit.catalogue import InstanceMark, marked, situation_template
from effectbench.kit.generate import Draw, Generated, Template
from effectbench.schema import Category, Split

__all__ = [
    "Scene",
    "Situation",
    "date",
    "earlier_postings",
    "kind_of_homonym",
    "last_posted",
    "number",
    "template_grid",
    "until",
]

V = TypeVar("V")
S = TypeVar("S")
T = TypeVar("T", bound=Generated)
T_co = TypeVar("T_co", bound=Generated, covariant=True)


def until(draw: Callable[[], V], fresh: Callable[[V], bool]) -> V:
    """Return the first value ``draw()`` gives that is ``fresh``."""
    while True:
        value = draw()
        if fresh(value):
            return value


def date(d: Draw, first_year: int, last_year: int) -> str:
    """Return an ISO date between ``first_year`` and ``last_year`` (days 1 to 28)."""
    return f"{d.integer(first_year, last_year)}-{d.integer(1, 12):02d}-{d.integer(1, 28):02d}"


def number(d: Draw, lo: int, hi: int, taken: set[int], reserved: Container[int] = ()) -> int:
    """Return a number in ``[lo, hi]`` neither ``taken`` by the task nor ``reserved`` by the
    record's seed rows, and take it."""
    n = until(lambda: d.integer(lo, hi), lambda n: n not in taken and n not in reserved)
    taken.add(n)
    return n


def kind_of_homonym(
    d: Draw, fixed: str, kinds: Sequence[str], every: Sequence[str], rate: float
) -> str | None:
    """Return how the task's same-name record (its *homonym*) differs, or None for none.

    ``fixed`` is what the template fixes: ``optional`` (with probability ``rate``, one of
    ``every``), ``forced`` or ``first`` (one of the template's ``kinds``), or the kind itself
    (``identical``, ``stale``, ...)."""
    if fixed == "optional":
        return str(d.choice(every)) if d.chance(rate) else None
    if fixed in ("forced", "first"):
        return str(d.choice(kinds))
    return fixed


def earlier_postings(d: Draw, stranger: str, homonym: str | None) -> list[str]:
    """Return whose accounts hold the earlier postings (charges, credits) of the world, in the
    order they were posted: a stranger's and, half the time, the homonym's (when there is
    one). The last one posted is whose account a misrouted posting lands on."""
    posted = [stranger] + ([homonym] if homonym is not None and d.chance(0.5) else [])
    if d.chance(0.5):
        posted.reverse()
    return posted


def last_posted(posted: Sequence[str], homonym: str | None) -> str:
    """Whose account was posted to last (:func:`earlier_postings`): ``homonym`` or
    ``stranger``."""
    return "homonym" if homonym is not None and posted[-1] == homonym else "stranger"


@dataclass
class Scene:
    """A task's neighbourhood while it is drawn: its random source and its instance's mark.

    A pack's scene adds the rows it draws; every drawn name, code, id, amount and text passes
    through the mark here, so that a fresh instance carries it everywhere (an unmarked draw,
    the public and sequestered splits', is left as drawn)."""

    d: Draw
    mark: InstanceMark | None = None
    """A fresh instance's mark (None for the public and sequestered seeds)."""

    clearance: ClassVar[int] = 0
    """Added with the mark's id offset to a marked world's row ids (clear of the ids the
    application's own inserts take)."""

    @classmethod
    def of(cls, d: Draw) -> Any:
        """The empty scene of draw ``d`` (marked when the draw is a fresh instance's)."""
        return cls(d, InstanceMark.of(d.mark))

    def named(self, name: str, separator: str) -> str:
        """A drawn name, with the mark's word after ``separator`` when marked."""
        return name if self.mark is None else f"{name}{separator}{self.mark.word}"

    @property
    def digits(self) -> str:
        """What follows a drawn code's number ("" unmarked)."""
        return "" if self.mark is None else self.mark.digits

    def id(self, number: int) -> int:
        """A world row's id: ``number``, moved by the clearance and the mark's offset."""
        return number if self.mark is None else number + self.clearance + self.mark.ids

    def cents(self, amount: int) -> int:
        """An amount already on the record, with the mark's cents."""
        return amount if self.mark is None else amount + self.mark.cents

    def text(self, text: str) -> str:
        """A drawn text, with the instance's tag when the draw is marked."""
        return marked(text, self.mark)


@dataclass(frozen=True)
class Situation(Generic[S]):
    """One row of a pack's template grid."""

    name: str
    """The template's name."""
    category: Category
    """The divergence category (or ``control``) of every task it draws."""
    title: str
    """What the template builds, in a line."""
    count: int
    """How many tasks it draws for the dev split."""
    shape: S
    """What the template fixes of the task (the pack's own record of it); the rest is drawn."""
    fault: Any = None
    """The fault, or a function of the draw that draws its parameters (None: the pack's clean
    save path)."""


class Build(Protocol[S, T_co]):
    """A pack's task draw: from the random source, the task's name and split, the settled
    fault and the template's row."""

    def __call__(
        self, d: Draw, name: str, split: Split, fault: Any, situation: Situation[S]
    ) -> T_co: ...


def template_grid(
    build: Build[S, T], situations: Sequence[Situation[S]], clean: Any
) -> tuple[tuple[Template[T], ...], dict[str, int]]:
    """Return the templates of ``situations`` (in order, each drawing with ``build``; a row
    without a fault draws ``clean``) and the dev split's counts per template."""
    templates = tuple(
        situation_template(
            s.name,
            s.category,
            s.title,
            partial(build, situation=s),
            clean if s.fault is None else s.fault,
        )
        for s in situations
    )
    return templates, {s.name: s.count for s in situations}
