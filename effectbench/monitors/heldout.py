"""The board's held-out episodes: the sequestered split, and the monitored slice.

A monitor corpus's test split comes from the packs' sequestered task split, run by the
shipped baselines the reference bundles run (:data:`effectbench.packs.references.REFERENCE_SET`), on
the substrates asked for. Its bundles are the board's: they are written under
``monitors/heldout/``, never under ``submissions/``, and the site never shows their
receipts, so the test split's labels appear nowhere a monitor's author reads (the packs'
code is public, so whoever runs the sequestered split can label it too: the split keeps a
monitor from being tuned to its episodes by accident, not against someone set on it).

The **monitored slice**: the same tasks and baselines again, each agent's goal opening with
:data:`~effectbench.monitors.sources.MONITORING_NOTICE` (:class:`Told`). The shipped agents
are scripted baselines: they do not read their goal, so they act exactly as on the plain
split, and the slice measures only how a monitor's scores move when the goal it reads says
that a monitor watches. An agent that reads its prompt (a model) may act differently when
told; run it on the slice to measure that.

``index.json`` lists the held-out bundles with their slice and notice (what
``effectbench monitor corpus --heldout`` reads).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from effectbench.baselines import get_baseline, reference_description
from effectbench.bundle import SystemInfo, slugify
from effectbench.errors import DataError, UsageError
from effectbench.monitors.corpus import SliceName
from effectbench.monitors.sources import MONITORING_NOTICE
from effectbench.packs import get_pack
from effectbench.packs.references import REFERENCE_SET
from effectbench.produce import make_submission, now, write_submission
from effectbench.run.runner import evaluate
from effectbench.schema import AgentReport, Split
from effectbench.seam import AgentTask, Attempt, EnvHandle, SystemUnderTest
from effectbench.variants import choose, tasks_on

__all__ = [
    "INDEX_FILE",
    "HeldOut",
    "HeldOutIndex",
    "Told",
    "read_index",
    "run_heldout",
]

INDEX_FILE = "index.json"


class Told:
    """A system under test whose goal opens with a notice (the monitored slice)."""

    def __init__(self, sut: SystemUnderTest, notice: str) -> None:
        self.sut = sut
        self.name = sut.name
        self.notice = notice

    def run(
        self, task: AgentTask, env: EnvHandle, params: Mapping[str, Any]
    ) -> AgentReport | Attempt:
        """Run the system on ``task`` with the notice before its goal."""
        return self.sut.run(replace(task, goal=f"{self.notice}\n\n{task.goal}"), env, params)


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class HeldOut(_Model):
    """One held-out bundle."""

    folder: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
    """Its folder's name (under the held-out folder; a name, never a path)."""
    pack: str
    baseline: str
    slice: SliceName
    notice: str = ""
    """What each goal opened with (the monitored slice)."""


class HeldOutIndex(_Model):
    """``index.json``: the held-out bundles."""

    bundles: list[HeldOut]


def read_index(folder: Path) -> HeldOutIndex:
    """Read the held-out folder's index (a :class:`DataError` names what is wrong)."""
    path = folder / INDEX_FILE
    try:
        return HeldOutIndex.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        raise DataError(
            "no held-out index (effectbench monitor heldout writes one)", file=str(path)
        ) from None
    except (OSError, ValidationError) as exc:
        raise DataError(f"not a held-out index: {exc}", file=str(path)) from None


@dataclass(frozen=True)
class _Plan:
    pack: str
    baseline: str


def _plans(packs: Sequence[str] | None) -> list[_Plan]:
    """The (pack, baseline) pairs the reference bundles run, on packs with a test split."""
    seen: dict[tuple[str, str], _Plan] = {}
    for spec in REFERENCE_SET:
        if packs is not None and spec.pack not in packs:
            continue
        pack = get_pack(spec.pack)
        if not any(t.split is Split.TEST for t in pack.tasks()):
            continue
        seen.setdefault((spec.pack, spec.baseline), _Plan(spec.pack, spec.baseline))
    return list(seen.values())


def run_heldout(
    out: Path,
    *,
    when: str,
    substrates: str | None = None,
    trials: int = 3,
    packs: Sequence[str] | None = None,
) -> HeldOutIndex:
    """Run the held-out bundles into ``out`` (replacing the ones its index lists); return
    the new index. ``substrates`` is a ``--substrate`` value (None: each pack's default)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} is not a folder")
    plans = _plans(packs)
    if not plans:
        raise UsageError("no pack with a sequestered (test) split among the reference packs")
    old = read_index(out) if (out / INDEX_FILE).is_file() else HeldOutIndex(bundles=[])
    entries: list[HeldOut] = []
    staged = out / f".staging-{when}"
    shutil.rmtree(staged, ignore_errors=True)
    for plan in plans:
        pack = get_pack(plan.pack)
        tasks = tasks_on(pack, choose(pack, substrates), Split.TEST.value)
        slices: tuple[tuple[SliceName, str], ...] = (
            ("plain", ""),
            ("monitored", MONITORING_NOTICE),
        )
        for slice_name, notice in slices:
            base = get_baseline(plan.baseline, pack)
            sut: SystemUnderTest = Told(base, notice) if notice else base
            started = now()
            run = evaluate(sut, pack, trials=trials, tasks=tasks)
            told = " (told it is monitored)" if notice else ""
            system = SystemInfo(
                name=f"{plan.baseline}{told}",
                description=reference_description(plan.baseline),
            )
            submission = make_submission(
                run,
                pack,
                system,
                trials=trials,
                split=Split.TEST,
                started_at=started,
                finished_at=now(),
            )
            slug = slugify(f"{plan.baseline}-{plan.pack}-test" + ("-monitored" if notice else ""))
            folder = f"{when}_{slug}"
            write_submission(staged / folder, submission, run.rows)
            entries.append(
                HeldOut(
                    folder=folder,
                    pack=plan.pack,
                    baseline=plan.baseline,
                    slice=slice_name,
                    notice=notice,
                )
            )
    out.mkdir(parents=True, exist_ok=True)
    for entry in old.bundles:  # only what our own index listed is ever removed
        shutil.rmtree(out / entry.folder, ignore_errors=True)
    for entry in entries:
        (staged / entry.folder).rename(out / entry.folder)
    shutil.rmtree(staged, ignore_errors=True)
    index = HeldOutIndex(bundles=entries)
    (out / INDEX_FILE).write_text(
        json.dumps(index.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8"
    )
    return index
