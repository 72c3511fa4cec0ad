"""Real bundles for the bundle, verifier and site tests: make, copy, read and edit them."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import orjson

from effectbench import SPEC_VERSION
from effectbench.baselines import get_baseline, reference_description
from effectbench.bundle import Submission, write_bundle
from effectbench.manifest import fingerprint
from effectbench.metrics import episode_frame, summarize
from effectbench.packs import get_pack
from effectbench.run.runner import evaluate
from verifier.references import bundle_content_hash


def make_bundle(
    out: Path,
    baseline: str = "screen_only",
    *,
    trials: int = 3,
    declare_baseline: bool = True,
    signer: tuple[str, str] | None = None,
    receipts: bool = True,
) -> Path:
    """Run a shipped baseline on MockMed and write its bundle into ``out`` (format 2, with
    receipts; ``receipts=False``: format 1, rows only)."""
    pack = get_pack("mockmed")
    run = evaluate(get_baseline(baseline, pack), pack, trials=trials)
    rows: list[Any] = list(run.rows) if receipts else [r.to_row() for r in run.rows]
    sub = Submission.model_validate(
        {
            "spec_version": SPEC_VERSION,
            "system": {
                "name": baseline if declare_baseline else f"{baseline} (test)",
                "description": reference_description(baseline) if declare_baseline else "",
                "baseline": baseline if declare_baseline else None,
            },
            "signer": {"identity": signer[0], "issuer": signer[1]} if signer else None,
            "pack": {"name": pack.name, "fingerprint": fingerprint(pack.manifest())},
            "trials_per_task": trials,
            "seeds": list(range(trials)),
            "environment": {"python": "3.11", "platform": "test"},
            "results": summarize(episode_frame(run.rows)),
        }
    )
    return write_bundle(out, sub, rows)


def list_references(path: Path, bundles: Iterable[Path], date: str = "2026-01-02") -> Path:
    """Write a maintainers' reference list naming ``bundles`` by content hash; return its path."""
    entries = []
    for bundle in bundles:
        data = read_submission(bundle)
        entries.append(
            {
                "content_hash": bundle_content_hash(bundle),
                "folder": bundle.name,
                "baseline": data["system"]["baseline"],
                "pack": data["pack"]["name"],
                "date": date,
            }
        )
    path.write_text(json.dumps({"bundles": entries}, indent=2))
    return path


def copy_bundle(src: Path, dst: Path) -> Path:
    """Copy a bundle folder (regular files only)."""
    shutil.copytree(src, dst)
    return dst


def read_rows(bundle: Path) -> list[dict[str, Any]]:
    """Return the rows of a bundle's episodes.jsonl."""
    lines = (bundle / "episodes.jsonl").read_bytes().splitlines()
    return [orjson.loads(line) for line in lines if line]


def write_rows(bundle: Path, rows: list[dict[str, Any]]) -> None:
    """Overwrite a bundle's episodes.jsonl with ``rows``."""
    (bundle / "episodes.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))


def read_submission(bundle: Path) -> dict[str, Any]:
    """Return a bundle's submission.json as data."""
    data: dict[str, Any] = json.loads((bundle / "submission.json").read_text())
    return data


def write_submission(bundle: Path, data: dict[str, Any]) -> None:
    """Overwrite a bundle's submission.json."""
    (bundle / "submission.json").write_text(json.dumps(data, indent=2))


def restate(bundle: Path) -> None:
    """Recompute the claimed results from the bundle's (possibly edited) rows.

    A forger who edits rows also edits the claims; restating isolates the
    check that must catch the row edit itself.
    """
    data = read_submission(bundle)
    data["results"] = summarize(episode_frame(read_rows(bundle))).to_json()
    write_submission(bundle, data)


def read_receipts(bundle: Path) -> list[dict[str, Any]]:
    """Return the receipts of a bundle's receipts.jsonl (format 2)."""
    lines = (bundle / "receipts.jsonl").read_bytes().splitlines()
    return [orjson.loads(line) for line in lines if line]


def write_receipts(bundle: Path, receipts: list[dict[str, Any]]) -> None:
    """Write receipts back to a bundle's receipts.jsonl."""
    (bundle / "receipts.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in receipts))


def edit_receipts(bundle: Path, fn: Callable[[list[dict[str, Any]]], None]) -> None:
    """Apply ``fn`` to the receipts and write them back."""
    receipts = read_receipts(bundle)
    fn(receipts)
    write_receipts(bundle, receipts)


def edit_rows(bundle: Path, fn: Callable[[list[dict[str, Any]]], None], *, claims: bool) -> None:
    """Apply ``fn`` to the rows, write them back, and restate the claims if asked."""
    rows = read_rows(bundle)
    fn(rows)
    write_rows(bundle, rows)
    if claims:
        restate(bundle)
