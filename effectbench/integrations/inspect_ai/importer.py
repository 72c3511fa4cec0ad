"""An inspect log of an EffectBench task becomes a submission bundle (``import-inspect``).

The log is read with inspect's own reader and checked before anything is
written: it must be a log of one of this integration's tasks at this task
version, on the installed pack (same fingerprint, same SPEC), finished, with a
sample for every (task, trial) of the split. Each trial's row is rebuilt from
what the log recorded (the agent's report, the oracle's reading, the model
calls of the sample) by :func:`effectbench.run.runner.episode_row`, the runner's
own row builder; a score that contradicts its recorded reading, or metrics
that contradict the samples, mean the log was edited after the run and it is
refused. A sample that errored (never scored) is a dropped pair with its reason:
``infrastructure`` when the benchmark's harness failed, else ``agent_error`` (the
model's API, the solver: the harness around the agent); the attempts inspect
retried before a sample's last (``--retry-on-error``) are kept as earlier
attempts. A log none of whose samples could be scored is still a bundle, one the
verifier refuses. The bundle is made by :func:`effectbench.produce.make_submission`,
like ``submit``.
"""

from __future__ import annotations

import io
import json
import math
import zipfile
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import zstandard
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog, EvalSample, read_eval_log
from pydantic import ValidationError

from effectbench._version import SPEC_VERSION
from effectbench.attempts import EarlierAttempt, ending_of_drop
from effectbench.bundle import (
    MAX_TRIALS,
    HarnessInfo,
    ModelInfo,
    SignerDecl,
    Submission,
    SystemInfo,
    model_of,
)
from effectbench.classify import InconsistentReading
from effectbench.errors import DataError, InfrastructureError, UsageError
from effectbench.hashing import canonical_hash
from effectbench.integrations.inspect_ai.episodes import INFRASTRUCTURE_KEY, borrowed
from effectbench.integrations.inspect_ai.tasks import (
    DROPPED,
    METADATA_KEY,
    RECEIPT_KEY,
    SCORER_NAME,
    TASK_VERSION,
    metric_values,
    select_tasks,
)
from effectbench.manifest import fingerprint
from effectbench.metrics import Results, episode_frame, summarize
from effectbench.packs import pack_names
from effectbench.produce import bundle_folder, make_submission, write_submission
from effectbench.receipts.collect import Evidence, with_evidence
from effectbench.receipts.files import evidence_from_inline
from effectbench.run.runner import DroppedEpisode, RunResult, episode_row
from effectbench.schema import (
    AgentReport,
    DropReason,
    EpisodeRecord,
    ModelCall,
    OracleVerdict,
    Split,
    TaskSpec,
)
from effectbench.seam import Attempt

TASK_PREFIX = "effectbench/"
"""The registered tasks whose logs import: ``effectbench/pack`` and ``effectbench/NAME`` of
each installed pack (:data:`~.tasks.PACK_TASKS`)."""


def task_names() -> list[str]:
    """Return the registered task names whose logs import."""
    return [f"{TASK_PREFIX}{name}" for name in ("pack", *pack_names())]


IMPORTED_FROM = "inspect_ai-log"
METRIC_TOLERANCE = 1e-9


@dataclass(frozen=True)
class ImportedLog:
    """What :func:`import_log` wrote."""

    folder: Path
    run: RunResult
    results: Results

    @property
    def n_rows(self) -> int:
        """Rows of the bundle."""
        return len(self.run.rows)

    @property
    def n_dropped(self) -> int:
        """Trials dropped."""
        return len(self.run.dropped)


@dataclass(frozen=True)
class Converted:
    """A checked log: its pack, the rebuilt run and what the header needs."""

    log: EvalLog
    pack: str
    split: Split
    trials: int
    run: RunResult


def _refuse(path: Path, message: str, field: str | None = None) -> DataError:
    return DataError(message, file=str(path), field=field)


MAX_LOG_BYTES = 256 * 1024 * 1024
"""Bytes of a log file (a clinic run of 10 trials logs a few MB)."""
MAX_LOG_UNPACKED = 256 * 1024 * 1024
"""Bytes a ``.eval`` log (a zip) may unpack to, counted by unpacking every member as a
stream before inspect's reader (which unpacks each member whole) sees it."""
MAX_LOG_MEMBERS = 50_000
"""Members of a ``.eval`` log (one per sample, a few more)."""
_EOCD, _EOCD64_LOCATOR = b"PK\x05\x06", b"PK\x06\x07"
_CHUNK = 1024 * 1024
_STORED, _DEFLATED, _ZSTD = 0, 8, 93


def _zip_members(path: Path) -> int | None:
    """Return the member count a zip's end record declares (None when there is none),
    read from the file's tail before anything builds the member list."""
    with path.open("rb") as fh:
        size = fh.seek(0, 2)
        fh.seek(max(0, size - (22 + 65535)))
        tail = fh.read()
        at = tail.rfind(_EOCD)
        if at < 0 or len(tail) < at + 22:
            return None
        count = int.from_bytes(tail[at + 10 : at + 12], "little")
        locator = at - 20
        if count != 0xFFFF or locator < 0 or tail[locator : locator + 4] != _EOCD64_LOCATOR:
            return count
        fh.seek(int.from_bytes(tail[locator + 8 : locator + 16], "little"))
        record = fh.read(56)
        return int.from_bytes(record[32:40], "little") if len(record) == 56 else None


def _raw_chunks(fh: Any, info: zipfile.ZipInfo) -> Iterator[bytes]:
    """Yield a member's compressed bytes, as stored after its local header."""
    fh.seek(info.header_offset)
    local = fh.read(30)
    if len(local) != 30 or local[:4] != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"member {info.filename!r} has no local header")
    fh.seek(int.from_bytes(local[26:28], "little") + int.from_bytes(local[28:30], "little"), 1)
    left = info.compress_size
    while left > 0:
        chunk = fh.read(min(_CHUNK, left))
        if not chunk:
            raise zipfile.BadZipFile(f"member {info.filename!r} is cut short")
        left -= len(chunk)
        yield chunk


def _unpacked(fh: Any, info: zipfile.ZipInfo, budget: int) -> int:
    """Return how many bytes a member unpacks to, stopping once past ``budget``; a member
    unpacked whole must match its CRC-32 (a damaged byte anywhere in it is refused, whether or
    not inspect's reader would have read that member)."""
    total, crc = 0, 0
    if info.compress_type == _STORED:
        for chunk in _raw_chunks(fh, info):
            total += len(chunk)
            crc = zlib.crc32(chunk, crc)
    elif info.compress_type == _DEFLATED:
        inflate = zlib.decompressobj(-15)
        for chunk in _raw_chunks(fh, info):
            data = chunk
            while data and total <= budget:
                out = inflate.decompress(data, _CHUNK)
                total += len(out)
                crc = zlib.crc32(out, crc)
                data = inflate.unconsumed_tail
        while total <= budget and (out := inflate.flush()):
            total += len(out)
            crc = zlib.crc32(out, crc)
    elif info.compress_type == _ZSTD:
        raw = io.BytesIO(b"".join(_raw_chunks(fh, info)))  # compressed: bounded by the file
        with zstandard.ZstdDecompressor().stream_reader(raw) as reader:
            while total <= budget and (out := reader.read(_CHUNK)):
                total += len(out)
                crc = zlib.crc32(out, crc)
    else:
        raise NotImplementedError(f"member {info.filename!r} uses compression {info.compress_type}")
    if total <= budget and (total != info.file_size or crc != info.CRC):
        raise zipfile.BadZipFile(f"member {info.filename!r} is damaged (its CRC-32 differs)")
    return total


def _check_container(path: Path) -> None:
    """Refuse a log too large to read, or a zip that unpacks beyond the limits."""
    size = path.stat().st_size
    if size > MAX_LOG_BYTES:
        raise _refuse(path, f"{size} bytes; an inspect log is read up to {MAX_LOG_BYTES}")
    if not zipfile.is_zipfile(path):
        return
    members = _zip_members(path)
    if members is not None and members > MAX_LOG_MEMBERS:
        raise _refuse(path, f"{members} members; an inspect log holds at most {MAX_LOG_MEMBERS}")
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
    if len(infos) > MAX_LOG_MEMBERS:
        raise _refuse(path, f"{len(infos)} members; an inspect log holds at most {MAX_LOG_MEMBERS}")
    unpacked = 0
    with path.open("rb") as fh:
        for info in infos:
            unpacked += _unpacked(fh, info, MAX_LOG_UNPACKED - unpacked)
            if unpacked > MAX_LOG_UNPACKED:
                raise _refuse(
                    path,
                    f"unpacks to more than {MAX_LOG_UNPACKED} bytes (a zip bomb?); an inspect "
                    "log is read up to that",
                )


def read_log(path: Path) -> EvalLog:
    """Read an inspect log; anything else is a :class:`DataError` naming the file.

    The file's size and, for a ``.eval`` zip, its member count and unpacked size are
    checked first (:data:`MAX_LOG_BYTES`, :data:`MAX_LOG_MEMBERS`,
    :data:`MAX_LOG_UNPACKED`), so what inspect's reader holds in memory is bounded.
    """
    if not path.is_file():
        raise _refuse(path, "no such file" if not path.exists() else "not a file")
    try:
        _check_container(path)
        return read_eval_log(str(path))
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        zlib.error,
        zstandard.ZstdError,
        EOFError,
        NotImplementedError,
        UnicodeDecodeError,
        ValueError,
        KeyError,
        TypeError,
    ) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise _refuse(path, f"not an inspect log ({reason[:200]})") from None
    except OSError as exc:
        raise _refuse(path, f"cannot read: {exc.strerror or exc}") from None


def _header(log: EvalLog, path: Path) -> dict[str, Any]:
    spec = log.eval
    if spec.task not in task_names():
        raise _refuse(
            path,
            f"a log of task {spec.task!r}, not of an EffectBench task ({', '.join(task_names())})",
            "eval.task",
        )
    if spec.task_version != TASK_VERSION:
        raise _refuse(
            path,
            f"written by task version {spec.task_version!r}; this EffectBench reads "
            f"{TASK_VERSION!r} (import it with the EffectBench that ran it)",
            "eval.task_version",
        )
    meta = (spec.metadata or {}).get(METADATA_KEY)
    if not isinstance(meta, Mapping):
        raise _refuse(path, "the task metadata has no effectbench section", "eval.metadata")
    for key, kind in (("pack", str), ("fingerprint", str), ("split", str), ("spec_version", str)):
        if not isinstance(meta.get(key), kind):
            raise _refuse(path, "missing or not a string", f"eval.metadata.{METADATA_KEY}.{key}")
    if not isinstance(meta.get("substrates"), list):
        raise _refuse(path, "missing or not a list", f"eval.metadata.{METADATA_KEY}.substrates")
    if meta["spec_version"] != SPEC_VERSION:
        raise _refuse(
            path,
            f"scored under SPEC {meta['spec_version']}; this EffectBench implements {SPEC_VERSION}",
            f"eval.metadata.{METADATA_KEY}.spec_version",
        )
    if log.status != "success":
        detail = f": {log.error.message.splitlines()[0]}" if log.error else ""
        raise _refuse(path, f"the run did not finish (status {log.status}){detail}", "status")
    if log.samples is None:
        raise _refuse(path, "the log holds no samples (was it written with --no-log-samples?)")
    return dict(meta)


def _sample_tasks(meta: Mapping[str, Any], path: Path) -> dict[str, str]:
    """Each sample's task: the samples carry opaque handles, the task's metadata their tasks."""
    samples = meta.get("samples", {})
    if not isinstance(samples, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in samples.items()
    ):
        raise _refuse(
            path, "not an object of handles to task ids", f"eval.metadata.{METADATA_KEY}.samples"
        )
    return dict(samples)


def _model_calls(sample: EvalSample) -> list[ModelCall]:
    events = [e for e in sample.events if isinstance(e, ModelEvent)]
    calls = []
    for i, event in enumerate(events):
        usage = event.output.usage
        calls.append(
            ModelCall(
                index=i,
                model=event.model,
                input_tokens=usage.input_tokens if usage else 0,
                output_tokens=usage.output_tokens if usage else 0,
                cost_usd=float(usage.total_cost or 0.0) if usage else 0.0,
                latency_s=float(event.working_time or 0.0),
            )
        )
    if not calls:  # events left out of the log: one entry per model, from the sample's totals
        for i, (model, usage) in enumerate(sorted(sample.model_usage.items())):
            calls.append(
                ModelCall(
                    index=i,
                    model=model,
                    input_tokens=usage.input_tokens,
                    output_tokens=usage.output_tokens,
                    cost_usd=float(usage.total_cost or 0.0),
                    latency_s=0.0,
                    note="the sample's total usage (its model events are not in the log)",
                )
            )
    return calls


INFRASTRUCTURE_ERROR = f"{InfrastructureError.__module__}.{InfrastructureError.__name__}"
"""How a traceback names the harness's own failure (provisioning, a dead screen, the oracle)."""


def error_ending(
    message: str, traceback: str, store: Mapping[str, Any] | None = None
) -> tuple[DropReason, str]:
    """Return the drop of a sample attempt that errored, and its detail.

    The benchmark's harness failed (``infrastructure``) when the sample's store says so
    (:data:`INFRASTRUCTURE_KEY`, set where the harness fails) or the error is the
    harness's :class:`~effectbench.errors.InfrastructureError`; any other error came
    from around the agent, its model or its solver (``agent_error``).
    """
    said = (store or {}).get(INFRASTRUCTURE_KEY)
    if isinstance(said, str):
        return DropReason.INFRASTRUCTURE, said[:2000]
    first = message.strip().splitlines()[0] if message.strip() else "error"
    if INFRASTRUCTURE_ERROR in traceback:
        return DropReason.INFRASTRUCTURE, first[:2000]
    return DropReason.AGENT_ERROR, first[:2000]


def _earlier(sample: EvalSample, task: TaskSpec) -> list[EarlierAttempt]:
    """Return the attempts inspect retried (``--retry-on-error``) before the sample's last."""
    out = []
    for number, retry in enumerate(sample.error_retries or [], start=1):
        reason, detail = error_ending(retry.message, retry.traceback)
        out.append(
            EarlierAttempt(task.task_id, sample.epoch - 1, number, ending_of_drop(reason), detail)
        )
    return out


def _tampered(path: Path, where: str, message: str) -> DataError:
    return _refuse(path, f"{where}: {message}; the log was edited after the run", "samples")


def _trial_of(
    sample: EvalSample, task: TaskSpec, arm: str, path: Path
) -> EpisodeRecord | DroppedEpisode:
    trial = sample.epoch - 1
    where = f"sample {task.task_id} epoch {sample.epoch}"
    score = (sample.scores or {}).get(SCORER_NAME)
    if score is None:
        if sample.error is None:
            raise _refuse(path, f"{where} has neither a score nor an error", "samples")
        reason, detail = error_ending(sample.error.message, sample.error.traceback, sample.store)
        return DroppedEpisode(task.task_id, trial, reason, detail)
    if sample.error is not None:
        raise _tampered(path, where, "an errored sample carries a score (errors are drops)")
    meta = score.metadata or {}
    try:
        verdict = OracleVerdict.model_validate(meta.get("reading"))
        env_fp: dict[str, Any]
        if score.value == DROPPED:
            report = AgentReport.model_validate(meta.get("agent"))
            latency, env_fp, started, finished = 0.0, {}, "", ""
        else:
            report, latency, env_fp, started, finished = _recorded_row(meta, trial, path, where)
        rebuilt = episode_row(
            arm,
            task,
            trial,
            trial,
            Attempt(report=report, model_calls=tuple(_model_calls(sample))),
            verdict,
            latency_s=float(latency),
            env_fingerprint=env_fp,
            started_at=started,
            finished_at=finished,
        )
    except InconsistentReading as exc:
        raise _tampered(path, where, f"its reading is inconsistent ({exc})") from None
    except ValidationError:
        raise _tampered(path, where, "its score metadata is malformed") from None
    if isinstance(rebuilt, DroppedEpisode):
        if score.value != DROPPED:
            raise _tampered(
                path, where, f"the score says {score.value!r} but the reading is unreadable"
            )
        return rebuilt
    _check_claimed(score.value, meta, rebuilt, path, where)
    if RECEIPT_KEY in meta:  # the bundle's verifier checks it against the row it belongs to
        with_evidence(rebuilt, _evidence(meta, path, where))
    return rebuilt


def _recorded_row(
    meta: Mapping[str, Any], trial: int, path: Path, where: str
) -> tuple[AgentReport, float, dict[str, Any], str, str]:
    """The agent's report, latency, env fingerprint and times of a scored sample's recorded
    row, held to the score's reading and the trial's seed."""
    row = meta.get("row")
    if not isinstance(row, Mapping):
        raise _tampered(path, where, "the score has no row")
    report = AgentReport.model_validate(row.get("agent"))
    latency, env_fp = row.get("latency_s"), row.get("env_fingerprint")
    started, finished = row.get("started_at"), row.get("finished_at")
    if row.get("oracle") != meta.get("reading"):
        raise _tampered(path, where, "the row's reading differs from the score's")
    if row.get("seed") != trial:
        raise _tampered(path, where, f"seed {row.get('seed')!r} is not trial {trial}'s")
    if not isinstance(latency, int | float) or not isinstance(env_fp, dict):
        raise _tampered(path, where, "its latency or env fingerprint is malformed")
    if not isinstance(started, str) or not isinstance(finished, str):
        raise _tampered(path, where, "its start or finish time is malformed")
    return report, latency, env_fp, started, finished


def _check_claimed(
    value: Any, meta: Mapping[str, Any], rebuilt: EpisodeRecord, path: Path, where: str
) -> None:
    """The score's outcome and variant are those the recorded reading and report give."""
    claimed = (value, meta.get("outcome"), meta.get("swer_variant"))
    derived = (rebuilt.outcome.value, rebuilt.outcome.value, rebuilt.swer_variant.value)
    if claimed != derived:
        raise _tampered(
            path,
            where,
            f"the score says {value!r} ({meta.get('swer_variant')}) but its recorded "
            f"reading and report give {rebuilt.outcome.value!r} ({rebuilt.swer_variant.value})",
        )


def _evidence(meta: Mapping[str, Any], path: Path, where: str) -> Evidence:
    """Return the receipt a score recorded, with its frames."""
    try:
        return evidence_from_inline(meta[RECEIPT_KEY])
    except ValueError as exc:
        raise _tampered(path, where, f"its receipt is malformed ({exc})") from None


def _check_metrics(log: EvalLog, run: RunResult, path: Path) -> Results:
    results = summarize(episode_frame(run.rows), arm=run.arm)
    scores = [s for s in (log.results.scores if log.results else []) if s.name == SCORER_NAME]
    logged = {m.name: m.value for m in scores[0].metrics.values()} if scores else {}
    if not run.rows:  # nothing scored: the log claims no number either
        if any(math.isfinite(v) for v in logged.values()):
            raise _refuse(
                path,
                "the log reports metrics but no sample has a score; the log was edited after "
                "the run",
                f"results.{SCORER_NAME}",
            )
        return results
    ours = metric_values(results)
    if not scores:
        raise _refuse(path, f"the log's results have no {SCORER_NAME!r} metrics", "results")
    for name, value in ours.items():
        got = logged.get(name)
        if got is None or not math.isclose(got, value, rel_tol=0.0, abs_tol=METRIC_TOLERANCE):
            raise _refuse(
                path,
                f"the log reports {name} = {got} but its samples give {value}; "
                f"the log was edited after the run",
                f"results.{SCORER_NAME}.{name}",
            )
    return results


def convert_log(path: Path) -> Converted:
    """Check an inspect log and rebuild its run: rows, dropped pairs, pack, split, trials."""
    path = Path(path)
    log = read_log(path)
    meta = _header(log, path)
    assert log.samples is not None
    trials = log.eval.config.epochs or 1
    if type(trials) is not int or not 1 <= trials <= MAX_TRIALS:
        raise _refuse(
            path,
            f"{trials!r} epochs; a bundle holds 1 to {MAX_TRIALS} trials",
            "eval.config.epochs",
        )
    arm = log.eval.model
    pack_name, chosen = _installed_tasks(meta, path)
    by_id = {t.task_id: t for t in chosen}
    seen = _samples_by_pair(log.samples, _sample_tasks(meta, path), by_id, trials, meta, path)
    run = RunResult(arm=arm, pack=pack_name)
    for task_id in by_id:
        for epoch in range(1, trials + 1):
            sample = seen[(task_id, epoch)]
            outcome = _trial_of(sample, by_id[task_id], arm, path)
            run.attempts.extend(_earlier(sample, by_id[task_id]))
            if isinstance(outcome, DroppedEpisode):
                run.dropped.append(outcome)
            else:
                run.rows.append(outcome)
    _check_metrics(log, run, path)
    return Converted(log=log, pack=meta["pack"], split=Split(meta["split"]), trials=trials, run=run)


def _installed_tasks(meta: Mapping[str, Any], path: Path) -> tuple[str, list[TaskSpec]]:
    """The installed pack's name and the tasks the log's split and substrates choose, when it
    is the pack the log ran on."""
    try:
        with borrowed(meta["pack"]) as provider:
            installed = fingerprint(provider.manifest())
            chosen = select_tasks(provider, meta["split"], ",".join(meta["substrates"]))
            pack_name = provider.name
    except UsageError as exc:  # an unknown pack, split or substrate
        raise _refuse(path, exc.diagnostics(), f"eval.metadata.{METADATA_KEY}") from None
    if installed != meta["fingerprint"]:
        raise _refuse(
            path,
            f"ran on another version of pack {meta['pack']!r} ({meta['fingerprint']}); "
            f"the installed pack is {installed}",
            f"eval.metadata.{METADATA_KEY}.fingerprint",
        )
    return pack_name, chosen


def _samples_by_pair(
    samples: Sequence[EvalSample],
    named: Mapping[str, str],
    by_id: Mapping[str, TaskSpec],
    trials: int,
    meta: Mapping[str, Any],
    path: Path,
) -> dict[tuple[str, int], EvalSample]:
    """Each (task, epoch)'s sample: one each, of the split's tasks, every pair covered."""
    seen: dict[tuple[str, int], EvalSample] = {}
    for sample in samples:
        key = (named.get(str(sample.id), str(sample.id)), sample.epoch)
        if key[0] not in by_id:
            raise _refuse(
                path, f"sample {key[0]!r} is not a task of split {meta['split']!r}", "samples"
            )
        if key in seen or not 1 <= sample.epoch <= trials:
            raise _refuse(path, f"sample {key[0]} epoch {key[1]} is out of place", "samples")
        seen[key] = sample
    missing = [(t, e) for t in by_id for e in range(1, trials + 1) if (t, e) not in seen]
    if missing:
        task_id, epoch = missing[0]
        raise _refuse(
            path,
            f"the samples do not cover split {meta['split']!r}: {len(missing)} of "
            f"{len(by_id) * trials} (task, trial) pairs missing, first {task_id} trial "
            f"{epoch - 1}",
            "samples",
        )
    return seen


def run_configuration(log: EvalLog) -> dict[str, Any]:
    """Return what configured the run (task, model, solver, generate config, epochs, ids)."""
    spec = log.eval
    return {
        "task": spec.task,
        "task_version": spec.task_version,
        "task_args": spec.task_args,
        "model": spec.model,
        "model_generate_config": spec.model_generate_config.model_dump(exclude_none=True),
        "solver": spec.solver or "effect_agent (the task's default)",
        "solver_args": spec.solver_args or {},
        "epochs": spec.config.epochs or 1,
        "eval_id": spec.eval_id,
        "run_id": spec.run_id,
        "created": spec.created,
        "inspect_ai": spec.packages.get("inspect_ai", ""),
    }


def _readme(config: Mapping[str, Any], readme: str | None) -> str:
    lines = [
        "## How this run was made",
        "",
        "Imported from an inspect_ai log by `effectbench import-inspect`. The run's configuration:",
        "",
        "```json",
        json.dumps(config, indent=2, sort_keys=True, default=str),
        "```",
        "",
    ]
    section = "\n".join(lines)
    return f"{readme.rstrip()}\n\n{section}" if readme else f"# Submission\n\n{section}"


RUN_IDS = ("eval_id", "run_id", "created")
"""What :func:`run_configuration` holds that names this run rather than configures it: left
out of the harness's configuration digest, so two runs configured alike share it."""


def log_harness(log: EvalLog) -> HarnessInfo:
    """Return the harness of a log: inspect_ai at its version, its configuration's digest the
    canonical hash of :func:`run_configuration` less the run's own ids."""
    config = {k: v for k, v in run_configuration(log).items() if k not in RUN_IDS}
    return HarnessInfo(
        name="inspect_ai",
        version=str(config["inspect_ai"]),
        config_digest=canonical_hash(json.loads(json.dumps(config, default=str))),
    )


def log_model(log: EvalLog) -> ModelInfo | None:
    """Return the model a log ran (inspect names it ``provider/model``), or None."""
    try:
        return model_of(str(log.eval.model))
    except ValueError:
        return None


def submission_of(
    converted: Converted,
    system: SystemInfo,
    signer: SignerDecl | None,
    harness: HarnessInfo | None = None,
    model: ModelInfo | None = None,
) -> Submission:
    """Return the bundle header and claims of a checked log (through ``make_submission``;
    ``harness`` and ``model`` as recorded, None: the log's)."""
    log = converted.log
    with borrowed(converted.pack) as provider:
        submission = make_submission(
            converted.run,
            provider,
            system,
            trials=converted.trials,
            split=converted.split,
            started_at=log.stats.started_at,
            finished_at=log.stats.completed_at,
            signer=signer,
            harness=harness or log_harness(log),
            model=model or log_model(log),
        )
    dependencies = dict(submission.environment.dependencies)
    try:
        dependencies["inspect_ai"] = log.eval.packages.get("inspect_ai") or version("inspect_ai")
    except PackageNotFoundError:  # pragma: no cover - the extra is installed to get here
        pass
    environment = submission.environment.model_copy(update={"dependencies": dependencies})
    return submission.model_copy(
        update={"environment": environment, "imported_from": IMPORTED_FROM}
    )


def import_log(
    path: Path,
    out: Path,
    *,
    name: str | None = None,
    description: str | None = None,
    url: str = "",
    signer: SignerDecl | None = None,
    readme: str | None = None,
    harness: Callable[[HarnessInfo], HarnessInfo | None] | None = None,
    model: ModelInfo | None = None,
) -> ImportedLog:
    """Convert the inspect log at ``path`` into a bundle below ``out``; return what was written.

    ``harness`` turns the log's harness into the one recorded (the options' changes);
    ``model`` is recorded instead of the log's."""
    converted = convert_log(Path(path))
    log = converted.log
    config = run_configuration(log)
    system = SystemInfo(
        name=name or log.eval.model,
        description=description
        if description is not None
        else f"{log.eval.model} on {log.eval.task} through inspect_ai {config['inspect_ai']}",
        url=url,
        baseline=None,
    )
    recorded = log_harness(log)
    submission = submission_of(
        converted, system, signer, harness(recorded) if harness else recorded, model
    )
    folder = bundle_folder(Path(out), system.name, log.stats.started_at or None)
    write_submission(folder, submission, converted.run.rows, readme=_readme(config, readme))
    return ImportedLog(folder=folder, run=converted.run, results=submission.results)
