"""The receipts the site publishes: every episode's, as text, and the key frames that matter.

For each accepted bundle with receipts (format 2, its ``receipt`` check passed) the build
writes, under ``receipts/<slug>/``:

* ``index.js``: the submission's tasks, and per task one outcome letter and one
  collateral mark per trial, the content address of the task's facts and of the shard
  holding its receipts, and the key frames the site shows of it (what the episode view's
  lists and links read), packed as the shards are (its titles and addresses repeat: about
  a third of its JSON's size);

and, site-wide, under ``receipts/c/``, shards named by the hash of their content:
gzip-compressed JSON in base64 (the episode view inflates it in the browser with
``DecompressionStream``) in a script file, so the view works from file:// too. A task's
facts are one shard, shared by every submission on the same pack. A submission's receipts
(its episode ids, which the view knows from the address, left out) are packed task by task,
in the index's order, into shards of at most :data:`CHUNK_BYTES` of JSON: trials of one task
and tasks of one run repeat most of their text, so packed together they compress to about a
third of what one shard per receipt took. The view fetches only the shards of the tasks it
shows.

Every receipt is published as text. Key frames are published (once each, site-wide, under
``receipts/frames/``, each re-encoded within a bounded size by :mod:`._frames`, never the
submitted file itself) only for the episodes a reader most needs to see: for each task, its
first trial that is a silent wrong effect, an over-halt or a wrong record, or that wrote
outside its allowance, within :data:`FRAME_BUDGET` bytes per submission. Every other
episode's frames are in the bundle (its ``frames/`` folder); the episode view says so.
What a build publishes is cached by the bytes of the bundle's receipts.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson

from effectbench.bundle import FRAMES_DIR, RECEIPTS_FILE
from effectbench.findings import Family
from effectbench.hashing import hash_file
from effectbench.receipts.model import FRAME_NAME
from effectbench.schema import Outcome
from effectbench.sealed import CacheSeal
from effectbench.site._cache import default_seal
from effectbench.site._compare import outcome_letter
from effectbench.site._entries import Entry
from effectbench.site._frames import rendition
from effectbench.site._scripts import packed, registering

RECEIPTS_FORMAT = "site-receipts-4"
"""Version of what is cached per bundle (bump when the published data changes)."""
SITE_FOLDER = "receipts"
FRAMES_FOLDER = f"{SITE_FOLDER}/frames"
SHARDS_FOLDER = f"{SITE_FOLDER}/c"
"""Content-addressed receipt shards (``c/<first two hex>/<hash>.js``)."""
CHUNK_BYTES = 256 * 1024
"""JSON bytes of one submission's receipts a shard holds at most (unless one task's alone are
more): about 30 to 60 KiB once compressed, well under what a page may fetch at once."""
SHARD_HASH = 32
"""Hex digits of a shard's name (of the SHA-256 of its JSON)."""
FRAME_OUTCOMES = frozenset(
    (Outcome.SILENT_WRONG_EFFECT.value, Outcome.OVER_HALT.value, Outcome.WRONG_ACTION.value)
)
"""Outcomes whose episodes get their frames on the site (besides collateral writes)."""
FRAME_BUDGET = 1024 * 1024
"""Bytes of frames the site publishes per submission at most (the rest stay in the bundle)."""
MAX_CHANGES_SHOWN = 200
"""Changed rows of one receipt the site carries; the rest are counted (all are in the bundle)."""
FRAMES_POLICY = (
    "Key frames are shown for each task's first trial that is a silent wrong effect, an "
    "over-halt or a wrong record, or that wrote outside what its task allows; every other "
    "episode's frames are in the bundle's frames/ folder."
)


def has_receipts(entry: Entry) -> bool:
    """Whether the site publishes ``entry``'s receipts: accepted, and its receipts checked."""
    return entry.accepted and any(
        c.id == Family.RECEIPT.value and c.passed and not c.skipped for c in entry.checks
    )


def episode_href(slug: str, task_id: str, trial: int, prefix: str = "") -> str:
    """Return the link to one episode's view (``prefix``: the way up to the site's root)."""
    from urllib.parse import urlencode

    return f"{prefix}episode.html?{urlencode({'s': slug, 't': task_id, 'n': trial})}"


@dataclass
class Published:
    """What the build adds for receipts: data files, frames to copy, and which entries."""

    texts: dict[str, str] = field(default_factory=dict)
    copies: dict[str, Path] = field(default_factory=dict)
    slugs: set[str] = field(default_factory=set)
    frame_bytes: int = 0
    shard_refs: int = 0
    """Receipt shards the submissions name, counted once per submission naming one."""
    shard_ref_bytes: int = 0
    """Their bytes counted the same way: what the shards would weigh if no two submissions
    shared one."""

    @property
    def shards(self) -> int:
        """Distinct receipt shards published."""
        return sum(1 for p in self.texts if p.startswith(SHARDS_FOLDER + "/"))

    @property
    def shard_bytes(self) -> int:
        """Bytes of the distinct receipt shards published."""
        return sum(len(t) for p, t in self.texts.items() if p.startswith(SHARDS_FOLDER + "/"))


def _letter(receipt: Mapping[str, Any]) -> str:
    truth = receipt["truth"]
    return outcome_letter(truth["outcome"], truth["swer_variant"])


def _shown_frames(receipt: Mapping[str, Any]) -> bool:
    return bool(receipt["truth"]["outcome"] in FRAME_OUTCOMES or receipt.get("collateral"))


def _compact(receipt: dict[str, Any]) -> dict[str, Any]:
    """Return what the episode view reads of a receipt: task facts (kept in their own shard),
    the episode id (the address names it) and the receipt's version left out, the changed
    rows cut to :data:`MAX_CHANGES_SHOWN`."""
    drop = ("receipt_version", "task", "task_id", "episode_id")
    out = {k: v for k, v in receipt.items() if k not in drop}
    changes = receipt.get("changes")
    if changes is not None and len(changes["rows"]) > MAX_CHANGES_SHOWN:
        out["changes"] = {
            **changes,
            "rows": changes["rows"][:MAX_CHANGES_SHOWN],
            "more": len(changes["rows"]) - MAX_CHANGES_SHOWN,
        }
    return out


def _shard(texts: dict[str, str], data: Any) -> str:
    """Add ``data`` as a content-addressed shard to ``texts``; return its name (hash)."""
    raw = orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
    name, script = (_pack_small if len(raw) <= SMALL_SHARD else _pack)(raw)
    texts[shard_path(name)] = script
    return name


def _pack(raw: bytes) -> tuple[str, str]:
    """Return the name and the script of the shard holding ``raw``."""
    name = hashlib.sha256(raw).hexdigest()[:SHARD_HASH]
    return name, registering("EB_RECEIPT_DATA", name, packed(raw))


SMALL_SHARD = 16 * 1024
"""Shards at most this long are packed once per process (:func:`_pack_small`)."""
_pack_small = lru_cache(maxsize=2048)(_pack)
"""A task's facts are the same shard in every bundle of its pack: at 1,000 submissions
compressing them again took about a third of the receipts' gzip time."""


def shard_path(name: str) -> str:
    """Return the site path of the receipt shard ``name``."""
    return f"{SHARDS_FOLDER}/{name[:2]}/{name}.js"


def frames_to_show(by_task: Mapping[str, list[dict[str, Any]]], frames_dir: Path) -> list[str]:
    """Return the frames the site shows of one bundle (its receipts grouped by task): each
    task's first trial that is a silent wrong effect, an over-halt or a wrong record, or wrote
    collateral, within :data:`FRAME_BUDGET` bytes."""
    shown: list[str] = []
    budget = FRAME_BUDGET
    for task_receipts in by_task.values():
        first = next(
            (r for r in sorted(task_receipts, key=lambda r: r["trial"]) if _shown_frames(r)), None
        )
        if first is None:
            continue
        names = [f["name"] for f in first.get("frames", []) if FRAME_NAME.fullmatch(f["name"])]
        new = [n for n in dict.fromkeys(names) if n not in shown]
        cost = sum((frames_dir / n).stat().st_size for n in new)
        if cost > budget:
            continue
        budget -= cost
        shown.extend(new)
    return shown


def _bundle_data(entry: Entry) -> tuple[dict[str, str], list[str]]:
    """Return one bundle's data files (site path -> text) and the frames they show."""
    lines = (entry.path / RECEIPTS_FILE).read_bytes().splitlines()
    by_task: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        if line:
            receipt = orjson.loads(line)
            by_task.setdefault(receipt["task_id"], []).append(receipt)
    shown = frames_to_show(by_task, entry.path / FRAMES_DIR)
    slug = entry.slug
    texts: dict[str, str] = {}
    tasks: list[dict[str, Any]] = []
    chunk: dict[str, list[dict[str, Any]]] = {}
    size = 0

    def pack() -> None:  # the tasks waiting for their receipts' shard get its name
        name = _shard(texts, chunk)
        for task in tasks[len(tasks) - len(chunk) :]:
            task["receipts"] = name

    for task_id, task_receipts in by_task.items():
        ordered = sorted(task_receipts, key=lambda r: r["trial"])
        compact = [_compact(r) for r in ordered]
        weight = len(orjson.dumps(compact))
        if chunk and size + weight > CHUNK_BYTES:
            pack()
            chunk, size = {}, 0
        chunk[task_id] = compact
        size += weight
        head = ordered[0]
        tasks.append(
            {
                "id": task_id,
                "task": _shard(texts, head["task"]),
                "receipts": "",
                "title": head["task"]["title"],
                "category": head["task"]["category"],
                "substrate": head["task"]["substrate"],
                "trials": [r["trial"] for r in ordered],
                "outcomes": "".join(_letter(r) for r in ordered),
                "collateral": "".join(
                    "?" if r.get("collateral") is None else "1" if r["collateral"] else "0"
                    for r in ordered
                ),
            }
        )
    if chunk:
        pack()
    index = {
        "name": entry.name,
        "pack": entry.pack,
        "status": entry.status,
        "reproduced": entry.reproduced,
        "reproduce_note": _reproduce_note(entry),
        "policy": FRAMES_POLICY,
        "frames": shown,
        "tasks": tasks,
    }
    texts[f"{SITE_FOLDER}/{slug}/index.js"] = registering(
        "EB_RECEIPTS", slug, packed(orjson.dumps(index))
    )
    return texts, shown


def _reproduce_note(entry: Entry) -> str:
    return next((c.note for c in entry.checks if c.id == "reproduce"), "")


def _cache_key(entry: Entry, receipts_digest: str) -> str:
    """Return the key of one bundle's receipt data: its receipts' sha256 and whatever else
    its index carries."""
    digest = hashlib.sha256(f"{RECEIPTS_FORMAT}\0{entry.slug}\0{receipts_digest}\0".encode())
    said = [entry.name, entry.status, entry.reproduced, entry.pack, _reproduce_note(entry)]
    digest.update(orjson.dumps([*said, FRAMES_POLICY]))
    return digest.hexdigest()


def publish_receipts(
    entries: Iterable[Entry],
    cache: Path,
    digest_of: Callable[[Path], str] = hash_file,
    guard: Callable[[Entry], AbstractContextManager[None]] = lambda _: nullcontext(),
) -> Published:
    """Return every accepted bundle's receipt data and the frames the site shows
    (``digest_of``: the sha256 of a bundle's receipts file; the build's kept digests, which
    spare reading every bundle's receipts on a rebuild). Each bundle's part is made within
    ``guard(entry)`` (the build's: an error withholds that bundle) and added only whole."""
    seal = default_seal()
    out = Published()
    for entry in entries:
        if not has_receipts(entry):
            continue
        with guard(entry):
            texts, copies = _publish_one(entry, cache, seal, digest_of, out.copies)
        out.texts.update(texts)
        for path, text in texts.items():
            if path.startswith(SHARDS_FOLDER + "/"):
                out.shard_refs += 1
                out.shard_ref_bytes += len(text)
        for where, published in copies.items():
            out.copies[where] = published
            out.frame_bytes += published.stat().st_size
        out.slugs.add(entry.slug)
    return out


def _publish_one(
    entry: Entry,
    cache: Path,
    seal: CacheSeal,
    digest_of: Callable[[Path], str],
    copied: Mapping[str, Path],
) -> tuple[dict[str, str], dict[str, Path]]:
    """One bundle's receipt data, and the renditions of the frames it shows that no bundle
    before it showed (``copied``)."""
    key = _cache_key(entry, digest_of(entry.path / RECEIPTS_FILE))
    target = cache / f"{key}.json"
    stored = seal.read(key, target)
    if stored is not None:
        data = orjson.loads(stored)
        texts, shown = data["texts"], data["frames"]
    else:
        texts, shown = _bundle_data(entry)
        target.parent.mkdir(parents=True, exist_ok=True)
        seal.write(key, target, orjson.dumps({"texts": texts, "frames": shown}))
    copies: dict[str, Path] = {}
    for name in shown:
        where = f"{FRAMES_FOLDER}/{name}"
        if where not in copied and where not in copies:  # one copy site-wide, first shower's
            copies[where] = rendition(entry.path / FRAMES_DIR / name, cache)
    return texts, copies
