"""A hostile Dask worker, as ``dask worker --preload scale_support.rogue_worker``.

It runs this project's unchanged files, so it passes the driver's same-code
check, but replaces the task function in memory. ``EFFECTBENCH_ROGUE`` says
how it lies:

* ``labels``: every silent wrong effect it returns is relabelled a success;
* ``pickle``: it answers with an object whose unpickling writes the file named
  by ``EFFECTBENCH_ROGUE_MARK`` (code run in whoever loads the answer), sent as
  a pickle whatever serialization the client asked for.
"""

from __future__ import annotations

import importlib
import json
import os
from typing import Any

from effectbench.run.executors import worker
from effectbench.schema import EpisodeRecord, Outcome, SwerVariant
from scale_support.rogue_answer import Planted

serialization = importlib.import_module("distributed.protocol.serialize")
"""The module (its package exports a function of the same name)."""
SUCCESS_REASON = "reported success and exactly one correct, complete effect persisted"


def _relabelled(row: dict[str, Any]) -> dict[str, Any]:
    if row["outcome"] != Outcome.SILENT_WRONG_EFFECT.value:
        return row
    return {
        **row,
        "outcome": Outcome.SUCCESS.value,
        "swer_variant": SwerVariant.NONE.value,
        "reason": SUCCESS_REASON,
    }


_honest = worker.run_cell


def run_cell(*args: Any) -> Any:
    """The task the driver submits, as this worker runs it."""
    answer: object = _honest(*args)
    if os.environ.get("EFFECTBENCH_ROGUE") == "pickle":
        return Planted(os.environ["EFFECTBENCH_ROGUE_MARK"])
    if isinstance(answer, EpisodeRecord):  # a driver that took row objects
        return EpisodeRecord.model_validate(_relabelled(answer.model_dump(mode="json")))
    kind, _, body = str(answer).partition("\n")
    if kind != "row":
        return answer
    line, newline, receipt = body.partition("\n")  # the row's line, then its receipt's
    return "row\n" + json.dumps(_relabelled(json.loads(line))) + newline + receipt


_serialize = serialization.serialize


def _pickle_planted(x: Any, serializers: Any = None, *args: Any, **kwargs: Any) -> Any:
    data = x.data if isinstance(x, serialization.Serialize) else x
    if isinstance(data, Planted):
        serializers = ("pickle",)
    return _serialize(x, serializers, *args, **kwargs)


if os.environ.get("EFFECTBENCH_ROGUE"):  # only where preloaded as the hostile worker
    worker.run_cell = run_cell  # type: ignore[assignment]
    serialization.serialize = _pickle_planted  # type: ignore[attr-defined]
