"""Rendering chart specs to static SVG with vl-convert, cached on disk by content.

Rendering is the slow part of a build, so every SVG is cached under the
canonical hash of its spec (plus the renderer's version): a rebuild renders only
charts whose data changed. vl-convert numbers gradient ids per call, so ids are
renamed after the content key before an SVG is cached or compared. Many stale
charts are rendered in a spawn-context process pool (a forked child of a warm
vl-convert parent hangs).
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import orjson

from effectbench.hashing import canonical_hash
from effectbench.showable import make_showable
from effectbench.site._cache import CacheSeal, default_seal
from effectbench.site._pool import Workers

POOL_THRESHOLD = 100
"""Start pool workers for rendering only when at least this many charts are stale."""
GRADIENT_ID = re.compile(r"gradient_\d+")


class ChartRenderer(Protocol):
    """Turns Vega-Lite specs into SVG text."""

    version: str

    def render(self, specs: Sequence[dict[str, Any]]) -> list[str]:
        """Return one SVG document per spec, in order."""
        ...


def shown_strings(value: Any) -> Any:
    """Return ``value`` with every character :mod:`effectbench.showable` does not allow in
    its strings replaced by U+FFFD.

    vl-convert aborts the whole process (a non-unwinding panic) on an ESC or a U+FFFE in
    a label, so no text reaches it unchecked, whatever its source.
    """
    if isinstance(value, str):
        return make_showable(value)
    if isinstance(value, list):
        return [shown_strings(v) for v in value]
    if isinstance(value, dict):
        return {shown_strings(k): shown_strings(v) for k, v in value.items()}
    return value


UNCUT_LABEL_MAX = 32
"""Code points of a data text in a chart that Vega may not cut (see :func:`for_vega`)."""


def render_chunk(payload: list[bytes]) -> list[str]:
    """Render JSON-encoded Vega-Lite specs to SVG (run in a pool worker or inline)."""
    import vl_convert as vlc

    return [vlc.vegalite_to_svg(for_vega(orjson.loads(p))) for p in payload]


def for_vega(spec: dict[str, Any]) -> dict[str, Any]:
    """Return ``spec`` as vl-convert may be given it.

    Every text is made showable (:func:`shown_strings`). Vega shortens a label wider than
    its limit by cutting UTF-16 code units; a cut inside the surrogate pair of a character
    beyond the BMP (an emoji) makes vl-convert's text measurement fail, and the failure
    leaks into its next call. So a chart whose data holds such a character is given with
    every label and text limit off, and each of its data texts (links aside) cut here by
    code points instead.
    """
    spec = dict(shown_strings(spec))
    if not _beyond_bmp(spec.get("data")) and not _beyond_bmp(spec.get("datasets")):
        return spec
    uncut: dict[str, Any] = _uncut(_with_default_limits(spec), _link_fields(spec), in_data=False)
    return uncut


def _beyond_bmp(value: Any) -> bool:
    if isinstance(value, str):
        return bool(value) and max(value) > "\uffff"
    if isinstance(value, dict):
        return any(_beyond_bmp(v) for v in value.values())
    if isinstance(value, list):
        return any(_beyond_bmp(v) for v in value)
    return False


def _link_fields(value: Any) -> frozenset[str]:
    """The data fields the spec's ``href`` encodings read (never cut)."""
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            href = item.get("href")
            if isinstance(href, dict) and isinstance(href.get("field"), str):
                found.add(href["field"])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return frozenset(found)


def _with_default_limits(spec: dict[str, Any]) -> dict[str, Any]:
    """Return ``spec`` with Vega-Lite's default label limits written out (to be switched off)."""
    config = dict(spec.get("config") or {})
    for part in ("axis", "legend", "header"):
        config[part] = {"labelLimit": 0, **(config.get(part) or {})}
    for part in ("text", "mark", "title"):
        config[part] = {"limit": 0, **(config.get(part) or {})}
    return {**spec, "config": config}


def _uncut(value: Any, links: frozenset[str], *, in_data: bool) -> Any:
    """Return ``value`` with every label and text limit 0 and its data texts cut by code point."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in ("labelLimit", "limit") and isinstance(v, int | float):
                out[k] = 0
            elif in_data and k in links:
                out[k] = v
            else:
                out[k] = _uncut(v, links, in_data=in_data or k in ("values", "datasets"))
        return out
    if isinstance(value, list):
        return [_uncut(v, links, in_data=in_data) for v in value]
    if in_data and isinstance(value, str) and len(value) > UNCUT_LABEL_MAX:
        return value[: UNCUT_LABEL_MAX - 1] + "\u2026"
    return value


class VlConvertRenderer:
    """The production renderer: vl-convert in-process, or on pool workers for big batches."""

    def __init__(
        self,
        workers: int | None = None,
        pool_threshold: int = POOL_THRESHOLD,
        pool: Workers | None = None,
    ) -> None:
        import vl_convert as vlc

        self.version = f"vl-convert {getattr(vlc, '__version__', '?')}"
        self.pool = pool if pool is not None else Workers(workers)
        self._own_pool = pool is None
        self.pool_threshold = pool_threshold

    def render(self, specs: Sequence[dict[str, Any]]) -> list[str]:
        """Return one SVG per spec (on the pool's workers when the batch is large)."""
        try:
            return self.render_async(specs)()
        finally:
            if self._own_pool:
                self.pool.close()

    def render_async(self, specs: Sequence[dict[str, Any]]) -> Callable[[], list[str]]:
        """Start rendering ``specs``; return a function that waits and returns the SVGs.

        A batch that goes to the pool renders while the caller goes on; a small
        one is rendered here and now.
        """
        payload = [orjson.dumps(s) for s in specs]
        if self.pool.worth_it(len(payload), self.pool_threshold):
            return self.pool.submit_chunks(render_chunk, payload).wait
        svgs = render_chunk(payload)
        return lambda: svgs


VEGA_BASE_URL = "https://vega.github.io/vega-datasets/"
"""vl-convert resolves a mark's relative ``href`` against this base; inlined charts undo it."""


def inline_svg(svg: str) -> str:
    """Return a rendered chart ready to sit inside a page.

    Mark links are made relative again (to the site's own pages) and taken out
    of the tab order, and the drawing is hidden from assistive technology: the
    figure's caption states its finding and its data table (with the same links)
    is the accessible equivalent.
    """
    svg = svg.replace(f'xlink:href="{VEGA_BASE_URL}', 'xlink:href="')
    svg = svg.replace("<a xlink:href=", '<a tabindex="-1" xlink:href=')
    return svg.replace("<svg ", '<svg aria-hidden="true" focusable="false" ', 1)


def normalise_svg(svg: str, key: str) -> str:
    """Rename vl-convert's per-call gradient ids after ``key`` (stable, unique per chart)."""
    seen: dict[str, str] = {}

    def rename(match: re.Match[str]) -> str:
        old = match.group(0)
        if old not in seen:
            seen[old] = f"ebgrad-{key}-{len(seen)}"
        return seen[old]

    return GRADIENT_ID.sub(rename, svg)


@dataclass
class CacheStats:
    """How many charts a build rendered and how many came from the cache."""

    rendered: int = 0
    cached: int = 0


class ChartCache:
    """SVGs on disk, keyed by the canonical hash of (renderer version, spec)."""

    def __init__(
        self, directory: Path, renderer: ChartRenderer, seal: CacheSeal | None = None
    ) -> None:
        self.directory = directory
        self.renderer = renderer
        self.seal = seal or default_seal()
        """Only SVGs this machine rendered are reused (:mod:`effectbench.site._cache`)."""
        self.stats = CacheStats()
        self._pending: tuple[list[str], Callable[[], list[str]]] | None = None

    def key(self, spec: dict[str, Any]) -> str:
        """Return the content key of ``spec`` (hex, 24 digits)."""
        digest = canonical_hash({"renderer": self.renderer.version, "spec": spec})
        return digest.removeprefix("sha256:")[:24]

    def svg_paths(self, specs: Sequence[dict[str, Any]]) -> list[Path]:
        """Return the cached SVG file of every spec, rendering only the missing ones."""
        paths = self.start(specs)
        self.finish()
        return paths

    def start(self, specs: Sequence[dict[str, Any]]) -> list[Path]:
        """Return the SVG file every spec will have; start rendering the missing ones.

        The files of specs that were missing exist once :meth:`finish` returned.
        """
        self.finish()
        self.directory.mkdir(parents=True, exist_ok=True)
        keys = [self.key(s) for s in specs]
        paths = [self.directory / f"{k}.svg" for k in keys]
        missing: dict[str, dict[str, Any]] = {}
        for k, p, s in zip(keys, paths, specs, strict=True):
            if k not in missing and not self._sealed(k, p):
                missing[k] = s
        self.stats.rendered += len(missing)
        self.stats.cached += len(specs) - len(missing)
        if missing:
            specs_ = list(missing.values())
            render_async = getattr(self.renderer, "render_async", None)
            if render_async is not None:
                wait: Callable[[], list[str]] = render_async(specs_)
            else:
                svgs = self.renderer.render(specs_)
                wait = lambda: svgs  # noqa: E731
            self._pending = (list(missing), wait)
        return paths

    def finish(self) -> None:
        """Wait for the renders :meth:`start` began and write their files."""
        pending, self._pending = self._pending, None
        if pending is None:
            return
        keys, wait = pending
        for k, svg in zip(keys, wait(), strict=True):
            data = normalise_svg(svg, k[:8]).encode("utf-8")
            path = self.directory / f"{k}.svg"
            self.seal.write(k, path.with_name(path.name + ".mac"), self.seal.mac(k, data))
            tmp = self.directory / f".{k}.svg.tmp"
            tmp.write_bytes(data)
            tmp.replace(path)

    def _sealed(self, key: str, path: Path) -> bool:
        """Whether the SVG at ``path`` is one this machine rendered for ``key`` (its MAC file)."""
        try:
            data = path.read_bytes()
        except OSError:
            return False
        mac = self.seal.read(key, path.with_name(path.name + ".mac"))
        return mac is not None and hmac.compare_digest(mac, self.seal.mac(key, data))
