"""Commands that produce bundles: ``submit`` (run, then write) and ``import`` (convert).

The work is the engine's (:mod:`effectbench.produce`); these parse options and print.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from effectbench.cli._run import add_system_arguments, instance_of, run_system
from effectbench.errors import DataError, UsageError
from effectbench.filenames import README_FILE
from effectbench.findings import Family

if TYPE_CHECKING:
    from effectbench.bundle import HarnessInfo, InstanceDecl, ModelInfo, SignerDecl
    from effectbench.metrics import Results
    from effectbench.run.runner import RunResult

T = TypeVar("T")


def add_declaration_arguments(p: argparse.ArgumentParser) -> None:
    """Add the declared signer and the README a new bundle carries (submit, import-inspect)."""
    p.add_argument(
        "--signer-identity",
        metavar="ID",
        help="the Sigstore identity that will sign (default: none, an unsigned preview)",
    )
    p.add_argument("--signer-issuer", metavar="URL", help="its OIDC issuer")
    p.add_argument("--readme", type=Path, metavar="FILE", help=f"a {README_FILE} to include")


def declared(model: type[T], options: dict[str, str], **values: Any) -> T:
    """Return ``model(**values)``; a refused value is a one-line :class:`UsageError` naming
    its command-line option (``options``: field -> option), before anything runs."""
    from pydantic import ValidationError

    from effectbench.showable import describe_unshowable

    try:
        return model(**values)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = str(err["loc"][0]) if err["loc"] else ""
        value = values.get(field)
        said = (
            describe_unshowable(value, also="\n" if field == "description" else "")
            if err["type"] == "string_pattern_mismatch" and isinstance(value, str)
            else None
        )
        raise UsageError(f"{options.get(field, field)}: {said or err['msg']}") from None


def read_declaration(args: argparse.Namespace) -> tuple[SignerDecl | None, str | None]:
    """Return the declared signer and the README text the options of a new bundle name."""
    from effectbench.bundle import SignerDecl
    from effectbench.produce import read_readme

    if (args.signer_identity is None) != (args.signer_issuer is None):
        raise UsageError("give both --signer-identity and --signer-issuer, or neither")
    signer = (
        declared(
            SignerDecl,
            {"identity": "--signer-identity", "issuer": "--signer-issuer"},
            identity=args.signer_identity,
            issuer=args.signer_issuer,
        )
        if args.signer_identity
        else None
    )
    return signer, read_readme(args.readme) if args.readme is not None else None


def instance_decl(args: argparse.Namespace) -> InstanceDecl | None:
    """The bundle's ``instances`` declaration: the seed ``--instance-seed`` names, or the one
    drawn from ``--commitment`` and ``--beacon`` (which the bundle then carries)."""
    import json

    from effectbench.bundle import InstanceDecl

    seed = getattr(args, "instance_seed", None)
    commitment, beacon = getattr(args, "commitment", None), getattr(args, "beacon", None)
    if (commitment is None) != (beacon is None):
        raise UsageError("--commitment and --beacon go together: the seed is drawn from both")
    if commitment is None or beacon is None:
        return None if seed is None else InstanceDecl(seed=seed)
    from effectbench.instances import Beacon, derived_seed, log_entry

    docs = []
    for path in (commitment, beacon):
        try:
            docs.append(json.loads(path.read_text(encoding="utf-8")))
        except OSError as exc:
            raise UsageError(f"{path}: cannot read ({exc.strerror or exc})") from None
        except ValueError:
            raise UsageError(f"{path}: not JSON") from None
    try:
        drawn = derived_seed(log_entry(docs[0]), Beacon.from_json(docs[1]))
    except ValueError as exc:
        raise UsageError(f"--commitment/--beacon: {exc}") from None
    if seed is not None and seed != drawn:
        raise UsageError(
            f"--instance-seed {seed!r} is not the seed the commitment and beacon give ({drawn})"
        )
    config = getattr(args, "config", None)
    if config is None:
        raise UsageError("--commitment: name the committed configuration file with --config")
    from effectbench.bundle import ConfigurationDecl
    from effectbench.cli._commit import harness_of
    from effectbench.instances import configuration_file_digest

    try:
        file = configuration_file_digest(config)
    except DataError as exc:
        raise UsageError(f"--config: {exc.diagnostics()}") from None
    configured = ConfigurationDecl(
        harness=harness_of(args), model=getattr(args, "model", "") or "", file=file
    )
    args.instance_seed = drawn  # the run draws its instance from it
    return InstanceDecl(seed=drawn, commitment=docs[0], beacon=docs[1], configuration=configured)


def add_harness_arguments(p: argparse.ArgumentParser, harness: str, model: str) -> None:
    """Add the harness and model a new bundle records (submit, import-inspect); ``harness``
    and ``model`` end their options' help (the defaults)."""
    p.add_argument(
        "--harness", metavar="NAME", help=f"the harness (scaffold) that drove the model. {harness}"
    )
    p.add_argument(
        "--harness-version", metavar="VERSION", help="the harness's version (default: as known)"
    )
    p.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="the harness's configuration file: the bundle records its hash (submit "
        "--commitment: the file committed)",
    )
    p.add_argument(
        "--model",
        metavar="PROVIDER/ID",
        help=f"the model the system calls (openai/gpt-4o), recorded in the bundle {model}",
    )


def declared_model(text: str | None) -> ModelInfo | None:
    """The model ``--model PROVIDER/ID`` names (None: not given)."""
    from effectbench.bundle import model_of

    if text is None:
        return None
    try:
        return model_of(text)
    except ValueError as exc:
        raise UsageError(f"--model: {exc}") from None


def declared_harness(args: argparse.Namespace, known: HarnessInfo | None) -> HarnessInfo | None:
    """The harness a new bundle records: what the run knows (``known``), each part the
    options give (``--harness``, ``--harness-version``, ``--config``) put in its place."""
    from effectbench.bundle import HarnessInfo
    from effectbench.instances import configuration_file_digest

    name = getattr(args, "harness", None) or (known.name if known else None)
    if name is None:
        if getattr(args, "harness_version", None) is not None:
            raise UsageError("--harness-version: name the harness too (--harness NAME)")
        return None
    config = getattr(args, "config", None)
    digest = known.config_digest if known else None
    if config is not None:
        try:
            digest = configuration_file_digest(config)
        except DataError as exc:
            raise UsageError(f"--config: {exc.diagnostics()}") from None
    version = getattr(args, "harness_version", None)
    return declared(
        HarnessInfo,
        {"name": "--harness", "version": "--harness-version", "config_digest": "--config"},
        name=name,
        version=version if version is not None else (known.version if known else ""),
        config_digest=digest,
    )


def known_pair(args: argparse.Namespace) -> tuple[HarnessInfo | None, ModelInfo | None]:
    """The harness and model ``submit`` knows before it runs: a shipped baseline's are its
    script's (:func:`effectbench.produce.scripted`); a system of one's own has its own
    harness (``sut:MODULE:ATTR``) and no model known until the options or the rows say."""
    from effectbench.bundle import HarnessInfo
    from effectbench.produce import scripted

    if args.baseline is not None:
        return scripted(args.baseline)
    if args.sut is not None:
        from effectbench.instances import harness_name

        return HarnessInfo(name=harness_name(None, args.sut)), None
    return None, None


def _cmd_submit(args: argparse.Namespace) -> int:
    from effectbench.bundle import MAX_TRIALS, SystemInfo
    from effectbench.produce import bundle_folder, make_submission, now, write_submission
    from effectbench.run.journal import retire_journal
    from effectbench.schema import Split

    # everything the bundle declares is checked before the run
    signer, readme = read_declaration(args)
    instances = instance_decl(args)
    system = declared(
        SystemInfo,
        {
            "name": "--name",
            "description": "--description",
            "url": "--url",
            "baseline": "--baseline",
        },
        name=args.name,
        description=args.description,
        url=args.url,
        baseline=args.baseline,
    )
    if args.trials > MAX_TRIALS:
        raise UsageError(f"--trials {args.trials}: a bundle holds at most {MAX_TRIALS} per task")
    harness, model = known_pair(args)
    harness = declared_harness(args, harness)
    model = declared_model(args.model) or model
    folder = bundle_folder(args.out, args.name)
    started = now()
    journal = folder.with_name(folder.name + ".journal")  # by default, beside the bundle
    trials, split = args.trials, Split(args.split)
    if args.from_records is not None:
        if args.baseline is not None or args.sut is not None:
            raise UsageError(
                "--from-records takes no --baseline or --sut: the records hold the run"
            )
        from effectbench.mcp.records import Wanted, read_records
        from effectbench.packs import get_pack
        from effectbench.variants import choose

        chosen = instance_of(args.pack, args.instance_seed)
        pack = get_pack(chosen) if isinstance(chosen, str) else chosen
        substrates = None if args.substrate is None else choose(pack, args.substrate)
        wanted = Wanted(trials, split, substrates, system=args.name)
        records = read_records(args.from_records, pack, wanted)
        run = records.run
        harness = declared_harness(args, records.harness)
    else:
        pack, _, run = run_system(args, default_journal=journal)
    if model is None:
        from effectbench.produce import model_from_rows

        model = model_from_rows(run.rows)
    submission = make_submission(
        run,
        pack,
        system,
        trials=trials,
        split=split,
        started_at=run.started_at or started,
        finished_at=now(),
        signer=signer,
        instances=instances,
        harness=harness,
        model=model,
    )
    write_submission(folder, submission, run.rows, readme=readme)
    ran_here = args.from_records is None  # records come from MCP episodes: no journal of ours
    default = args.journal is None and (
        args.resume is None or args.resume.resolve() == journal.resolve()
    )
    if ran_here and default and journal.exists():
        retire_journal(journal, folder)  # the bundle now holds every row the journal kept
    print(folder)
    print_standing(folder, run, submission.results)
    return 0


def _count(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1 ("1 row", "3 rows")."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


SHOWN_FINDINGS = 5
"""Findings ``print_standing`` lists of a bundle that cannot be ranked."""


def print_standing(folder: Path, run: RunResult, results: Results) -> bool:
    """Print what a new bundle holds and whether it can be ranked; return whether it can.

    The counts: rows, drops by reason, the attempts that did not count. Whether it
    can be ranked is the verifier's own verdict on the bundle with the signature set
    aside (coverage, trials, drop caps, attempts...), never a rule restated here.
    """
    from verifier.api import VerifyOptions, verify_bundle
    from verifier.report import Status

    reasons = Counter(d.reason.value for d in run.dropped)
    drops = ", ".join(f"{n} {reason}" for reason, n in sorted(reasons.items()))
    earlier = (
        f"; {_count(len(run.attempts), 'earlier attempt')} kept (each ended in a drop and ran "
        "again)"
        if run.attempts
        else ""
    )
    scored = (
        f"SWER {results.swer.numerator}/{results.swer.denominator}, over-halt "
        f"{results.over_halt.numerator}/{results.over_halt.denominator}"
        if run.rows
        else "no episode could be scored"
    )
    dropped = f"{len(run.dropped)} dropped{f' ({drops})' if drops else ''}"
    print(f"  {_count(len(run.rows), 'row')}, {dropped}{earlier}; {scored}")
    report = verify_bundle(folder, VerifyOptions(allow_unsigned=True, reproduce=False))
    if report.status is Status.PREVIEW:
        print(f"  can be ranked once signed: effectbench sign {folder}")
        return True
    findings = [f for c in report.checks if c.id is not Family.SIGNATURE for f in c.findings]
    said = _count(len(findings), "finding")
    print(f"  cannot be ranked as it is ({said} of effectbench verify):")
    for f in findings[:SHOWN_FINDINGS]:
        print(f"    {f.check}: {f.message}")
    if len(findings) > SHOWN_FINDINGS:
        print(f"    ... and {len(findings) - SHOWN_FINDINGS} more: effectbench verify {folder}")
    rerun = reasons.get("agent_error", 0) + reasons.get("infrastructure", 0)
    if rerun:
        print(
            f"  {_count(rerun, 'dropped episode')} (agent_error, infrastructure) may be run "
            "again; the earlier attempt is kept beside the new one"
        )
    return False


def _cmd_import(args: argparse.Namespace) -> int:
    from effectbench.produce import import_document

    imported = import_document(args.document, args.out)
    print(imported.folder)
    print(
        f"  {imported.n_rows} rows imported unchanged; next: effectbench verify {imported.folder}"
    )
    return 0


def register(sub: Any) -> None:
    """Add ``submit`` and ``import``."""
    p = sub.add_parser("submit", help="run a system and write a submission bundle")
    add_system_arguments(p)
    p.add_argument("--name", required=True, help="the system's display name")
    p.add_argument("--description", default="", help="one paragraph on what the system is")
    p.add_argument("--url", default="", help="where to learn more (paper, repository)")
    add_declaration_arguments(p)
    p.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="DIR",
        help="parent folder; the bundle is DIR/<date>_<slug of --name>",
    )
    p.add_argument(
        "--from-records",
        type=Path,
        metavar="DIR",
        help="build the bundle from a record dir of MCP episodes (effectbench mcp) instead",
    )
    p.add_argument(
        "--commitment",
        type=Path,
        metavar="FILE",
        help="the signed commitment (effectbench commit): with --beacon, draws the fresh "
        "instance's seed and the bundle carries both",
    )
    p.add_argument(
        "--beacon", type=Path, metavar="FILE", help="the beacon round (effectbench draw --save)"
    )
    add_harness_arguments(
        p,
        "Default: baseline:NAME or sut:MODULE:ATTR, or the MCP client that ran the records",
        "(with --commitment: also the model committed). Default: a baseline's scripted/NAME, "
        "else the one model the rows' calls name, else not recorded",
    )
    p.set_defaults(func=_cmd_submit)

    p = sub.add_parser("import", help="convert an upstream submission document into a bundle")
    p.add_argument(
        "document", type=Path, metavar="DOC.json", help="the reference's single-document submission"
    )
    p.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="DIR",
        help="parent folder; the bundle is DIR/<date of its first episode>_<slug of its name>",
    )
    p.set_defaults(func=_cmd_import)
