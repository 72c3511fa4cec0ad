"""Document-level checks: spec compatibility, the pack declaration, and the claims.

The per-row checks live in :mod:`verifier.rows`; these run once per submission.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from effectbench import SPEC_VERSION
from effectbench.bundle import SubmissionHeader
from effectbench.effects import contract_hash
from effectbench.errors import UsageError
from effectbench.manifest import fingerprint
from effectbench.packs import get_pack
from effectbench.seam import BenchmarkProvider
from verifier.report import FindingSink
from verifier.rows import TaskFacts

MIN_RANKED_TRIALS = 3
"""Trials per task a ranked entry needs (fewer cannot show pass^k or stability)."""
FLOAT_TOLERANCE = 1e-9
"""Absolute tolerance when comparing a claimed float with the recomputed one."""
OPTIONAL_RESULT_FIELDS = frozenset(("success_effect_gap_ci", "cost", "latency"))
"""Results fields of ours the reference's results block lacks: compared only when claimed."""

_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$"
)


def parse_semver(text: str) -> tuple[int, int, int] | None:
    """Return ``(major, minor, patch)`` of a semantic version, or None if it is not one."""
    m = _SEMVER.match(text)
    return (int(m[1]), int(m[2]), int(m[3])) if m else None


def check_spec(version: str, sink: FindingSink, file: str, field: str = "spec_version") -> None:
    """Check that the submission's SPEC version is comparable with this leaderboard's."""
    ours = parse_semver(SPEC_VERSION)
    assert ours is not None
    theirs = parse_semver(version)
    if theirs is None:
        sink.emit(
            "spec.semver",
            f"spec version {version!r} is not a semantic version (MAJOR.MINOR.PATCH)",
            file,
            None,
            field,
        )
        return
    if theirs[0] != ours[0]:
        sink.emit(
            "spec.major",
            f"SPEC {version} is not comparable with this leaderboard's SPEC {SPEC_VERSION}: "
            f"a different major version measures something else (SPEC section 8); "
            f"re-run under SPEC {ours[0]}.x",
            file,
            None,
            field,
        )
    elif theirs[1] > ours[1]:
        sink.emit(
            "spec.minor_newer",
            f"SPEC {version} is newer than this leaderboard's SPEC {SPEC_VERSION}; "
            "update the leaderboard (effectbench) before verifying this submission",
            file,
            None,
            field,
        )


def pack_tasks(pack: BenchmarkProvider, split: str) -> dict[str, TaskFacts]:
    """Return the facts of every task of ``pack`` in ``split``, by task id."""
    out: dict[str, TaskFacts] = {}
    for task in pack.tasks():
        if task.split.value != split:
            continue
        out[task.task_id] = TaskFacts(
            index=len(out),
            category=task.category.value,
            substrate=task.substrate.value,
            correct_action_available=task.correct_action_available,
            expected_effect_hash=contract_hash(task.expected_effect[0]),
        )
    return out


def check_pack(
    header: SubmissionHeader, sink: FindingSink, file: str, fields: Mapping[str, str]
) -> tuple[BenchmarkProvider | None, dict[str, TaskFacts] | None]:
    """Check the pack declaration; return the pack and its task facts when it is known."""
    ref = header.pack
    try:
        pack = get_pack(ref.name)
    except UsageError as exc:
        sink.emit("pack.unknown", exc.diagnostics(), file, None, fields["pack.name"])
        return None, None
    actual = fingerprint(pack.manifest())
    if ref.fingerprint != actual:
        sink.emit(
            "pack.fingerprint",
            f"pack {ref.name!r} has fingerprint {actual} here, the submission declares "
            f"{ref.fingerprint}; run against the released pack (effectbench manifest "
            "--fingerprint)",
            file,
            None,
            fields["pack.fingerprint"],
        )
    trials = header.trials_per_task
    if len(header.seeds) != trials:
        sink.emit(
            "pack.seeds",
            f"{trials} trials per task need {trials} seeds, the submission lists "
            f"{len(header.seeds)}",
            file,
            None,
            fields["seeds"],
        )
    elif len(set(header.seeds)) != len(header.seeds):
        sink.emit("pack.seeds", "seeds repeat; each trial needs its own seed", file, None, "seeds")
    if trials < MIN_RANKED_TRIALS:
        sink.emit(
            "pack.min_trials",
            f"{trials} trials per task; a leaderboard entry needs at least {MIN_RANKED_TRIALS} "
            f"(re-run with --trials {MIN_RANKED_TRIALS} or more)",
            file,
            None,
            fields["trials_per_task"],
        )
    tasks = pack_tasks(pack, ref.split.value)
    if not tasks:
        sink.emit(
            "pack.split",
            f"pack {ref.name!r} has no task in split {ref.split.value!r}",
            file,
            None,
            "pack.split",
        )
    return pack, tasks


# --------------------------------------------------------------------------- claims


def _kind(v: Any) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "null" if v is None else type(v).__name__


def compare_claims(claimed: Any, ours: Mapping[str, Any], sink: FindingSink, file: str) -> None:
    """Compare a claimed results block with the recomputed one (counts exact, floats 1e-9).

    Every field the claim has is compared; the interop fields are required;
    the optional fields of ours are compared when claimed. Cells are matched by
    (category, substrate): a missing or extra cell is refused.
    """
    if not isinstance(claimed, dict):
        sink.emit(
            "claims.type", f"results must be an object, got {_kind(claimed)}", file, None, "results"
        )
        return
    for key in ours:
        if key not in claimed and key not in OPTIONAL_RESULT_FIELDS:
            sink.emit(
                "claims.missing_field",
                "required results field is missing",
                file,
                None,
                f"results.{key}",
            )
    for key in claimed:
        if key not in ours:
            sink.emit(
                "claims.extra_field",
                "not a results field (or nothing in the rows supports it)",
                file,
                None,
                f"results.{key}",
            )
    for key, value in claimed.items():
        if key not in ours:
            continue
        if key == "cells":
            _compare_cells(value, ours["cells"], sink, file)
        else:
            _compare(value, ours[key], f"results.{key}", sink, file)


def _cell_key(cell: Any) -> tuple[Any, Any] | None:
    if not isinstance(cell, dict):
        return None
    key = (cell.get("category"), cell.get("substrate"))
    return key if all(isinstance(k, str) for k in key) else None


def _compare_cells(claimed: Any, ours: list[dict[str, Any]], sink: FindingSink, file: str) -> None:
    if not isinstance(claimed, list):
        sink.emit(
            "claims.type", f"must be an array, got {_kind(claimed)}", file, None, "results.cells"
        )
        return
    mine = {(c["category"], c["substrate"]): c for c in ours}
    seen: set[tuple[Any, Any]] = set()
    for i, cell in enumerate(claimed):
        where = f"results.cells[{i}]"
        key = _cell_key(cell)
        if key is None:
            sink.emit(
                "claims.type",
                "a cell must be an object with string category and substrate",
                file,
                None,
                where,
            )
            continue
        if key in seen:
            sink.emit(
                "claims.extra_cell", f"cell {key[0]} x {key[1]} is listed twice", file, None, where
            )
            continue
        seen.add(key)
        if key not in mine:
            sink.emit(
                "claims.extra_cell",
                f"claimed cell {key[0]} x {key[1]} has no rows",
                file,
                None,
                where,
            )
            continue
        _compare(cell, mine[key], where, sink, file)
    for key in mine:
        if key not in seen:
            sink.emit(
                "claims.missing_cell",
                f"the rows have cell {key[0]} x {key[1]} but the claim does not list it",
                file,
                None,
                "results.cells",
            )


def _compare(claimed: Any, ours: Any, path: str, sink: FindingSink, file: str) -> None:
    if isinstance(ours, dict):
        if not isinstance(claimed, dict):
            sink.emit("claims.type", f"must be an object, got {_kind(claimed)}", file, None, path)
            return
        for key in ours:
            if key not in claimed:
                sink.emit("claims.missing_field", "field is missing", file, None, f"{path}.{key}")
        for key in claimed:
            if key not in ours:
                sink.emit(
                    "claims.extra_field",
                    "the rows give no such entry (counts of zero are omitted)",
                    file,
                    None,
                    f"{path}.{key}",
                )
            else:
                _compare(claimed[key], ours[key], f"{path}.{key}", sink, file)
        return
    if isinstance(ours, bool) or isinstance(ours, str) or ours is None:
        if claimed != ours or type(claimed) is not type(ours):
            sink.emit(
                "claims.value", f"claimed {claimed!r}, the rows give {ours!r}", file, None, path
            )
        return
    if isinstance(ours, int):
        if type(claimed) is not int:
            sink.emit(
                "claims.type", f"a count must be an integer, got {claimed!r}", file, None, path
            )
        elif claimed != ours:
            sink.emit("claims.count", f"claimed {claimed}, the rows give {ours}", file, None, path)
        return
    if isinstance(ours, float):
        if type(claimed) not in (int, float):
            sink.emit("claims.type", f"must be a number, got {claimed!r}", file, None, path)
        elif not abs(claimed - ours) <= FLOAT_TOLERANCE:
            sink.emit(
                "claims.rate",
                f"claimed {claimed!r}, the rows give {ours!r} (tolerance {FLOAT_TOLERANCE})",
                file,
                None,
                path,
            )
        return
    raise TypeError(f"unexpected recomputed value at {path}: {ours!r}")  # pragma: no cover
