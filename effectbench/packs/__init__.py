"""Task packs as plug-ins: found through the ``effectbench.packs`` entry-point group.

A pack is a :class:`~effectbench.seam.BenchmarkProvider` factory (its class) that an
installed distribution declares under the ``effectbench.packs`` group, by the name
``--pack`` takes. The built-in packs register the same way (``pyproject.toml``),
so a pack from another distribution is found and run without editing this one::

    [project.entry-points."effectbench.packs"]
    ticketing = "effectbench_ticketing:TicketingProvider"

Listing the installed packs reads the entry points only; a pack's module is
imported when it is named (:func:`get_pack`, :func:`pack_class`), never before.
Several names may point at one factory: they are aliases of one pack, whose one
name is the provider's own ``name`` (its manifest's suite name, what bundles
declare; :func:`canonical_pack`): a pack is registered under its suite name, and
any other name is an alias. :func:`register` adds a pack in this process
only (tests, notebooks).

A broken plug-in stays the problem of the name it claims: a pack whose module cannot be
imported, or a name two distributions claim (:attr:`InstalledPack.rivals`), is refused in one
line when that name is used (:func:`pack_class`) and reported by ``effectbench packs``
(:func:`problem`); every other pack and command works as before.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import cache
from importlib.metadata import entry_points
from typing import Any

from effectbench.errors import UsageError
from effectbench.seam import BenchmarkProvider

ENTRY_POINT_GROUP = "effectbench.packs"
"""The entry-point group a distribution declares its packs in."""

ANCHOR_SUFFIX = "-anchor"
"""A pack whose suite name ends so is a regression anchor: its numbers are pinned fixtures, said
so on every board, never pooled with a system of record's catalogue."""
CATALOGUE_SUFFIX = "-generated"
"""A pack named ``<system of record>-generated`` is a second catalogue of that system of record
(until the two are one pack)."""

PackFactory = Callable[[], BenchmarkProvider]


@dataclass(frozen=True)
class InstalledPack:
    """One name a pack is installed under (loading it imports the pack's module)."""

    name: str
    """What ``--pack`` takes."""
    target: str
    """``module:attribute`` of the provider factory."""
    distribution: str
    """The distribution that declares it (``""`` for one registered in this process)."""
    version: str
    """That distribution's version."""
    factory: PackFactory | None = None
    """The factory itself, for a pack registered in this process."""
    rivals: tuple[InstalledPack, ...] = ()
    """Other distributions that claim the same name (then the name is refused)."""

    def describe(self) -> str:
        """Return where the pack comes from: distribution, version and provider."""
        source = f"{self.distribution} {self.version}" if self.distribution else "this process"
        return f"{source} ({self.target})"

    def claimed(self) -> str | None:
        """Return why the name cannot be used because other distributions claim it too."""
        if not self.rivals:
            return None
        claims = " and ".join(p.describe() for p in (self, *self.rivals))
        return (
            f"pack name {self.name!r} is claimed by {len(self.rivals) + 1} distributions: "
            f"{claims}; uninstall all but one of them"
        )

    def load(self) -> PackFactory:
        """Import the pack's module and return its provider factory."""
        if self.factory is not None:
            return self.factory
        module, _, attribute = self.target.partition(":")
        try:
            found: Any = importlib.import_module(module)
            for part in attribute.split("."):
                found = getattr(found, part)
        except Exception as exc:  # noqa: BLE001 - a plug-in's import may raise anything
            why = str(exc) if isinstance(exc, ImportError | AttributeError) else repr(exc)
            raise UsageError(
                f"pack {self.name!r} ({self.target}, from {self.distribution or 'this process'}) "
                f"cannot be loaded: {why}"
            ) from None
        if not callable(found):
            raise UsageError(f"pack {self.name!r}: {self.target} is not a provider factory")
        factory: PackFactory = found
        return factory


_registered: dict[str, InstalledPack] = {}


@cache
def _from_entry_points() -> dict[str, InstalledPack]:
    claims: dict[str, list[InstalledPack]] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        dist = point.dist
        claim = InstalledPack(
            name=point.name,
            target=point.value,
            distribution=dist.name if dist is not None else "",
            version=dist.version if dist is not None else "",
        )
        mine = claims.setdefault(point.name, [])
        if all(c.distribution != claim.distribution for c in mine):
            mine.append(claim)
    return {name: replace(first, rivals=tuple(rest)) for name, (first, *rest) in claims.items()}


def installed() -> dict[str, InstalledPack]:
    """Return every installed pack name, sorted (reads entry points; imports no pack)."""
    packs = {**_from_entry_points(), **_registered}
    return dict(sorted(packs.items()))


def pack_names() -> list[str]:
    """Return the names ``--pack`` accepts, sorted."""
    return list(installed())


def is_anchor(name: str) -> bool:
    """Return whether pack ``name`` (any alias, or a name no installed pack has) is a regression
    anchor (:data:`ANCHOR_SUFFIX`)."""
    return any(n.lower().endswith(ANCHOR_SUFFIX) for n in (name, canonical_pack(name)))


def system_of_record(name: str) -> str | None:
    """Return the system of record pack ``name`` is a catalogue of (None: an anchor, never
    pooled): the name without :data:`CATALOGUE_SUFFIX`."""
    if is_anchor(name):
        return None
    return name.removesuffix(CATALOGUE_SUFFIX)


def anchor_pack() -> str:
    """Return the installed regression anchor (the first by name): what ``run`` and ``manifest``
    take when no ``--pack`` is given. Reads entry points only."""
    anchors = [n for n in installed() if n.lower().endswith(ANCHOR_SUFFIX)]
    if not anchors:
        raise UsageError(f"no regression anchor pack is installed; give --pack ({_known()})")
    return anchors[0]


def first_pack() -> str:
    """Return the first installed pack by name that is a system of record's own catalogue (no
    anchor, no second catalogue): what an agent's door (``mcp``, the inspect ``pack`` task)
    takes when no pack is given. Reads entry points only."""
    packs = installed()
    anchors = {e.target for n, e in packs.items() if n.lower().endswith(ANCHOR_SUFFIX)}
    names = [
        n for n, e in packs.items() if e.target not in anchors and not n.endswith(CATALOGUE_SUFFIX)
    ]
    if not names:
        raise UsageError(f"no pack of a system of record is installed; give --pack ({_known()})")
    return names[0]


def _known() -> str:
    return ", ".join(installed()) or "none (is effectbench installed? pip install -e .)"


def _entry(name: str) -> InstalledPack:
    packs = installed()
    if name in packs:
        claimed = packs[name].claimed()
        if claimed is not None:
            raise UsageError(claimed)
        return packs[name]
    raise UsageError(f"unknown pack {name!r}; installed packs: {_known()}")


_loaded: dict[str, PackFactory] = {}


def pack_class(name: str) -> PackFactory:
    """Return the provider factory of pack ``name`` (a ``--pack`` name or a suite name)."""
    entry = _entry(name)
    if entry.factory is not None:
        return entry.factory
    if entry.target not in _loaded:
        _loaded[entry.target] = entry.load()
    return _loaded[entry.target]


def problem(name: str) -> str | None:
    """Return why the installed pack ``name`` cannot be used (its name claimed twice, its module
    not importable), or None when it loads; imports the pack's module, builds nothing."""
    try:
        pack_class(name)
    except UsageError as exc:
        return str(exc)
    return None


def instance_packs() -> list[str]:
    """Return the installed pack names whose provider draws its tasks from a seed (a generated
    catalogue, :class:`~effectbench.seam.DrawsInstances`: its class offers ``instantiate``),
    sorted. Imports the packs' modules and builds none; a pack that cannot be loaded is left
    out (``effectbench packs`` says why)."""
    names = []
    for name in installed():
        try:
            factory = pack_class(name)
        except UsageError:
            continue
        if callable(getattr(factory, "instantiate", None)):
            names.append(name)
    return names


def get_pack(name: str) -> BenchmarkProvider:
    """Return a fresh provider of pack ``name`` (a ``--pack`` name or a suite name)."""
    return pack_class(name)()


def each_pack(distribution: str) -> Iterator[BenchmarkProvider]:
    """Yield a fresh provider of every pack ``distribution`` installs (aliases of one pack
    once), in name order, each closed when the loop moves on (what ``make generate``
    publishes a document of)."""
    from effectbench.seam import Closable

    seen: set[str] = set()
    for name, entry in installed().items():
        if entry.distribution != distribution or entry.target in seen:
            continue
        seen.add(entry.target)
        pack = get_pack(name)
        try:
            yield pack
        finally:
            if isinstance(pack, Closable):
                pack.close()


def canonical_pack(name: str) -> str:
    """Return the one name of pack ``name`` (its suite name), whichever alias it is given by.

    ``mockmed`` and ``mockmed-anchor`` are one pack: the site forms one board for it. A name
    no installed pack has is returned as it is (imports only the named pack's module).
    """
    try:
        factory = pack_class(name)
    except UsageError:
        return name
    return str(getattr(factory, "name", name))


def aliases(name: str) -> list[str]:
    """Return every installed name of the pack ``name`` names (itself included), sorted."""
    target = _entry(name).target
    return [n for n, e in installed().items() if e.target == target]


def registry_name(factory: object) -> str | None:
    """Return a name under which ``factory`` is installed or registered (None: it is not)."""
    target = f"{getattr(factory, '__module__', '')}:{getattr(factory, '__qualname__', '')}"
    for name, entry in installed().items():
        if entry.factory is factory or (entry.factory is None and entry.target == target):
            return name
    return None


@contextmanager
def register(name: str, factory: PackFactory) -> Iterator[None]:
    """Make ``factory`` a pack named ``name`` in this process only, while the block runs."""
    if name in installed():
        raise UsageError(f"a pack named {name!r} is already installed")
    _registered[name] = InstalledPack(name, f"<registered {name}>", "", "", factory)
    try:
        yield
    finally:
        del _registered[name]
